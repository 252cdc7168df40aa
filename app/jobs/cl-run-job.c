#include "cl-run-job.h"

#include "cl-study-job.h"

typedef struct {
	ClJob *job;
	const ClScene *scene; /* the result's */
	ClRunData *data;
	gint units_done; /* atomic: runs and differences */
} Run;

static void unit_done(Run *run)
{
	int total = run->data->backend_count + run->data->fd_total;
	cl_job_set_progress(run->job, (double)(g_atomic_int_add(&run->units_done, 1) + 1) / MAX(total, 1));
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
	cl_run_data_compute_fd(run->data, run->scene, index);
	unit_done(run);
}

static gboolean run_study(ClJob *job, ClResult *result, GError **error)
{
	(void)error;
	Run run = {.job = job, .scene = cl_result_scene(result), .data = cl_result_payload(result)};
	cl_job_parallel(job, run.data->backend_count, compute_backend, &run);
	if (cl_job_is_cancelled(job))
		return TRUE;
	cl_run_data_set_ready(run.data);
	cl_job_parallel(job, run.data->fd_total, compute_fd, &run);
	return TRUE;
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
	cl_run_data_plan_fd(data, request->scene, request->fd, request->fd_first, request->fd_first_count);
	ClResult *result = cl_result_new(CL_RESULT_RUN, request->scene, request->revision, data,
									 (GDestroyNotify)cl_run_data_free);
	return cl_study_job_new(result, MAX(data->backend_count, data->fd_total), run_study);
}
