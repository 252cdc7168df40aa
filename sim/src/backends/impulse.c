/* PLACEHOLDER: replaced by the backend's implementation. */
#include "../core.h"

static void placeholder_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	(void)s;
	(void)u;
	(void)s_next;
	cl_step_fail(ctx, CL_STATUS_UNSUPPORTED, "backend not implemented yet");
}

static const ClParamDesc impulse_toi_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_impulse_toi = {
	.info = {
		.id = "impulse-toi",
		.label = "Direct impulse + TOI",
		.family = "impulse",
		.mirrors = "DiffTaichi",
		.toi = true,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = impulse_toi_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};

static const ClParamDesc impulse_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_impulse = {
	.info = {
		.id = "impulse",
		.label = "Direct impulse",
		.family = "impulse",
		.mirrors = "DiffTaichi",
		.toi = false,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = impulse_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};
