/* contactlab heatmap: loss and gradient over a 2-D grid, per backend. */
#include "cli-common.h"
#include "cli-plots.h"
#include "figures.h"
#include "numbers.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* PARAM:MIN:MAX:N, split from the right so the name is everything before. */
static gboolean parse_axis(const ClScene *scene, const char *option, const char *spec, ClSweepAxis *axis,
						   GError **error)
{
	char **parts = g_strsplit(spec ? spec : "", ":", -1);
	guint n = g_strv_length(parts);
	gboolean ok = FALSE;
	if (n < 4) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"%s %s: expected PARAM:MIN:MAX:N, e.g. ball.velocity.x:3:7:64", option, spec ? spec : "");
		goto out;
	}
	GString *joined = g_string_new(parts[0]);
	for (guint i = 1; i + 3 < n; i++)
		g_string_append_printf(joined, ":%s", parts[i]);
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, joined->str, &axis->param, message, sizeof message)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: %s", option, spec, message);
		g_string_free(joined, TRUE);
		goto out;
	}
	g_string_free(joined, TRUE);
	double values[2];
	for (int k = 0; k < 2; k++) {
		char *end = NULL;
		values[k] = g_ascii_strtod(parts[n - 3 + k], &end);
		if (!*parts[n - 3 + k] || *end || !isfinite(values[k])) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: %s \"%s\" is not a finite number",
						option, spec, k ? "MAX" : "MIN", parts[n - 3 + k]);
			goto out;
		}
	}
	char *end = NULL;
	gint64 count = g_ascii_strtoll(parts[n - 1], &end, 10);
	if (!*parts[n - 1] || *end || count < 1 || count > 1024) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: N \"%s\" must be a whole number from 1 to 1024",
					option, spec, parts[n - 1]);
		goto out;
	}
	if (count > 1 && values[0] == values[1]) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: MIN and MAX are equal", option, spec);
		goto out;
	}
	axis->min = values[0];
	axis->max = values[1];
	axis->count = (int)count;
	ok = TRUE;
out:
	g_strfreev(parts);
	return ok;
}

static void on_progress(int done, int total, int slot, int ix, int iy, void *user)
{
	(void)slot;
	(void)ix;
	(void)iy;
	(void)user;
	cl_cli_progress("heatmap: cells", done, total);
}

/* Reports the cells each backend could not compute, one line per backend. */
static void report_failures(const ClSweepDef *def, const ClSweepCell *cells)
{
	size_t per_backend = (size_t)def->x.count * (size_t)def->y.count;
	for (int b = 0; b < def->backend_count; b++) {
		int counts[CL_STATUS_COUNT] = {0};
		for (size_t i = 0; i < per_backend; i++)
			counts[cells[b * per_backend + i].status]++;
		GString *line = g_string_new(NULL);
		for (int c = 1; c < CL_STATUS_COUNT; c++)
			if (counts[c])
				g_string_append_printf(line, "%s%d %s", line->len ? ", " : "", counts[c], cl_status_name(c));
		if (line->len)
			cl_cli_message("note: %s: %s of %zu cells", cl_backend_info(def->backends[b])->id, line->str,
						   per_backend);
		if (counts[CL_STATUS_MEMORY_LIMIT])
			cl_cli_memory_note();
		g_string_free(line, TRUE);
	}
}

