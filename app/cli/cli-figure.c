/* contactlab figure: the paper's Figures 2, 4 and 5, recomputed. */
#include "cli-common.h"
#include "cli-plots.h"
#include "figures.h"

#include <stdio.h>
#include <string.h>

int cl_cmd_figure(int argc, char **argv, gboolean check_only)
{
	ClCliFigureFiles figures = CL_CLI_FIGURE_FILES_INIT;
	double width = 0, height = 0;
	char *width_text = NULL, *height_text = NULL;
	gboolean dark = FALSE;
	GOptionEntry entries[] = {
		CL_CLI_FIGURE_OPTIONS(figures, "the figure"),
		{"width", 0, 0, G_OPTION_ARG_STRING, &width_text, "Figure width in points", "PT"},
		{"height", 0, 0, G_OPTION_ARG_STRING, &height_text, "Figure height in points", "PT"},
		{"dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Dark theme", NULL},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClPlotFigure *figure = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("figure", "2|4|5",
							  "Recomputes one of the paper's figures from the presets with every backend:\n"
							  "  2  Task 2: trajectories (initial, and the two optimized modes) and learning curves\n"
							  "  4  Task 3: learning curves and learned control profiles, with the analytic optimum\n"
							  "  5  Task 3: compliant-warp learning curves for stiffness 1e2, 1e3, 1e4, 1e5",
							  entries, argc, argv, &positional, &error))
		goto out;
	const char *which = g_strv_length(positional) == 1 ? positional[0] : "";
	if (strcmp(which, "2") != 0 && strcmp(which, "4") != 0 && strcmp(which, "5") != 0) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "figure: expected 2, 4 or 5");
		goto out;
	}
	if (!cl_cli_figure_files_wanted(&figures)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "figure: give --png, --svg and/or --pdf FILE");
		goto out;
	}
	if (!cl_cli_figure_files_check(&figures, &error) ||
		!cl_cli_figure_size_options(width_text, height_text, &width, &height, &error))
		goto out;
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	status = CL_EXIT_FAILED;
	gint64 start = g_get_monotonic_time();
	if (!(figure = cl_figure_paper(which[0] - '0', &error)))
		goto out;
	cl_cli_message("figure %s computed in %.1f s", which, (g_get_monotonic_time() - start) * 1e-6);
	if (dark)
		cl_plot_figure_set_theme(figure, CL_PLOT_THEME_DARK);
	double w = width > 0 ? width : CL_FIGURE_WIDTH, h = height > 0 ? height : CL_FIGURE_HEIGHT;
	if (which[0] == '2' && height <= 0)
		h = 1.25 * CL_FIGURE_HEIGHT; /* two rows of panels and a legend */
	if (!cl_cli_figure_files_write(&figures, figure, w, h, &error))
		goto out;
	status = CL_EXIT_OK;
out:
	if (error) {
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	cl_plot_figure_free(figure);
	g_strfreev(positional);
	g_free(width_text);
	g_free(height_text);
	cl_cli_figure_files_clear(&figures);
	return status;
}
