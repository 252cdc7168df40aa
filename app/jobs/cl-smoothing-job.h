/* A Smoothing view computation as a study job: the result (SMOOTHING,
 * payload ClSmoothingRun) of cl_smooth over every given backend with the
 * same samples, every term kept for the histogram and the α rule. */
#pragma once

#include "cl-study-job.h"
#include "smoothing-data.h"

G_BEGIN_DECLS

/* NULL with a message naming the bad input (cl_smoothing_run_prepare). */
ClJob *cl_smoothing_job_new(const ClScene *scene, guint revision, const char *const *names, const double *sigma,
							int param_count, int samples, guint64 seed, gboolean antithetic, gboolean quadrature,
							const int *backends, int backend_count, GError **error);

G_END_DECLS
