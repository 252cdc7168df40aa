/* A heatmap sweep as a study job: the result (HEATMAP, payload
 * ClHeatmapData) fills cell by cell on the job's threads. */
#pragma once

#include "cl-study-job.h"
#include "heatmap-data.h"

G_BEGIN_DECLS

/* backends: the enabled ones (the reference is added); smoothing: the
 * smoothed quantities' samples, or NULL. */
ClJob *cl_heatmap_job_new(const ClScene *scene, guint revision, const ClSweepAxis *x, const ClSweepAxis *y,
						  const ClSweepSmoothing *smoothing, const int *backends, int backend_count);

G_END_DECLS
