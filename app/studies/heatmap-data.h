/* A heatmap's sweep: two parameters over a grid for a set of backends (the
 * reference always among them, for the quantities judged against it), its
 * cells filled by cl_sweep's workers and mirrored, cell by cell, where
 * readers can copy them while it runs (tiles appear as they finish). */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

typedef struct ClHeatmapData {
	ClSweepDef def; /* its backends point into this data */
	int *backends;
	int exact_slot; /* the reference's slot */
	ClSweepQuantity quantity; /* the one shown (main thread): exports draw it too */
	/* private */
	ClSweepCell *cells;  /* written by the sweep */
	ClSweepCell *mirror; /* finished cells, under the lock */
	GMutex lock;
	gint done;
} ClHeatmapData;

/* backends: the enabled ones; the reference is added when missing.
 * smoothing: the smoothed quantities' samples, or NULL for none. */
ClHeatmapData *cl_heatmap_data_new(const ClSweepAxis *x, const ClSweepAxis *y, const ClSweepSmoothing *smoothing,
								   const int *backends, int count);
void cl_heatmap_data_free(ClHeatmapData *data);
/* Sweeps scene on threads; cancel (may be NULL) stops it. FALSE with a
 * message in status when the definition is invalid or it was cancelled. */
gboolean cl_heatmap_data_sweep(ClHeatmapData *data, const ClScene *scene, int threads, const _Atomic int *cancel,
							   ClStatus *status);
int cl_heatmap_data_done(ClHeatmapData *data);
int cl_heatmap_data_total(const ClHeatmapData *data);
/* A copy of every cell (unfinished ones: NAN, status cancelled); g_free it. */
ClSweepCell *cl_heatmap_data_copy_cells(ClHeatmapData *data);
