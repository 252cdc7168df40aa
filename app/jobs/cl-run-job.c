#include "cl-run-job.h"

typedef struct {
	ClResult *result;
	const ClScene *scene; /* the result's */
	ClRunData *data;
	ClJob *job;
	int *fd_order; /* cells (slot · columns + column) in the order they are differenced */
	int fd_count;
	gint units_done; /* atomic: runs, perturbation studies and differences */
	int units_total;
} Run;

static void run_free(gpointer p)
{
	Run *run = p;
	cl_result_unref(run->result);
	g_free(run->fd_order);
	g_free(run);
}

static void unit_done(Run *run)
{
	cl_job_set_progress(run->job, (double)(g_atomic_int_add(&run->units_done, 1) + 1) / MAX(run->units_total, 1));
}

static void compute_backend(int slot, gpointer p)
{
	Run *run = p;
	cl_run_data_compute_backend(run->data, run->scene, slot);
	if (run->data->has_perturbation && !cl_job_is_cancelled(run->job))
		cl_run_data_compute_perturbation(run->data, run->scene, slot, cl_job_cancel_flag(run->job));
	unit_done(run);
}

static void compute_fd(int index, gpointer p)
{
	Run *run = p;
	int cell = run->fd_order[index];
	cl_run_data_compute_fd(run->data, run->scene, cell / run->data->column_count, cell % run->data->column_count);
	unit_done(run);
}

static gboolean run_func(ClJob *job, gpointer p, GError **error)
{
	Run *run = p;
	run->job = job;
	cl_job_parallel(job, run->data->backend_count, compute_backend, run);
	if (!cl_job_is_cancelled(job)) {
		cl_run_data_set_ready(run->data);
		cl_job_parallel(job, run->fd_count, compute_fd, run);
	}
	if (cl_job_is_cancelled(job)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
		return FALSE;
	}
	return TRUE;
}

/* The cells to difference, fd_first's columns first (a run that stopped
 * costs nothing there: it has no loss to difference). */
static void order_cells(Run *run, const ClRunRequest *request)
{
	ClRunData *data = run->data;
	int columns = data->column_count;
	gboolean *first = g_new0(gboolean, (gsize)MAX(columns, 1));
	for (int i = 0; i < request->fd_first_count; i++)
		if (request->fd_first[i] >= 0 && request->fd_first[i] < columns)
			first[request->fd_first[i]] = TRUE;
	run->fd_order = g_new(int, (gsize)MAX(columns * data->backend_count, 1));
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < columns; k++) {
			if (first[k] != (pass == 0) ||
				!cl_fd_choice_wants(request->fd, run->scene, data->columns, columns, k))
				continue;
			for (int b = 0; b < data->backend_count; b++)
				run->fd_order[run->fd_count++] = b * columns + k;
		}
	g_free(first);
}

ClJob *cl_run_job_new(const ClRunRequest *request, GError **error)
{
	ClRunData *data = cl_run_data_new(request->scene, request->backends, request->backend_count, request->columns,
									  request->column_count);
	if (request->perturb) {
		char message[CL_MESSAGE_MAX] = "no forward-mode tangent";
		if (!cl_param_parse(request->scene, request->perturb, &data->perturb_param, message, sizeof message) ||
			!cl_param_has_adjoint(&data->perturb_param)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", request->perturb, message);
			cl_run_data_free(data);
			return NULL;
		}
		data->has_perturbation = TRUE;
		data->perturb_delta = request->perturb_delta;
	}
	Run *run = g_new0(Run, 1);
	run->data = data;
	run->result = cl_result_new(CL_RESULT_RUN, request->scene, request->revision, data,
								(GDestroyNotify)cl_run_data_free);
	run->scene = cl_result_scene(run->result);
	order_cells(run, request);
	data->fd_total = run->fd_count;
	run->units_total = data->backend_count + run->fd_count;
	return cl_job_new(MAX(data->backend_count, run->fd_count), run_func, run, run_free);
}

ClResult *cl_run_job_result(ClJob *job)
{
	return ((Run *)cl_job_get_data(job))->result;
}
