/* The perturbation study of a Run as small multiples, one panel per backend:
 * its trajectories simulated at θ ± δ beside the first-order prediction
 * x(θ) ± δ·dx/dθ from its own forward-mode tangents, so a wrong gradient
 * shows as a prediction that misses its simulation. Cairo and Pango: the
 * view and the exports draw the same thing. */
#pragma once

#include "run-data.h"

#include <cairo.h>

/* scene: the one result was computed for; visible: cl_backend_count() entries. */
void cl_perturbation_draw(cairo_t *cr, const ClScene *scene, const ClRunData *result, const gboolean *visible,
						  double width, double height, gboolean dark);
