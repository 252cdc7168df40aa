#define _GNU_SOURCE /* gettid */
#include "cl-learning-job.h"

#include "figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

/* How much the workers yield to the main thread (nice levels). */
#define WORKER_NICE 10

struct _ClLearningJob {
	GObject parent_instance;
	ClScene *scene; /* optimize = the job's def */
	ClParam *params;
	int param_count;
	int tracked; /* index into params, −1: none */
	GMutex lock; /* guards traces */
	ClLearningTrace *traces;
	int backend_count;
	int threads;
	gint iterations_done; /* atomic, over every backend */
	GCancellable *cancellable; /* while running */
};

G_DEFINE_FINAL_TYPE(ClLearningJob, cl_learning_job, G_TYPE_OBJECT)

static void cl_learning_job_finalize(GObject *object)
{
	ClLearningJob *job = CL_LEARNING_JOB(object);
	for (int i = 0; i < job->backend_count; i++)
		cl_learning_trace_clear(&job->traces[i]);
	g_free(job->traces);
	free(job->params);
	cl_scene_free(job->scene);
	g_mutex_clear(&job->lock);
	G_OBJECT_CLASS(cl_learning_job_parent_class)->finalize(object);
}

static void cl_learning_job_class_init(ClLearningJobClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = cl_learning_job_finalize;
}

static void cl_learning_job_init(ClLearningJob *job)
{
	g_mutex_init(&job->lock);
	job->tracked = -1;
}

ClLearningJob *cl_learning_job_new(const ClScene *scene, const ClOptimizeDef *def, const int *backends,
								   int backend_count, int threads, GError **error)
{
	char message[CL_MESSAGE_MAX];
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, def, &count, message, sizeof message);
	if (!params || count == 0) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s",
					params ? "nothing to optimize: choose at least one parameter" : message);
		free(params);
		return NULL;
	}
	ClLearningJob *job = g_object_new(CL_TYPE_LEARNING_JOB, NULL);
	job->scene = cl_scene_copy(scene);
	job->scene->optimize = *def;
	job->params = params;
	job->param_count = count;
	for (int k = 0; k < count && job->tracked < 0; k++)
		if (params[k].target != CL_PARAM_CONTROL)
			job->tracked = k;
	job->threads = MAX(threads, 1);
	job->backend_count = backend_count;
	job->traces = g_new0(ClLearningTrace, (gsize)MAX(backend_count, 1));
	int iterations = MAX(def->iterations, 0);
	for (int i = 0; i < backend_count; i++) {
		ClLearningTrace *t = &job->traces[i];
		t->backend = backends[i];
		t->loss = g_new(double, (gsize)iterations + 1);
		t->value_count = count;
		t->values = g_new(double, (gsize)count);
		/* a float32 backend starts from the rounded values, as it stores them */
		gboolean f32 = cl_backend_is_float32(scene, t->backend);
		for (int k = 0; k < count; k++) {
			double x = cl_param_get(scene, &params[k]);
			t->values[k] = f32 ? (double)(float)x : x;
		}
		if (job->tracked >= 0) {
			t->tracked = g_new(double, (gsize)iterations + 2);
			t->tracked[0] = t->values[job->tracked];
		}
		t->final_loss = t->exact_loss = NAN;
		t->status.step = t->final_status.step = t->exact_status.step = -1;
	}
	return job;
}

const ClScene *cl_learning_job_scene(ClLearningJob *job)
{
	return job->scene;
}

const ClParam *cl_learning_job_params(ClLearningJob *job, int *count)
{
	*count = job->param_count;
	return job->params;
}

int cl_learning_job_tracked(ClLearningJob *job)
{
	return job->tracked;
}

double cl_learning_job_progress(ClLearningJob *job)
{
	double total = (double)MAX(job->scene->optimize.iterations, 1) * MAX(job->backend_count, 1);
	return MIN(1.0, g_atomic_int_get(&job->iterations_done) / total);
}

ClLearningTrace *cl_learning_job_copy_traces(ClLearningJob *job, int *count)
{
	int iterations = MAX(job->scene->optimize.iterations, 0);
	ClLearningTrace *copy = g_new(ClLearningTrace, (gsize)MAX(job->backend_count, 1));
	g_mutex_lock(&job->lock);
	for (int i = 0; i < job->backend_count; i++) {
		const ClLearningTrace *t = &job->traces[i];
		copy[i] = *t;
		copy[i].loss = g_memdup2(t->loss, sizeof(double) * ((gsize)iterations + 1));
		copy[i].tracked = t->tracked ? g_memdup2(t->tracked, sizeof(double) * ((gsize)iterations + 2)) : NULL;
		copy[i].values = g_memdup2(t->values, sizeof(double) * (gsize)t->value_count);
	}
	g_mutex_unlock(&job->lock);
	*count = job->backend_count;
	return copy;
}

