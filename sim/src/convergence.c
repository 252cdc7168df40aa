/* One derivative against the step count, per backend, across threads. */
#include "core.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define CONVERGENCE_STEPS_MAX 256
#define CONVERGENCE_THREADS_MAX 64

typedef struct Convergence {
	const ClScene *scene;
	const ClConvergenceDef *def;
	ClConvergencePoint *points;
	int *order; /* work items, the most expensive (largest N) first */
	atomic_int next;
	mtx_t progress_lock;
	int done;
	int total;
} Convergence;

/* What a point at this step count holds at least: the scene's control
 * sequences resampled, its rollout and the gradient. */
static size_t point_bytes(const ClScene *base, int backend, int steps, bool adjoint)
{
	ClScene sized = *base; /* its counts only */
	sized.steps = steps;
	size_t bytes = cl_rollout_bytes(&sized, backend, adjoint);
	for (int i = 0; i < base->ball_count; i++)
		if (base->balls[i].control_sequence)
			bytes += (size_t)steps * sizeof(ClVec2);
	if (adjoint)
		bytes += sizeof(double) * ((size_t)cl_state_size(base) + (size_t)cl_control_size(&sized));
	return bytes;
}

static const ClConvergencePoint point_out_of_memory = {NAN, NAN, CL_STATUS_MEMORY_LIMIT};

static ClConvergencePoint compute_point(const ClScene *base, const ClConvergenceDef *def, int backend, int steps)
{
	const ClParam *p = &def->param;
	/* a physical parameter's adjoint comes from the run's parameter columns */
	bool physical = !cl_param_has_adjoint(p) && cl_backend_has_param_adjoint(backend, p);
	bool adjoint = cl_param_has_adjoint(p);
	ClStatus budget;
	if (!cl_memory_fits(base, point_bytes(base, backend, steps, adjoint || physical), "a point", &budget))
		return point_out_of_memory;
	ClScene *scene = cl_scene_copy(base);
	ClRollout *rollout = scene && cl_scene_set_steps(scene, steps) ? cl_rollout_new(scene, backend) : NULL;
	double *g_s0 = NULL, *g_u = NULL;
	if (!rollout || (adjoint && (!(g_s0 = cl_calloc((size_t)cl_state_size(scene), sizeof(double))) ||
								 !(g_u = cl_calloc((size_t)cl_control_size(scene), sizeof(double)))))) {
		free(g_s0);
		cl_rollout_free(rollout);
		cl_scene_free(scene);
		return point_out_of_memory;
	}
	cl_rollout_record_params(rollout, physical);
	cl_rollout_run(rollout, NULL, NULL, adjoint || physical);
	ClConvergencePoint point = {.loss = cl_rollout_loss(rollout), .status = cl_rollout_status(rollout)->code};
	if (adjoint) {
		cl_rollout_gradient(rollout, g_s0, g_u);
		point.value = *cl_param_slot(scene, p, g_s0, g_u);
	} else if (physical) {
		cl_rollout_param_gradient(rollout, p, 1, &point.value);
	} else if (!cl_status_is_fatal(point.status)) {
		ClStatus fd_status;
		point.value = cl_finite_difference(scene, backend, p, cl_fd_step(scene, backend, p),
										   &fd_status);
		if (point.status == CL_STATUS_OK)
			point.status = fd_status.code;
	}
	if (cl_status_is_fatal(point.status))
		point.loss = point.value = NAN;
	free(g_s0);
	free(g_u);
	cl_rollout_free(rollout);
	cl_scene_free(scene);
	return point;
}

static int worker_main(void *data)
{
	Convergence *c = data;
	const ClConvergenceDef *def = c->def;
	for (;;) {
		if (def->cancel && atomic_load(def->cancel))
			break;
		int item = atomic_fetch_add(&c->next, 1);
		if (item >= c->total)
			break;
		int index = c->order[item];
		int slot = index / def->step_count, k = index % def->step_count;
		ClConvergencePoint point = compute_point(c->scene, def, def->backends[slot], def->steps[k]);
		mtx_lock(&c->progress_lock);
		c->points[index] = point;
		int done = ++c->done;
		if (def->progress)
			def->progress(done, c->total, slot, k, def->user);
		mtx_unlock(&c->progress_lock);
	}
	return 0;
}

