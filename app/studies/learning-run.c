#include "learning-run.h"

#include "figures.h"

#include <gio/gio.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

ClLearningRun *cl_learning_run_new(const ClScene *scene, const int *backends, int backend_count, GError **error)
{
	const ClOptimizeDef *def = &scene->optimize;
	char message[CL_MESSAGE_MAX];
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, def, &count, message, sizeof message);
	if (!params || count == 0) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s",
					params ? "nothing to optimize: choose at least one parameter" : message);
		free(params);
		return NULL;
	}
	ClLearningRun *run = g_new0(ClLearningRun, 1);
	g_mutex_init(&run->lock);
	run->params = params;
	run->param_count = count;
	run->tracked = -1;
	for (int k = 0; k < count && run->tracked < 0; k++)
		if (params[k].target != CL_PARAM_CONTROL)
			run->tracked = k;
	run->iterations = MAX(def->iterations, 0);
	run->backend_count = backend_count;
	run->traces = g_new0(ClLearningTrace, (gsize)MAX(backend_count, 1));
	for (int i = 0; i < backend_count; i++) {
		ClLearningTrace *t = &run->traces[i];
		t->backend = backends[i];
		t->loss = g_new(double, (gsize)run->iterations + 1);
		t->value_count = count;
		t->values = g_new(double, (gsize)count);
		/* a float32 backend starts from the rounded values, as it stores them */
		gboolean f32 = cl_backend_is_float32(scene, t->backend);
		for (int k = 0; k < count; k++) {
			double x = cl_param_get(scene, &params[k]);
			t->values[k] = f32 ? (double)(float)x : x;
		}
		if (run->tracked >= 0) {
			t->tracked = g_new(double, (gsize)run->iterations + 2);
			t->tracked[0] = t->values[run->tracked];
		}
		t->final_loss = t->exact_loss = NAN;
		t->status.step = t->final_status.step = t->exact_status.step = -1;
	}
	return run;
}

void cl_learning_run_free(ClLearningRun *run)
{
	if (!run)
		return;
	for (int i = 0; i < run->backend_count; i++)
		cl_learning_trace_clear(&run->traces[i]);
	g_free(run->traces);
	free(run->params);
	g_mutex_clear(&run->lock);
	g_free(run);
}

double cl_learning_run_progress(ClLearningRun *run)
{
	double total = (double)MAX(run->iterations, 1) * MAX(run->backend_count, 1);
	return MIN(1.0, g_atomic_int_get(&run->iterations_done) / total);
}

ClLearningTrace *cl_learning_run_copy_traces(ClLearningRun *run, int *count)
{
	ClLearningTrace *copy = g_new(ClLearningTrace, (gsize)MAX(run->backend_count, 1));
	g_mutex_lock(&run->lock);
	for (int i = 0; i < run->backend_count; i++) {
		const ClLearningTrace *t = &run->traces[i];
		copy[i] = *t;
		copy[i].loss = g_memdup2(t->loss, sizeof(double) * ((gsize)run->iterations + 1));
		copy[i].tracked = t->tracked ? g_memdup2(t->tracked, sizeof(double) * ((gsize)run->iterations + 2)) : NULL;
		copy[i].values = g_memdup2(t->values, sizeof(double) * (gsize)t->value_count);
	}
	g_mutex_unlock(&run->lock);
	*count = run->backend_count;
	return copy;
}

