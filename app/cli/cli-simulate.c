/* contactlab simulate: trajectories of every chosen backend as CSV and/or a figure. */
#include "cli-common.h"
#include "figures.h"
#include "numbers.h"
#include "scene-figure.h"

int cl_cmd_simulate(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *csv = NULL;
	gboolean dark = FALSE;
	ClCliFigureFiles figures = CL_CLI_FIGURE_FILES_INIT;
	GOptionEntry entries[] = {
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "Write the CSV here (default: stdout unless a figure is asked for)",
		 "FILE"},
		CL_CLI_FIGURE_OPTIONS(figures, "the trajectory figure"),
		{"dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Dark theme for the figure", NULL},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	ClRunData *data = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("simulate", "SCENE",
							  "Simulates the scene with each backend and writes the trajectories as CSV:\n"
							  "backend,step,time,ball,x,y,vx,vy (a failed run stops at its last good step),\n"
							  "and/or draws them on the scene as the window's canvas does (--png, --svg, --pdf).",
							  entries, argc, argv, &positional, &error))
		goto out;
	if (!cl_cli_one_scene("simulate", positional, &error))
		goto out;
	if (!(backends = cl_cli_backends(backend_ids, &error)) || !(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	cl_cli_leave_out_unsupported(backends, backend_ids, scene);
	if (!cl_cli_figure_files_check(&figures, &error))
		goto out;
	status = CL_EXIT_OK;
	if (check_only)
		goto out;
	gboolean figure = cl_cli_figure_files_wanted(&figures);
	GError *write_error = NULL;
	ClOutput *output = NULL;
	if ((csv || !figure) && !(output = cl_output_open(csv ? csv : "-", &write_error))) {
		status = cl_cli_fail(CL_EXIT_FAILED, "%s", write_error->message);
		g_clear_error(&write_error);
		goto out;
	}
	/* the figure is the canvas's drawing of the window's Run data, which keeps
	 * every backend's trajectory (they share the budget); without one the CSV
	 * is written as each run ends: a long run's need not fit in memory */
	if (figure) {
		scene->memory_budget /= backends->len;
		data = cl_run_data_new(scene, (const int *)backends->data, (int)backends->len, NULL, 0);
	}
	GString *text = g_string_new(CL_TRAJECTORY_CSV_HEADER);
	gboolean complete = TRUE;
	for (guint k = 0; k < backends->len; k++) {
		int backend = g_array_index(backends, int, k);
		cl_cli_progress("simulate: backends", (int)k, (int)backends->len);
		ClRollout *rollout = NULL;
		const ClStatus *run_status;
		const double *states;
		int steps_done;
		if (data) {
			cl_run_data_compute_backend(data, scene, (int)k);
			const ClRunBackend *run = &data->backends[k];
			run_status = &run->row.status;
			states = run->states;
			steps_done = run->steps_done;
		} else {
			if (!(rollout = cl_rollout_new(scene, backend))) {
				status = cl_cli_fail(CL_EXIT_FAILED, "%s: out of memory", cl_backend_info(backend)->id);
				complete = FALSE;
				break;
			}
			cl_rollout_run(rollout, NULL, NULL, false);
			run_status = cl_rollout_status(rollout);
			states = cl_rollout_states(rollout);
			steps_done = cl_rollout_steps_done(rollout);
		}
		if (run_status->code != CL_STATUS_OK) {
			char *reason = cl_status_text(run_status);
			gboolean fatal = steps_done < scene->steps;
			cl_cli_message("%s%s: %s", fatal ? "" : "warning: ", cl_backend_info(backend)->id, reason);
			g_free(reason);
			if (fatal)
				status = CL_EXIT_FAILED;
		}
		if (output && !write_error)
			cl_trajectory_csv_write(text, output, scene, backend, states, steps_done, &write_error);
		cl_rollout_free(rollout);
	}
	if (output) {
		if (!write_error && cl_output_write(output, text, &write_error))
			cl_output_close(output, &write_error);
		else
			cl_output_abort(output);
	}
	if (write_error) {
		status = cl_cli_fail(CL_EXIT_FAILED, "%s", write_error->message);
		g_clear_error(&write_error);
	}
	g_string_free(text, TRUE);
	if (data && complete) {
		cl_run_data_set_ready(data);
		ClPlotFigure *plot = cl_scene_figure_new(scene, data);
		if (dark)
			cl_plot_figure_set_theme(plot, CL_PLOT_THEME_DARK);
		if (!cl_cli_figure_files_write(&figures, plot, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, &write_error)) {
			status = cl_cli_fail(CL_EXIT_FAILED, "%s", write_error->message);
			g_clear_error(&write_error);
		}
		cl_plot_figure_free(plot);
	}
out:
	cl_run_data_unref(data);
	cl_cli_report(error, CL_EXIT_BAD_INPUT);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_free(csv);
	cl_cli_figure_files_clear(&figures);
	return status;
}
