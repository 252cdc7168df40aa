/* The window actions of the Heatmaps and Learning views and the session
 * export, for the menu, the keyboard and tests over D-Bus (org.gtk.Actions
 * on the window's object path, /io/github/contactlab/ContactLab/window/1):
 *
 *   win.heatmap-compute(a{sv})  options as cl_heatmap_view_compute takes them
 *   win.heatmap-cancel          stops the sweep (the cells done so far stay shown)
 *   win.heatmap-export(s)       the heatmap as .png/.svg/.pdf, or its grid as .csv
 *   win.learning-run(a{sv})     options as cl_learning_view_run takes them
 *   win.learning-cancel         stops the run
 *   win.learning-export(s)      the learning figure as .png/.svg/.pdf, or its curves as .csv
 *   win.export-all(s)           every figure and table of the session into a
 *                               folder ('' asks for one), with manifest.json
 *
 * Exports asked for while a view is computing wait until it is done, so a
 * script can ask for a result right after starting its computation. */
#pragma once

#include "cl-heatmap-view.h"
#include "cl-learning-view.h"
#include "cl-window.h"

G_BEGIN_DECLS

void cl_view_actions_install(ClWindow *window, ClHeatmapView *heatmap, ClLearningView *learning);

/* Writes the session now: scene.json; gradients.csv and trajectories.csv
 * (when the window has a result); heatmap.{png,svg,pdf,csv}; learning-curves.
 * {png,svg,pdf,csv}, learned-parameters.csv, learning-summary.csv (when those
 * views have finished results); then manifest.json listing them. Every file
 * is written atomically. */
gboolean cl_session_export_all(ClWindow *window, ClHeatmapView *heatmap, ClLearningView *learning, const char *folder,
							   GError **error);

G_END_DECLS
