/* The Learning view: gradient descent or Adam on the scene's optimization
 * problem with every enabled backend at once (worker threads), the loss
 * curves overlaid live (linear or log) with the analytic optimum or a
 * reference of your own, the learned parameters (control profiles against
 * the analytic optimal control), and a table of each backend's result
 * re-evaluated under the exact dynamics, with the walls it reaches (Task 2's
 * two solution modes). A finished run is the document's learning result;
 * after any change of the scene it is shown as stale. */
#pragma once

#include "cl-plot-view.h"
#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_LEARNING_VIEW (cl_learning_view_get_type())
G_DECLARE_FINAL_TYPE(ClLearningView, cl_learning_view, CL, LEARNING_VIEW, GtkWidget)

/* Applies options (a{sv}: iterations (i), learning-rate (d), optimizer (s:
 * gd or adam), log (b); NULL: none) to the controls and starts the run. */
gboolean cl_learning_view_run(ClLearningView *view, GVariant *options, GError **error);
void cl_learning_view_cancel(ClLearningView *view);
gboolean cl_learning_view_is_busy(ClLearningView *view);
ClPlotView *cl_learning_view_get_plot(ClLearningView *view);

G_END_DECLS
