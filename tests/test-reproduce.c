/* One test per row of data/reference/paper-tables.csv: the paper's Tables
 * 1-4 recomputed by the engine. A row whose backend cannot run yet fails. */
#include "reproduce.h"

#include <math.h>
#include <string.h>

static ClReproTable *table;

static void evaluate_all_once(void)
{
	static gsize done;
	if (g_once_init_enter(&done)) {
		cl_repro_evaluate(table, "all", 2);
		g_once_init_leave(&done, 1);
	}
}

static void test_row(gconstpointer data)
{
	const ClReproRow *row = data;
	evaluate_all_once();
	g_assert_true(row->evaluated);
	char ours[32], expected[32], tolerance[32];
	g_ascii_formatd(ours, sizeof ours, "%.10g", row->ours);
	if (!isnan(row->ours_under_exact)) {
		char exact[32];
		g_ascii_formatd(exact, sizeof exact, "%.10g", row->ours_under_exact);
		g_test_message("%s %s: learned result under exact dynamics: %s", row->backend, row->quantity, exact);
	}
	if (!row->judged) {
		g_test_skip_printf("not judged (%s): ContactLab computes %s", row->note, ours);
		return;
	}
	g_ascii_formatd(expected, sizeof expected, "%.10g", row->expected);
	g_ascii_formatd(tolerance, sizeof tolerance, "%g", row->tolerance);
	if (!row->ok)
		g_test_fail_printf("table %s, %s, backend %s, %s: expected %s +- %s, got %s%s%s", row->table, row->scene,
						   row->backend, row->quantity, expected, tolerance, ours, row->message ? ": " : "",
						   row->message ? row->message : "");
	else
		g_test_message("%s %s: %s (expected %s +- %s)", row->backend, row->quantity, ours, expected, tolerance);
}

/* "loss at iteration 999 (lr 10)" → "loss-at-iteration-999-lr-10" */
static char *path_part(const char *text)
{
	GString *s = g_string_new(NULL);
	for (const char *c = text; *c; c++) {
		if (*c == ' ')
			g_string_append_c(s, '-');
		else if (*c != '(' && *c != ')' && *c != ',')
			g_string_append_c(s, *c);
	}
	return g_string_free(s, FALSE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	GError *error = NULL;
	table = cl_repro_load_default(&error);
	g_assert_no_error(error);
	g_assert_cmpint(table->count, >, 0);
	for (int i = 0; i < table->count; i++) {
		const ClReproRow *row = &table->rows[i];
		char *quantity = path_part(row->quantity);
		char *path = g_strdup_printf("/reproduce/%s/%s/%s/%s", row->table, row->scene, row->backend, quantity);
		g_test_add_data_func(path, row, test_row);
		g_free(path);
		g_free(quantity);
	}
	int status = g_test_run();
	cl_repro_free(table);
	return status;
}
