#include "cl-compute-job.h"

#include "numbers.h"

#include <math.h>
#include <string.h>

/* Checkpoints of the perturbation tangent d s_n / dθ: each needs a rollout
 * of n steps, so the cost is about this many / 2 full rollouts. */
#define TANGENT_CHECKPOINTS 48

struct _ClComputeJob {
	GObject parent_instance;
	ClScene *scene;
	int *backends;
	int backend_count;
	char *perturb;
	double delta;
	gint units_done; /* atomic */
	int units_total;
};

G_DEFINE_FINAL_TYPE(ClComputeJob, cl_compute_job, G_TYPE_OBJECT)

/* ------------------------------------------------------------- results */

typedef struct {
	ClComputeResult result;
	gatomicrefcount ref;
} ResultBox;

ClComputeResult *cl_compute_result_ref(ClComputeResult *result)
{
	g_atomic_ref_count_inc(&((ResultBox *)result)->ref);
	return result;
}

static void backend_result_clear(ClBackendResult *r)
{
	g_free(r->states);
	g_free(r->events);
	g_free(r->gradient);
	g_free(r->fd);
	g_free(r->plus_states);
	g_free(r->minus_states);
	g_free(r->tangent_steps);
	g_free(r->tangents);
}

void cl_compute_result_unref(ClComputeResult *result)
{
	ResultBox *box = (ResultBox *)result;
	if (!g_atomic_ref_count_dec(&box->ref))
		return;
	for (int i = 0; i < result->backend_count; i++)
		backend_result_clear(&result->backends[i]);
	g_free(result->backends);
	g_strfreev(result->column_names);
	g_free(result->columns);
	g_free(result->perturb_name);
	cl_scene_free(result->scene);
	g_free(box);
}

const ClBackendResult *cl_compute_result_find(const ClComputeResult *result, int backend)
{
	for (int i = 0; result && i < result->backend_count; i++)
		if (result->backends[i].backend == backend)
			return &result->backends[i];
	return NULL;
}

static void append_number(GString *out, double value)
{
	char buffer[G_ASCII_DTOSTR_BUF_SIZE];
	if (isnan(value))
		g_string_append(out, "nan");
	else if (isinf(value))
		g_string_append(out, value > 0 ? "inf" : "-inf");
	else
		g_string_append(out, g_ascii_formatd(buffer, sizeof buffer, "%.17g", value));
}

char *cl_compute_result_to_csv(const ClComputeResult *result)
{
	GString *out = g_string_new("backend,parameter,value,fd,status\n");
	for (int i = 0; i < result->backend_count; i++) {
		const ClBackendResult *r = &result->backends[i];
		const char *id = cl_backend_info(r->backend)->id;
		for (int k = 0; k < result->column_count; k++) {
			g_string_append_printf(out, "%s,%s,", id, result->column_names[k]);
			append_number(out, r->gradient[k]);
			g_string_append_c(out, ',');
			append_number(out, r->fd[k]);
			g_string_append_printf(out, ",%s\n", cl_status_name(r->status.code));
		}
	}
	return g_string_free(out, FALSE);
}

/* ----------------------------------------------------------------- job */

static void cl_compute_job_finalize(GObject *object)
{
	ClComputeJob *job = CL_COMPUTE_JOB(object);
	cl_scene_free(job->scene);
	g_free(job->backends);
	g_free(job->perturb);
	G_OBJECT_CLASS(cl_compute_job_parent_class)->finalize(object);
}

static void cl_compute_job_class_init(ClComputeJobClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = cl_compute_job_finalize;
}

static void cl_compute_job_init(ClComputeJob *job)
{
	(void)job;
}

static int column_count_of(const ClScene *scene)
{
	return 1 + 6 * scene->ball_count;
}

