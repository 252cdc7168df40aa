/* PLACEHOLDER: replaced by the backend's implementation. */
#include "../core.h"

static void placeholder_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	(void)s;
	(void)u;
	(void)s_next;
	cl_step_fail(ctx, CL_STATUS_UNSUPPORTED, "backend not implemented yet");
}

static const ClParamDesc exact_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 1, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_exact = {
	.info = {
		.id = "exact",
		.label = "Exact (event-driven)",
		.family = "exact",
		.mirrors = "analytical gradients",
		.toi = false,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = exact_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};
