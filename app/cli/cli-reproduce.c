/* contactlab reproduce: the paper's Tables 1-4 (and the seed systems' tables, tds and dojo) recomputed and judged. */
#include "cli-common.h"
#include "numbers.h"
#include "reproduce.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *verdict(const ClReproRow *row)
{
	return !row->judged ? "not judged" : row->ok ? "true" : "false";
}

static const char *explanation(const ClReproRow *row)
{
	return row->message ? row->message : row->note;
}

static void put_csv(GString *out, const ClReproTable *table, const char *filter)
{
	g_string_append(out, "table,scene,backend,quantity,paper,expected,ours,ok,ours_under_exact,note\n");
	for (int i = 0; i < table->count; i++) {
		const ClReproRow *row = &table->rows[i];
		if (!cl_repro_row_selected(row, filter))
			continue;
		const char *fields[] = {row->table, row->scene, row->backend, row->quantity, row->paper};
		for (size_t f = 0; f < G_N_ELEMENTS(fields); f++) {
			cl_csv_append_field(out, fields[f]);
			g_string_append_c(out, ',');
		}
		g_string_append_printf(out, "%s,", row->judged ? cl_format_number(row->expected).text : "");
		g_string_append_printf(out, "%s,%s,", cl_format_number(row->ours).text, verdict(row));
		g_string_append_printf(out, "%s,", isnan(row->ours_under_exact) ? "" : cl_format_number(row->ours_under_exact).text);
		cl_csv_append_field(out, explanation(row));
		g_string_append_c(out, '\n');
	}
}

static void put_table(GString *out, const ClReproTable *table, const char *filter)
{
	g_string_append_printf(out, "%-10s %-26s %-14s %-32s %10s %12s %14s %-10s %s\n", "table", "scene", "backend",
						   "quantity", "paper", "expected", "ours", "ok", "note");
	for (int i = 0; i < table->count; i++) {
		const ClReproRow *row = &table->rows[i];
		if (!cl_repro_row_selected(row, filter))
			continue;
		char ours[64], expected[64] = "";
		g_ascii_formatd(ours, sizeof ours, "%.10g", row->ours);
		if (row->judged)
			g_ascii_formatd(expected, sizeof expected, "%.10g", row->expected);
		GString *note = g_string_new(NULL);
		if (!isnan(row->ours_under_exact)) {
			char exact[64];
			g_ascii_formatd(exact, sizeof exact, "%.10g", row->ours_under_exact);
			g_string_append_printf(note, "under exact: %s; ", exact);
		}
		g_string_append(note, explanation(row));
		g_string_append_printf(out, "%-10s %-26s %-14s %-32s %10s %12s %14s %-10s %s\n", row->table, row->scene,
							   row->backend, row->quantity, row->paper, expected, ours, verdict(row), note->str);
		g_string_free(note, TRUE);
	}
}

int cl_cmd_reproduce(int argc, char **argv, gboolean check_only)
{
	char *filter = NULL, *format = NULL;
	GOptionEntry entries[] = {
		{"table", 't', 0, G_OPTION_ARG_STRING, &filter, "Which table (default: all)", "1|2|3|4|3-learning|tds|dojo|all"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format (default: table)", "table|csv"},
		G_OPTION_ENTRY_NULL,
	};
	static const char *const tables[] = {"1", "2", "3", "4", "3-learning", "tds", "dojo", "all", NULL};
	static const char *const formats[] = {"table", "csv", NULL};
	char **positional = NULL;
	GError *error = NULL;
	ClReproTable *table = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("reproduce", NULL,
							  "Recomputes every row of data/reference/paper-tables.csv with the engine (gradients at\n"
							  "iteration 0, optimized values after the presets' 1000 updates) and judges it against\n"
							  "the expected value and tolerance. Table tds is not the paper's: impulse-tds against the\n"
							  "numbers of the real Tiny Differentiable Simulator headers (data/reference/tds-reference.csv).\n"
							  "Table dojo: ncp-dojo against an independent prototype of Dojo (backend-dojo.md §9,\n"
							  "data/reference/dojo-reference.csv); its backend column may set parameters\n"
							  "(\"ncp-dojo solver=dojo-default\").\n"
							  "Exit status 1 when a judged row fails.",
							  entries, argc, argv, &positional, &error) ||
		!cl_cli_check_choice("--table", filter ? filter : "all", tables, &error) ||
		!cl_cli_check_choice("--format", format ? format : "table", formats, &error))
		goto out;
	if (positional[0]) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "reproduce: takes no arguments (got %s)",
					positional[0]);
		goto out;
	}
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	if (!(table = cl_repro_load_default(&error)))
		goto out;
	cl_repro_evaluate(table, filter, 2);
	GString *text = g_string_new(NULL);
	if (format && strcmp(format, "csv") == 0)
		put_csv(text, table, filter);
	else
		put_table(text, table, filter);
	int judged = 0, passed = 0;
	for (int i = 0; i < table->count; i++)
		if (cl_repro_row_selected(&table->rows[i], filter) && table->rows[i].judged) {
			judged++;
			passed += table->rows[i].ok;
		}
	cl_write_output("-", text, NULL);
	g_string_free(text, TRUE);
	cl_cli_message("%d of %d judged rows within tolerance", passed, judged);
	status = passed == judged ? CL_EXIT_OK : CL_EXIT_FAILED;
out:
	cl_cli_report(error, CL_EXIT_BAD_INPUT);
	cl_repro_free(table);
	g_strfreev(positional);
	g_free(filter);
	g_free(format);
	return status;
}
