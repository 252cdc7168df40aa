/* A learning run as a study job: the result (LEARNING, payload
 * ClLearningRun) fills as every backend learns on a thread of its own. */
#pragma once

#include "cl-study-job.h"
#include "learning-run.h"

G_BEGIN_DECLS

/* scene: with optimize = the run's def. NULL with a message when the def
 * does not expand to parameters. */
ClJob *cl_learning_job_new(const ClScene *scene, guint revision, const int *backends, int backend_count,
						   GError **error);

G_END_DECLS
