/* The Perturbation view: for one parameter θ (a ball's initial position or
 * velocity component, or its first control), each backend's runs at θ ± δ
 * beside its first-order prediction (perturbation-figure.c). While shown it
 * asks the runner to include the study in every Run. */
#pragma once

#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_PERTURBATION_VIEW (cl_perturbation_view_get_type())
G_DECLARE_FINAL_TYPE(ClPerturbationView, cl_perturbation_view, CL, PERTURBATION_VIEW, GtkWidget)

G_END_DECLS
