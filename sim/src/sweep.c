/* 2-D parameter sweeps of loss and gradient, per backend, across threads. */
#include "core.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define SWEEP_AXIS_MAX 4096
#define SWEEP_THREADS_MAX 64

ClSweepCell cl_sweep_cell_pending(void)
{
	return (ClSweepCell){.loss = NAN, .grad_x = NAN, .grad_y = NAN, .status = CL_STATUS_CANCELLED,
						 .smoothed_loss = NAN, .zobg_x = NAN, .zobg_y = NAN, .fobg_x = NAN, .fobg_y = NAN};
}

double cl_sweep_axis_value(const ClSweepAxis *axis, int index)
{
	if (axis->count <= 1)
		return axis->min;
	/* from both ends, so the last value is max exactly */
	double t = (double)index / (axis->count - 1);
	return t < 0.5 ? axis->min + t * (axis->max - axis->min) : axis->max - (1.0 - t) * (axis->max - axis->min);
}

typedef struct Sweep {
	const ClScene *scene;
	const ClSweepDef *def;
	ClSweepCell *cells;
	double *s0_base, *u_base; /* the scene's initial state and controls */
	int state_size, control_size;
	bool adjoint_x, adjoint_y;
	atomic_int next; /* next work item */
	mtx_t progress_lock;
	int done;
	int total;
} Sweep;

typedef struct Worker {
	Sweep *sweep;
	ClRollout **rollouts; /* one per backend slot, reused while both parameters have adjoints */
	double *s0, *u, *g_s0, *g_u;
} Worker;

/* A cell that could not be computed for want of memory. */
static ClSweepCell cell_out_of_memory(void)
{
	ClSweepCell cell = cl_sweep_cell_pending();
	cell.status = CL_STATUS_MEMORY_LIMIT;
	return cell;
}

static void merge_status(ClStatusCode *into, ClStatusCode code)
{
	if (*into == CL_STATUS_OK || (cl_status_is_fatal(code) && !cl_status_is_fatal(*into)))
		*into = code;
}

/* Both parameters are initial-state or control entries: one recorded run and
 * its adjoint on a reused rollout. */
static ClSweepCell cell_adjoint(Worker *w, int slot_index, double x, double y)
{
	Sweep *sw = w->sweep;
	const ClSweepDef *def = sw->def;
	if (!w->rollouts[slot_index])
		w->rollouts[slot_index] = cl_rollout_new(sw->scene, def->backends[slot_index]);
	ClRollout *r = w->rollouts[slot_index];
	if (!r)
		return cell_out_of_memory();
	memcpy(w->s0, sw->s0_base, sizeof(double) * (size_t)sw->state_size);
	memcpy(w->u, sw->u_base, sizeof(double) * (size_t)sw->control_size);
	*cl_param_slot(sw->scene, &def->x.param, w->s0, w->u) = x;
	*cl_param_slot(sw->scene, &def->y.param, w->s0, w->u) = y;
	cl_rollout_run(r, w->s0, w->u, true);
	ClSweepCell cell = {.loss = cl_rollout_loss(r), .status = cl_rollout_status(r)->code};
	cl_rollout_gradient(r, w->g_s0, w->g_u);
	cell.grad_x = *cl_param_slot(sw->scene, &def->x.param, w->g_s0, w->g_u);
	cell.grad_y = *cl_param_slot(sw->scene, &def->y.param, w->g_s0, w->g_u);
	return cell;
}

/* A physical parameter (elasticity, mass, a wall's angle, …) changes the
 * scene itself: a scene copy and a fresh rollout, recorded with parameter
 * columns where the backend has that parameter's adjoint, else central
 * differences for it. */
