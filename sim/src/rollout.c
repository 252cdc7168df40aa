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
	double *states;   /* (steps + 1) × state_size; one state when the setup failed */
	double *controls; /* steps × 2·ball_count: the controls of the last run */
	double *inverse_mass;
	double *scratch;
	ClTape tape;
	bool recorded;
	bool reserved; /* the tape has room for a contact-free recording */
	void *workspace;
	ClMemoryAccount memory; /* everything above, charged against scene->memory_budget */
	ClStatus setup;         /* not ok when the rollout could not be set up: every run ends with it */
	ClStatus status;
	int steps_done;
	double loss;
	ClContactEvent *events;
	int event_count, event_capacity;
};

/* The trajectory's states and controls and the small per-ball arrays. */
static size_t trajectory_bytes(const ClScene *scene)
{
	size_t ns = (size_t)cl_state_size(scene), nb = (size_t)scene->ball_count, steps = (size_t)scene->steps;
	return sizeof(double) * ((steps + 1) * ns + steps * 2 * nb + nb + ns) + sizeof(int) * (steps + 1);
}

size_t cl_rollout_bytes(const ClScene *scene, int backend, bool record)
{
	const ClBackend *impl = cl_backend_get(backend);
	if (!impl)
		return 0;
	size_t bytes = trajectory_bytes(scene) + (impl->workspace_bytes ? impl->workspace_bytes(scene) : 0);
	if (record)
		bytes += cl_tape_bytes(scene->steps, cl_backend_tape_blocks(impl, scene->ball_count));
	return bytes;
}

bool cl_memory_fits(const ClScene *scene, size_t bytes, const char *what, ClStatus *status)
{
	if (bytes <= scene->memory_budget)
		return true;
	char need[32], budget[32];
	cl_format_bytes(bytes, need, sizeof need);
	cl_format_bytes(scene->memory_budget, budget, sizeof budget);
	*status = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = -1};
	snprintf(status->message, sizeof status->message, "%s needs %s, more than the memory budget of %s", what, need,
			 budget);
	return false;
}

/* The status of a run whose memory ran out at step (−1: before the first,
 * then the system refused). */
static void memory_failure(ClRollout *r, int step)
{
	const ClMemoryAccount *m = &r->memory;
	char held[32], budget[32], more[32]; /* more: the request that failed */
	cl_format_bytes(m->used, held, sizeof held);
	cl_format_bytes(m->limit, budget, sizeof budget);
	cl_format_bytes(m->requested, more, sizeof more);
	ClStatus *s = &r->status;
	*s = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = step};
	if (m->failure == CL_MEMORY_EXHAUSTED)
		snprintf(s->message, sizeof s->message,
				 "out of memory: %s more could not be allocated (the run holds %s of its budget of %s)", more, held,
				 budget);
	else
		snprintf(s->message, sizeof s->message,
				 "the memory budget of %s is used up at t = %g s, after %d contacts: the run's states, recorded "
				 "Jacobians and contacts fill it",
				 budget, (step + 1) * r->dt, r->event_count);
}

ClRollout *cl_rollout_new(const ClScene *scene, int backend)
{
	const ClBackend *impl = cl_backend_get(backend);
	if (!impl)
		return NULL;
	ClRollout *r = cl_calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->scene = scene;
	r->backend = impl;
	r->backend_index = backend;
	r->ball_count = scene->ball_count;
	r->state_size = cl_state_size(scene);
	r->steps = scene->steps;
	r->dt = cl_scene_dt(scene);
	r->memory.limit = scene->memory_budget;
	r->setup = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	char what[96];
	snprintf(what, sizeof what, "a run of %d steps × %d balls", r->steps, r->ball_count);
	size_t bytes = cl_rollout_bytes(scene, backend, false);
	bool ok = cl_memory_fits(scene, bytes, what, &r->setup);
	if (ok) {
		r->states = cl_calloc((size_t)(r->steps + 1) * (size_t)r->state_size, sizeof(double));
		r->controls = cl_calloc((size_t)cl_control_size(scene), sizeof(double));
		r->inverse_mass = cl_calloc((size_t)r->ball_count, sizeof(double));
		r->scratch = cl_calloc((size_t)r->state_size, sizeof(double));
		ok = r->states && r->controls && r->inverse_mass && r->scratch &&
			 cl_memory_charge(&r->memory, bytes) &&
			 cl_tape_init(&r->tape, r->ball_count, r->inverse_mass, r->steps, &r->memory);
		if (ok && impl->create)
			ok = (r->workspace = impl->create(scene, scene->backend_params[backend].values)) != NULL;
		if (!ok) {
			r->memory.failure = CL_MEMORY_EXHAUSTED;
			r->memory.requested = bytes;
			memory_failure(r, -1);
			r->setup = r->status;
		}
	}
	if (!ok) {
		/* one state, so that the trajectory of a run that stops before its first step reads */
		if (r->backend->destroy && r->workspace)
			r->backend->destroy(r->workspace);
		r->workspace = NULL;
		cl_tape_release(&r->tape);
		free(r->states);
		free(r->controls);
		free(r->scratch);
		r->controls = r->scratch = NULL;
		if (!(r->states = cl_calloc((size_t)r->state_size, sizeof(double)))) {
			free(r->inverse_mass);
			free(r);
			return NULL;
		}
		return r;
	}
	for (int i = 0; i < r->ball_count; i++)
		r->inverse_mass[i] = 1.0 / scene->balls[i].mass;
	return r;
}

