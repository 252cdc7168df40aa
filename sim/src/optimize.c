/* Gradient descent and Adam over named parameters of a scene. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* False when out of memory. */
static bool push(ClParam **params, int *count, int *capacity, ClParam p)
{
	if (!cl_grow(params, capacity, (size_t)*count + 1, sizeof **params))
		return false;
	(*params)[(*count)++] = p;
	return true;
}

ClParam *cl_optimize_expand(const ClScene *scene, const ClOptimizeDef *def, int *count, char *message, size_t size)
{
	ClParam *params = NULL;
	int capacity = 0;
	*count = 0;
	for (int k = 0; k < def->parameter_count; k++) {
		const char *name = def->parameters[k];
		const char *dot = strrchr(name, '.');
		int ball = -1;
		if (dot) {
			char id[CL_ID_MAX];
			size_t len = (size_t)(dot - name);
			if (len < sizeof id) {
				memcpy(id, name, len);
				id[len] = '\0';
				ball = cl_scene_find_ball(scene, id);
			}
		}
		bool pushed = true;
		if (ball >= 0 && strcmp(dot + 1, "control") == 0) {
			for (int n = 0; n < scene->steps; n++)
				for (int a = 0; a < 2; a++)
					pushed = pushed && push(&params, count, &capacity, (ClParam){.target = CL_PARAM_CONTROL, .ball = ball, .step = n, .axis = a, .wall = -1});
		} else if (ball >= 0 && (strcmp(dot + 1, "position") == 0 || strcmp(dot + 1, "velocity") == 0)) {
			ClParamTarget target = strcmp(dot + 1, "position") == 0 ? CL_PARAM_POSITION : CL_PARAM_VELOCITY;
			for (int a = 0; a < 2; a++)
				pushed = pushed && push(&params, count, &capacity, (ClParam){.target = target, .ball = ball, .axis = a, .wall = -1});
		} else {
			ball = -1; /* a scalar name, below */
		}
		if (!pushed) {
			snprintf(message, size, "optimize.parameters[%d]: out of memory", k);
			free(params);
			*count = 0;
			return NULL;
		}
		if (ball >= 0)
			continue;
		ClParam p;
		char reason[CL_MESSAGE_MAX];
		if (!cl_param_parse(scene, name, &p, reason, sizeof reason)) {
			snprintf(message, size, "optimize.parameters[%d]: %s", k, reason);
			free(params);
			*count = 0;
			return NULL;
		}
		if (!push(&params, count, &capacity, p)) {
			snprintf(message, size, "optimize.parameters[%d]: out of memory", k);
			free(params);
			*count = 0;
			return NULL;
		}
	}
	if (*count == 0) {
		snprintf(message, size, "optimize.parameters: nothing to optimize");
		free(params);
		return NULL;
	}
	return params;
}

void cl_optimize_apply(ClScene *scene, const ClParam *params, int count, const double *values)
{
	for (int k = 0; k < count; k++)
		cl_param_set(scene, &params[k], values[k]);
}

static const char *const estimator_names[CL_GRADIENT_ESTIMATOR_COUNT] = {
	[CL_GRADIENT_ADJOINT] = "adjoint",
	[CL_GRADIENT_ZOBG] = "zobg",
	[CL_GRADIENT_FOBG] = "fobg",
	[CL_GRADIENT_AOBG] = "aobg",
	[CL_GRADIENT_FD] = "fd",
};

/* θ back in its valid range after a step (sim.h: ClOptimizeDef). */
static double project(const ClParam *p, double x)
{
	switch (p->target) {
	case CL_PARAM_ELASTICITY:
		return fmin(fmax(x, 0.0), 1.0);
	case CL_PARAM_FRICTION:
		return fmax(x, 0.0);
	case CL_PARAM_RADIUS:
	case CL_PARAM_MASS:
	case CL_PARAM_DURATION:
		return fmax(x, CL_OPTIMIZE_POSITIVE_MIN);
	case CL_PARAM_BACKEND: {
		const ClParamDesc *d = &cl_backend_info(p->backend)->params[p->index];
		return fmin(fmax(x, d->min), d->max);
	}
	default:
		return x;
	}
}

/* Why the backend cannot descend along def->gradient for these
 * parameters, into message; false when it can. */
