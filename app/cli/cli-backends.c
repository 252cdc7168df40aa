/* contactlab backends: the registry, as the UI's backend list shows it. */
#include "cli-common.h"
#include "numbers.h"

#include <stdio.h>

static void put_param(GString *out, const ClParamDesc *d)
{
	g_string_append_printf(out, "    %-14s ", d->name);
	switch (d->kind) {
	case CL_PARAM_KIND_CHOICE: {
		char *choices = g_strjoinv("|", (char **)d->choices);
		g_string_append_printf(out, "%s, default %s", choices, d->choices[(int)d->default_value]);
		g_free(choices);
		break;
	}
	case CL_PARAM_KIND_BOOL:
		g_string_append_printf(out, "true|false, default %s", d->default_value != 0.0 ? "true" : "false");
		break;
	case CL_PARAM_KIND_INT:
	case CL_PARAM_KIND_REAL:
		g_string_append_printf(out, "%s %s … %s", d->kind == CL_PARAM_KIND_INT ? "integer" : "number",
							   cl_format_number(d->min).text, cl_format_number(d->max).text);
		g_string_append_printf(out, "%s%s, default %s", d->unit[0] ? " " : "", d->unit,
							   cl_format_number(d->default_value).text);
		break;
	}
	g_string_append_printf(out, "\n    %-14s %s\n", "", d->help);
}

int cl_cmd_backends(int argc, char **argv, gboolean check_only)
{
	GOptionEntry entries[] = {G_OPTION_ENTRY_NULL};
	char **positional = NULL;
	GError *error = NULL;
	if (!cl_cli_parse_options("backends", NULL, "Lists the contact models, what they mirror and their parameters.",
							  entries, argc, argv, &positional, &error)) {
		cl_cli_fail(CL_EXIT_BAD_INPUT, "%s", error->message);
		g_error_free(error);
		return CL_EXIT_BAD_INPUT;
	}
	if (positional[0]) {
		g_strfreev(positional);
		return cl_cli_fail(CL_EXIT_BAD_INPUT, "backends: takes no arguments");
	}
	g_strfreev(positional);
	if (check_only)
		return CL_EXIT_OK;
	GString *out = g_string_new(NULL);
	for (int b = 0; b < cl_backend_count(); b++) {
		const ClBackendInfo *info = cl_backend_info(b);
		g_string_append_printf(out, "%s%s — %s\n", b ? "\n" : "", info->id, info->label);
		g_string_append_printf(out, "  family %s, TOI %s, mirrors %s%s\n", info->family, info->toi ? "yes" : "no",
							   info->mirrors,
							   info->gradient_is_derivative ? "" : "; its gradient is not the derivative of its forward map");
		g_string_append_printf(out, "  %s\n  %s\n", info->intro, info->summary);
		if (info->cannot_express)
			g_string_append_printf(out, "  cannot express: %s\n", info->cannot_express);
		if (info->param_count)
			g_string_append(out, "  parameters:\n");
		for (int i = 0; i < info->param_count; i++)
			put_param(out, &info->params[i]);
	}
	cl_write_output("-", out, NULL);
	g_string_free(out, TRUE);
	return CL_EXIT_OK;
}