int cl_cmd_heatmap(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *x_spec = NULL, *y_spec = NULL, *quantity_name = NULL;
	char *csv = NULL;
	ClCliFigureFiles figures = CL_CLI_FIGURE_FILES_INIT;
	int threads = 0;
	double width = 0, height = 0;
	char *threads_text = NULL, *width_text = NULL, *height_text = NULL;
	gboolean dark = FALSE, antithetic = FALSE;
	ClCliSampling sampling = CL_CLI_SAMPLING_INIT;
	GOptionEntry entries[] = {
		{"x", 'x', 0, G_OPTION_ARG_STRING, &x_spec, "The horizontal parameter, range and points", "PARAM:MIN:MAX:N"},
		{"y", 'y', 0, G_OPTION_ARG_STRING, &y_spec, "The vertical parameter, range and points", "PARAM:MIN:MAX:N"},
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"quantity", 'q', 0, G_OPTION_ARG_STRING, &quantity_name,
		 "loss, grad-x, grad-y, angle-error, sign-agreement, or smoothed: smoothed-loss, zobg-x|y, fobg-x|y, "
		 "fobg-bias-x|y (default: loss)",
		 "Q"},
		CL_CLI_SAMPLING_OPTIONS(sampling),
		{"antithetic", 0, 0, G_OPTION_ARG_NONE, &antithetic, "Smoothing samples in pairs ±w", NULL},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &threads_text, "Worker threads (default: one per core)", "N"},
		{"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "Write x,y,backend,quantity,value here (- for stdout)", "FILE"},
		CL_CLI_FIGURE_OPTIONS(figures, "the figure"),
		{"width", 0, 0, G_OPTION_ARG_STRING, &width_text, "Figure width in points (default: from the grid)", "PT"},
		{"height", 0, 0, G_OPTION_ARG_STRING, &height_text, "Figure height in points", "PT"},
		{"dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Dark theme", NULL},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	ClSweepCell *cells = NULL;
	ClPlotFigure *figure = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("heatmap", "SCENE",
							  "Sweeps two parameters over a grid and computes, per backend and cell, the loss and\n"
							  "its derivatives (adjoint, or central differences for parameters without one), or,\n"
							  "with --sigma, the smoothed loss and its ZoBG/FoBG gradients (same samples in every cell).\n"
							  "Writes CSV (x,y,backend,quantity,value; to stdout unless a figure is asked for)\n"
							  "and/or a figure with one panel per backend on one colour scale.",
							  entries, argc, argv, &positional, &error))
		goto out;
	if (!cl_cli_one_scene("heatmap", positional, &error) || !cl_cli_figure_files_check(&figures, &error))
		goto out;
	int quantity = quantity_name ? cl_sweep_quantity_find(quantity_name) : CL_SWEEP_LOSS;
	if (quantity < 0) {
		GString *known = g_string_new(NULL);
		for (int q = 0; q < CL_SWEEP_QUANTITY_COUNT; q++)
			g_string_append_printf(known, "%s%s", q ? ", " : "", cl_sweep_quantity_name(q));
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--quantity %s: expected one of %s",
					quantity_name, known->str);
		g_string_free(known, TRUE);
		goto out;
	}
	unsigned needs = cl_sweep_quantity_needs((ClSweepQuantity)quantity);
	if (!cl_cli_sampling_check(&sampling, &error))
		goto out;
	if (!(needs & CL_SWEEP_NEEDS_SMOOTHING) && (cl_cli_sampling_given(&sampling) || antithetic)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--%s: only the smoothed quantities (smoothed-loss, zobg-x|y, fobg-x|y, fobg-bias-x|y) use it",
					sampling.sigma ? "sigma" : sampling.samples != -1 ? "samples" : sampling.seed != -1 ? "seed"
																									   : "antithetic");
		goto out;
	}
	if ((needs & CL_SWEEP_NEEDS_SMOOTHING) && !sampling.sigma) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "heatmap: --quantity %s needs --sigma S[,S]",
					quantity_name);
		goto out;
	}
	if (!cl_cli_whole_option("--threads", threads_text, 1, 64, &threads, &error) ||
		!cl_cli_figure_size_options(width_text, height_text, &width, &height, &error))
		goto out;
	if (!(backends = cl_cli_backends(backend_ids, &error)) ||
		!(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	cl_cli_leave_out_unsupported(backends, backend_ids, scene);
	ClSweepDef def = {.threads = threads ? threads : (int)g_get_num_processors()};
	if (!x_spec || !y_spec) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "heatmap: --x and --y are required");
		goto out;
	}
	if (!parse_axis(scene, "--x", x_spec, &def.x, &error) || !parse_axis(scene, "--y", y_spec, &def.y, &error))
		goto out;
	if (needs & CL_SWEEP_NEEDS_SMOOTHING) {
		double sigma[2];
		if (!cl_cli_sampling_sigma(&sampling, 2, sigma, &error))
			goto out;
		def.smoothing = (ClSweepSmoothing){.samples = cl_cli_sampling_samples(&sampling),
										   .sigma_x = sigma[0],
										   .sigma_y = sigma[1],
										   .seed = cl_cli_sampling_seed(&sampling),
										   .antithetic = antithetic,
										   .first_order = (needs & CL_SWEEP_NEEDS_FOBG) != 0};
		if (antithetic && def.smoothing.samples % 2) {
			g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						"--samples %d: antithetic sampling needs an even number", def.smoothing.samples);
			goto out;
		}
	}
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	/* the angle error, sign agreement and FoBG bias are measured against exact: sweep it too */
	int exact = cl_backend_reference(), exact_slot = -1;
	for (guint k = 0; k < backends->len; k++)
		if (g_array_index(backends, int, k) == exact)
			exact_slot = (int)k;
	if (exact_slot < 0 && (needs & CL_SWEEP_NEEDS_EXACT)) {
		exact_slot = (int)backends->len;
		g_array_append_val(backends, exact);
	}
	def.backends = (const int *)backends->data;
	def.backend_count = (int)backends->len;
	def.progress = on_progress;
	if (!(cells = g_try_new(ClSweepCell, cl_sweep_cell_count(&def)))) {
		status = cl_cli_fail(CL_EXIT_FAILED, "heatmap: out of memory for %zu cells", cl_sweep_cell_count(&def));
		goto out;
	}
	ClStatus sweep_status;
	gint64 start = g_get_monotonic_time();
	if (!cl_sweep(scene, &def, cells, &sweep_status)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "heatmap: %s", sweep_status.message);
		goto out;
	}
	double seconds = (g_get_monotonic_time() - start) * 1e-6;
	cl_cli_message("%d × %d cells × %d backends%s in %.2f s on %d thread%s", def.x.count, def.y.count,
				   def.backend_count, def.smoothing.samples ? " (smoothed)" : "", seconds, def.threads,
				   def.threads == 1 ? "" : "s");
	report_failures(&def, cells);
	status = CL_EXIT_OK;
	if (csv || !cl_cli_figure_files_wanted(&figures)) {
		GString *text = cl_figure_heatmap_csv(&def, cells, (ClSweepQuantity)quantity, exact_slot);
		if (!cl_write_output(csv ? csv : "-", text, &error))
			status = CL_EXIT_FAILED;
		g_string_free(text, TRUE);
		if (error)
			goto out;
	}
	if (cl_cli_figure_files_wanted(&figures)) {
		figure = cl_figure_heatmap(scene, &def, cells, (ClSweepQuantity)quantity, exact_slot);
		if (dark)
			cl_plot_figure_set_theme(figure, CL_PLOT_THEME_DARK);
		double w, h;
		cl_figure_heatmap_size(figure, &w, &h);
		w = width > 0 ? width : w;
		h = height > 0 ? height : h;
		if (!cl_cli_figure_files_write(&figures, figure, w, h, &error)) {
			status = CL_EXIT_FAILED;
			goto out;
		}
	}
out:
	if (error) {
		if (status == CL_EXIT_OK)
			status = CL_EXIT_BAD_INPUT;
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	cl_plot_figure_free(figure);
	g_free(cells);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_free(x_spec);
	g_free(y_spec);
	g_free(quantity_name);
	g_free(threads_text);
	g_free(width_text);
	g_free(height_text);
	g_free(csv);
	cl_cli_figure_files_clear(&figures);
	cl_cli_sampling_clear(&sampling);
	return status;
}