ClComputeJob *cl_compute_job_new(const ClScene *scene, const int *backends, int backend_count, const char *perturb,
								 double delta)
{
	ClComputeJob *job = g_object_new(CL_TYPE_COMPUTE_JOB, NULL);
	job->scene = cl_scene_copy(scene);
	job->backends = g_memdup2(backends, sizeof *backends * (gsize)MAX(backend_count, 1));
	job->backend_count = backend_count;
	job->perturb = g_strdup(perturb);
	job->delta = delta;
	/* units: the recorded rollout, two per finite difference, and the perturbation */
	int per_backend = 1 + 2 * (column_count_of(scene) - 1) + (perturb ? 2 + TANGENT_CHECKPOINTS / 2 : 0);
	job->units_total = MAX(1, per_backend * backend_count);
	return job;
}

double cl_compute_job_progress(ClComputeJob *job)
{
	return MIN(1.0, (double)g_atomic_int_get(&job->units_done) / job->units_total);
}

static void done(ClComputeJob *job, int units)
{
	g_atomic_int_add(&job->units_done, units);
}

/* The same scene cut after its first n steps (same dt, same controls). */
static ClScene *truncated(const ClScene *scene, int n)
{
	ClScene *copy = cl_scene_copy(scene);
	copy->duration = scene->duration * n / scene->steps;
	copy->steps = n;
	return copy;
}

static double *simulate(const ClScene *scene, int backend, ClStatus *status)
{
	int ns = cl_state_size(scene);
	double *states = g_new(double, (gsize)(scene->steps + 1) * (gsize)ns);
	ClRollout *rollout = cl_rollout_new(scene, backend);
	cl_rollout_run(rollout, NULL, NULL, false);
	*status = *cl_rollout_status(rollout);
	int done_steps = cl_rollout_steps_done(rollout);
	memcpy(states, cl_rollout_states(rollout), sizeof *states * (gsize)(done_steps + 1) * (gsize)ns);
	for (gsize i = (gsize)(done_steps + 1) * (gsize)ns; i < (gsize)(scene->steps + 1) * (gsize)ns; i++)
		states[i] = NAN;
	cl_rollout_free(rollout);
	return states;
}

/* Direction of a parameter in (s0, u): a unit vector in one slot. */
static void direction_of(const ClScene *scene, const ClParam *param, double *ds0, double *du)
{
	memset(ds0, 0, sizeof *ds0 * (gsize)cl_state_size(scene));
	memset(du, 0, sizeof *du * (gsize)cl_control_size(scene));
	if (cl_param_has_adjoint(param))
		*cl_param_slot(scene, param, ds0, du) = 1;
}

static void perturbation(ClComputeJob *job, ClComputeResult *result, ClBackendResult *r, GCancellable *cancellable)
{
	const ClScene *scene = job->scene;
	int b = r->backend, ns = cl_state_size(scene);
	double theta = cl_param_get(scene, &result->perturb_param);
	for (int sign = -1; sign <= 1; sign += 2) {
		ClScene *moved = cl_scene_copy(scene);
		cl_param_set(moved, &result->perturb_param, theta + sign * job->delta);
		ClStatus status;
		double *states = simulate(moved, b, &status);
		if (sign > 0) {
			r->plus_states = states;
			r->plus_status = status;
		} else {
			r->minus_states = states;
			r->minus_status = status;
		}
		cl_scene_free(moved);
		done(job, 1);
	}
	int count = MIN(TANGENT_CHECKPOINTS, scene->steps);
	r->tangent_count = 0;
	r->tangent_steps = g_new(int, count + 1);
	r->tangents = g_new0(double, (gsize)(count + 1) * (gsize)ns);
	/* at n = 0 the tangent is the direction itself (zero for a control) */
	double *du = g_new(double, (gsize)cl_control_size(scene));
	direction_of(scene, &result->perturb_param, r->tangents, du);
	r->tangent_steps[r->tangent_count++] = 0;
	for (int k = 1; k <= count && !g_cancellable_is_cancelled(cancellable); k++) {
		int n = (int)((long long)scene->steps * k / count);
		ClScene *cut = truncated(scene, n);
		double *ds0 = g_new(double, (gsize)ns), *cut_du = g_new(double, (gsize)cl_control_size(cut));
		direction_of(cut, &result->perturb_param, ds0, cut_du);
		ClRollout *rollout = cl_rollout_new(cut, b);
		double *out = r->tangents + (gsize)r->tangent_count * (gsize)ns;
		/* a warning (grazing, …) still simulates every step and has a tangent */
		cl_rollout_run(rollout, NULL, NULL, true);
		if (cl_rollout_steps_done(rollout) == n)
			cl_rollout_jvp(rollout, ds0, cut_du, out);
		else
			for (int i = 0; i < ns; i++)
				out[i] = NAN;
		r->tangent_steps[r->tangent_count++] = n;
		cl_rollout_free(rollout);
		g_free(ds0);
		g_free(cut_du);
		cl_scene_free(cut);
		if (k % 2 == 0)
			done(job, 1);
	}
	g_free(du);
}

