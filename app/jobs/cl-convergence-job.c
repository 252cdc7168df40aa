#include "cl-convergence-job.h"

/* From a convergence worker, never two at once. */
static void point_done(int done, int total, int backend_slot, int step_index, void *user)
{
	(void)backend_slot, (void)step_index;
	cl_job_set_progress(user, (double)done / MAX(total, 1));
}

static gboolean compute(ClJob *job, ClResult *result, GError **error)
{
	return cl_convergence_run_compute(cl_result_payload(result), cl_result_scene(result), cl_job_threads(job),
									  point_done, job, cl_job_cancel_flag(job), error);
}

ClJob *cl_convergence_job_new(const ClScene *scene, guint revision, const char *parameter, const GArray *steps,
							  const GArray *backends, GError **error)
{
	ClConvergenceRun *run = cl_convergence_run_prepare(scene, parameter, steps, backends, error);
	if (!run)
		return NULL;
	ClResult *result =
		cl_result_new(CL_RESULT_CONVERGENCE, scene, revision, run, (GDestroyNotify)cl_convergence_run_free);
	return cl_study_job_new(result, (int)g_get_num_processors(), compute);
}
