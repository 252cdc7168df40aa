#include "heatmap-data.h"

#include <math.h>

ClHeatmapData *cl_heatmap_data_new(const ClSweepAxis *x, const ClSweepAxis *y, const ClSweepSmoothing *smoothing,
								   const int *backends, int count)
{
	ClHeatmapData *data = g_new0(ClHeatmapData, 1);
	g_mutex_init(&data->lock);
	int reference = cl_backend_reference();
	data->backends = g_new(int, (gsize)count + 1);
	data->exact_slot = -1;
	int n = 0;
	/* registry order, the reference included */
	for (int b = 0; b < cl_backend_count(); b++) {
		gboolean wanted = b == reference;
		for (int i = 0; i < count && !wanted; i++)
			wanted = backends[i] == b;
		if (!wanted)
			continue;
		if (b == reference)
			data->exact_slot = n;
		data->backends[n++] = b;
	}
	data->def = (ClSweepDef){.x = *x, .y = *y, .backends = data->backends, .backend_count = n, .threads = 1};
	if (smoothing)
		data->def.smoothing = *smoothing;
	size_t cells = MAX(cl_sweep_cell_count(&data->def), 1);
	data->cells = g_new(ClSweepCell, cells);
	data->mirror = g_new(ClSweepCell, cells);
	for (size_t i = 0; i < cells; i++)
		data->cells[i] = data->mirror[i] = cl_sweep_cell_pending();
	return data;
}

void cl_heatmap_data_free(ClHeatmapData *data)
{
	if (!data)
		return;
	g_free(data->backends);
	g_free(data->cells);
	g_free(data->mirror);
	g_mutex_clear(&data->lock);
	g_free(data);
}

/* Runs in a sweep worker, under the sweep's progress lock: the cell is in place. */
static void cell_done(int done, int total, int slot, int ix, int iy, void *user)
{
	(void)total;
	ClHeatmapData *data = user;
	size_t i = cl_sweep_index(&data->def, slot, ix, iy);
	g_mutex_lock(&data->lock);
	data->mirror[i] = data->cells[i];
	g_mutex_unlock(&data->lock);
	g_atomic_int_set(&data->done, done);
}

gboolean cl_heatmap_data_sweep(ClHeatmapData *data, const ClScene *scene, int threads, const _Atomic int *cancel,
							   ClStatus *status)
{
	ClSweepDef def = data->def;
	def.threads = MAX(threads, 1);
	def.progress = cell_done;
	def.user = data;
	def.cancel = cancel;
	return cl_sweep(scene, &def, data->cells, status);
}

int cl_heatmap_data_done(ClHeatmapData *data)
{
	return g_atomic_int_get(&data->done);
}

int cl_heatmap_data_total(const ClHeatmapData *data)
{
	return (int)cl_sweep_cell_count(&data->def);
}

ClSweepCell *cl_heatmap_data_copy_cells(ClHeatmapData *data)
{
	g_mutex_lock(&data->lock);
	ClSweepCell *copy = g_memdup2(data->mirror, sizeof(ClSweepCell) * MAX(cl_sweep_cell_count(&data->def), 1));
	g_mutex_unlock(&data->lock);
	return copy;
}
