#include "gradient-data.h"

#include "numbers.h"

#include <math.h>

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
