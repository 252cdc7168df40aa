/* A convergence study as a study job: the result (CONVERGENCE, payload
 * ClConvergenceRun) of one derivative against the step count. */
#pragma once

#include "cl-study-job.h"
#include "convergence-data.h"

G_BEGIN_DECLS

/* NULL with a message when the scene has no such parameter. */
ClJob *cl_convergence_job_new(const ClScene *scene, guint revision, const char *parameter, const GArray *steps,
							  const GArray *backends, GError **error);

G_END_DECLS