void cl_learning_job_update_traces(ClLearningJob *job, ClLearningTrace *copy, int count)
{
	g_return_if_fail(count == job->backend_count);
	g_mutex_lock(&job->lock);
	for (int i = 0; i < count; i++) {
		const ClLearningTrace *t = &job->traces[i];
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
	g_mutex_unlock(&job->lock);
}

typedef struct {
	ClLearningJob *job;
	ClLearningTrace *trace;
} Run;

/* cl_optimize's progress: parameters are after this iteration's update. */
static bool record(int iteration, double loss, const double *parameters, void *user)
{
	Run *run = user;
	ClLearningJob *job = run->job;
	ClLearningTrace *t = run->trace;
	g_mutex_lock(&job->lock);
	if (iteration < job->scene->optimize.iterations) {
		t->loss[iteration] = loss;
		t->iterations = iteration + 1;
	}
	memcpy(t->values, parameters, sizeof(double) * (gsize)t->value_count);
	if (t->tracked)
		t->tracked[iteration + 1] = parameters[job->tracked];
	g_mutex_unlock(&job->lock);
	g_atomic_int_inc(&job->iterations_done);
	return !g_cancellable_is_cancelled(job->cancellable);
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

/* A learning run keeps every core busy: its threads step back so that the
 * window still redraws and answers at once. Linux nices threads one by one,
 * and only up: the run has threads of its own, which end with it. */
static void yield_to_main_thread(void)
{
#ifdef __linux__
	setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);
#endif
}

static void learn_one(Run *run)
{
	ClLearningJob *job = run->job;
	ClLearningTrace *t = run->trace;
	ClOptimizeResult result;
	cl_optimize(job->scene, t->backend, NULL, record, run, &result);
	ClScene *final = cl_scene_copy(job->scene);
	if (result.parameter_count == job->param_count)
		cl_optimize_apply(final, job->params, job->param_count, result.parameters);
	ClStatus own_status, exact_status;
	int walls = 0, order[CL_LEARNING_WALLS_MAX];
	double own = loss_under(final, t->backend, &own_status, &walls, order);
	int exact = cl_backend_reference();
	double under_exact = exact >= 0 ? loss_under(final, exact, &exact_status, NULL, NULL) : NAN;
	g_mutex_lock(&job->lock);
	t->iterations = MIN(result.iterations_done, job->scene->optimize.iterations);
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
	g_mutex_unlock(&job->lock);
	cl_scene_free(final);
	cl_optimize_result_clear(&result);
}

typedef struct {
	Run *runs;
	int count;
	gint next; /* atomic: the next run to take */
} Workers;

/* One of the run's threads: takes the backends in order until none is left. */
static gpointer work(gpointer data)
{
	Workers *w = data;
	yield_to_main_thread();
	for (int i; (i = g_atomic_int_add(&w->next, 1)) < w->count;)
		learn_one(&w->runs[i]);
	return NULL;
}

gboolean cl_learning_job_run(ClLearningJob *job, GCancellable *cancellable, GError **error)
{
	job->cancellable = cancellable;
	Workers w = {g_new(Run, (gsize)MAX(job->backend_count, 1)), job->backend_count, 0};
	for (int i = 0; i < job->backend_count; i++)
		w.runs[i] = (Run){job, &job->traces[i]};
	int count = MIN(job->threads, job->backend_count);
	GThread **threads = g_new(GThread *, (gsize)MAX(count, 1));
	for (int t = 0; t < count; t++)
		threads[t] = g_thread_new("cl-learning", work, &w);
	for (int t = 0; t < count; t++)
		g_thread_join(threads[t]);
	g_free(threads);
	g_free(w.runs);
	job->cancellable = NULL;
	return !g_cancellable_set_error_if_cancelled(cancellable, error);
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)data;
	GError *error = NULL;
	if (cl_learning_job_run(CL_LEARNING_JOB(source), cancellable, &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

void cl_learning_job_run_async(ClLearningJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							   gpointer user_data)
{
	GTask *task = g_task_new(job, cancellable, callback, user_data);
	g_task_set_return_on_cancel(task, FALSE);
	g_task_run_in_thread(task, run_in_thread);
	g_object_unref(task);
}

gboolean cl_learning_job_finish(ClLearningJob *job, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, job), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}
