/* The Gradients view: rows = backends, columns = the loss and dL/d every
 * ball's initial position, velocity and control[0]; each cell shows the
 * backend's adjoint value and its own finite difference, coloured by sign
 * agreement and relative error against exact. */
#pragma once

#include "cl-compute-job.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_GRADIENT_VIEW (cl_gradient_view_get_type())
G_DECLARE_FINAL_TYPE(ClGradientView, cl_gradient_view, CL, GRADIENT_VIEW, GtkWidget)

GtkWidget *cl_gradient_view_new(void);
void cl_gradient_view_set_result(ClGradientView *view, ClComputeResult *result);
/* The table's accessible description: how many runs completed and whether
 * one is running, so assistive tools (and the GUI tests) can wait for it. */
void cl_gradient_view_set_progress_state(ClGradientView *view, int runs_completed, gboolean computing);
/* Outlines what a lesson points at: the cell (backends[i], parameters[i]),
 * or backend i's whole row when parameters[i] is NULL or "". It stays
 * across results until replaced; count 0 clears it. */
void cl_gradient_view_set_highlight(ClGradientView *view, const int *backends, const char *const *parameters,
									int count);
/* How a value compares with exact's (also used for the cell colour). */
typedef enum {
	CL_AGREEMENT_REFERENCE, /* the exact row itself */
	CL_AGREEMENT_GOOD,      /* relative error < 1e-3 */
	CL_AGREEMENT_FAIR,      /* < 10 % */
	CL_AGREEMENT_POOR,      /* same sign, ≥ 10 % */
	CL_AGREEMENT_WRONG_SIGN,
	CL_AGREEMENT_UNKNOWN, /* no exact value, or not finite */
} ClAgreement;
ClAgreement cl_gradient_agreement(double value, double exact, double *relative_error);

G_END_DECLS