void cl_learning_run_update_traces(ClLearningRun *run, ClLearningTrace *copy, int count)
{
	g_return_if_fail(count == run->backend_count);
	g_mutex_lock(&run->lock);
	for (int i = 0; i < count; i++) {
		const ClLearningTrace *t = &run->traces[i];
		ClLearningTrace *c = &copy[i];
		/* the losses and tracked values since the last copy; a backend that
		 * finished since has its final ones written whole */
		int from = t->finished && !c->finished ? 0 : MIN(c->iterations, t->iterations);
		if (t->iterations > from)
			memcpy(c->loss + from, t->loss + from, sizeof(double) * (gsize)(t->iterations - from));
		if (t->tracked && t->iterations > from)
			memcpy(c->tracked + from + 1, t->tracked + from + 1, sizeof(double) * (gsize)(t->iterations - from));
		if (!c->finished)
			memcpy(c->values, t->values, sizeof(double) * (gsize)t->value_count);
		double *loss = c->loss, *tracked = c->tracked, *values = c->values;
		*c = *t;
		c->loss = loss;
		c->tracked = tracked;
		c->values = values;
	}
	g_mutex_unlock(&run->lock);
}

typedef struct {
	ClLearningRun *run;
	ClLearningTrace *trace;
	const _Atomic int *cancel;
} Learner;

/* cl_optimize's progress: parameters are after this iteration's update. */
static bool record(int iteration, double loss, const double *parameters, void *user)
{
	Learner *l = user;
	ClLearningRun *run = l->run;
	ClLearningTrace *t = l->trace;
	g_mutex_lock(&run->lock);
	if (iteration < run->iterations) {
		t->loss[iteration] = loss;
		t->iterations = iteration + 1;
	}
	memcpy(t->values, parameters, sizeof(double) * (gsize)t->value_count);
	if (t->tracked)
		t->tracked[iteration + 1] = parameters[run->tracked];
	g_mutex_unlock(&run->lock);
	g_atomic_int_inc(&run->iterations_done);
	return !(l->cancel && atomic_load(l->cancel));
}

static double loss_under(const ClScene *scene, int backend, ClStatus *status, int *walls, int *order)
{
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, NULL, NULL, false);
	double loss = cl_rollout_loss(r);
	*status = *cl_rollout_status(r);
	if (walls) {
		int all[CL_LEARNING_WALLS_MAX * 4];
		int n = scene->wall_count <= (int)G_N_ELEMENTS(all) ? cl_figure_walls_touched(scene, r, all) : 0;
		*walls = MIN(n, CL_LEARNING_WALLS_MAX);
		memcpy(order, all, sizeof(int) * (gsize)*walls);
	}
	cl_rollout_free(r);
	return loss;
}

void cl_learning_run_learn(ClLearningRun *run, const ClScene *scene, int slot, const _Atomic int *cancel)
{
	ClLearningTrace *t = &run->traces[slot];
	Learner learner = {run, t, cancel};
	ClOptimizeResult result;
	cl_optimize(scene, t->backend, NULL, record, &learner, &result);
	ClScene *final = cl_scene_copy(scene);
	if (result.parameter_count == run->param_count)
		cl_optimize_apply(final, run->params, run->param_count, result.parameters);
	ClStatus own_status, exact_status;
	int walls = 0, order[CL_LEARNING_WALLS_MAX];
	double own = loss_under(final, t->backend, &own_status, &walls, order);
	int exact = cl_backend_reference();
	double under_exact = exact >= 0 ? loss_under(final, exact, &exact_status, NULL, NULL) : NAN;
	g_mutex_lock(&run->lock);
	t->iterations = MIN(result.iterations_done, run->iterations);
	if (result.iterations_done > 0)
		memcpy(t->loss, result.loss, sizeof(double) * (gsize)t->iterations);
	if (result.parameter_count == t->value_count)
		memcpy(t->values, result.parameters, sizeof(double) * (gsize)t->value_count);
	t->status = result.status;
	t->final_loss = own;
	t->final_status = own_status;
	t->exact_loss = under_exact;
	if (exact >= 0)
		t->exact_status = exact_status;
	t->walls_touched = walls;
	memcpy(t->wall_order, order, sizeof(int) * (gsize)walls);
	t->finished = TRUE;
	g_mutex_unlock(&run->lock);
	cl_scene_free(final);
	cl_optimize_result_clear(&result);
}

