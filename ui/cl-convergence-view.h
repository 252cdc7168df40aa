/* The Convergence view: one derivative dL/dθ of every enabled backend as a
 * function of the step count N = T/dt (log axis), exact as the reference
 * line, drawn with the figure code of `contactlab convergence --png`. The
 * runs go to worker threads with progress and Cancel; a scene edit marks the
 * shown figure stale. */
#pragma once

#include "cl-plot-view.h"
#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_CONVERGENCE_VIEW (cl_convergence_view_get_type())
G_DECLARE_FINAL_TYPE(ClConvergenceView, cl_convergence_view, CL, CONVERGENCE_VIEW, GtkWidget)

/* Sets the parameter (NULL: keep the chosen one) and the step counts (int;
 * NULL: keep the entry's list), then starts the run on the window's scene
 * with its enabled backends and exact (a convergence job; the finished run
 * is the document's convergence result). FALSE with a message when invalid. */
gboolean cl_convergence_view_compute(ClConvergenceView *view, const char *parameter, const GArray *steps,
									 GError **error);
void cl_convergence_view_cancel(ClConvergenceView *view);
gboolean cl_convergence_view_is_busy(ClConvergenceView *view);
ClPlotView *cl_convergence_view_get_plot(ClConvergenceView *view);

G_END_DECLS
