/* A job that fills a result: the job's data is a ClResult (stamped with the
 * scene and revision it is computed for) whose payload func fills in the
 * worker thread, so a view can show the payload's parts as they arrive and
 * store the result in the document when it is done. Every computation of
 * the window (Run, heatmap, learning, convergence) is one of these. */
#pragma once

#include "cl-job.h"
#include "cl-result.h"

G_BEGIN_DECLS

typedef gboolean (*ClStudyFunc)(ClJob *job, ClResult *result, GError **error);

/* Takes result. */
ClJob *cl_study_job_new(ClResult *result, int threads_wanted, ClStudyFunc func);
/* The job's result (borrowed; valid while the job is). */
ClResult *cl_study_job_result(ClJob *job);

G_END_DECLS
