#include "cl-study-job.h"

typedef struct {
	ClResult *result;
	ClStudyFunc func;
} Study;

static void study_free(gpointer data)
{
	Study *study = data;
	cl_result_unref(study->result);
	g_free(study);
}

static gboolean run_study(ClJob *job, gpointer data, GError **error)
{
	Study *study = data;
	if (!study->func(job, study->result, error))
		return FALSE;
	if (cl_job_is_cancelled(job)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
		return FALSE;
	}
	return TRUE;
}

ClJob *cl_study_job_new(ClResult *result, int threads_wanted, ClStudyFunc func)
{
	Study *study = g_new(Study, 1);
	study->result = result;
	study->func = func;
	return cl_job_new(threads_wanted, run_study, study, study_free);
}

ClResult *cl_study_job_result(ClJob *job)
{
	return ((Study *)cl_job_get_data(job))->result;
}
