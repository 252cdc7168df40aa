/* The perturbation view: for one parameter θ (a ball's initial position or
 * velocity component, or its first control), each backend's trajectories
 * actually simulated at θ ± δ next to the first-order prediction
 * x(θ) ± δ·dx/dθ from that backend's own forward-mode tangents, so a wrong
 * gradient shows as a prediction that misses its simulation. */
#pragma once

#include "cl-compute-job.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_PERTURBATION_VIEW (cl_perturbation_view_get_type())
G_DECLARE_FINAL_TYPE(ClPerturbationView, cl_perturbation_view, CL, PERTURBATION_VIEW, GtkWidget)

/* Offers the scene's parameters (keeps the choice when it still exists). */
void cl_perturbation_view_set_scene(ClPerturbationView *view, const ClScene *scene);
void cl_perturbation_view_set_result(ClPerturbationView *view, ClComputeResult *result, const gboolean *visible);
/* The chosen parameter's name (owned by the view) and δ. */
const char *cl_perturbation_view_get_parameter(ClPerturbationView *view);
double cl_perturbation_view_get_delta(ClPerturbationView *view);
void cl_perturbation_view_set_delta(ClPerturbationView *view, double delta);
/* Chooses θ among the offered parameters (no "changed" signal, like
 * set_delta); FALSE when the scene has no such parameter. */
gboolean cl_perturbation_view_set_parameter(ClPerturbationView *view, const char *name);
/* Draws the small multiples onto any cairo_t (screen and export). */
void cl_perturbation_draw(cairo_t *cr, const ClComputeResult *result, const gboolean *visible, double width,
						  double height, gboolean dark);

G_END_DECLS
