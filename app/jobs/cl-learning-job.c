#include "cl-learning-job.h"

typedef struct {
	ClJob *job;
	ClResult *result;
} Learning;

static void learn(int slot, gpointer data)
{
	Learning *l = data;
	cl_learning_run_learn(cl_result_payload(l->result), cl_result_scene(l->result), slot, cl_job_cancel_flag(l->job));
	cl_job_set_progress(l->job, cl_learning_run_progress(cl_result_payload(l->result)));
}

static gboolean learn_all(ClJob *job, ClResult *result, GError **error)
{
	(void)error;
	Learning l = {job, result};
	cl_job_parallel(job, ((ClLearningRun *)cl_result_payload(result))->backend_count, learn, &l);
	return TRUE;
}

static void track(ClJob *job, ClLearningRun *run)
{
	cl_job_set_progress(job, cl_learning_run_progress(run));
}

ClJob *cl_learning_job_new(const ClScene *scene, guint revision, const int *backends, int backend_count,
						   GError **error)
{
	ClLearningRun *run = cl_learning_run_new(scene, backends, backend_count, error);
	if (!run)
		return NULL;
	ClResult *result = cl_result_new(CL_RESULT_LEARNING, scene, revision, run, (GDestroyNotify)cl_learning_run_free);
	ClJob *job = cl_study_job_new(result, backend_count, learn_all);
	g_signal_connect(job, "progress", G_CALLBACK(track), run);
	return job;
}