static bool refuse(const ClScene *scene, int backend, const ClOptimizeDef *def, const ClParam *params, int count,
				   char *message, size_t size)
{
	const char *id = cl_backend_info(backend)->id;
	for (int k = 0; k < count; k++) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, &params[k], name, sizeof name);
		if (params[k].target == CL_PARAM_BACKEND && params[k].backend != backend) {
			snprintf(message, size, "%s is a parameter of %s, which %s does not have", name,
					 cl_backend_info(params[k].backend)->id, id);
			return true;
		}
		if (def->gradient == CL_GRADIENT_ADJOINT && !cl_backend_has_param_adjoint(backend, &params[k])) {
			snprintf(message, size,
					 "%s has no adjoint of dL/d%s; gradient \"fd\" takes central differences instead",
					 id, name);
			return true;
		}
		if ((def->gradient == CL_GRADIENT_FOBG || def->gradient == CL_GRADIENT_AOBG) &&
			!cl_param_has_adjoint(&params[k])) {
			snprintf(message, size,
					 "%s needs the adjoint of dL/d%s at each sample (zobg or fd do not)",
					 cl_gradient_estimator_name(def->gradient), name);
			return true;
		}
	}
	return false;
}

/* The loss at the values set into work, and dL/dθ by the backend's adjoint
 * (recorded with the parameter columns) or, for CL_GRADIENT_FD, central
 * differences of its loss. False with a reason in status when it stops. */
static bool physical_gradient(ClScene *work, int backend, const ClOptimizeDef *def, const ClParam *params, int count,
							  int iteration, double *loss, double *g, ClStatus *status)
{
	ClRollout *r = cl_rollout_new(work, backend);
	if (!r) {
		*status = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = -1};
		snprintf(status->message, sizeof status->message, "out of memory for the optimization");
		return false;
	}
	bool fd = def->gradient == CL_GRADIENT_FD;
	cl_rollout_record_params(r, !fd);
	cl_rollout_run(r, NULL, NULL, !fd);
	*status = *cl_rollout_status(r);
	*loss = cl_rollout_loss(r);
	bool ok = !(cl_status_is_fatal(status->code) && status->code != CL_STATUS_OK);
	if (ok && !fd)
		cl_rollout_param_gradient(r, params, count, g);
	cl_rollout_free(r);
	for (int k = 0; ok && k < count; k++) {
		if (fd) {
			ClStatus fd_status;
			g[k] = cl_finite_difference(work, backend, &params[k], cl_fd_step(work, backend, &params[k]), &fd_status);
		}
		if (!isfinite(g[k])) {
			char name[CL_NAME_MAX];
			cl_param_name(work, &params[k], name, sizeof name);
			*status = (ClStatus){.code = CL_STATUS_NOT_FINITE, .step = -1};
			snprintf(status->message, sizeof status->message, "iteration %d: the %s of dL/d%s is not finite",
					 iteration, fd ? "central difference" : "adjoint", name);
			ok = false;
		}
	}
	return ok;
}

const char *cl_gradient_estimator_name(ClGradientEstimator estimator)
{
	return estimator >= 0 && estimator < CL_GRADIENT_ESTIMATOR_COUNT ? estimator_names[estimator] : "unknown";
}

int cl_gradient_estimator_find(const char *name)
{
	for (int e = 0; e < CL_GRADIENT_ESTIMATOR_COUNT; e++)
		if (strcmp(estimator_names[e], name) == 0)
			return e;
	return -1;
}

/* Iteration `iteration`'s smoothed estimate of the gradient at the values
 * *at[k], set into work first: the loss at θ into *loss, the estimate into
 * g. False with a reason in status when it cannot be taken. */
