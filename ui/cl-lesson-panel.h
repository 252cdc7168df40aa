/* The Lessons panel, a page of the window's sidebar: the shipped lessons (data/lessons/ID.json; a file that
 * does not load is listed with the loader's message), and for the open
 * lesson its steps. Each step applies its recorded state to the document
 * as ordinary, undoable changes (scene, enabled backends and their
 * parameters) and to the results view through its ClResultsView interface (its
 * settings, highlighted cells and curves), then
 * computes its text's numbers in a worker thread; leaving the lesson keeps
 * that state for the user to explore. Its actions, on the window it is
 * rooted in (for the header bar, the keyboard and tests over D-Bus):
 *
 *   win.lessons               (boolean state) shows the panel, or the sidebar
 *                             page it covered (F9)
 *   win.lesson-open(s)        opens a shipped lesson by id at its first step
 *   win.lesson-step(i)        goes to step K of the open lesson (1 = the first)
 *   win.lesson-next           the next step (Alt+Right)
 *   win.lesson-previous       the previous step (Alt+Left)
 *   win.lesson-leave          back to the list; the applied state stays
 *   win.lesson-export(s)      the handout: a PDF at the path ('' asks for one)
 *                             and, next to it, a folder named after it with
 *                             every step's figures, CSV and text
 *   win.lesson-state          state only (s): JSON with "lesson", "step",
 *                             "steps", "computing", "text", "problems",
 *                             "exporting" and "exported" (the last handout) */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_LESSON_PANEL (cl_lesson_panel_get_type())
G_DECLARE_FINAL_TYPE(ClLessonPanel, cl_lesson_panel, CL, LESSON_PANEL, GtkWidget)


G_END_DECLS