static bool check(const ClScene *scene, const ClConvergenceDef *def, ClStatus *status)
{
	if (def->step_count < 1 || def->step_count > CONVERGENCE_STEPS_MAX || !def->steps)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: %d step counts (1 to %d allowed)",
							  def->step_count, CONVERGENCE_STEPS_MAX);
	for (int k = 0; k < def->step_count; k++)
		if (def->steps[k] < 1 || def->steps[k] > CL_MAX_STEPS)
			return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: step count %d is out of range",
								  def->steps[k]);
	if (def->backend_count < 1 || !def->backends)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: no backend");
	for (int b = 0; b < def->backend_count; b++)
		if (!cl_backend_info(def->backends[b]))
			return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: unknown backend %d", def->backends[b]);
	const ClParam *p = &def->param;
	bool ball_param = p->target == CL_PARAM_POSITION || p->target == CL_PARAM_VELOCITY ||
					  p->target == CL_PARAM_CONTROL || p->target == CL_PARAM_RADIUS || p->target == CL_PARAM_MASS;
	if ((ball_param && (p->ball < 0 || p->ball >= scene->ball_count)) || !cl_param_fits(scene, p) || p->axis < 0 ||
		p->axis > 1)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: the parameter does not exist in this scene");
	if (p->target == CL_PARAM_CONTROL)
		for (int k = 0; k < def->step_count; k++)
			if (p->step < 0 || p->step >= def->steps[k])
				return cl_status_fail(status, CL_STATUS_UNSUPPORTED,
									  "convergence: control interval %d does not exist at every step count", p->step);
	return true;
}

bool cl_convergence(const ClScene *scene, const ClConvergenceDef *def, ClConvergencePoint *points, ClStatus *status)
{
	if (status)
		*status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	if (!check(scene, def, status))
		return false;
	int threads = def->threads < 1 ? 1 : def->threads > CONVERGENCE_THREADS_MAX ? CONVERGENCE_THREADS_MAX : def->threads;
	if (threads > def->backend_count * def->step_count)
		threads = def->backend_count * def->step_count;
	/* the threads' points at once share the scene's memory budget */
	ClScene shared = *scene;
	shared.memory_budget /= (size_t)threads;
	Convergence c = {
		.scene = &shared,
		.def = def,
		.points = points,
		.total = def->backend_count * def->step_count,
	};
	for (int i = 0; i < c.total; i++)
		points[i] = (ClConvergencePoint){NAN, NAN, CL_STATUS_CANCELLED};
	/* largest N first, so the last items handed out are the short ones and
	 * the threads finish together */
	c.order = cl_calloc((size_t)c.total, sizeof(int));
	bool *taken = cl_calloc((size_t)def->step_count, sizeof(bool));
	thrd_t *ids = cl_calloc((size_t)threads, sizeof *ids);
	bool *running = cl_calloc((size_t)threads, sizeof *running);
	if (!c.order || !taken || !ids || !running) {
		free(c.order);
		free(taken);
		free(ids);
		free(running);
		return cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "convergence: out of memory for its workspace");
	}
	int filled = 0;
	for (int round = 0; round < def->step_count; round++) {
		int best = -1;
		for (int k = 0; k < def->step_count; k++)
			if (!taken[k] && (best < 0 || def->steps[k] > def->steps[best]))
				best = k;
		taken[best] = true;
		for (int b = 0; b < def->backend_count; b++)
			c.order[filled++] = (int)cl_convergence_index(def, b, best);
	}
	free(taken);
	atomic_init(&c.next, 0);
	if (mtx_init(&c.progress_lock, mtx_plain) != thrd_success) {
		free(c.order);
		free(ids);
		free(running);
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "convergence: cannot create a lock");
	}
	/* the calling thread is worker 0; if a thread cannot start, the others do its share */
	for (int t = 1; t < threads; t++)
		running[t] = thrd_create(&ids[t], worker_main, &c) == thrd_success;
	worker_main(&c);
	for (int t = 1; t < threads; t++)
		if (running[t])
			thrd_join(ids[t], NULL);
	free(ids);
	free(running);
	free(c.order);
	mtx_destroy(&c.progress_lock);
	if (c.done < c.total) {
		if (status) {
			*status = (ClStatus){.code = CL_STATUS_CANCELLED, .step = -1};
			snprintf(status->message, sizeof status->message, "convergence cancelled after %d of %d points", c.done,
					 c.total);
		}
		return false;
	}
	return true;
}
