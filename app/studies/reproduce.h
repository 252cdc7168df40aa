/* The paper's tables recomputed: rows of data/reference/paper-tables.csv
 * evaluated with the engine (shared by `contactlab reproduce`, `bench` and
 * tests/test-reproduce.c). Nothing is cached between runs. */
#pragma once

#include <glib.h>

typedef struct {
	/* from the CSV */
	char *table, *scene, *backend, *quantity, *paper, *note;
	double expected, tolerance; /* NAN when the row has no expected value */
	gboolean judged;            /* has an expected value and a tolerance */
	/* filled by cl_repro_evaluate */
	gboolean evaluated;
	double ours;
	double ours_under_exact; /* learning rows: the learned controls' loss under exact, else NAN */
	gboolean ok;             /* judged and |ours − expected| ≤ tolerance */
	char *message;           /* why ours is missing, or a warning; NULL when none */
} ClReproRow;

typedef struct {
	ClReproRow *rows;
	int count;
} ClReproTable;

ClReproTable *cl_repro_load(const char *path, GError **error);
/* data/reference/paper-tables.csv */
ClReproTable *cl_repro_load_default(GError **error);
void cl_repro_free(ClReproTable *table);

/* True when the row belongs to the table filter: "1", "2", "3", "4",
 * "3-learning", "tds" (impulse-tds against the TDS headers' numbers), "dojo"
 * (ncp-dojo against backend-dojo.md §9) or "all". */
gboolean cl_repro_row_selected(const ClReproRow *row, const char *filter);

/* Evaluates the selected rows. Rows of one (scene, backend) share one
 * gradient and one optimization run; independent pairs run on threads. */
void cl_repro_evaluate(ClReproTable *table, const char *filter, int threads);