static ClSweepCell cell_general(Worker *w, int slot_index, double x, double y)
{
	Sweep *sw = w->sweep;
	const ClSweepDef *def = sw->def;
	int backend = def->backends[slot_index];
	const ClParam *params[2] = {&def->x.param, &def->y.param};
	bool adjoint[2] = {sw->adjoint_x, sw->adjoint_y}, physical[2];
	for (int k = 0; k < 2; k++)
		physical[k] = !adjoint[k] && cl_backend_has_param_adjoint(backend, params[k]);
	bool any_adjoint = adjoint[0] || adjoint[1], any_physical = physical[0] || physical[1];
	ClScene *scene = cl_scene_copy(sw->scene);
	double *g_s0 = NULL, *g_u = NULL;
	ClRollout *r = NULL;
	if (!scene || !cl_param_set(scene, params[0], x) || !cl_param_set(scene, params[1], y) ||
		!(r = cl_rollout_new(scene, backend)) ||
		(any_adjoint && (!(g_s0 = cl_calloc((size_t)cl_state_size(scene), sizeof(double))) ||
						 !(g_u = cl_calloc((size_t)cl_control_size(scene), sizeof(double)))))) {
		free(g_s0);
		cl_rollout_free(r);
		cl_scene_free(scene);
		return cell_out_of_memory();
	}
	cl_rollout_record_params(r, any_physical);
	cl_rollout_run(r, NULL, NULL, any_adjoint || any_physical);
	ClSweepCell cell = {.loss = cl_rollout_loss(r), .status = cl_rollout_status(r)->code};
	if (any_adjoint)
		cl_rollout_gradient(r, g_s0, g_u);
	double grads[2];
	for (int k = 0; k < 2; k++) {
		if (adjoint[k]) {
			grads[k] = *cl_param_slot(scene, params[k], g_s0, g_u);
		} else if (physical[k]) {
			cl_rollout_param_gradient(r, params[k], 1, &grads[k]);
		} else {
			ClStatus fd_status;
			grads[k] = cl_finite_difference(scene, backend, params[k], cl_fd_step(scene, backend, params[k]),
											&fd_status);
			merge_status(&cell.status, fd_status.code);
		}
	}
	cell.grad_x = grads[0];
	cell.grad_y = grads[1];
	free(g_s0);
	free(g_u);
	cl_rollout_free(r);
	cl_scene_free(scene);
	return cell;
}

/* The cell's smoothed quantities: cl_smooth over (x, y) at this point with
 * the sweep's seed, so every cell sees the same samples. */
static void cell_smoothing(const Sweep *sw, int slot_index, double x, double y, ClSweepCell *cell)
{
	const ClSweepDef *def = sw->def;
	const ClSweepSmoothing *sm = &def->smoothing;
	ClScene *scene = cl_scene_copy(sw->scene);
	cl_param_set(scene, &def->x.param, x);
	cl_param_set(scene, &def->y.param, y);
	ClParam params[2] = {def->x.param, def->y.param};
	double sigma[2] = {sm->sigma_x, sm->sigma_y};
	ClSmoothDef sd = cl_smooth_default_def();
	sd.params = params;
	sd.sigma = sigma;
	sd.param_count = 2;
	sd.samples = sm->samples;
	sd.seed = sm->seed;
	sd.antithetic = sm->antithetic;
	sd.zeroth_order_only = !sm->first_order;
	sd.backends = &def->backends[slot_index];
	sd.backend_count = 1;
	ClSmoothResult r;
	if (cl_smooth(scene, &sd, &r, NULL)) {
		cell->smoothed_loss = r.smoothed_loss.mean;
		cell->zobg_x = r.gradient[0].zobg.mean;
		cell->zobg_y = r.gradient[1].zobg.mean;
		cell->fobg_x = r.gradient[0].fobg.mean;
		cell->fobg_y = r.gradient[1].fobg.mean;
		cl_smooth_result_clear(&r);
	}
	cl_scene_free(scene);
}

static int worker_main(void *data)
{
	Worker *w = data;
	Sweep *sw = w->sweep;
	const ClSweepDef *def = sw->def;
	int per_point = def->backend_count;
	for (;;) {
		if (def->cancel && atomic_load(def->cancel))
			break;
		int item = atomic_fetch_add(&sw->next, 1);
		if (item >= sw->total)
			break;
		/* row by row, every backend at a point before the next: tiles of all
		 * panels grow together */
		int point = item / per_point, slot_index = item % per_point;
		int ix = point % def->x.count, iy = point / def->x.count;
		double x = cl_sweep_axis_value(&def->x, ix), y = cl_sweep_axis_value(&def->y, iy);
		ClSweepCell cell = sw->adjoint_x && sw->adjoint_y ? cell_adjoint(w, slot_index, x, y)
														  : cell_general(w, slot_index, x, y);
		if (cl_status_is_fatal(cell.status))
			cell.loss = cell.grad_x = cell.grad_y = NAN;
		cell.smoothed_loss = cell.zobg_x = cell.zobg_y = cell.fobg_x = cell.fobg_y = NAN;
		if (def->smoothing.samples > 0)
			cell_smoothing(sw, slot_index, x, y, &cell);
		mtx_lock(&sw->progress_lock);
		sw->cells[cl_sweep_index(def, slot_index, ix, iy)] = cell;
		int done = ++sw->done;
		if (def->progress)
			def->progress(done, sw->total, slot_index, ix, iy, def->user);
		mtx_unlock(&sw->progress_lock);
	}
	return 0;
}

