/* contactlab convergence: one derivative per backend against the step count. */
#include "cli-common.h"
#include "convergence-data.h"
#include "figures.h"
#include "lesson-figures.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

static void report_progress(int done, int total, int backend_slot, int step_index, void *user)
{
	(void)backend_slot;
	(void)step_index;
	(void)user;
	cl_cli_progress("convergence: points", done, total);
}

/* The table printed when no file is asked for: one row per step count. */
static void put_table(GString *out, const ClConvergenceRun *run)
{
	g_string_append_printf(out, "d loss / d %s\n%8s %12s", run->parameter, "steps", "dt");
	for (guint b = 0; b < run->backends->len; b++)
		g_string_append_printf(out, " %16s", cl_backend_info(g_array_index(run->backends, int, b))->id);
	g_string_append_c(out, '\n');
	for (guint k = 0; k < run->steps->len; k++) {
		int n = g_array_index(run->steps, int, k);
		char dt[32];
		g_ascii_formatd(dt, sizeof dt, "%.6g", run->duration / n);
		g_string_append_printf(out, "%8d %12s", n, dt);
		for (guint b = 0; b < run->backends->len; b++) {
			char value[32];
			g_ascii_formatd(value, sizeof value, "%.10g", cl_convergence_run_point(run, b, k)->value);
			g_string_append_printf(out, " %16s", value);
		}
		g_string_append_c(out, '\n');
	}
}

static GArray *parse_steps_option(const char *text, GError **error)
{
	g_autofree char *field = g_strdup_printf("--steps %s", text);
	return cl_convergence_parse_steps(text, field, error);
}

int cl_cmd_convergence(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *parameter = NULL, *steps_text = NULL, *csv = NULL;
	ClCliFigureFiles figures = CL_CLI_FIGURE_FILES_INIT;
	GOptionEntry entries[] = {
		{"param", 'p', 0, G_OPTION_ARG_STRING, &parameter, "The derivative's parameter (required)", "NAME"},
		{"steps", 'n', 0, G_OPTION_ARG_STRING, &steps_text, "Step counts (default: 60,120,...,7680)", "N,N,..."},
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "Write backend,steps,dt,value here (- for stdout)", "FILE"},
		CL_CLI_FIGURE_OPTIONS(figures, "the figure"),
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL, *steps = NULL;
	ClConvergenceRun *run = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("convergence", "SCENE",
							  "Computes, per backend, the loss's derivative with respect to one parameter at each\n"
							  "step count N (dt = T/N; control sequences resampled, backend parameters such as\n"
							  "Brax's substeps kept). Without --csv or a figure it prints a table.",
							  entries, argc, argv, &positional, &error))
		goto out;
	if (!cl_cli_one_scene("convergence", positional, &error) || !cl_cli_figure_files_check(&figures, &error))
		goto out;
	if (!parameter) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "convergence: --param NAME is required");
		goto out;
	}
	if (!(steps = steps_text ? parse_steps_option(steps_text, &error) : cl_convergence_default_steps()) ||
		!(backends = cl_cli_backends(backend_ids, &error)) ||
		!(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	cl_cli_leave_out_unsupported(backends, backend_ids, scene);
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	if (!(run = cl_convergence_run_new(scene, parameter, steps, backends, report_progress, NULL, NULL, &error)))
		goto out;
	status = CL_EXIT_OK;
	for (guint b = 0; b < backends->len; b++)
		for (guint k = 0; k < steps->len; k++) {
			const ClConvergencePoint *p = cl_convergence_run_point(run, b, k);
			if (p->status != CL_STATUS_OK) {
				/* cl_convergence leaves NaN where the run stopped; warnings keep a value */
				gboolean failed = !isfinite(p->value);
				cl_cli_message("%s%s at N = %d: %s", failed ? "" : "warning: ",
							cl_backend_info(g_array_index(backends, int, b))->id, g_array_index(steps, int, k),
							cl_status_name(p->status));
				if (p->status == CL_STATUS_MEMORY_LIMIT)
					cl_cli_memory_note();
				if (failed)
					status = CL_EXIT_FAILED;
			}
		}
	gboolean figure_wanted = cl_cli_figure_files_wanted(&figures);
	if (csv || !figure_wanted) {
		GString *text = csv ? cl_convergence_csv(run) : g_string_new(NULL);
		if (!csv)
			put_table(text, run);
		if (!cl_write_output(csv ? csv : "-", text, &error))
			status = CL_EXIT_FAILED;
		g_string_free(text, TRUE);
	}
	if (figure_wanted && !error) {
		ClPlotFigure *figure = cl_figure_convergence(run, NULL);
		char *title = g_markup_escape_text(scene->name, -1);
		cl_plot_figure_set_title(figure, title);
		g_free(title);
		if (!cl_cli_figure_files_write(&figures, figure, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, &error))
			status = CL_EXIT_FAILED;
		cl_plot_figure_free(figure);
	}
out:
	if (error) {
		status = status == CL_EXIT_OK || status == CL_EXIT_FAILED ? CL_EXIT_FAILED : CL_EXIT_BAD_INPUT;
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	cl_convergence_run_free(run);
	if (steps)
		g_array_free(steps, TRUE);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_free(parameter);
	g_free(steps_text);
	g_free(csv);
	cl_cli_figure_files_clear(&figures);
	return status;
}
