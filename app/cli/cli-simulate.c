/* contactlab simulate: trajectories of every chosen backend as CSV and/or a figure. */
#include "cli-common.h"
#include "figures.h"
#include "numbers.h"
#include "scene-figure.h"

#include <stdio.h>

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
	if (!cl_cli_figure_files_check(&figures, &error))
		goto out;
	status = CL_EXIT_OK;
	if (check_only)
		goto out;
	GString *text = g_string_new(CL_TRAJECTORY_CSV_HEADER);
	/* the window's Run data, trajectories only: the figure is the canvas's drawing of it */
	data = cl_run_data_new(scene, (const int *)backends->data, (int)backends->len, NULL, 0);
	for (int k = 0; k < data->backend_count; k++) {
		cl_run_data_compute_backend(data, scene, k);
		const ClRunBackend *run = &data->backends[k];
		if (run->row.status.code != CL_STATUS_OK) {
			char *reason = cl_status_text(&run->row.status);
			gboolean fatal = run->steps_done < scene->steps;
			fprintf(stderr, "contactlab: %s%s: %s\n", fatal ? "" : "warning: ", cl_backend_info(run->backend)->id,
					reason);
			g_free(reason);
			if (fatal)
				status = CL_EXIT_FAILED;
		}
		cl_trajectory_csv_append(text, scene, run->backend, run->states, run->steps_done);
	}
	cl_run_data_set_ready(data);
	GError *write_error = NULL;
	if ((csv || !cl_cli_figure_files_wanted(&figures)) && !cl_write_output(csv ? csv : "-", text, &write_error)) {
		status = cl_cli_fail(CL_EXIT_FAILED, "%s", write_error->message);
		g_clear_error(&write_error);
	}
	g_string_free(text, TRUE);
	if (cl_cli_figure_files_wanted(&figures)) {
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