static bool smoothed_gradient(ClScene *work, int backend, const ClOptimizeDef *def, const ClParam *params, int count,
							  double *const *at, int iteration, const double *sigma, double *loss, double *g,
							  ClStatus *status)
{
	for (int k = 0; k < count; k++)
		cl_param_set(work, &params[k], *at[k]);
	ClSmoothDef sd = cl_smooth_default_def();
	sd.params = params;
	sd.sigma = sigma;
	sd.param_count = count;
	sd.samples = def->samples;
	sd.seed = def->seed + (uint64_t)iteration;
	sd.zeroth_order_only = def->gradient == CL_GRADIENT_ZOBG;
	sd.backends = &backend;
	sd.backend_count = 1;
	ClSmoothResult result;
	if (!cl_smooth(work, &sd, &result, status))
		return false;
	*status = result.status;
	*loss = result.loss;
	bool ok = !cl_status_is_fatal(result.status.code);
	for (int k = 0; ok && k < count; k++) {
		const ClSmoothGradient *e = &result.gradient[k];
		g[k] = def->gradient == CL_GRADIENT_ZOBG ? e->zobg.mean : def->gradient == CL_GRADIENT_FOBG ? e->fobg.mean
																									  : e->aobg.mean;
		if (!isfinite(g[k])) {
			char name[CL_NAME_MAX];
			cl_param_name(work, &params[k], name, sizeof name);
			*status = (ClStatus){.code = CL_STATUS_NOT_FINITE, .step = -1};
			snprintf(status->message, sizeof status->message,
					 "iteration %d: the %s estimate of dL/d%s is not finite (%d of %d samples usable)", iteration,
					 cl_gradient_estimator_name(def->gradient), name,
					 def->gradient == CL_GRADIENT_ZOBG ? result.zobg_terms : result.fobg_terms, result.terms);
			ok = false;
		}
	}
	cl_smooth_result_clear(&result);
	return ok;
}

bool cl_optimize_check(const ClScene *scene, int backend, const ClOptimizeDef *def, char *message, size_t size)
{
	int count;
	ClParam *params = cl_optimize_expand(scene, def, &count, message, size);
	bool ok = params && !refuse(scene, backend, def, params, count, message, size);
	free(params);
	return ok;
}

void cl_optimize_result_clear(ClOptimizeResult *result)
{
	free(result->loss);
	free(result->parameters);
	memset(result, 0, sizeof *result);
}

