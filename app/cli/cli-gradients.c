/* contactlab gradients: loss and first derivatives per backend, adjoint and FD. */
#include "cli-common.h"
#include "gradient-data.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_table(GString *out, const ClScene *scene, const ClParam *params, const ClGradientRow *rows,
					  guint count)
{
	g_string_append_printf(out, "%s: %d steps, dt = %.6g s\n", scene->name, scene->steps, cl_scene_dt(scene));
	for (guint b = 0; b < count; b++) {
		const ClGradientRow *r = &rows[b];
		g_autofree char *status = cl_status_text(&r->status);
		g_string_append_printf(out, "\n%s  (%s)\n", cl_backend_info(r->backend)->id, status);
		char text[64];
		g_ascii_formatd(text, sizeof text, "%.10g", r->loss);
		g_string_append_printf(out, "  %-24s %18s\n", "loss", text);
		g_string_append_printf(out, "  %-24s %18s %18s %10s\n", "d loss / d", "adjoint", "central FD", "FD step");
		for (int k = 0; k < r->count; k++) {
			const ClGradientCell *c = &r->cells[k];
			char name[CL_NAME_MAX], adjoint[64], fd[64] = "-", h[64] = "-";
			cl_param_name(scene, &params[k], name, sizeof name);
			if (cl_backend_has_param_adjoint(r->backend, &params[k]))
				g_ascii_formatd(adjoint, sizeof adjoint, "%.10g", c->adjoint);
			else
				g_strlcpy(adjoint, "no adjoint", sizeof adjoint);
			if (c->fd_step > 0) {
				g_ascii_formatd(fd, sizeof fd, "%.10g", c->fd);
				g_ascii_formatd(h, sizeof h, "%.0e", c->fd_step);
			}
			g_string_append_printf(out, "  %-24s %18s %18s %10s\n", name, adjoint, fd, h);
		}
	}
}

int cl_cmd_gradients(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *format = NULL, *fd_name = NULL, **extra = NULL;
	GOptionEntry entries[] = {
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format (default: table)", "table|csv|json"},
		{"fd", 0, 0, G_OPTION_ARG_STRING, &fd_name,
		 "Central differences beside the adjoints: none, all, or auto (the default: all when the scene has at most "
		 "60 columns, else those of the balls in the loss or actuated)",
		 "none|auto|all"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		{"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &extra,
		 "One more column after the default ones, e.g. elasticity, ball.radius, ground.angle (repeatable); "
		 "\"no adjoint\" where a backend has none, with FD beside it",
		 "NAME"},
		G_OPTION_ENTRY_NULL,
	};
	static const char *const formats[] = {"table", "csv", "json", NULL};
	static const char *const fd_choices[] = {"none", "auto", "all", NULL};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("gradients", "SCENE",
							  "Prints, per backend, the loss and its derivatives with respect to every ball's initial\n"
							  "position and velocity and its first control, and each --param (adjoint), beside\n"
							  "central finite differences of the backend's own forward map (see --fd). SCENE is a\n"
							  "file or a preset id.",
							  entries, argc, argv, &positional, &error) ||
		!cl_cli_check_choice("--format", format ? format : "table", formats, &error) ||
		!cl_cli_check_choice("--fd", fd_name ? fd_name : "auto", fd_choices, &error))
		goto out;
	if (!cl_cli_one_scene("gradients", positional, &error))
		goto out;
	if (!(backends = cl_cli_backends(backend_ids, &error)) || !(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	cl_cli_leave_out_unsupported(backends, backend_ids, scene);
	int count;
	ClParam *params = cl_gradient_columns_new(scene, (const char *const *)extra, &count, &error);
	if (!params) {
		g_prefix_error(&error, "--param ");
		goto out;
	}
	if (check_only) {
		status = CL_EXIT_OK;
		free(params);
		goto out;
	}
	ClFdChoice fd = (ClFdChoice)cl_fd_choice_find(fd_name ? fd_name : "auto");
	ClGradientRow *rows = g_new0(ClGradientRow, backends->len);
	status = CL_EXIT_OK;
	for (guint b = 0; b < backends->len; b++) {
		cl_cli_progress("gradients: backends", (int)b, (int)backends->len);
		cl_gradient_row_compute(&rows[b], scene, g_array_index(backends, int, b), params, count, fd);
		if (!rows[b].complete)
			status = CL_EXIT_FAILED;
	}
	GString *text = g_string_new(NULL);
	if (!format || strcmp(format, "table") == 0)
		put_table(text, scene, params, rows, backends->len);
	else if (strcmp(format, "csv") == 0)
		cl_gradient_csv_append(text, scene, params, rows, (int)backends->len);
	else
		cl_gradient_json_append(text, scene, params, rows, (int)backends->len);
	cl_write_output("-", text, NULL);
	g_string_free(text, TRUE);
	for (guint b = 0; b < backends->len; b++)
		cl_gradient_row_clear(&rows[b]);
	g_free(rows);
	free(params);
out:
	cl_cli_report(error, CL_EXIT_BAD_INPUT);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_strfreev(extra);
	g_free(format);
	g_free(fd_name);
	return status;
}
