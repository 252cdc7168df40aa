/* The Smoothing view: gradients of the randomly smoothed loss
 * F_σ(θ) = E f(θ + w) (Suh et al. 2022) for every enabled backend from the
 * same samples — the point gradient beside ZoBG, FoBG and AoBG ± SE, with
 * exact's ZoBG as the reference — a histogram of one backend's per-sample
 * ZoBG and FoBG terms, and its α rule stepped through with a γ slider,
 * recomputed from the stored terms. The computation is a job; a finished
 * one is the document's smoothing result, stale after any scene change. */
#pragma once

#include "cl-plot-view.h"
#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_SMOOTHING_VIEW (cl_smoothing_view_get_type())
G_DECLARE_FINAL_TYPE(ClSmoothingView, cl_smoothing_view, CL, SMOOTHING_VIEW, GtkWidget)

/* Applies options (a{sv}: parameters (as: exactly these are ticked), sigma
 * (d), samples (i), seed (i or t), antithetic (b), quadrature (b); NULL:
 * none) to the
 * controls and starts the computation. The γ slider starts at the
 * automatic γ of the backend it shows. */
gboolean cl_smoothing_view_compute(ClSmoothingView *view, GVariant *options, GError **error);
void cl_smoothing_view_cancel(ClSmoothingView *view);
gboolean cl_smoothing_view_is_busy(ClSmoothingView *view);
/* The histogram; its CSV export is the table (contactlab smooth --format csv). */
ClPlotView *cl_smoothing_view_get_plot(ClSmoothingView *view);

G_END_DECLS
