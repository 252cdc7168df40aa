/* Rollout: forward pass with recorded Jacobians, adjoint, forward mode, FD.
 * One mechanism for every backend: a backend is only a step function. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A coordinate beyond this means the simulation blew up, not that the ball flew far. */
#define CL_DIVERGENCE_LIMIT 1e8

struct ClRollout {
	const ClScene *scene;
	const ClBackend *backend;
	int backend_index;
	int ball_count, state_size, steps;
	double dt;
	double *states;   /* (steps + 1) × state_size */
	double *controls; /* steps × 2·ball_count: the controls of the last run */
	double *inverse_mass;
	double *scratch;
	ClTape tape;
	bool recorded;
	void *workspace;
	ClStatus status;
	int steps_done;
	double loss;
	ClContactEvent *events;
	int event_count, event_capacity;
};

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (!p)
		abort();
	return p;
}

ClRollout *cl_rollout_new(const ClScene *scene, int backend)
{
	const ClBackend *impl = cl_backend_get(backend);
	if (!impl)
		return NULL;
	ClRollout *r = xcalloc(1, sizeof *r);
	r->scene = scene;
	r->backend = impl;
	r->backend_index = backend;
	r->ball_count = scene->ball_count;
	r->state_size = cl_state_size(scene);
	r->steps = scene->steps;
	r->dt = cl_scene_dt(scene);
	r->states = xcalloc((size_t)(r->steps + 1) * (size_t)r->state_size, sizeof(double));
	r->controls = xcalloc((size_t)cl_control_size(scene), sizeof(double));
	r->inverse_mass = xcalloc((size_t)r->ball_count, sizeof(double));
	for (int i = 0; i < r->ball_count; i++)
		r->inverse_mass[i] = 1.0 / scene->balls[i].mass;
	r->scratch = xcalloc((size_t)r->state_size, sizeof(double));
	cl_tape_init(&r->tape, r->ball_count, r->inverse_mass, r->steps);
	if (impl->create)
		r->workspace = impl->create(scene, scene->backend_params[backend].values);
	return r;
}

void cl_rollout_free(ClRollout *r)
{
	if (!r)
		return;
	if (r->backend->destroy)
		r->backend->destroy(r->workspace);
	cl_tape_release(&r->tape);
	free(r->states);
	free(r->controls);
	free(r->inverse_mass);
	free(r->scratch);
	free(r->events);
	free(r);
}

bool cl_status_is_fatal(ClStatusCode code)
{
	switch (code) {
	case CL_STATUS_OK:
	case CL_STATUS_GRAZING:
	case CL_STATUS_SIMULTANEOUS:
	case CL_STATUS_ZENO:
	case CL_STATUS_IN_CONTACT:
		return false;
	default:
		return true;
	}
}

void cl_step_fail(ClStepContext *ctx, ClStatusCode code, const char *format, ...)
{
	/* the first problem is the cause; a fatal one overrides a warning */
	if (ctx->status->code != CL_STATUS_OK && !(cl_status_is_fatal(code) && !cl_status_is_fatal(ctx->status->code)))
		return;
	ctx->status->code = code;
	ctx->status->step = ctx->step;
	va_list args;
	va_start(args, format);
	vsnprintf(ctx->status->message, sizeof ctx->status->message, format, args);
	va_end(args);
}

bool cl_status_fail(ClStatus *status, ClStatusCode code, const char *format, ...)
{
	if (status) {
		*status = (ClStatus){.code = code, .step = -1};
		va_list args;
		va_start(args, format);
		vsnprintf(status->message, sizeof status->message, format, args);
		va_end(args);
	}
	return false;
}

void cl_step_contact(ClStepContext *ctx, double time, int ball, int other)
{
	ClRollout *r = ctx->rollout;
	if (r->event_count == r->event_capacity) {
		int capacity = r->event_capacity ? 2 * r->event_capacity : 64;
		ClContactEvent *events = realloc(r->events, sizeof *events * (size_t)capacity);
		if (!events)
			abort();
		r->events = events;
		r->event_capacity = capacity;
	}
	r->events[r->event_count++] = (ClContactEvent){.step = ctx->step, .time = time, .ball = ball, .other = other};
}

static const char *state_component(int i)
{
	return i % CL_BALL_STATE < 2 ? "position" : "velocity";
}

