#include "smoothing-data.h"

#include "backend-style.h"
#include "numbers.h"

#include <gio/gio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- table */

static const struct {
	const char *name, *header;
} columns[CL_SMOOTH_COLUMN_COUNT] = {
	[CL_SMOOTH_COLUMN_POINT] = {"point", "point"},
	[CL_SMOOTH_COLUMN_ZOBG] = {"zobg", "ZoBG ± SE"},
	[CL_SMOOTH_COLUMN_NOBASELINE] = {"zobg-nobaseline", "no baseline ± SE"},
	[CL_SMOOTH_COLUMN_FOBG] = {"fobg", "FoBG ± SE"},
	[CL_SMOOTH_COLUMN_AOBG] = {"aobg", "AoBG ± SE"},
	[CL_SMOOTH_COLUMN_BIAS] = {"fobg-bias", "FoBG − exact ZoBG"},
	[CL_SMOOTH_COLUMN_QUADRATURE] = {"quadrature", "quadrature ∇F"},
	[CL_SMOOTH_COLUMN_QUADRATURE_FOBG] = {"quadrature-fobg", "quadrature E∇f"},
};

const char *cl_smooth_column_name(ClSmoothColumn column)
{
	return column < CL_SMOOTH_COLUMN_COUNT ? columns[column].name : "";
}

const char *cl_smooth_column_header(ClSmoothColumn column)
{
	return column < CL_SMOOTH_COLUMN_COUNT ? columns[column].header : "";
}

gboolean cl_smooth_column_first_order(ClSmoothColumn column)
{
	return column == CL_SMOOTH_COLUMN_FOBG || column == CL_SMOOTH_COLUMN_BIAS ||
		   column == CL_SMOOTH_COLUMN_QUADRATURE_FOBG;
}

static gboolean has_exact(const ClSmoothTable *t)
{
	for (int s = 0; s < t->backend_count; s++)
		if (t->results[s].backend == cl_backend_reference())
			return TRUE;
	return FALSE;
}

gboolean cl_smooth_column_shown(const ClSmoothTable *t, ClSmoothColumn column)
{
	if (column == CL_SMOOTH_COLUMN_BIAS)
		return has_exact(t) && !t->zeroth_order_only;
	if (column == CL_SMOOTH_COLUMN_QUADRATURE || column == CL_SMOOTH_COLUMN_QUADRATURE_FOBG)
		return t->quad != NULL;
	return column < CL_SMOOTH_COLUMN_COUNT;
}

ClSmoothEstimate cl_smooth_column_value(const ClSmoothTable *t, int slot, int k, ClSmoothColumn column)
{
	const ClSmoothGradient *g = &t->results[slot].gradient[k];
	switch (column) {
	case CL_SMOOTH_COLUMN_POINT:
		return (ClSmoothEstimate){g->point, NAN};
	case CL_SMOOTH_COLUMN_ZOBG:
		return g->zobg;
	case CL_SMOOTH_COLUMN_NOBASELINE:
		return g->zobg_nobaseline;
	case CL_SMOOTH_COLUMN_FOBG:
		return g->fobg;
	case CL_SMOOTH_COLUMN_AOBG:
		return g->aobg;
	case CL_SMOOTH_COLUMN_BIAS:
		return g->fobg_bias;
	case CL_SMOOTH_COLUMN_QUADRATURE:
		return (ClSmoothEstimate){t->quad ? t->quad[slot].grad[k] : NAN, NAN};
	case CL_SMOOTH_COLUMN_QUADRATURE_FOBG:
		return (ClSmoothEstimate){t->quad ? t->quad[slot].expected_grad[k] : NAN, NAN};
	default:
		return (ClSmoothEstimate){NAN, NAN};
	}
}

void cl_smooth_format_estimate(char *text, size_t size, ClSmoothEstimate e, gboolean has_value)
{
	if (!has_value) {
		g_strlcpy(text, "no adjoint", size);
		return;
	}
	if (!isfinite(e.mean)) {
		g_strlcpy(text, "n/a", size);
		return;
	}
	char mean[32], se[32];
	g_ascii_formatd(mean, sizeof mean, "%.4g", e.mean);
	if (isfinite(e.se)) {
		g_ascii_formatd(se, sizeof se, "%.2g", e.se);
		g_snprintf(text, size, "%s ± %s", mean, se);
	} else {
		g_strlcpy(text, mean, size);
	}
}

/* "" for a value that is not available: CSV readers take an empty field as missing. */
const char *cl_smooth_csv_number(double x, ClNumberText *buffer)
{
	*buffer = cl_format_number(x);
	return isfinite(x) ? buffer->text : "";
}

