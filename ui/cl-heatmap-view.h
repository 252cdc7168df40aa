/* The Heatmaps view: two scalar parameters of the scene swept over a grid
 * (up to 256 × 256), one panel per enabled backend plus exact on shared axes
 * and one colour scale, showing the loss, either derivative, the gradient's
 * angle error or its sign agreement against exact. The sweep is a job with
 * progress and Cancel; tiles appear as cells finish; the finished sweep is
 * the document's heatmap result. Hover reads the cell in every panel; a
 * click moves the scene to that point (an undoable document edit). */
#pragma once

#include "cl-plot-view.h"
#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_HEATMAP_VIEW (cl_heatmap_view_get_type())
G_DECLARE_FINAL_TYPE(ClHeatmapView, cl_heatmap_view, CL, HEATMAP_VIEW, GtkWidget)

/* Applies options (a{sv}: x, y (parameter names), x-min, x-max, y-min,
 * y-max (d), x-points, y-points, resolution (i: both), quantity (s: a
 * cl_sweep_quantity_name), sigma (d) and samples (i) of the smoothed
 * quantities; NULL: none) to the controls
 * and starts the sweep. FALSE with a message when they are invalid. */
gboolean cl_heatmap_view_compute(ClHeatmapView *view, GVariant *options, GError **error);
void cl_heatmap_view_cancel(ClHeatmapView *view);
/* A sweep or a figure update is under way. */
gboolean cl_heatmap_view_is_busy(ClHeatmapView *view);
ClPlotView *cl_heatmap_view_get_plot(ClHeatmapView *view);

G_END_DECLS