/* Generic guard: a blown-up or NaN state stops the run with a reason. */
static void check_state(ClStepContext *ctx, const double *s)
{
	const ClScene *scene = ctx->scene;
	for (int i = 0; i < ctx->rollout->state_size; i++) {
		if (!isfinite(s[i])) {
			cl_step_fail(ctx, CL_STATUS_NOT_FINITE, "ball \"%s\": %s became %g at step %d (t = %g s)",
						 scene->balls[i / CL_BALL_STATE].id, state_component(i), s[i], ctx->step,
						 (ctx->step + 1) * ctx->dt);
			return;
		}
		if (fabs(s[i]) > CL_DIVERGENCE_LIMIT) {
			cl_step_fail(ctx, CL_STATUS_DIVERGED,
						 "ball \"%s\": %s exceeded %g at step %d (t = %g s): the simulation diverged "
						 "(stiffness too large for this dt?)",
						 scene->balls[i / CL_BALL_STATE].id, state_component(i), CL_DIVERGENCE_LIMIT,
						 ctx->step, (ctx->step + 1) * ctx->dt);
			return;
		}
	}
}

bool cl_rollout_run(ClRollout *r, const double *s0, const double *u, bool record)
{
	const ClScene *scene = r->scene;
	int ns = r->state_size, nu = 2 * r->ball_count;
	if (s0)
		memcpy(r->states, s0, sizeof(double) * (size_t)ns);
	else
		cl_scene_initial_state(scene, r->states);
	if (u)
		memcpy(r->controls, u, sizeof(double) * (size_t)nu * (size_t)r->steps);
	else
		cl_scene_controls(scene, r->controls);
	r->status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	r->event_count = 0;
	r->recorded = record;
	cl_tape_reset(&r->tape);
	ClStepContext ctx = {
		.scene = scene,
		.params = scene->backend_params[r->backend_index].values,
		.dt = r->dt,
		.tape = record ? &r->tape : NULL,
		.workspace = r->workspace,
		.status = &r->status,
		.rollout = r,
	};
	r->steps_done = 0;
	for (int n = 0; n < r->steps; n++) {
		ctx.step = n;
		const double *s = r->states + (size_t)n * (size_t)ns;
		double *s_next = r->states + (size_t)(n + 1) * (size_t)ns;
		if (record)
			cl_tape_begin_step(&r->tape, n);
		r->backend->step(&ctx, s, r->controls + (size_t)n * (size_t)nu, s_next);
		if (record)
			cl_tape_end_step(&r->tape, n);
		if (r->status.code == CL_STATUS_OK || !cl_status_is_fatal(r->status.code))
			check_state(&ctx, s_next);
		if (cl_status_is_fatal(r->status.code))
			break;
		r->steps_done = n + 1;
	}
	if (r->steps_done < r->steps) {
		r->loss = NAN;
		return false;
	}
	r->loss = cl_loss(scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, NULL, NULL);
	return r->status.code == CL_STATUS_OK;
}

const ClScene *cl_rollout_scene(const ClRollout *r)
{
	return r->scene;
}

int cl_rollout_backend(const ClRollout *r)
{
	return r->backend_index;
}

const ClStatus *cl_rollout_status(const ClRollout *r)
{
	return &r->status;
}

const double *cl_rollout_states(const ClRollout *r)
{
	return r->states;
}

int cl_rollout_steps_done(const ClRollout *r)
{
	return r->steps_done;
}

double cl_rollout_loss(const ClRollout *r)
{
	return r->loss;
}

int cl_rollout_event_count(const ClRollout *r)
{
	return r->event_count;
}

const ClContactEvent *cl_rollout_events(const ClRollout *r)
{
	return r->events;
}

