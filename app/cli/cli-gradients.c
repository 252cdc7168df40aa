/* contactlab gradients: loss and first derivatives per backend, adjoint and FD. */
#include "cli-common.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	char name[CL_NAME_MAX];
	double adjoint;
	double fd;
	double fd_step;
} GradientRow;

typedef struct {
	int backend;
	ClStatus status;
	gboolean ran; /* every step simulated: a warning at most */
	double loss;
	GArray *rows; /* GradientRow */
} BackendResult;

/* The derivatives of the loss w.r.t. each ball's initial position,
 * initial velocity and first control, for one backend. */
static void compute(const ClScene *scene, int backend, BackendResult *out)
{
	out->backend = backend;
	out->rows = g_array_new(FALSE, FALSE, sizeof(GradientRow));
	/* the recorded run and its gradient, before either is allocated */
	gsize gradient_bytes = sizeof(double) * ((gsize)cl_state_size(scene) + (gsize)cl_control_size(scene));
	char what[96];
	g_snprintf(what, sizeof what, "the gradient of a run of %d steps × %d balls", scene->steps, scene->ball_count);
	gboolean fits = cl_memory_fits(scene, cl_rollout_bytes(scene, backend, true) + gradient_bytes, what, &out->status);
	ClRollout *rollout = fits ? cl_rollout_new(scene, backend) : NULL;
	double *g_s0 = fits ? g_try_new0(double, (gsize)cl_state_size(scene) + 1) : NULL;
	double *g_u = fits ? g_try_new0(double, (gsize)cl_control_size(scene) + 1) : NULL;
	if (!fits) {
		out->loss = NAN;
	} else if (rollout && g_s0 && g_u) {
		cl_rollout_run(rollout, NULL, NULL, true);
		out->status = *cl_rollout_status(rollout);
		out->loss = cl_rollout_loss(rollout);
		cl_rollout_gradient(rollout, g_s0, g_u);
		out->ran = cl_rollout_steps_done(rollout) == scene->steps;
	} else {
		out->status = (ClStatus){.code = CL_STATUS_MEMORY_LIMIT, .step = -1, .message = "out of memory"};
		out->loss = NAN;
	}
	/* the finite differences below run rollouts of their own */
	cl_rollout_free(rollout);
	static const ClParamTarget targets[] = {CL_PARAM_POSITION, CL_PARAM_VELOCITY, CL_PARAM_CONTROL};
	for (int i = 0; i < scene->ball_count; i++)
		for (size_t t = 0; t < G_N_ELEMENTS(targets); t++)
			for (int axis = 0; axis < 2; axis++) {
				ClParam param = {.target = targets[t], .ball = i, .step = 0, .axis = axis};
				GradientRow row;
				cl_param_name(scene, &param, row.name, sizeof row.name);
				row.adjoint = out->ran ? *cl_param_slot(scene, &param, g_s0, g_u) : NAN;
				row.fd_step = cl_fd_step(scene, backend, &param);
				row.fd = out->ran ? cl_finite_difference(scene, backend, &param, row.fd_step, NULL) : NAN;
				g_array_append_val(out->rows, row);
			}
	g_free(g_s0);
	g_free(g_u);
}

static void put_csv(GString *out, const BackendResult *results, guint count)
{
	/* long format, as the header: the FD of each derivative is its own row */
	g_string_append(out, "backend,parameter,value\n");
	for (guint k = 0; k < count; k++) {
		const BackendResult *r = &results[k];
		const char *id = cl_backend_info(r->backend)->id;
		char *status = cl_status_text(&r->status);
		g_string_append_printf(out, "%s,status,", id);
		cl_csv_append_field(out, status);
		g_string_append_printf(out, "\n%s,loss,%s\n", id, cl_format_number(r->loss).text);
		g_free(status);
		for (guint i = 0; i < r->rows->len; i++) {
			const GradientRow *row = &g_array_index(r->rows, GradientRow, i);
			g_string_append_printf(out, "%s,%s,%s\n", id, row->name, cl_format_number(row->adjoint).text);
		}
		for (guint i = 0; i < r->rows->len; i++) {
			const GradientRow *row = &g_array_index(r->rows, GradientRow, i);
			g_string_append_printf(out, "%s,fd:%s,%s\n", id, row->name, cl_format_number(row->fd).text);
		}
	}
}

static void put_json_number(GString *out, double x)
{
	g_string_append(out, isfinite(x) ? cl_format_number(x).text : "null");
}

