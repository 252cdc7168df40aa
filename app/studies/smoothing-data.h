/* Smoothed gradients (cl_smooth) as the CLI and the window show them: the
 * table's columns and their CSV, a run of the Smoothing view (every
 * backend with the same samples, every term kept), the α rule recomputed
 * from the kept terms at another γ, and the histogram of the terms. */
#pragma once

#include "contactlab/sim.h"
#include "numbers.h"
#include "plot.h"

#include <glib.h>

/* ----------------------------------------------------------------- table */

/* The estimates of one parameter, in the order the CLI prints them. */
typedef enum ClSmoothColumn {
	CL_SMOOTH_COLUMN_POINT,      /* ∇f(θ) */
	CL_SMOOTH_COLUMN_ZOBG,       /* ± SE */
	CL_SMOOTH_COLUMN_NOBASELINE, /* ZoBG without the baseline */
	CL_SMOOTH_COLUMN_FOBG,
	CL_SMOOTH_COLUMN_AOBG,
	CL_SMOOTH_COLUMN_BIAS,       /* FoBG − exact's ZoBG */
	CL_SMOOTH_COLUMN_QUADRATURE, /* ∇F_σ by quadrature */
	CL_SMOOTH_COLUMN_QUADRATURE_FOBG,
	CL_SMOOTH_COLUMN_COUNT
} ClSmoothColumn;

/* What a table is made of (borrowed). */
typedef struct ClSmoothTable {
	const ClSmoothResult *results;
	int backend_count;
	char *const *names; /* the parameters' names */
	int param_count;
	gboolean zeroth_order_only;
	const ClSmoothQuadrature *quad; /* per backend, or NULL */
} ClSmoothTable;

const char *cl_smooth_column_name(ClSmoothColumn column);   /* the CSV's estimator: "zobg" */
const char *cl_smooth_column_header(ClSmoothColumn column); /* the table's: "ZoBG ± SE" */
/* Whether the column needs an adjoint (then "no adjoint" without one). */
gboolean cl_smooth_column_first_order(ClSmoothColumn column);
/* The bias only with exact among the backends and first-order estimates,
 * the quadrature columns only with quad. */
gboolean cl_smooth_column_shown(const ClSmoothTable *table, ClSmoothColumn column);
ClSmoothEstimate cl_smooth_column_value(const ClSmoothTable *table, int slot, int k, ClSmoothColumn column);

/* "−0.9831 ± 0.046" as the table prints it: mean to 4 significant digits,
 * SE to 2 (ASCII '-'); "n/a" without a value, "no adjoint" when has_value is
 * FALSE. */
void cl_smooth_format_estimate(char *text, size_t size, ClSmoothEstimate e, gboolean has_value);

/* backend,estimator,parameter,mean,stderr: per backend the loss, the
 * smoothed loss, every shown column of every parameter, and α. Numbers as
 * cl_format_number writes them, an empty field where there is none. */
GString *cl_smooth_csv(const ClSmoothTable *table);
/* A CSV field of x: cl_format_number's text, "" when x is not finite. */
const char *cl_smooth_csv_number(double x, ClNumberText *buffer);

/* ------------------------------------------------------------------- run */

/* A computation of the Smoothing view: one sample set for every backend
 * (common random numbers), the terms kept. */
typedef struct ClSmoothingRun {
	ClSmoothDef def; /* params, sigma and backends point into the run */
	int param_count;
	ClParam *params;
	double *sigma;
	char **names; /* NULL-terminated */
	int *backends;
	int backend_count;
	int exact_slot;          /* −1 without exact */
	ClSmoothResult *results; /* backend_count; filled by compute */
	ClSmoothQuadrature *quad; /* with quadrature (d ≤ 2): backend_count, else NULL */
	gboolean done;
} ClSmoothingRun;

/* names: the parameters (no repeats); sigma: one per parameter, > 0;
 * quadrature: also the ground truth cl_smooth_quadrature (one or two
 * parameters). NULL with a message naming the bad input. */
ClSmoothingRun *cl_smoothing_run_prepare(const ClScene *scene, const char *const *names, const double *sigma,
										 int param_count, int samples, guint64 seed, gboolean antithetic,
										 gboolean quadrature, const int *backends, int backend_count,
										 GError **error);
gboolean cl_smoothing_run_compute(ClSmoothingRun *run, const ClScene *scene, int threads, ClSmoothProgress progress,
								  void *user, const _Atomic int *cancel, GError **error);
void cl_smoothing_run_free(ClSmoothingRun *run);
/* The run's results as a table (valid while the run is). */
ClSmoothTable cl_smoothing_run_table(const ClSmoothingRun *run);

/* The α rule on the slot's kept terms at gamma (≤ 0: automatic) — what
 * cl_smooth decided at its γ, without a new rollout. */
ClSmoothAlpha cl_smoothing_alpha(const ClSmoothingRun *run, int slot, double gamma);
/* α·FoBG + (1 − α)·ZoBG of parameter k over the terms both use (the
 * estimates themselves at α = 0 and 1), as cl_smooth forms AoBG. */
ClSmoothEstimate cl_smoothing_aobg(const ClSmoothingRun *run, int slot, int k, double alpha);

/* -------------------------------------------------------------- figure */

/* Histograms of slot's per-sample terms of parameter k: ZoBG on the left,
 * FoBG (or a note that there is no adjoint) on the right, each with its
 * mean, and exact's ZoBG mean as the reference. Bins: √terms, 8 … 60. */
ClPlotFigure *cl_figure_smoothing_terms(const ClSmoothingRun *run, int slot, int k);
/* term,zobg,fobg of slot's parameter k: the data that figure shows. */
GString *cl_smoothing_terms_csv(const ClSmoothingRun *run, int slot, int k);
