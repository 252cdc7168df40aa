/* The Gradients view: rows = backends, columns = the loss and dL/d every
 * ball's initial position, velocity and control[0] (with many balls, those
 * of the selected ball and the balls in the loss, until "all balls" is
 * asked for); each cell shows the backend's adjoint and, as it arrives, its
 * own finite difference, coloured by agreement with exact (cl_agreement). */
#pragma once

#include "cl-results-view.h"

G_BEGIN_DECLS

#define CL_TYPE_GRADIENT_VIEW (cl_gradient_view_get_type())
G_DECLARE_FINAL_TYPE(ClGradientView, cl_gradient_view, CL, GRADIENT_VIEW, GtkWidget)

G_END_DECLS