void cl_rollout_free(ClRollout *r)
{
	if (!r)
		return;
	if (r->backend->destroy && r->workspace)
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

void cl_step_out_of_memory(ClStepContext *ctx, const char *what)
{
	cl_step_fail(ctx, CL_STATUS_MEMORY_LIMIT, "out of memory: %s could not be allocated at step %d", what, ctx->step);
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
	/* a contact that does not fit is dropped; the run stops after this step */
	if (!cl_memory_grow(&r->memory, &r->events, &r->event_capacity, (size_t)r->event_count + 1, sizeof *r->events))
		return;
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
	r->event_count = 0;
	r->recorded = record;
	r->steps_done = 0;
	r->loss = NAN;
	if (r->setup.code != CL_STATUS_OK) {
		r->status = r->setup;
		return false;
	}
	if (u)
		memcpy(r->controls, u, sizeof(double) * (size_t)nu * (size_t)r->steps);
	else
		cl_scene_controls(scene, r->controls);
	r->status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	r->memory.failure = CL_MEMORY_OK;
	cl_tape_reset(&r->tape);
	if (record && !r->reserved) {
		/* the least a recording takes, known before the first step */
		char what[96];
		snprintf(what, sizeof what, "recording a run of %d steps × %d balls", r->steps, r->ball_count);
		if (!cl_memory_fits(scene, cl_rollout_bytes(scene, r->backend_index, true), what, &r->status))
			return false;
		if (!cl_tape_reserve(&r->tape, r->steps, cl_backend_tape_blocks(r->backend, r->ball_count))) {
			memory_failure(r, -1);
			return false;
		}
		r->reserved = true;
	}
	ClStepContext ctx = {
		.scene = scene,
		.params = scene->backend_params[r->backend_index].values,
		.dt = r->dt,
		.tape = record ? &r->tape : NULL,
		.workspace = r->workspace,
		.status = &r->status,
		.rollout = r,
	};
	for (int n = 0; n < r->steps; n++) {
		ctx.step = n;
		const double *s = r->states + (size_t)n * (size_t)ns;
		double *s_next = r->states + (size_t)(n + 1) * (size_t)ns;
		if (record)
			cl_tape_begin_step(&r->tape, n);
		r->backend->step(&ctx, s, r->controls + (size_t)n * (size_t)nu, s_next);
		if (record)
			cl_tape_end_step(&r->tape, n);
		if (r->memory.failure != CL_MEMORY_OK)
			memory_failure(r, n);
		if (r->status.code == CL_STATUS_OK || !cl_status_is_fatal(r->status.code))
			check_state(&ctx, s_next);
		if (cl_status_is_fatal(r->status.code))
			break;
		r->steps_done = n + 1;
	}
	if (r->steps_done < r->steps)
		return false;
	r->loss = cl_loss(scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, NULL, NULL) +
			  cl_loss_observations(scene, r->states, 0, NULL);
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

size_t cl_rollout_memory(const ClRollout *r)
{
	return r->memory.used;
}

int cl_rollout_event_count(const ClRollout *r)
{
	return r->event_count;
}

const ClContactEvent *cl_rollout_events(const ClRollout *r)
{
	return r->events;
}

double cl_rollout_spin(const ClRollout *r, int ball)
{
	if (!r->backend->spin || !r->workspace || ball < 0 || ball >= r->ball_count)
		return NAN;
	return r->backend->spin(r->workspace, ball);
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
		case CL_LOSS_TRAJECTORY_MATCH: /* cl_loss_observations */
		case CL_LOSS_TYPE_COUNT:
			break;
		}
	}
	return loss;
}

