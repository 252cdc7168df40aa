#include "cl-heatmap-job.h"

static gboolean sweep(ClJob *job, ClResult *result, GError **error)
{
	ClHeatmapData *data = cl_result_payload(result);
	ClStatus status;
	if (cl_heatmap_data_sweep(data, cl_result_scene(result), cl_job_threads(job), cl_job_cancel_flag(job), &status))
		return TRUE;
	g_set_error(error, G_IO_ERROR, status.code == CL_STATUS_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_INVALID_ARGUMENT,
				"%s", status.message);
	return FALSE;
}

/* Progress: the job's fraction follows the cells done. */
static void track(ClJob *job, ClHeatmapData *data)
{
	cl_job_set_progress(job, (double)cl_heatmap_data_done(data) / MAX(cl_heatmap_data_total(data), 1));
}

ClJob *cl_heatmap_job_new(const ClScene *scene, guint revision, const ClSweepAxis *x, const ClSweepAxis *y,
						  const ClSweepSmoothing *smoothing, const int *backends, int backend_count)
{
	ClHeatmapData *data = cl_heatmap_data_new(x, y, smoothing, backends, backend_count);
	ClResult *result = cl_result_new(CL_RESULT_HEATMAP, scene, revision, data, (GDestroyNotify)cl_heatmap_data_free);
	ClJob *job = cl_study_job_new(result, (int)g_get_num_processors(), sweep);
	g_signal_connect(job, "progress", G_CALLBACK(track), data);
	return job;
}
