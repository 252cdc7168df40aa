/* PLACEHOLDER: replaced by the backend's implementation. */
#include "../core.h"

static void placeholder_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	(void)s;
	(void)u;
	(void)s_next;
	cl_step_fail(ctx, CL_STATUS_UNSUPPORTED, "backend not implemented yet");
}

static const ClParamDesc convex_toi_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_convex_toi = {
	.info = {
		.id = "convex-toi",
		.label = "Convex QP + TOI",
		.family = "convex",
		.mirrors = "DiffCoSim",
		.toi = true,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = convex_toi_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};

static const ClParamDesc convex_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_convex = {
	.info = {
		.id = "convex",
		.label = "Convex QP",
		.family = "convex",
		.mirrors = "DiffCoSim",
		.toi = false,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = convex_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};