static void put_json(GString *out, const ClScene *scene, const BackendResult *results, guint count)
{
	g_string_append(out, "{ \"scene\": ");
	cl_json_append_string(out, scene->name);
	g_string_append_printf(out, ", \"steps\": %d, \"backends\": [", scene->steps);
	for (guint k = 0; k < count; k++) {
		const BackendResult *r = &results[k];
		g_string_append(out, k ? ",\n  { \"backend\": " : "\n  { \"backend\": ");
		cl_json_append_string(out, cl_backend_info(r->backend)->id);
		g_string_append(out, ", \"status\": ");
		cl_json_append_string(out, cl_status_name(r->status.code));
		g_string_append(out, ", \"message\": ");
		cl_json_append_string(out, r->status.message);
		g_string_append(out, ", \"loss\": ");
		put_json_number(out, r->loss);
		g_string_append(out, ",\n    \"gradient\": {");
		for (guint i = 0; i < r->rows->len; i++) {
			const GradientRow *row = &g_array_index(r->rows, GradientRow, i);
			g_string_append(out, i ? ",\n      " : "\n      ");
			cl_json_append_string(out, row->name);
			g_string_append(out, ": { \"value\": ");
			put_json_number(out, row->adjoint);
			g_string_append(out, ", \"fd\": ");
			put_json_number(out, row->fd);
			g_string_append(out, ", \"fd_step\": ");
			put_json_number(out, row->fd_step);
			g_string_append(out, " }");
		}
		g_string_append(out, " } }");
	}
	g_string_append(out, " ] }\n");
}

static void put_table(GString *out, const ClScene *scene, const BackendResult *results, guint count)
{
	g_string_append_printf(out, "%s: %d steps, dt = %.6g s\n", scene->name, scene->steps, cl_scene_dt(scene));
	for (guint k = 0; k < count; k++) {
		const BackendResult *r = &results[k];
		char *status = cl_status_text(&r->status);
		g_string_append_printf(out, "\n%s  (%s)\n", cl_backend_info(r->backend)->id, status);
		g_free(status);
		char text[64];
		g_ascii_formatd(text, sizeof text, "%.10g", r->loss);
		g_string_append_printf(out, "  %-24s %18s\n", "loss", text);
		g_string_append_printf(out, "  %-24s %18s %18s %10s\n", "d loss / d", "adjoint", "central FD", "FD step");
		for (guint i = 0; i < r->rows->len; i++) {
			const GradientRow *row = &g_array_index(r->rows, GradientRow, i);
			char adjoint[64], fd[64], h[64];
			g_ascii_formatd(adjoint, sizeof adjoint, "%.10g", row->adjoint);
			g_ascii_formatd(fd, sizeof fd, "%.10g", row->fd);
			g_ascii_formatd(h, sizeof h, "%.0e", row->fd_step);
			g_string_append_printf(out, "  %-24s %18s %18s %10s\n", row->name, adjoint, fd, h);
		}
	}
}

int cl_cmd_gradients(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *format = NULL;
	GOptionEntry entries[] = {
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format (default: table)", "table|csv|json"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	static const char *const formats[] = {"table", "csv", "json", NULL};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("gradients", "SCENE",
							  "Prints, per backend, the loss and its derivatives with respect to every ball's initial\n"
							  "position and velocity and its first control (adjoint), beside central finite\n"
							  "differences of the backend's own forward map. SCENE is a file or a preset id.",
							  entries, argc, argv, &positional, &error) ||
		!cl_cli_check_choice("--format", format ? format : "table", formats, &error))
		goto out;
	if (!cl_cli_one_scene("gradients", positional, &error))
		goto out;
	if (!(backends = cl_cli_backends(backend_ids, &error)) || !(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	BackendResult *results = g_new0(BackendResult, backends->len);
	status = CL_EXIT_OK;
	for (guint k = 0; k < backends->len; k++) {
		cl_cli_progress("gradients: backends", (int)k, (int)backends->len);
		compute(scene, g_array_index(backends, int, k), &results[k]);
		if (!results[k].ran)
			status = CL_EXIT_FAILED;
	}
	GString *text = g_string_new(NULL);
	if (!format || strcmp(format, "table") == 0)
		put_table(text, scene, results, backends->len);
	else if (strcmp(format, "csv") == 0)
		put_csv(text, results, backends->len);
	else
		put_json(text, scene, results, backends->len);
	cl_write_output("-", text, NULL);
	g_string_free(text, TRUE);
	for (guint k = 0; k < backends->len; k++)
		g_array_free(results[k].rows, TRUE);
	g_free(results);
out:
	cl_cli_report(error, CL_EXIT_BAD_INPUT);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_free(format);
	return status;
}
