#include "gradient-data.h"

#include "numbers.h"

#include <gio/gio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

ClParam *cl_gradient_columns_new(const ClScene *scene, const char *const *extra, int *count, GError **error)
{
	int n, defaults, more = extra ? (int)g_strv_length((char **)extra) : 0;
	ClParam *table = cl_scene_params_new(scene, CL_PARAMS_TABLE, -1, &n);
	ClParam *params = malloc(sizeof *params * (size_t)(n + more + 1));
	if (!table || !params) {
		free(table);
		free(params);
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "out of memory for the gradient table's columns");
		return NULL;
	}
	memcpy(params, table, sizeof *params * (size_t)n);
	free(table);
	defaults = n;
	for (int k = 0; k < more; k++) {
		char message[CL_MESSAGE_MAX];
		ClParam p;
		if (!cl_param_parse(scene, extra[k], &p, message, sizeof message)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", extra[k], message);
			free(params);
			return NULL;
		}
		for (int i = 0; i < n; i++)
			if (cl_param_equal(&params[i], &p)) {
				g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", extra[k],
							i < defaults ? "already a column of the table" : "given twice");
				free(params);
				return NULL;
			}
		params[n++] = p;
	}
	*count = n;
	return params;
}

void cl_gradient_csv_append(GString *out, const ClScene *scene, const ClParam *params, const ClGradientRow *rows,
							int row_count)
{
	g_string_append(out, "backend,parameter,value\n");
	for (int b = 0; b < row_count; b++) {
		const ClGradientRow *r = &rows[b];
		const char *id = cl_backend_info(r->backend)->id;
		g_autofree char *status = cl_status_text(&r->status);
		g_string_append_printf(out, "%s,status,", id);
		cl_csv_append_field(out, status);
		g_string_append_printf(out, "\n%s,loss,%s\n", id, cl_format_number(r->loss).text);
		char name[CL_NAME_MAX];
		for (int k = 0; k < r->count; k++) {
			cl_param_name(scene, &params[k], name, sizeof name);
			g_string_append_printf(out, "%s,%s,%s\n", id, name, cl_format_number(r->cells[k].adjoint).text);
		}
		for (int k = 0; k < r->count; k++) {
			if (r->cells[k].fd_step <= 0)
				continue;
			cl_param_name(scene, &params[k], name, sizeof name);
			g_string_append_printf(out, "%s,fd:%s,%s\n", id, name, cl_format_number(r->cells[k].fd).text);
		}
	}
}

void cl_gradient_json_append(GString *out, const ClScene *scene, const ClParam *params, const ClGradientRow *rows,
							 int row_count)
{
	g_string_append(out, "{ \"scene\": ");
	cl_json_append_string(out, scene->name);
	g_string_append_printf(out, ", \"steps\": %d, \"backends\": [", scene->steps);
	for (int b = 0; b < row_count; b++) {
		const ClGradientRow *r = &rows[b];
		g_string_append(out, b ? ",\n  { \"backend\": " : "\n  { \"backend\": ");
		cl_json_append_string(out, cl_backend_info(r->backend)->id);
		g_string_append(out, ", \"status\": ");
		cl_json_append_string(out, cl_status_name(r->status.code));
		g_string_append(out, ", \"message\": ");
		cl_json_append_string(out, r->status.message);
		g_string_append(out, ", \"loss\": ");
		cl_json_append_number(out, r->loss);
		g_string_append(out, ",\n    \"gradient\": {");
		for (int k = 0; k < r->count; k++) {
			const ClGradientCell *c = &r->cells[k];
			char name[CL_NAME_MAX];
			cl_param_name(scene, &params[k], name, sizeof name);
			g_string_append(out, k ? ",\n      " : "\n      ");
			cl_json_append_string(out, name);
			g_string_append(out, ": { \"value\": ");
			cl_json_append_number(out, c->adjoint);
			g_string_append(out, ", \"fd\": ");
			cl_json_append_number(out, c->fd_step > 0 ? c->fd : NAN);
			g_string_append(out, ", \"fd_step\": ");
			cl_json_append_number(out, c->fd_step > 0 ? c->fd_step : NAN);
			g_string_append(out, " }");
		}
		g_string_append(out, " } }");
	}
	g_string_append(out, " ] }\n");
}
