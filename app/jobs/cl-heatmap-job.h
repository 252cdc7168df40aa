/* A heatmap sweep off the main thread: cl_sweep over two parameters for a
 * set of backends on its own scene copy, with every finished cell published
 * to a mirror the main thread can copy at any time (tiles appear as they
 * finish) and cancellation through a GCancellable. */
#pragma once

#include "contactlab/sim.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define CL_TYPE_HEATMAP_JOB (cl_heatmap_job_get_type())
G_DECLARE_FINAL_TYPE(ClHeatmapJob, cl_heatmap_job, CL, HEATMAP_JOB, GObject)

/* threads: the sweep's worker threads (≥ 1). */
ClHeatmapJob *cl_heatmap_job_new(const ClScene *scene, const ClSweepAxis *x, const ClSweepAxis *y, const int *backends,
								 int backend_count, int threads);
/* The sweep definition (backends, axes); valid for the job's lifetime. */
const ClSweepDef *cl_heatmap_job_def(ClHeatmapJob *job);
const ClScene *cl_heatmap_job_scene(ClHeatmapJob *job);
/* Cells finished so far and in all; any thread. */
int cl_heatmap_job_done(ClHeatmapJob *job);
int cl_heatmap_job_total(ClHeatmapJob *job);
/* A copy of every cell (unfinished ones: NAN values, status cancelled);
 * g_free it. Any thread. */
ClSweepCell *cl_heatmap_job_copy_cells(ClHeatmapJob *job);
void cl_heatmap_job_run_async(ClHeatmapJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							  gpointer user_data);
/* TRUE when every cell was computed; FALSE with an error when the sweep
 * was invalid or cancelled. */
gboolean cl_heatmap_job_finish(ClHeatmapJob *job, GAsyncResult *result, GError **error);
/* The same in the calling thread (tests). */
gboolean cl_heatmap_job_run(ClHeatmapJob *job, GCancellable *cancellable, GError **error);

G_END_DECLS