static bool fail_with(ClStatus *status, ClStatusCode code, const char *message)
{
	if (status) {
		*status = (ClStatus){.code = code, .step = -1};
		snprintf(status->message, sizeof status->message, "%s", message);
	}
	return false;
}

static bool fail(ClStatus *status, const char *message)
{
	return fail_with(status, CL_STATUS_UNSUPPORTED, message);
}

static void free_worker(Worker *w, int backend_count)
{
	for (int b = 0; w->rollouts && b < backend_count; b++)
		cl_rollout_free(w->rollouts[b]);
	free(w->rollouts);
	free(w->s0);
	free(w->g_s0);
	free(w->u);
	free(w->g_u);
}

static bool check_axis(const ClScene *scene, const ClSweepAxis *axis, const char *which, ClStatus *status)
{
	char message[CL_MESSAGE_MAX];
	if (axis->count < 1 || axis->count > SWEEP_AXIS_MAX) {
		snprintf(message, sizeof message, "sweep %s: %d points (1 to %d allowed)", which, axis->count,
				 SWEEP_AXIS_MAX);
		return fail(status, message);
	}
	if (!isfinite(axis->min) || !isfinite(axis->max)) {
		snprintf(message, sizeof message, "sweep %s: the range must be finite", which);
		return fail(status, message);
	}
	const ClParam *p = &axis->param;
	bool ball_param = p->target == CL_PARAM_POSITION || p->target == CL_PARAM_VELOCITY ||
					  p->target == CL_PARAM_CONTROL || p->target == CL_PARAM_RADIUS || p->target == CL_PARAM_MASS;
	if ((ball_param && (p->ball < 0 || p->ball >= scene->ball_count)) || !cl_param_fits(scene, p) ||
		(p->target == CL_PARAM_CONTROL && (p->step < 0 || p->step >= scene->steps)) || p->axis < 0 || p->axis > 1) {
		snprintf(message, sizeof message, "sweep %s: the parameter does not exist in this scene", which);
		return fail(status, message);
	}
	return true;
}