/* Where observation time t falls: the step k holding it (the last for t =
 * T) and the fraction alpha of that step at t. */
static int observation_step(const ClScene *scene, double t, double *alpha)
{
	double x = t * scene->steps / scene->duration;
	int k = (int)floor(x);
	if (k >= scene->steps)
		k = scene->steps - 1;
	if (k < 0)
		k = 0;
	*alpha = x - k;
	return k;
}

/* Visits every observation of every trajectory_match term: the ball's
 * position interpolated between states k and k + 1, its residual d. */
typedef void (*ObservationVisit)(const ClLossTerm *t, int k, double alpha, const double d[2], const double *a,
								 const double *b, void *user);

static double observations_visit(const ClScene *scene, const double *states, ObservationVisit visit, void *user)
{
	int ns = cl_state_size(scene);
	double loss = 0.0;
	for (int i = 0; i < scene->loss_count; i++) {
		const ClLossTerm *t = &scene->loss[i];
		if (t->type != CL_LOSS_TRAJECTORY_MATCH)
			continue;
		for (int j = 0; j < t->observation_count; j++) {
			const double *o = t->observations + 3 * j;
			double alpha;
			int k = observation_step(scene, o[0], &alpha);
			const double *a = states + (size_t)k * (size_t)ns + CL_BALL_STATE * t->ball;
			const double *b = a + ns;
			double d[2] = {(1.0 - alpha) * a[0] + alpha * b[0] - o[1], (1.0 - alpha) * a[1] + alpha * b[1] - o[2]};
			loss += t->weight * (d[0] * d[0] + d[1] * d[1]);
			if (visit)
				visit(t, k, alpha, d, a, b, user);
		}
	}
	return loss;
}

typedef struct StateGradient {
	int n;
	double *dl_ds;
} StateGradient;

static void add_state_gradient(const ClLossTerm *t, int k, double alpha, const double d[2], const double *a,
							   const double *b, void *user)
{
	(void)a;
	(void)b;
	StateGradient *g = user;
	double c = g->n == k ? 1.0 - alpha : g->n == k + 1 ? alpha : 0.0;
	if (c == 0.0)
		return;
	g->dl_ds[CL_BALL_STATE * t->ball] += 2.0 * t->weight * c * d[0];
	g->dl_ds[CL_BALL_STATE * t->ball + 1] += 2.0 * t->weight * c * d[1];
}

double cl_loss_observations(const ClScene *scene, const double *states, int n, double *dl_ds)
{
	StateGradient g = {n, dl_ds};
	return observations_visit(scene, states, dl_ds ? add_state_gradient : NULL, &g);
}

typedef struct DurationPartial {
	const ClScene *scene;
	double sum;
} DurationPartial;

/* alpha = t·N/T − k: ∂alpha/∂T = −t·N/T² = −(alpha + k)/T */
static void add_duration_partial(const ClLossTerm *t, int k, double alpha, const double d[2], const double *a,
								 const double *b, void *user)
{
	DurationPartial *p = user;
	double dalpha = -(alpha + k) / p->scene->duration;
	p->sum += 2.0 * t->weight * dalpha * (d[0] * (b[0] - a[0]) + d[1] * (b[1] - a[1]));
}