static void put_csv_row(GString *out, const char *backend, const char *estimator, const char *parameter,
						ClSmoothEstimate e)
{
	ClNumberText a, b;
	g_string_append_printf(out, "%s,%s,", backend, estimator);
	cl_csv_append_field(out, parameter);
	g_string_append_printf(out, ",%s,%s\n", cl_smooth_csv_number(e.mean, &a), cl_smooth_csv_number(e.se, &b));
}

GString *cl_smooth_csv(const ClSmoothTable *t)
{
	GString *out = g_string_new("backend,estimator,parameter,mean,stderr\n");
	for (int s = 0; s < t->backend_count; s++) {
		const ClSmoothResult *r = &t->results[s];
		const char *id = cl_backend_info(r->backend)->id;
		put_csv_row(out, id, "loss", "", (ClSmoothEstimate){r->loss, NAN});
		put_csv_row(out, id, "smoothed-loss", "", r->smoothed_loss);
		for (int c = 0; c < CL_SMOOTH_COLUMN_COUNT; c++)
			for (int k = 0; cl_smooth_column_shown(t, (ClSmoothColumn)c) && k < t->param_count; k++)
				put_csv_row(out, id, columns[c].name, t->names[k], cl_smooth_column_value(t, s, k, (ClSmoothColumn)c));
		put_csv_row(out, id, "alpha", "", (ClSmoothEstimate){r->alpha.alpha, NAN});
	}
	return out;
}

/* ------------------------------------------------------------------- run */

ClSmoothingRun *cl_smoothing_run_prepare(const ClScene *scene, const char *const *names, const double *sigma,
										 int param_count, int samples, guint64 seed, gboolean antithetic,
										 gboolean quadrature, const int *backends, int backend_count,
										 GError **error)
{
	if (param_count < 1) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "choose at least one parameter to perturb");
		return NULL;
	}
	if (backend_count < 1) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no backend is enabled (see the Backends tab)");
		return NULL;
	}
	if (quadrature && param_count > 2) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
					"quadrature: needs one or two parameters (%d are ticked)", param_count);
		return NULL;
	}
	if (antithetic && samples % 2) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
					"samples %d: antithetic sampling needs an even number", samples);
		return NULL;
	}
	ClSmoothingRun *run = g_new0(ClSmoothingRun, 1);
	run->param_count = param_count;
	run->params = g_new0(ClParam, param_count);
	run->sigma = g_new0(double, param_count);
	run->names = g_new0(char *, (gsize)param_count + 1);
	for (int k = 0; k < param_count; k++) {
		char message[CL_MESSAGE_MAX], name[CL_NAME_MAX];
		if (!cl_param_parse(scene, names[k], &run->params[k], message, sizeof message)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "parameter %s: %s", names[k], message);
			cl_smoothing_run_free(run);
			return NULL;
		}
		cl_param_name(scene, &run->params[k], name, sizeof name);
		run->names[k] = g_strdup(name);
		for (int j = 0; j < k; j++)
			if (strcmp(run->names[j], name) == 0) {
				g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "parameter %s: given twice", name);
				cl_smoothing_run_free(run);
				return NULL;
			}
		if (!(isfinite(sigma[k]) && sigma[k] > 0)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "σ of %s: %g is not a positive number", name,
						sigma[k]);
			cl_smoothing_run_free(run);
			return NULL;
		}
		run->sigma[k] = sigma[k];
	}
	run->backends = g_memdup2(backends, sizeof(int) * (gsize)backend_count);
	run->backend_count = backend_count;
	run->exact_slot = -1;
	for (int s = 0; s < backend_count; s++)
		if (backends[s] == cl_backend_reference())
			run->exact_slot = s;
	run->results = g_new0(ClSmoothResult, backend_count);
	run->quad = quadrature ? g_new0(ClSmoothQuadrature, backend_count) : NULL;
	ClSmoothDef *def = &run->def;
	*def = cl_smooth_default_def();
	def->params = run->params;
	def->sigma = run->sigma;
	def->param_count = param_count;
	def->samples = samples;
	def->seed = seed;
	def->antithetic = antithetic;
	def->keep_terms = true;
	def->backends = run->backends;
	def->backend_count = backend_count;
	return run;
}

