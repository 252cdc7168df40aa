#include "cl-heatmap-job.h"

#include <math.h>
#include <stdatomic.h>

struct _ClHeatmapJob {
	GObject parent_instance;
	ClScene *scene;
	int *backends;
	ClSweepDef def;
	/* the sweep writes into cells; each finished cell is copied to mirror
	 * under mirror_lock, so readers never see a cell being written */
	ClSweepCell *cells;
	ClSweepCell *mirror;
	GMutex mirror_lock;
	gint done; /* atomic */
	_Atomic int cancel;
};

G_DEFINE_FINAL_TYPE(ClHeatmapJob, cl_heatmap_job, G_TYPE_OBJECT)

static void cl_heatmap_job_finalize(GObject *object)
{
	ClHeatmapJob *job = CL_HEATMAP_JOB(object);
	cl_scene_free(job->scene);
	g_free(job->backends);
	g_free(job->cells);
	g_free(job->mirror);
	g_mutex_clear(&job->mirror_lock);
	G_OBJECT_CLASS(cl_heatmap_job_parent_class)->finalize(object);
}

static void cl_heatmap_job_class_init(ClHeatmapJobClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = cl_heatmap_job_finalize;
}

static void cl_heatmap_job_init(ClHeatmapJob *job)
{
	g_mutex_init(&job->mirror_lock);
}

/* Runs in a sweep worker, under the sweep's progress lock: the cell is in place. */
static void cell_done(int done, int total, int slot, int ix, int iy, void *user)
{
	(void)total;
	ClHeatmapJob *job = user;
	size_t i = cl_sweep_index(&job->def, slot, ix, iy);
	g_mutex_lock(&job->mirror_lock);
	job->mirror[i] = job->cells[i];
	g_mutex_unlock(&job->mirror_lock);
	g_atomic_int_set(&job->done, done);
}

ClHeatmapJob *cl_heatmap_job_new(const ClScene *scene, const ClSweepAxis *x, const ClSweepAxis *y, const int *backends,
								 int backend_count, int threads)
{
	ClHeatmapJob *job = g_object_new(CL_TYPE_HEATMAP_JOB, NULL);
	job->scene = cl_scene_copy(scene);
	job->backends = g_memdup2(backends, sizeof(int) * (gsize)MAX(backend_count, 1));
	job->def = (ClSweepDef){
		.x = *x,
		.y = *y,
		.backends = job->backends,
		.backend_count = backend_count,
		.threads = MAX(threads, 1),
		.progress = cell_done,
		.user = job,
		.cancel = &job->cancel,
	};
	size_t n = MAX(cl_sweep_cell_count(&job->def), 1);
	job->cells = g_new(ClSweepCell, n);
	job->mirror = g_new(ClSweepCell, n);
	for (size_t i = 0; i < n; i++)
		job->cells[i] = job->mirror[i] = cl_sweep_cell_pending();
	return job;
}

const ClSweepDef *cl_heatmap_job_def(ClHeatmapJob *job)
{
	return &job->def;
}

const ClScene *cl_heatmap_job_scene(ClHeatmapJob *job)
{
	return job->scene;
}

int cl_heatmap_job_done(ClHeatmapJob *job)
{
	return g_atomic_int_get(&job->done);
}

int cl_heatmap_job_total(ClHeatmapJob *job)
{
	return (int)cl_sweep_cell_count(&job->def);
}

ClSweepCell *cl_heatmap_job_copy_cells(ClHeatmapJob *job)
{
	g_mutex_lock(&job->mirror_lock);
	ClSweepCell *copy = g_memdup2(job->mirror, sizeof(ClSweepCell) * MAX(cl_sweep_cell_count(&job->def), 1));
	g_mutex_unlock(&job->mirror_lock);
	return copy;
}

static void request_cancel(GCancellable *cancellable, gpointer data)
{
	(void)cancellable;
	atomic_store(&((ClHeatmapJob *)data)->cancel, 1);
}

gboolean cl_heatmap_job_run(ClHeatmapJob *job, GCancellable *cancellable, GError **error)
{
	gulong handler = cancellable ? g_cancellable_connect(cancellable, G_CALLBACK(request_cancel), job, NULL) : 0;
	ClStatus status;
	gboolean ok = cl_sweep(job->scene, &job->def, job->cells, &status);
	if (cancellable)
		g_cancellable_disconnect(cancellable, handler);
	if (!ok)
		g_set_error(error, G_IO_ERROR, status.code == CL_STATUS_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_INVALID_ARGUMENT,
					"%s", status.message);
	return ok;
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)data;
	GError *error = NULL;
	if (cl_heatmap_job_run(CL_HEATMAP_JOB(source), cancellable, &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

void cl_heatmap_job_run_async(ClHeatmapJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							  gpointer user_data)
{
	GTask *task = g_task_new(job, cancellable, callback, user_data);
	g_task_set_return_on_cancel(task, FALSE);
	g_task_run_in_thread(task, run_in_thread);
	g_object_unref(task);
}

gboolean cl_heatmap_job_finish(ClHeatmapJob *job, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, job), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}