static void gradients(ClComputeJob *job, ClComputeResult *result, ClBackendResult *r, GCancellable *cancellable)
{
	const ClScene *scene = job->scene;
	int b = r->backend, ns = cl_state_size(scene);
	ClRollout *rollout = cl_rollout_new(scene, b);
	cl_rollout_run(rollout, NULL, NULL, true);
	r->status = *cl_rollout_status(rollout);
	r->steps_done = cl_rollout_steps_done(rollout);
	r->states = g_memdup2(cl_rollout_states(rollout), sizeof(double) * (gsize)(r->steps_done + 1) * (gsize)ns);
	r->event_count = cl_rollout_event_count(rollout);
	r->events = g_memdup2(cl_rollout_events(rollout), sizeof(ClContactEvent) * (gsize)MAX(r->event_count, 1));
	r->loss = cl_rollout_loss(rollout);
	r->gradient = g_new(double, (gsize)result->column_count);
	r->fd = g_new(double, (gsize)result->column_count);
	for (int k = 0; k < result->column_count; k++)
		r->gradient[k] = r->fd[k] = NAN;
	/* a warning keeps every step, so its gradient exists (and is flagged) */
	gboolean complete = r->steps_done == scene->steps;
	r->gradient[0] = r->fd[0] = complete ? r->loss : NAN;
	if (complete) {
		double *dl_ds0 = g_new(double, (gsize)ns), *dl_du = g_new(double, (gsize)cl_control_size(scene));
		cl_rollout_gradient(rollout, dl_ds0, dl_du);
		for (int k = 1; k < result->column_count; k++)
			r->gradient[k] = *cl_param_slot(scene, &result->columns[k], dl_ds0, dl_du);
		g_free(dl_ds0);
		g_free(dl_du);
	}
	cl_rollout_free(rollout);
	done(job, 1);
	r->fd_status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	/* a run that stopped has no loss to difference (as in `contactlab gradients`) */
	if (!complete)
		done(job, 2 * (result->column_count - 1));
	for (int k = 1; complete && k < result->column_count && !g_cancellable_is_cancelled(cancellable); k++) {
		const ClParam *p = &result->columns[k];
		double h = cl_fd_step(scene, b, p);
		ClStatus status;
		r->fd_step = h;
		r->fd[k] = cl_finite_difference(scene, b, p, h, &status);
		if (status.code != CL_STATUS_OK && r->fd_status.code == CL_STATUS_OK)
			r->fd_status = status;
		done(job, 2);
	}
}

