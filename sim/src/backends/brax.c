/* PLACEHOLDER: replaced by the backend's implementation. */
#include "../core.h"

static void placeholder_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	(void)s;
	(void)u;
	(void)s_next;
	cl_step_fail(ctx, CL_STATUS_UNSUPPORTED, "backend not implemented yet");
}

static const ClParamDesc compliant_brax_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_compliant_brax = {
	.info = {
		.id = "compliant-brax",
		.label = "Compliant (Brax)",
		.family = "compliant",
		.mirrors = "Brax 0.0.13 legacy_spring",
		.toi = false,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = compliant_brax_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};

static const ClParamDesc pbd_brax_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, 0, 0, 1, "", "arithmetic of the forward pass", cl_precision_choices},
};

const ClBackend cl_backend_pbd_brax = {
	.info = {
		.id = "pbd-brax",
		.label = "PBD (Brax)",
		.family = "pbd",
		.mirrors = "Brax 0.0.13 pbd",
		.toi = false,
		.gradient_is_derivative = true,
		.summary = "not implemented yet",
		.params = pbd_brax_params,
		.param_count = 1,
	},
	.step = placeholder_step,
};