/* True when some term reads states before the final one. */
static bool loss_observes(const ClScene *scene)
{
	for (int i = 0; i < scene->loss_count; i++)
		if (scene->loss[i].type == CL_LOSS_TRAJECTORY_MATCH)
			return true;
	return false;
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
	double *lambda = cl_calloc((size_t)ns, sizeof(double));
	double *g_u = dl_du ? dl_du : cl_calloc(control_size, sizeof(double));
	if (!lambda || !g_u) {
		/* out of memory: no gradient, as for a run that stopped */
		free(lambda);
		if (!dl_du)
			free(g_u);
		if (dl_ds0)
			fill_nan(dl_ds0, (size_t)ns);
		if (dl_du)
			fill_nan(dl_du, control_size);
		return;
	}
	cl_loss(r->scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, lambda, g_u);
	bool observes = loss_observes(r->scene);
	for (int n = r->steps - 1; n >= 0; n--) {
		if (observes)
			cl_loss_observations(r->scene, r->states, n + 1, lambda);
		cl_tape_adjoint_step(&r->tape, n, lambda, g_u + (size_t)n * (size_t)nu, r->scratch);
	}
	if (observes)
		cl_loss_observations(r->scene, r->states, 0, lambda);
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
	double *ds = cl_calloc((size_t)ns, sizeof(double));
	double *dl_ds = cl_calloc((size_t)ns, sizeof(double));
	double *dl_du = cl_calloc((size_t)nu * (size_t)r->steps, sizeof(double));
	if (!ds || !dl_ds || !dl_du) {
		free(ds);
		free(dl_ds);
		free(dl_du);
		return NAN;
	}
	if (ds0)
		memcpy(ds, ds0, sizeof(double) * (size_t)ns);
	/* the observations' share, state by state: dl_ds is zero between uses */
	bool observes = loss_observes(r->scene);
	double d = 0.0;
	for (int n = 0; n <= r->steps; n++) {
		if (n > 0)
			cl_tape_forward_step(&r->tape, n - 1, ds, du ? du + (size_t)(n - 1) * (size_t)nu : NULL, r->scratch);
		if (observes && n < r->steps) {
			memset(dl_ds, 0, sizeof(double) * (size_t)ns);
			cl_loss_observations(r->scene, r->states, n, dl_ds);
			for (int i = 0; i < ns; i++)
				d += dl_ds[i] * ds[i];
		}
	}
	cl_loss(r->scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, dl_ds, dl_du);
	if (observes)
		cl_loss_observations(r->scene, r->states, r->steps, dl_ds);
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

void cl_rollout_record_params(ClRollout *r, bool on)
{
	r->tape.record_params = on;
}

bool cl_backend_has_param_adjoint(int backend, const ClParam *param)
{
	if (cl_param_has_adjoint(param))
		return true;
	const ClBackend *impl = cl_backend_get(backend);
	if (param->target == CL_PARAM_BACKEND)
		return impl && param->backend == backend && (impl->own_param_adjoints & (1u << param->index));
	return impl && (impl->param_adjoints & (1u << param->target));
}

/* ∂L/∂T with the final state and the controls held: the control effort's dt = T/N. */
static double loss_duration_partial(const ClScene *scene, const double *u)
{
	int nb = scene->ball_count;
	double d = 0.0;
	for (int k = 0; k < scene->loss_count; k++) {
		const ClLossTerm *t = &scene->loss[k];
		if (t->type != CL_LOSS_CONTROL_EFFORT)
			continue;
		for (int n = 0; n < scene->steps; n++) {
			const double *f = u + 2 * ((size_t)n * (size_t)nb + (size_t)t->ball);
			d += t->weight * (f[0] * f[0] + f[1] * f[1]) / scene->steps;
		}
	}
	return d;
}

void cl_rollout_param_gradient(const ClRollout *r, const ClParam *params, int count, double *out)
{
	const ClScene *scene = r->scene;
	for (int k = 0; k < count; k++)
		out[k] = NAN;
	if (!r->recorded || r->steps_done < r->steps || !r->tape.record_params)
		return;
	int ns = r->state_size, nu = 2 * r->ball_count, np = cl_phys_count(scene);
	size_t control_size = (size_t)nu * (size_t)r->steps;
	double *lambda = cl_calloc((size_t)ns, sizeof(double));
	double *g_u = cl_calloc(control_size, sizeof(double)); /* through the dynamics only */
	double *direct_u = cl_calloc(control_size, sizeof(double));
	double *g_theta = cl_calloc((size_t)np, sizeof(double));
	if (!lambda || !g_u || !direct_u || !g_theta) {
		free(lambda);
		free(g_u);
		free(direct_u);
		free(g_theta);
		return;
	}
	cl_loss(scene, r->states + (size_t)r->steps * (size_t)ns, r->controls, lambda, direct_u);
	bool observes = loss_observes(scene);
	for (int n = r->steps - 1; n >= 0; n--) {
		if (observes)
			cl_loss_observations(scene, r->states, n + 1, lambda);
		cl_tape_adjoint_step_params(&r->tape, n, lambda, g_u + (size_t)n * (size_t)nu, g_theta, r->scratch);
	}
	if (observes)
		cl_loss_observations(scene, r->states, 0, lambda);
	g_theta[CL_PHYS_DURATION] += loss_duration_partial(scene, r->controls);
	if (observes) {
		DurationPartial partial = {scene, 0.0};
		observations_visit(scene, r->states, add_duration_partial, &partial);
		g_theta[CL_PHYS_DURATION] += partial.sum;
	}
	if (r->backend->accel_form) {
		/* a = u/m + g: ∂/∂g = m ∂/∂u, ∂/∂m = −(u/m) ∂/∂u */
		for (int n = 0; n < r->steps; n++)
			for (int i = 0; i < r->ball_count; i++) {
				const double *g = g_u + (size_t)n * (size_t)nu + 2 * i;
				const double *f = r->controls + (size_t)n * (size_t)nu + 2 * i;
				double m = scene->balls[i].mass;
				g_theta[CL_PHYS_GRAVITY_X] += m * g[0];
				g_theta[CL_PHYS_GRAVITY_Y] += m * g[1];
				g_theta[cl_phys_mass(i)] -= (g[0] * f[0] + g[1] * f[1]) / m;
			}
	}
	for (int k = 0; k < count; k++) {
		const ClParam *p = &params[k];
		if (!cl_backend_has_param_adjoint(r->backend_index, p) || !cl_param_fits(scene, p))
			continue;
		int index = cl_phys_index(scene, p);
		if (index >= 0) {
			out[k] = g_theta[index];
		} else if (p->target == CL_PARAM_CONTROL) {
			size_t at = (size_t)(cl_param_slot(scene, p, lambda, g_u) - g_u);
			out[k] = g_u[at] + direct_u[at];
		} else {
			out[k] = *cl_param_slot(scene, p, lambda, g_u);
		}
	}
	free(lambda);
	free(g_u);
	free(direct_u);
	free(g_theta);
}

bool cl_rollout_param_tangent(const ClRollout *r, const ClParam *param, double *ds)
{
	const ClScene *scene = r->scene;
	int ns = r->state_size, nu = 2 * r->ball_count;
	int index = cl_phys_index(scene, param);
	bool usable = r->recorded && r->steps_done == r->steps && cl_param_fits(scene, param) &&
				  cl_backend_has_param_adjoint(r->backend_index, param) && (index < 0 || r->tape.record_params);
	double *du = usable ? cl_calloc((size_t)nu, sizeof(double)) : NULL;
	if (!du) {
		fill_nan(ds, (size_t)ns);
		return false;
	}
	memset(ds, 0, sizeof(double) * (size_t)ns);
	if (param->target == CL_PARAM_POSITION || param->target == CL_PARAM_VELOCITY)
		ds[CL_BALL_STATE * param->ball + (param->target == CL_PARAM_VELOCITY ? 2 : 0) + param->axis] = 1.0;
	for (int n = 0; n < r->steps; n++) {
		/* the control direction of interval n: the control itself, or what
		 * gravity and mass do through a = u/m + g */
		memset(du, 0, sizeof(double) * (size_t)nu);
		if (param->target == CL_PARAM_CONTROL && param->step == n)
			du[2 * param->ball + param->axis] = 1.0;
		if (r->backend->accel_form && param->target == CL_PARAM_GRAVITY)
			for (int i = 0; i < r->ball_count; i++)
				du[2 * i + param->axis] = scene->balls[i].mass;
		if (r->backend->accel_form && param->target == CL_PARAM_MASS)
			for (int k = 0; k < 2; k++)
				du[2 * param->ball + k] = -r->controls[(size_t)n * (size_t)nu + 2 * (size_t)param->ball + k] /
										  scene->balls[param->ball].mass;
		cl_tape_forward_step_param(&r->tape, n, ds, du, index, r->scratch);
	}
	free(du);
	return true;
}

static double loss_at(const ClScene *scene, int backend, const ClParam *param, double value, ClStatus *status)
{
	ClScene *copy = cl_scene_copy(scene);
	ClRollout *r = copy && cl_param_set(copy, param, value) ? cl_rollout_new(copy, backend) : NULL;
	double loss = NAN;
	if (r) {
		cl_rollout_run(r, NULL, NULL, false);
		loss = cl_rollout_loss(r);
		if (status && status->code == CL_STATUS_OK)
			*status = *cl_rollout_status(r);
	} else if (status && status->code == CL_STATUS_OK) {
		*status = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = -1};
		snprintf(status->message, sizeof status->message, "out of memory: no room for a copy of the scene");
	}
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
