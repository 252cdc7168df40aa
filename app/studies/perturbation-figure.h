/* The perturbation study of a Run as small multiples, one panel per backend:
 * its trajectories simulated at θ ± δ beside the first-order prediction
 * x(θ) ± δ·dx/dθ from its own forward-mode tangents, so a wrong gradient
 * shows as a prediction that misses its simulation. Cairo and Pango: the
 * view and the exports draw the same thing. */
#pragma once

#include "plot.h"
#include "run-data.h"

#include <cairo.h>

/* scene: the one result was computed for; visible: cl_backend_count() entries. */
void cl_perturbation_draw(cairo_t *cr, const ClScene *scene, const ClRunData *result, const gboolean *visible,
						  double width, double height, gboolean dark);

/* The panel shows data's study as the view draws it, its text at the
 * figure's size; scene (the data's) is copied and data referenced. */
void cl_perturbation_panel_set(ClPlotPanel *panel, const ClScene *scene, ClRunData *data);
/* One such panel under a title naming the parameter and δ: Export All's
 * perturbation figure and the lesson handout's. */
ClPlotFigure *cl_perturbation_figure_new(const ClScene *scene, ClRunData *data);
