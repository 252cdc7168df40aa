#include "cl-smoothing-job.h"

/* From a cl_smooth worker, never two at once. */
static void runs_done(int done, int total, void *user)
{
	cl_job_set_progress(user, (double)done / MAX(total, 1));
}

static gboolean compute(ClJob *job, ClResult *result, GError **error)
{
	return cl_smoothing_run_compute(cl_result_payload(result), cl_result_scene(result), cl_job_threads(job), runs_done,
									job, cl_job_cancel_flag(job), error);
}

ClJob *cl_smoothing_job_new(const ClScene *scene, guint revision, const char *const *names, const double *sigma,
							int param_count, int samples, guint64 seed, gboolean antithetic, gboolean quadrature,
							const int *backends, int backend_count, GError **error)
{
	ClSmoothingRun *run = cl_smoothing_run_prepare(scene, names, sigma, param_count, samples, seed, antithetic,
												   quadrature, backends, backend_count, error);
	if (!run)
		return NULL;
	ClResult *result = cl_result_new(CL_RESULT_SMOOTHING, scene, revision, run, (GDestroyNotify)cl_smoothing_run_free);
	return cl_study_job_new(result, (int)g_get_num_processors(), compute);
}