double cl_loss(const ClScene *scene, const double *s, const double *u, double *dl_ds, double *dl_du)
{
	int nb = scene->ball_count;
	double dt = cl_scene_dt(scene);
	if (dl_ds)
		memset(dl_ds, 0, sizeof(double) * (size_t)cl_state_size(scene));
	if (dl_du)
		memset(dl_du, 0, sizeof(double) * (size_t)cl_control_size(scene));
	double loss = 0.0;
	for (int k = 0; k < scene->loss_count; k++) {
		const ClLossTerm *t = &scene->loss[k];
		const double *p = s + CL_BALL_STATE * t->ball;
		switch (t->type) {
		case CL_LOSS_FINAL_POSITION: {
			double dx = p[0] - t->target.x, dy = p[1] - t->target.y;
			loss += t->weight * (dx * dx + dy * dy);
			if (dl_ds) {
				dl_ds[CL_BALL_STATE * t->ball] += 2.0 * t->weight * dx;
				dl_ds[CL_BALL_STATE * t->ball + 1] += 2.0 * t->weight * dy;
			}
			break;
		}
		case CL_LOSS_FINAL_COORDINATE:
			loss += t->weight * p[t->axis];
			if (dl_ds)
				dl_ds[CL_BALL_STATE * t->ball + t->axis] += t->weight;
			break;
		case CL_LOSS_CONTROL_EFFORT:
			for (int n = 0; n < scene->steps; n++) {
				const double *f = u + 2 * ((size_t)n * (size_t)nb + (size_t)t->ball);
				loss += t->weight * (f[0] * f[0] + f[1] * f[1]) * dt;
				if (dl_du) {
					double *g = dl_du + 2 * ((size_t)n * (size_t)nb + (size_t)t->ball);
					g[0] += 2.0 * t->weight * f[0] * dt;
					g[1] += 2.0 * t->weight * f[1] * dt;
				}
			}
			break;
		case CL_LOSS_TYPE_COUNT:
			break;
		}
	}
	return loss;
}

static void fill_nan(double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = NAN;
}

void cl_rollout_gradient(const ClRollout *r, double *dl_ds0, double *dl_du)
{
	int ns = r->state_size, nu = 2 * r->ball_count;
	size_t control_size = (size_t)nu * (size_t)r->steps;
	if (!r->recorded || r->steps_done < r->steps) {
		if (dl_ds0)
			fill_nan(dl_ds0, (size_t)ns);
		if (dl_du)
			fill_nan(dl_du, control_size);
		return;
	}
	double *lambda = calloc((size_t)ns, sizeof(double));
	double *g_u = dl_du ? dl_du : calloc(control_size ? control_size : 1, sizeof(double));
	if (!lambda || !g_u)
		abort();
	cl_loss(r->scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, lambda, g_u);
	for (int n = r->steps - 1; n >= 0; n--)
		cl_tape_adjoint_step(&r->tape, n, lambda, g_u + (size_t)n * (size_t)nu, r->scratch);
	if (dl_ds0)
		memcpy(dl_ds0, lambda, sizeof(double) * (size_t)ns);
	if (!dl_du)
		free(g_u);
	free(lambda);
}

double cl_rollout_jvp(const ClRollout *r, const double *ds0, const double *du, double *ds_final)
{
	int ns = r->state_size, nu = 2 * r->ball_count;
	if (!r->recorded || r->steps_done < r->steps)
		return NAN;
	double *ds = calloc((size_t)ns, sizeof(double));
	double *dl_ds = calloc((size_t)ns, sizeof(double));
	double *dl_du = calloc((size_t)nu * (size_t)r->steps + 1, sizeof(double));
	if (!ds || !dl_ds || !dl_du)
		abort();
	if (ds0)
		memcpy(ds, ds0, sizeof(double) * (size_t)ns);
	for (int n = 0; n < r->steps; n++)
		cl_tape_forward_step(&r->tape, n, ds, du ? du + (size_t)n * (size_t)nu : NULL, r->scratch);
	cl_loss(r->scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, dl_ds, dl_du);
	double d = 0.0;
	for (int i = 0; i < ns; i++)
		d += dl_ds[i] * ds[i];
	if (du)
		for (size_t i = 0; i < (size_t)nu * (size_t)r->steps; i++)
			d += dl_du[i] * du[i];
	if (ds_final)
		memcpy(ds_final, ds, sizeof(double) * (size_t)ns);
	free(ds);
	free(dl_ds);
	free(dl_du);
	return d;
}

static double loss_at(const ClScene *scene, int backend, const ClParam *param, double value, ClStatus *status)
{
	ClScene *copy = cl_scene_copy(scene);
	cl_param_set(copy, param, value);
	ClRollout *r = cl_rollout_new(copy, backend);
	cl_rollout_run(r, NULL, NULL, false);
	double loss = cl_rollout_loss(r);
	if (status && status->code == CL_STATUS_OK)
		*status = *cl_rollout_status(r);
	cl_rollout_free(r);
	cl_scene_free(copy);
	return loss;
}

double cl_finite_difference(const ClScene *scene, int backend, const ClParam *param, double h, ClStatus *status)
{
	if (status)
		*status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	double x = cl_param_get(scene, param);
	double plus = loss_at(scene, backend, param, x + h, status);
	double minus = loss_at(scene, backend, param, x - h, status);
	return (plus - minus) / (2.0 * h);
}
