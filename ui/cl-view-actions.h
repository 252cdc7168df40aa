/* The one place that mirrors the views' actions onto the window, for the
 * menu, the keyboard and scripts over D-Bus (org.gtk.Actions on the
 * window's object path, /io/github/contactlab/ContactLab/window/1):
 *
 *   win.heatmap-compute(a{sv})  options as cl_heatmap_view_compute takes them
 *   win.heatmap-cancel          stops the sweep (the cells done so far stay shown)
 *   win.heatmap-export(s)       the heatmap as .png/.svg/.pdf, or its grid as .csv
 *   win.learning-run(a{sv})     options as cl_learning_view_run takes them
 *   win.learning-cancel         stops the run
 *   win.learning-export(s)      the learning figure as .png/.svg/.pdf, or its curves as .csv
 *   win.export-all(s)           every result of the document into a folder
 *                               ('' asks for one), with manifest.json
 *
 * Exports asked for while something computes wait until it is done, so a
 * script can ask for a result right after starting its computation. */
#pragma once

#include "cl-workbench.h"

G_BEGIN_DECLS

/* Adds the actions to the workbench's window (a GActionMap). */
void cl_view_actions_install(ClWorkbench *workbench);

G_END_DECLS