gboolean cl_smoothing_run_compute(ClSmoothingRun *run, const ClScene *scene, int threads, ClSmoothProgress progress,
								  void *user, const _Atomic int *cancel, GError **error)
{
	run->def.threads = MAX(threads, 1);
	run->def.progress = progress;
	run->def.user = user;
	run->def.cancel = cancel;
	ClStatus status;
	gboolean ok = cl_smooth(scene, &run->def, run->results, &status) &&
				  (!run->quad || cl_smooth_quadrature(scene, &run->def, 0, run->quad, &status));
	run->def.progress = NULL;
	run->def.user = NULL;
	run->def.cancel = NULL;
	if (!ok) {
		gboolean cancelled = status.code == CL_STATUS_CANCELLED || (cancel && *cancel);
		g_set_error(error, G_IO_ERROR, cancelled ? G_IO_ERROR_CANCELLED : G_IO_ERROR_INVALID_ARGUMENT, "%s",
					cancelled ? "cancelled" : status.message);
		return FALSE;
	}
	run->done = TRUE;
	return TRUE;
}

void cl_smoothing_run_free(ClSmoothingRun *run)
{
	if (!run)
		return;
	for (int s = 0; run->results && s < run->backend_count; s++)
		cl_smooth_result_clear(&run->results[s]);
	g_free(run->results);
	g_free(run->quad);
	g_free(run->backends);
	g_strfreev(run->names);
	g_free(run->sigma);
	g_free(run->params);
	g_free(run);
}

ClSmoothTable cl_smoothing_run_table(const ClSmoothingRun *run)
{
	return (ClSmoothTable){.results = run->results,
						   .backend_count = run->done ? run->backend_count : 0,
						   .names = run->names,
						   .param_count = run->param_count,
						   .zeroth_order_only = run->def.zeroth_order_only,
						   .quad = run->quad};
}

ClSmoothAlpha cl_smoothing_alpha(const ClSmoothingRun *run, int slot, double gamma)
{
	const ClSmoothResult *r = &run->results[slot];
	if (!run->done || !r->zobg_values || !r->fobg_values)
		return (ClSmoothAlpha){.dimension = run->param_count, .alpha = NAN, .epsilon = NAN, .gamma = gamma};
	return cl_smooth_alpha_batch(run->param_count, r->terms, r->zobg_values, r->fobg_values, gamma, run->def.delta);
}

static gboolean row_finite(const double *x, int d)
{
	for (int k = 0; k < d; k++)
		if (!isfinite(x[k]))
			return FALSE;
	return TRUE;
}

ClSmoothEstimate cl_smoothing_aobg(const ClSmoothingRun *run, int slot, int k, double alpha)
{
	const ClSmoothResult *r = &run->results[slot];
	const ClSmoothGradient *g = &r->gradient[k];
	if (!run->done || !isfinite(alpha))
		return (ClSmoothEstimate){NAN, NAN};
	if (alpha == 0.0)
		return g->zobg;
	if (alpha == 1.0)
		return g->fobg;
	int d = run->param_count, n = 0;
	double sum = 0.0, sq = 0.0;
	for (int pass = 0; pass < 2; pass++) {
		double mean = n ? sum / n : NAN;
		for (int t = 0; t < r->terms; t++) {
			const double *z = r->zobg_values + (size_t)t * (size_t)d, *y = r->fobg_values + (size_t)t * (size_t)d;
			if (!row_finite(z, d) || !row_finite(y, d))
				continue;
			double v = alpha * y[k] + (1.0 - alpha) * z[k];
			if (pass == 0) {
				n++;
				sum += v;
			} else {
				sq += (v - mean) * (v - mean);
			}
		}
	}
	return (ClSmoothEstimate){n ? sum / n : NAN, n >= 2 ? sqrt(sq / (n - 1) / n) : NAN};
}

/* -------------------------------------------------------------- figure */

/* The finite values of column k of a terms matrix. */
static GArray *column_values(const double *terms, int rows, int d, int k)
{
	GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
	for (int t = 0; terms && t < rows; t++) {
		double v = terms[(size_t)t * (size_t)d + (size_t)k];
		if (isfinite(v))
			g_array_append_val(values, v);
	}
	return values;
}