bool cl_sweep(const ClScene *scene, const ClSweepDef *def, ClSweepCell *cells, ClStatus *status)
{
	if (status)
		*status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	if (!check_axis(scene, &def->x, "x", status) || !check_axis(scene, &def->y, "y", status))
		return false;
	if (cl_param_equal(&def->x.param, &def->y.param))
		return fail(status, "sweep: x and y are the same parameter");
	if (def->backend_count < 1 || !def->backends)
		return fail(status, "sweep: no backend");
	const ClSweepSmoothing *sm = &def->smoothing;
	if (sm->samples < 0 || sm->samples == 1 || (sm->samples > 0 && sm->antithetic && sm->samples % 2))
		return fail(status, "sweep: smoothing needs at least 2 samples (an even number with antithetic sampling)");
	if (sm->samples > 0 && !(isfinite(sm->sigma_x) && sm->sigma_x > 0 && isfinite(sm->sigma_y) && sm->sigma_y > 0))
		return fail(status, "sweep: the smoothing's sigma must be positive and finite");
	for (int b = 0; b < def->backend_count; b++)
		if (!cl_backend_info(def->backends[b]))
			return fail(status, "sweep: unknown backend");
	size_t total = cl_sweep_cell_count(def);
	if (total > (size_t)INT32_MAX / 2)
		return fail(status, "sweep: too many cells");
	for (size_t i = 0; i < total; i++)
		cells[i] = cl_sweep_cell_pending();

	int threads = def->threads < 1 ? 1 : def->threads > SWEEP_THREADS_MAX ? SWEEP_THREADS_MAX : def->threads;
	if (threads > (int)total)
		threads = (int)total;
	/* each worker holds a rollout per backend (or a recorded one and an FD
	 * one): they share the scene's memory budget */
	ClScene shared = *scene;
	shared.memory_budget /= (size_t)threads * (size_t)(def->backend_count > 2 ? def->backend_count : 2);
	Sweep sw = {
		.scene = &shared,
		.def = def,
		.cells = cells,
		.state_size = cl_state_size(scene),
		.control_size = cl_control_size(scene),
		.adjoint_x = cl_param_has_adjoint(&def->x.param),
		.adjoint_y = cl_param_has_adjoint(&def->y.param),
		.total = (int)total,
	};
	atomic_init(&sw.next, 0);
	if (mtx_init(&sw.progress_lock, mtx_plain) != thrd_success)
		return fail(status, "sweep: cannot create a lock");
	sw.s0_base = cl_calloc((size_t)sw.state_size, sizeof(double));
	sw.u_base = cl_calloc((size_t)sw.control_size, sizeof(double));
	Worker *workers = cl_calloc((size_t)threads, sizeof *workers);
	thrd_t *ids = cl_calloc((size_t)threads, sizeof *ids);
	bool *running = cl_calloc((size_t)threads, sizeof *running);
	int ready = 0; /* workers with their arrays; fewer threads when memory is short */
	if (sw.s0_base && sw.u_base && workers && ids && running) {
		cl_scene_initial_state(scene, sw.s0_base);
		cl_scene_controls(scene, sw.u_base);
		for (; ready < threads; ready++) {
			Worker *w = &workers[ready];
			w->sweep = &sw;
			w->rollouts = cl_calloc((size_t)def->backend_count, sizeof *w->rollouts);
			w->s0 = cl_calloc((size_t)sw.state_size, sizeof(double));
			w->g_s0 = cl_calloc((size_t)sw.state_size, sizeof(double));
			w->u = cl_calloc((size_t)sw.control_size, sizeof(double));
			w->g_u = cl_calloc((size_t)sw.control_size, sizeof(double));
			if (!w->rollouts || !w->s0 || !w->g_s0 || !w->u || !w->g_u) {
				free_worker(w, def->backend_count);
				break;
			}
		}
	}
	/* the calling thread is worker 0; if a thread cannot start, the others do its share */
	for (int t = 1; t < ready; t++)
		running[t] = thrd_create(&ids[t], worker_main, &workers[t]) == thrd_success;
	if (ready > 0)
		worker_main(&workers[0]);
	for (int t = 1; t < ready; t++)
		if (running[t])
			thrd_join(ids[t], NULL);
	for (int t = 0; t < ready; t++)
		free_worker(&workers[t], def->backend_count);
	free(workers);
	free(ids);
	free(running);
	free(sw.s0_base);
	free(sw.u_base);
	mtx_destroy(&sw.progress_lock);
	if (ready == 0)
		return fail_with(status, CL_STATUS_MEMORY_LIMIT, "sweep: out of memory for its workspace");
	if (sw.done < sw.total) {
		if (status) {
			*status = (ClStatus){.code = CL_STATUS_CANCELLED, .step = -1};
			snprintf(status->message, sizeof status->message, "sweep cancelled after %d of %d cells", sw.done,
					 sw.total);
		}
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ quantities */

static const char *const quantity_names[CL_SWEEP_QUANTITY_COUNT] = {
	[CL_SWEEP_LOSS] = "loss",
	[CL_SWEEP_GRAD_X] = "grad-x",
	[CL_SWEEP_GRAD_Y] = "grad-y",
	[CL_SWEEP_ANGLE_ERROR] = "angle-error",
	[CL_SWEEP_SIGN_AGREEMENT] = "sign-agreement",
	[CL_SWEEP_SMOOTHED_LOSS] = "smoothed-loss",
	[CL_SWEEP_ZOBG_X] = "zobg-x",
	[CL_SWEEP_ZOBG_Y] = "zobg-y",
	[CL_SWEEP_FOBG_X] = "fobg-x",
	[CL_SWEEP_FOBG_Y] = "fobg-y",
	[CL_SWEEP_FOBG_BIAS_X] = "fobg-bias-x",
	[CL_SWEEP_FOBG_BIAS_Y] = "fobg-bias-y",
};

const char *cl_sweep_quantity_name(ClSweepQuantity quantity)
{
	return quantity >= 0 && quantity < CL_SWEEP_QUANTITY_COUNT ? quantity_names[quantity] : "unknown";
}

int cl_sweep_quantity_find(const char *name)
{
	for (int q = 0; q < CL_SWEEP_QUANTITY_COUNT; q++)
		if (strcmp(quantity_names[q], name) == 0)
			return q;
	return -1;
}

unsigned cl_sweep_quantity_needs(ClSweepQuantity quantity)
{
	switch (quantity) {
	case CL_SWEEP_ANGLE_ERROR:
	case CL_SWEEP_SIGN_AGREEMENT:
		return CL_SWEEP_NEEDS_EXACT;
	case CL_SWEEP_SMOOTHED_LOSS:
	case CL_SWEEP_ZOBG_X:
	case CL_SWEEP_ZOBG_Y:
		return CL_SWEEP_NEEDS_SMOOTHING;
	case CL_SWEEP_FOBG_X:
	case CL_SWEEP_FOBG_Y:
		return CL_SWEEP_NEEDS_SMOOTHING | CL_SWEEP_NEEDS_FOBG;
	case CL_SWEEP_FOBG_BIAS_X:
	case CL_SWEEP_FOBG_BIAS_Y:
		return CL_SWEEP_NEEDS_EXACT | CL_SWEEP_NEEDS_SMOOTHING | CL_SWEEP_NEEDS_FOBG;
	default:
		return 0;
	}
}

static int sign_of(double v)
{
	return (v > 0) - (v < 0);
}

double cl_sweep_quantity(ClSweepQuantity quantity, const ClSweepCell *cell, const ClSweepCell *exact)
{
	switch (quantity) {
	case CL_SWEEP_LOSS:
		return cell->loss;
	case CL_SWEEP_GRAD_X:
		return cell->grad_x;
	case CL_SWEEP_GRAD_Y:
		return cell->grad_y;
	case CL_SWEEP_ANGLE_ERROR: {
		if (!exact)
			return NAN;
		double n1 = hypot(cell->grad_x, cell->grad_y), n2 = hypot(exact->grad_x, exact->grad_y);
		if (!(isfinite(n1) && isfinite(n2) && n1 > 0 && n2 > 0))
			return NAN;
		/* atan2 of cross and dot: accurate for nearly parallel vectors too */
		double cross = cell->grad_x * exact->grad_y - cell->grad_y * exact->grad_x;
		double dot = cell->grad_x * exact->grad_x + cell->grad_y * exact->grad_y;
		return atan2(fabs(cross), dot) * (180.0 / 3.14159265358979323846);
	}
	case CL_SWEEP_SIGN_AGREEMENT:
		if (!exact || !isfinite(cell->grad_x) || !isfinite(cell->grad_y) || !isfinite(exact->grad_x) ||
			!isfinite(exact->grad_y))
			return NAN;
		return 0.5 * (sign_of(cell->grad_x) == sign_of(exact->grad_x)) +
			   0.5 * (sign_of(cell->grad_y) == sign_of(exact->grad_y));
	case CL_SWEEP_SMOOTHED_LOSS:
		return cell->smoothed_loss;
	case CL_SWEEP_ZOBG_X:
		return cell->zobg_x;
	case CL_SWEEP_ZOBG_Y:
		return cell->zobg_y;
	case CL_SWEEP_FOBG_X:
		return cell->fobg_x;
	case CL_SWEEP_FOBG_Y:
		return cell->fobg_y;
	case CL_SWEEP_FOBG_BIAS_X:
		return exact ? cell->fobg_x - exact->zobg_x : NAN;
	case CL_SWEEP_FOBG_BIAS_Y:
		return exact ? cell->fobg_y - exact->zobg_y : NAN;
	case CL_SWEEP_QUANTITY_COUNT:
		break;
	}
	return NAN;
}