bool cl_optimize(const ClScene *scene, int backend, const ClOptimizeDef *def, ClOptimizeProgress progress, void *user,
				 ClOptimizeResult *result)
{
	memset(result, 0, sizeof *result);
	result->status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	if (!def)
		def = &scene->optimize;
	int count;
	ClParam *params = cl_optimize_expand(scene, def, &count, result->status.message, sizeof result->status.message);
	if (!params || refuse(scene, backend, def, params, count, result->status.message,
						   sizeof result->status.message)) {
		result->status.code = CL_STATUS_UNSUPPORTED;
		free(params);
		return false;
	}
	/* physical parameters (and central differences) go through a copy of
	 * the scene with the values set, rather than the rollout's s0 and u */
	bool physical = def->gradient == CL_GRADIENT_FD;
	for (int k = 0; k < count; k++)
		physical = physical || !cl_param_has_adjoint(&params[k]);
	/* a float32 peer stores its parameters in float32 and updates them there */
	bool f32 = cl_backend_is_float32(scene, backend);
	int ns = cl_state_size(scene), nu = cl_control_size(scene);
	/* its arrays and its recording rollout, known to fit before any is allocated */
	size_t bytes = sizeof(double) * (2 * ((size_t)ns + (size_t)nu) + 5 * (size_t)count + (size_t)def->iterations) +
				   (sizeof(ClParam) + 2 * sizeof(double *)) * (size_t)count + cl_rollout_bytes(scene, backend, true);
	if (!cl_memory_fits(scene, bytes, "the optimization", &result->status)) {
		free(params);
		return false;
	}
	double *s0 = cl_calloc((size_t)ns, sizeof(double));
	double *u = cl_calloc((size_t)nu, sizeof(double));
	double *g_s0 = cl_calloc((size_t)ns, sizeof(double));
	double *g_u = cl_calloc((size_t)nu, sizeof(double));
	double *m = cl_calloc((size_t)count, sizeof(double));
	double *v = cl_calloc((size_t)count, sizeof(double));
	double *values = cl_calloc((size_t)count, sizeof(double));
	result->loss = cl_calloc((size_t)def->iterations + 1, sizeof(double));
	/* each parameter's entry of (s0, u) and of the adjoint's (g_s0, g_u) */
	double **at = cl_calloc((size_t)count, sizeof(double *)), **grad_at = cl_calloc((size_t)count, sizeof(double *));
	double *sigma = cl_calloc((size_t)count, sizeof(double)), *grad = cl_calloc((size_t)count, sizeof(double));
	bool smoothed = def->gradient != CL_GRADIENT_ADJOINT && def->gradient != CL_GRADIENT_FD;
	bool ready = s0 && u && g_s0 && g_u && m && v && values && result->loss && at && grad_at && sigma && grad;
	ClRollout *r = ready && !smoothed && !physical ? cl_rollout_new(scene, backend) : NULL;
	ClScene *work = ready && (smoothed || physical) ? cl_scene_copy(scene) : NULL;
	if (!r && !work) {
		result->status = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = -1};
		snprintf(result->status.message, sizeof result->status.message, "out of memory for the optimization");
		count = 0; /* no parameters to return */
	} else {
		cl_scene_initial_state(scene, s0);
		cl_scene_controls(scene, u);
	}
	for (int k = 0; k < count; k++) {
		if (physical) {
			values[k] = cl_param_get(scene, &params[k]);
			at[k] = &values[k];
			grad_at[k] = &grad[k];
		} else {
			at[k] = cl_param_slot(scene, &params[k], s0, u);
			grad_at[k] = cl_param_slot(scene, &params[k], g_s0, g_u);
		}
		*at[k] = cl_round(f32, *at[k]);
		sigma[k] = def->sigma;
	}
	double lr = def->learning_rate;
	for (int it = 0; (r || work) && it < def->iterations; it++) {
		ClStatus step_status;
		const ClStatus *status = &step_status;
		if (physical && !smoothed) {
			cl_optimize_apply(work, params, count, values);
			if (!physical_gradient(work, backend, def, params, count, it, &result->loss[it], grad, &step_status)) {
				result->status = step_status;
				break;
			}
		} else if (smoothed) {
			if (!smoothed_gradient(work, backend, def, params, count, at, it, sigma, &result->loss[it], grad,
								   &step_status)) {
				result->status = step_status;
				break;
			}
		} else {
			cl_rollout_run(r, s0, u, true);
			status = cl_rollout_status(r);
			if (cl_status_is_fatal(status->code) && status->code != CL_STATUS_OK) {
				result->status = *status;
				break;
			}
			result->loss[it] = cl_rollout_loss(r);
			cl_rollout_gradient(r, g_s0, g_u);
			for (int k = 0; k < count; k++)
				grad[k] = *grad_at[k];
		}
		if (result->status.code == CL_STATUS_OK && status->code != CL_STATUS_OK)
			result->status = *status; /* first warning, e.g. a grazing contact */
		for (int k = 0; k < count; k++) {
			double *x = at[k];
			double g = grad[k];
			if (def->optimizer == CL_OPTIMIZER_ADAM) {
				const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
				m[k] = beta1 * m[k] + (1 - beta1) * g;
				v[k] = beta2 * v[k] + (1 - beta2) * g * g;
				double mh = m[k] / (1 - pow(beta1, it + 1)), vh = v[k] / (1 - pow(beta2, it + 1));
				*x = cl_round(f32, *x - lr * mh / (sqrt(vh) + eps));
			} else {
				*x = cl_round(f32, *x - cl_round(f32, lr * cl_round(f32, g)));
			}
			*x = project(&params[k], *x); /* no change to initial states and controls */
		}
		result->iterations_done = it + 1;
		if (progress) {
			for (int k = 0; k < count; k++)
				values[k] = *at[k];
			if (!progress(it, result->loss[it], values, user)) {
				result->status = (ClStatus){.code = CL_STATUS_CANCELLED, .step = -1};
				snprintf(result->status.message, sizeof result->status.message, "cancelled at iteration %d", it);
				break;
			}
		}
	}
	for (int k = 0; k < count; k++)
		values[k] = *at[k];
	result->parameter_count = count;
	result->parameters = values;
	cl_rollout_free(r);
	cl_scene_free(work);
	free(at);
	free(grad_at);
	free(sigma);
	free(grad);
	free(params);
	free(s0);
	free(u);
	free(g_s0);
	free(g_u);
	free(m);
	free(v);
	return result->status.code == CL_STATUS_OK || !cl_status_is_fatal(result->status.code);
}
