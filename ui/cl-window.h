/* The workbench window: composition only. It owns the document (the scene
 * and everything about it) and the runner that keeps the document's Run
 * current, and lays out the header bar, the scene canvas with its
 * timeline, the results views and the sidebar (inspector, backends,
 * lessons), which find the document through ClWorkbench. */
#pragma once

#include "cl-application.h"
#include "cl-workbench.h"

G_BEGIN_DECLS

#define CL_TYPE_WINDOW (cl_window_get_type())
G_DECLARE_FINAL_TYPE(ClWindow, cl_window, CL, WINDOW, GtkApplicationWindow)

ClWindow *cl_window_new(ClApplication *app);
void cl_window_load_preset(ClWindow *window, const char *id);
/* Loads a scene file; on error shows the loader's message and keeps the scene. */
gboolean cl_window_open_path(ClWindow *window, const char *path);
void cl_window_choose_file_to_open(ClWindow *window);
void cl_window_show_preferences(ClWindow *window);
/* Offers the scene a crash left in path back (the file is kept until answered). */
void cl_window_offer_recovery(ClWindow *window, const char *path);

G_END_DECLS