static ClComputeResult *result_new(ClComputeJob *job, GError **error)
{
	const ClScene *scene = job->scene;
	ResultBox *box = g_new0(ResultBox, 1);
	g_atomic_ref_count_init(&box->ref);
	ClComputeResult *result = &box->result;
	result->scene = cl_scene_copy(scene);
	result->column_count = column_count_of(scene);
	result->columns = g_new0(ClParam, (gsize)result->column_count);
	result->column_names = g_new0(char *, (gsize)result->column_count + 1);
	result->column_names[0] = g_strdup("loss");
	for (int i = 0, k = 1; i < scene->ball_count; i++) {
		static const ClParamTarget targets[] = {CL_PARAM_POSITION, CL_PARAM_VELOCITY, CL_PARAM_CONTROL};
		for (int t = 0; t < 3; t++) {
			for (int axis = 0; axis < 2; axis++, k++) {
				result->columns[k] = (ClParam){.target = targets[t], .ball = i, .step = 0, .axis = axis};
				char name[CL_NAME_MAX];
				cl_param_name(scene, &result->columns[k], name, sizeof name);
				result->column_names[k] = g_strdup(name);
			}
		}
	}
	result->backend_count = job->backend_count;
	result->backends = g_new0(ClBackendResult, (gsize)MAX(job->backend_count, 1));
	if (job->perturb) {
		char message[CL_MESSAGE_MAX];
		if (!cl_param_parse(scene, job->perturb, &result->perturb_param, message, sizeof message) ||
			!cl_param_has_adjoint(&result->perturb_param)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", job->perturb,
						cl_param_has_adjoint(&result->perturb_param) ? message : "no forward-mode tangent");
			cl_compute_result_unref(result);
			return NULL;
		}
		result->has_perturbation = TRUE;
		result->perturb_name = g_strdup(job->perturb);
		result->perturb_delta = job->delta;
	}
	return result;
}

typedef struct {
	ClComputeJob *job;
	ClComputeResult *result;
	GCancellable *cancellable;
} Work;

static void compute_backend(gpointer data, gpointer user)
{
	Work *work = user;
	ClBackendResult *r = data;
	if (g_cancellable_is_cancelled(work->cancellable))
		return;
	gradients(work->job, work->result, r, work->cancellable);
	if (work->result->has_perturbation && !g_cancellable_is_cancelled(work->cancellable))
		perturbation(work->job, work->result, r, work->cancellable);
}

ClComputeResult *cl_compute_job_run(ClComputeJob *job, GCancellable *cancellable, GError **error)
{
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(job->scene, message, sizeof message)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", message);
		return NULL;
	}
	ClComputeResult *result = result_new(job, error);
	if (!result)
		return NULL;
	/* backends are independent: one per core (each thread has its own rollouts) */
	Work work = {job, result, cancellable};
	int threads = (int)MIN(g_get_num_processors(), (guint)MAX(job->backend_count, 1));
	GThreadPool *pool = g_thread_pool_new(compute_backend, &work, threads, TRUE, NULL);
	for (int i = 0; i < job->backend_count; i++) {
		result->backends[i].backend = job->backends[i];
		if (pool)
			g_thread_pool_push(pool, &result->backends[i], NULL);
		else
			compute_backend(&result->backends[i], &work);
	}
	if (pool)
		g_thread_pool_free(pool, FALSE, TRUE);
	if (g_cancellable_set_error_if_cancelled(cancellable, error)) {
		cl_compute_result_unref(result);
		return NULL;
	}
	return result;
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)data;
	GError *error = NULL;
	ClComputeResult *result = cl_compute_job_run(CL_COMPUTE_JOB(source), cancellable, &error);
	if (result)
		g_task_return_pointer(task, result, (GDestroyNotify)cl_compute_result_unref);
	else
		g_task_return_error(task, error);
}

void cl_compute_job_run_async(ClComputeJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							  gpointer user_data)
{
	GTask *task = g_task_new(job, cancellable, callback, user_data);
	/* a stale result must never arrive after its job was cancelled */
	g_task_set_return_on_cancel(task, FALSE);
	g_task_run_in_thread(task, run_in_thread);
	g_object_unref(task);
}

ClComputeResult *cl_compute_job_finish(ClComputeJob *job, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, job), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}