/* One histogram panel of values, with a line at their mean and at ref. */
static void histogram_panel(ClPlotPanel *panel, const GArray *values, int backend, const char *label, double mean,
							double ref)
{
	int n = (int)values->len;
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, g_array_index(values, double, i));
		hi = fmax(hi, g_array_index(values, double, i));
	}
	if (n == 0)
		return;
	/* a batch of equal terms (a linear loss's FoBG) gets one narrow bar */
	double spread = hi - lo, pad = spread > 0 ? 0 : fmax(fabs(lo) * 1e-3, 1e-9);
	lo -= pad;
	hi += pad;
	int bins = spread > 0 ? CLAMP((int)lround(sqrt((double)n)), 8, 60) : 1;
	double *edges = g_new(double, (gsize)bins + 1), *counts = g_new0(double, (gsize)bins);
	for (int b = 0; b <= bins; b++)
		edges[b] = lo + (hi - lo) * b / bins;
	for (int i = 0; i < n; i++) {
		int b = (int)floor((g_array_index(values, double, i) - lo) / (hi - lo) * bins);
		counts[CLAMP(b, 0, bins - 1)] += 1;
	}
	ClPlotSeries *bars = cl_plot_panel_add_histogram(panel, label, edges, counts, bins);
	cl_plot_series_set_color(bars, cl_backend_plot_color(backend));
	cl_plot_series_set_group(bars, cl_backend_info(backend)->id);
	ClPlotSeries *m = cl_plot_panel_add_vline(panel, mean, "mean");
	cl_plot_series_set_color(m, cl_backend_plot_color(backend));
	cl_plot_series_set_dash(m, CL_PLOT_DASH_SOLID);
	cl_plot_series_set_width(m, 1.5);
	if (isfinite(ref))
		cl_plot_panel_add_vline(panel, ref, "exact's ZoBG");
	g_free(edges);
	g_free(counts);
}

ClPlotFigure *cl_figure_smoothing_terms(const ClSmoothingRun *run, int slot, int k)
{
	ClPlotFigure *figure = cl_plot_figure_new(1, 2);
	if (!run->done || slot < 0 || slot >= run->backend_count || k < 0 || k >= run->param_count)
		return figure;
	const ClSmoothResult *r = &run->results[slot];
	const ClSmoothGradient *g = &r->gradient[k];
	int d = run->param_count, backend = r->backend;
	const char *id = cl_backend_info(backend)->id;
	double ref = run->exact_slot >= 0 ? run->results[run->exact_slot].gradient[k].zobg.mean : NAN;
	g_autofree char *name = g_markup_escape_text(run->names[k], -1);
	g_autofree char *title = g_strdup_printf("%s: the %d terms of ∂F<sub>σ</sub>/∂%s", id, r->terms, name);
	cl_plot_figure_set_title(figure, title);
	const char *x_labels[] = {"ZoBG term (f(θ + w) − f(θ)) w / σ²", "FoBG term ∇f(θ + w)"};
	const double *terms[] = {r->zobg_values, r->fobg_values};
	const double means[] = {g->zobg.mean, g->fobg.mean};
	const char *titles[] = {"ZoBG: losses only", "FoBG: the backend's adjoint"};
	for (int c = 0; c < 2; c++) {
		ClPlotPanel *panel = cl_plot_figure_panel(figure, 0, c);
		cl_plot_panel_set_title(panel, titles[c]);
		cl_plot_panel_set_x_axis(panel, x_labels[c], CL_PLOT_SCALE_LINEAR);
		cl_plot_panel_set_y_axis(panel, c == 0 ? "samples" : NULL, CL_PLOT_SCALE_LINEAR);
		if (c == 1 && !g->has_adjoint) {
			cl_plot_panel_add_text(panel, 0, 0, CL_PLOT_ANCHOR_CENTER, "no adjoint for this parameter");
			continue;
		}
		g_autoptr(GArray) values = column_values(terms[c], r->terms, d, k);
		if (values->len == 0) {
			cl_plot_panel_add_text(panel, 0, 0, CL_PLOT_ANCHOR_CENTER, "no usable term");
			continue;
		}
		histogram_panel(panel, values, backend, c == 0 ? "ZoBG terms" : "FoBG terms", means[c], ref);
	}
	return figure;
}

GString *cl_smoothing_terms_csv(const ClSmoothingRun *run, int slot, int k)
{
	GString *out = g_string_new("term,zobg,fobg\n");
	if (!run->done || slot < 0 || slot >= run->backend_count || k < 0 || k >= run->param_count)
		return out;
	const ClSmoothResult *r = &run->results[slot];
	int d = run->param_count;
	for (int t = 0; t < r->terms; t++) {
		size_t i = (size_t)t * (size_t)d + (size_t)k;
		double z = r->zobg_values ? r->zobg_values[i] : NAN, y = r->fobg_values ? r->fobg_values[i] : NAN;
		ClNumberText a, b;
		g_string_append_printf(out, "%d,%s,%s\n", t, cl_smooth_csv_number(z, &a), cl_smooth_csv_number(y, &b));
	}
	return out;
}
