/* The workbench window: header bar, scene canvas with timeline, results
 * (Gradients, Perturbation, Heatmaps, Learning, Convergence), the Lessons
 * panel and the sidebar (inspector, backends). It owns
 * the scene, the undo stack and the background computation. */
#pragma once

#include "cl-application.h"
#include "cl-compute-job.h"
#include "contactlab/sim.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_WINDOW (cl_window_get_type())
G_DECLARE_FINAL_TYPE(ClWindow, cl_window, CL, WINDOW, GtkApplicationWindow)

ClWindow *cl_window_new(ClApplication *app);
void cl_window_load_preset(ClWindow *window, const char *id);
/* Loads a scene file; on error shows the loader's message and keeps the scene. */
gboolean cl_window_open_path(ClWindow *window, const char *path);
/* Replaces the scene as one undoable step, not tied to a file (a lesson
 * step); takes ownership of scene. */
void cl_window_replace_scene(ClWindow *window, ClScene *scene, const char *label);
void cl_window_choose_file_to_open(ClWindow *window);
void cl_window_show_preferences(ClWindow *window);
void cl_window_offer_recovery(ClWindow *window, const char *path);

/* For the sidebar: the scene being edited, and committing an edit made to
 * it in place (before = its state before the edit, for undo). */
ClScene *cl_window_get_scene(ClWindow *window);
void cl_window_scene_edited(ClWindow *window, const ClScene *before, const char *label, const char *merge_key);
/* Enabled backends (cl_backend_count() entries) and changing them. */
const gboolean *cl_window_get_enabled(ClWindow *window);
/* The last computed gradients and trajectories (NULL before the first run). */
ClComputeResult *cl_window_get_result(ClWindow *window);
void cl_window_set_enabled(ClWindow *window, int backend, gboolean enabled);
/* A page of the results stack by name: gradients, perturbation, heatmaps,
 * learning, convergence. */
GtkWidget *cl_window_get_view(ClWindow *window, const char *name);

G_END_DECLS
