/* contactlab smooth: gradients of the randomly smoothed loss per backend
 * (ZoBG, FoBG, AoBG with standard errors) beside the point gradient. */
#include "cli-common.h"
#include "numbers.h"
#include "smoothing-data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Request {
	const ClScene *scene;
	ClSmoothDef def;
	ClParam *params;
	double *sigma;
	char **names; /* the parameters' names, NULL-terminated */
	gboolean quadrature;
	ClSmoothResult *results;
	ClSmoothQuadrature *quad; /* with --quadrature */
} Request;

static ClSmoothTable table_of(const Request *rq)
{
	return (ClSmoothTable){.results = rq->results,
						   .backend_count = rq->def.backend_count,
						   .names = rq->names,
						   .param_count = rq->def.param_count,
						   .zeroth_order_only = rq->def.zeroth_order_only,
						   .quad = rq->quadrature ? rq->quad : NULL};
}

static void put_json_estimate(GString *out, const char *key, ClSmoothEstimate e)
{
	g_string_append_printf(out, "\"%s\": { \"mean\": ", key);
	cl_json_append_number(out, e.mean);
	g_string_append(out, ", \"stderr\": ");
	cl_json_append_number(out, e.se);
	g_string_append(out, " }");
}

static void put_json_status(GString *out, const char *key, const ClStatus *status)
{
	g_string_append_printf(out, "\"%s\": ", key);
	cl_json_append_string(out, cl_status_name(status->code));
	g_string_append_printf(out, ", \"%s_message\": ", key);
	cl_json_append_string(out, status->message);
}

static void put_json(GString *out, const Request *rq)
{
	const ClSmoothDef *def = &rq->def;
	ClSmoothTable table = table_of(rq);
	g_string_append(out, "{ \"scene\": ");
	cl_json_append_string(out, rq->scene->name);
	g_string_append(out, ", \"parameters\": [");
	for (int k = 0; k < def->param_count; k++) {
		g_string_append(out, k ? ", " : "");
		cl_json_append_string(out, rq->names[k]);
	}
	g_string_append(out, "], \"sigma\": [");
	for (int k = 0; k < def->param_count; k++) {
		g_string_append(out, k ? ", " : "");
		cl_json_append_number(out, def->sigma[k]);
	}
	g_string_append_printf(out,
						   "],\n  \"samples\": %d, \"seed\": %" G_GUINT64_FORMAT
						   ", \"generator\": \"splitmix64-polar\", \"antithetic\": %s, \"delta\": ",
						   def->samples, def->seed, def->antithetic ? "true" : "false");
	cl_json_append_number(out, def->delta);
	g_string_append(out, ", \"gamma\": ");
	cl_json_append_number(out, def->gamma); /* null: automatic */
	g_string_append(out, ",\n  \"backends\": [");
	for (int s = 0; s < def->backend_count; s++) {
		const ClSmoothResult *r = &rq->results[s];
		g_string_append(out, s ? ",\n    { \"backend\": " : "\n    { \"backend\": ");
		cl_json_append_string(out, cl_backend_info(r->backend)->id);
		g_string_append(out, ", ");
		put_json_status(out, "status", &r->status);
		g_string_append(out, ", \"loss\": ");
		cl_json_append_number(out, r->loss);
		g_string_append(out, ", ");
		put_json_estimate(out, "smoothed_loss", r->smoothed_loss);
		g_string_append_printf(out,
							   ",\n      \"terms\": %d, \"zobg_terms\": %d, \"fobg_terms\": %d, \"not_ok\": %d, ",
							   r->terms, r->zobg_terms, r->fobg_terms, r->not_ok);
		put_json_status(out, "first_problem", &r->first_problem);
		const ClSmoothAlpha *a = &r->alpha;
		g_string_append(out, ",\n      \"alpha\": { \"alpha\": ");
		cl_json_append_number(out, a->alpha);
		g_string_append(out, ", \"rule\": ");
		cl_json_append_string(out, cl_smooth_alpha_rule_name(a->rule));
		const double numbers[] = {a->epsilon, a->gamma, a->zobg_variance, a->fobg_variance, a->bound, a->gap};
		const char *const keys[] = {"epsilon", "gamma", "zobg_variance", "fobg_variance", "bound", "gap"};
		for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
			g_string_append_printf(out, ", \"%s\": ", keys[i]);
			cl_json_append_number(out, numbers[i]);
		}
		g_string_append(out, " },\n      \"gradient\": {");
		for (int k = 0; k < def->param_count; k++) {
			const ClSmoothGradient *g = &r->gradient[k];
			g_string_append(out, k ? ",\n        " : "\n        ");
			cl_json_append_string(out, rq->names[k]);
			g_string_append_printf(out, ": { \"has_adjoint\": %s, \"point\": ", g->has_adjoint ? "true" : "false");
			cl_json_append_number(out, g->point);
			for (int c = CL_SMOOTH_COLUMN_ZOBG; c < CL_SMOOTH_COLUMN_COUNT; c++) {
				if (!cl_smooth_column_shown(&table, (ClSmoothColumn)c))
					continue;
				g_string_append(out, ", ");
				put_json_estimate(out, cl_smooth_column_name((ClSmoothColumn)c),
								  cl_smooth_column_value(&table, s, k, (ClSmoothColumn)c));
			}
			g_string_append(out, " }");
		}
		g_string_append(out, " } }");
	}
	g_string_append(out, " ] }\n");
}

static void put_table(GString *out, const Request *rq)
{
	const ClSmoothDef *def = &rq->def;
	ClSmoothTable table = table_of(rq);
	g_string_append_printf(out, "%s: smoothed gradients, N = %d samples%s, seed %" G_GUINT64_FORMAT
						   " (SplitMix64 streams, polar method)\n",
						   rq->scene->name, def->samples, def->antithetic ? " in antithetic pairs" : "", def->seed);
	g_string_append(out, "σ:");
	for (int k = 0; k < def->param_count; k++) {
		char sigma[32];
		g_ascii_formatd(sigma, sizeof sigma, "%.6g", def->sigma[k]);
		g_string_append_printf(out, " %s = %s%s", rq->names[k], sigma, k + 1 < def->param_count ? "," : "");
	}
	char delta[32];
	g_ascii_formatd(delta, sizeof delta, "%g", def->delta);
	g_string_append_printf(out, "; AoBG with δ = %s, FoBG and ZoBG from the same samples\n", delta);
	for (int s = 0; s < def->backend_count; s++) {
		const ClSmoothResult *r = &rq->results[s];
		char *status = cl_status_text(&r->status);
		char loss[32], smoothed[64];
		g_ascii_formatd(loss, sizeof loss, "%.6g", r->loss);
		cl_smooth_format_estimate(smoothed, sizeof smoothed, r->smoothed_loss, TRUE);
		g_string_append_printf(out, "\n%s  (%s)  loss %s, smoothed loss %s\n", cl_backend_info(r->backend)->id, status,
							   loss, smoothed);
		g_free(status);
		g_string_append_printf(out, "  %-22s", "d/d");
		for (int c = 0; c < CL_SMOOTH_COLUMN_COUNT; c++)
			if (cl_smooth_column_shown(&table, (ClSmoothColumn)c))
				g_string_append_printf(out, " %20s", cl_smooth_column_header((ClSmoothColumn)c));
		g_string_append_c(out, '\n');
		for (int k = 0; k < def->param_count; k++) {
			const ClSmoothGradient *g = &r->gradient[k];
			g_string_append_printf(out, "  %-22s", rq->names[k]);
			for (int c = 0; c < CL_SMOOTH_COLUMN_COUNT; c++) {
				if (!cl_smooth_column_shown(&table, (ClSmoothColumn)c))
					continue;
				char text[64];
				cl_smooth_format_estimate(text, sizeof text, cl_smooth_column_value(&table, s, k, (ClSmoothColumn)c),
										  g->has_adjoint || !cl_smooth_column_first_order((ClSmoothColumn)c));
				/* the column is 20 characters wide, "±" and "−" take two bytes */
				g_string_append_printf(out, " %*s", 20 + (int)(strlen(text) - g_utf8_strlen(text, -1)), text);
			}
			g_string_append_c(out, '\n');
		}
		const ClSmoothAlpha *a = &r->alpha;
		if (!def->zeroth_order_only) {
			char alpha[32], epsilon[32], gamma[32];
			g_ascii_formatd(alpha, sizeof alpha, "%.3g", a->alpha);
			g_ascii_formatd(epsilon, sizeof epsilon, "%.3g", a->epsilon);
			g_ascii_formatd(gamma, sizeof gamma, "%.3g", a->gamma);
			g_string_append_printf(out, "  AoBG: α = %s (%s), ε = %s, γ = %s%s\n", alpha,
								   cl_smooth_alpha_rule_name(a->rule), epsilon, gamma,
								   isfinite(def->gamma) ? "" : " (10 % of ‖ZoBG‖)");
		}
		g_string_append_printf(out, "  %d terms: %d used by ZoBG, %d by FoBG", r->terms, r->zobg_terms, r->fobg_terms);
		if (r->not_ok) {
			char *first = cl_status_text(&r->first_problem);
			g_string_append_printf(out, "; %d runs not ok, the first: %s", r->not_ok, first);
			g_free(first);
		}
		g_string_append_c(out, '\n');
	}
	if (rq->quadrature)
		g_string_append(out, "\nquadrature: the trapezoid rule over ±6σ (2048 points) or ±4.5σ (256 × 256)\n");
}

/* backend,term,parameter,zobg,fobg: every term of every estimate. */
static GString *terms_csv(const Request *rq)
{
	GString *out = g_string_new("backend,term,parameter,zobg,fobg\n");
	int d = rq->def.param_count;
	for (int s = 0; s < rq->def.backend_count; s++) {
		const ClSmoothResult *r = &rq->results[s];
		for (int t = 0; t < r->terms; t++)
			for (int k = 0; k < d; k++) {
				ClNumberText a, b;
				size_t i = (size_t)t * (size_t)d + (size_t)k;
				g_string_append_printf(out, "%s,%d,", cl_backend_info(r->backend)->id, t);
				cl_csv_append_field(out, rq->names[k]);
				g_string_append_printf(out, ",%s,%s\n", cl_smooth_csv_number(r->zobg_values[i], &a),
									   cl_smooth_csv_number(r->fobg_values[i], &b));
			}
	}
	return out;
}

static void on_progress(int done, int total, void *user)
{
	(void)user;
	cl_cli_progress("smooth: runs", done, total);
}

int cl_cmd_smooth(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, **param_names = NULL, *format = NULL, *terms_path = NULL;
	ClCliSampling sampling = CL_CLI_SAMPLING_INIT;
	gboolean antithetic = FALSE, quadrature = FALSE;
	double gamma = NAN, delta = 0.05;
	int threads = 0;
	GOptionEntry entries[] = {
		{"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &param_names, "A perturbed parameter (repeatable, required)", "P"},
		CL_CLI_SAMPLING_OPTIONS(sampling),
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		{"antithetic", 0, 0, G_OPTION_ARG_NONE, &antithetic, "Samples in pairs ±w (N/2 pairs)", NULL},
		{"gamma", 0, 0, G_OPTION_ARG_DOUBLE, &gamma, "AoBG's tolerated bias (default: 10 % of ‖ZoBG‖)", "G"},
		{"delta", 0, 0, G_OPTION_ARG_DOUBLE, &delta, "AoBG's failure probability (default 0.05)", "D"},
		{"quadrature", 0, 0, G_OPTION_ARG_NONE, &quadrature, "Also the quadrature ground truth (1 or 2 parameters)",
		 NULL},
		{"threads", 'j', 0, G_OPTION_ARG_INT, &threads, "Worker threads (default: one per core)", "N"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format (default: table)", "table|csv|json"},
		{"terms-csv", 0, 0, G_OPTION_ARG_FILENAME, &terms_path,
		 "Write every term: backend,term,parameter,zobg,fobg (- for stdout)", "FILE"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	static const char *const formats[] = {"table", "csv", "json", NULL};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	Request rq = {0};
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options(
			"smooth", "SCENE",
			"Estimates, per backend, the gradient of the smoothed loss F(θ) = E L(θ + w), w ~ N(0, σ²),\n"
			"over the given parameters from N samples (the same for every backend): ZoBG (losses only),\n"
			"FoBG (the mean of the backend's adjoint) and their α-interpolation AoBG, with standard\n"
			"errors, beside the backend's plain gradient at θ. CSV: backend,estimator,parameter,mean,stderr.",
			entries, argc, argv, &positional, &error) ||
		!cl_cli_check_choice("--format", format ? format : "table", formats, &error) ||
		!cl_cli_one_scene("smooth", positional, &error) || !cl_cli_sampling_check(&sampling, &error))
		goto out;
	if (!param_names) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "smooth: --param P is required");
		goto out;
	}
	if (!sampling.sigma) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "smooth: --sigma S is required");
		goto out;
	}
	if (!isnan(gamma) && !(isfinite(gamma) && gamma > 0)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--gamma %g: expected a positive number", gamma);
		goto out;
	}
	if (!(delta > 0 && delta < 1)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--delta %g: expected a number in (0, 1)", delta);
		goto out;
	}
	if (threads < 0 || threads > 64) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--threads %d: expected 1 to 64", threads);
		goto out;
	}
	int samples = cl_cli_sampling_samples(&sampling);
	if (antithetic && samples % 2) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--samples %d: antithetic sampling needs an even number", samples);
		goto out;
	}
	if (!(backends = cl_cli_backends(backend_ids, &error)) ||
		!(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	cl_cli_leave_out_unsupported(backends, backend_ids, scene);
	int d = (int)g_strv_length(param_names);
	rq.scene = scene;
	rq.params = g_new0(ClParam, d);
	rq.sigma = g_new0(double, d);
	rq.names = g_new0(char *, (gsize)d + 1);
	for (int k = 0; k < d; k++) {
		char message[CL_MESSAGE_MAX];
		if (!cl_param_parse(scene, param_names[k], &rq.params[k], message, sizeof message)) {
			g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--param %s: %s", param_names[k], message);
			goto out;
		}
		char name[CL_NAME_MAX];
		cl_param_name(scene, &rq.params[k], name, sizeof name);
		rq.names[k] = g_strdup(name);
		for (int j = 0; j < k; j++)
			if (strcmp(rq.names[j], name) == 0) {
				g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--param %s: given twice", name);
				goto out;
			}
	}
	if (!cl_cli_sampling_sigma(&sampling, d, rq.sigma, &error))
		goto out;
	if (quadrature && d > 2) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--quadrature: needs one or two parameters (got %d)", d);
		goto out;
	}
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	ClSmoothDef *def = &rq.def;
	*def = cl_smooth_default_def();
	def->params = rq.params;
	def->sigma = rq.sigma;
	def->param_count = d;
	def->samples = samples;
	def->seed = cl_cli_sampling_seed(&sampling);
	def->antithetic = antithetic;
	def->gamma = gamma;
	def->delta = delta;
	def->keep_terms = terms_path != NULL;
	def->backends = (const int *)backends->data;
	def->backend_count = (int)backends->len;
	def->threads = threads ? threads : (int)g_get_num_processors();
	def->progress = on_progress;
	rq.quadrature = quadrature;
	rq.results = g_new0(ClSmoothResult, backends->len);
	ClStatus smooth_status;
	gint64 start = g_get_monotonic_time();
	if (!cl_smooth(scene, def, rq.results, &smooth_status)) {
		status = cl_cli_fail(CL_EXIT_FAILED, "%s", smooth_status.message);
		goto out;
	}
	double seconds = (double)(g_get_monotonic_time() - start) * 1e-6;
	cl_cli_message("%d backend%s × %d runs in %.2f s on %d thread%s (%.0f samples/s)", def->backend_count,
				   def->backend_count == 1 ? "" : "s", samples + 1, seconds, def->threads, def->threads == 1 ? "" : "s",
				   seconds > 0 ? def->backend_count * (samples + 1) / seconds : 0.0);
	if (quadrature) {
		rq.quad = g_new0(ClSmoothQuadrature, backends->len);
		if (!cl_smooth_quadrature(scene, def, 0, rq.quad, &smooth_status)) {
			status = cl_cli_fail(CL_EXIT_FAILED, "%s", smooth_status.message);
			goto out;
		}
	}
	status = CL_EXIT_OK;
	for (int s = 0; s < def->backend_count; s++) {
		const ClSmoothResult *r = &rq.results[s];
		const char *id = cl_backend_info(r->backend)->id;
		if (!isfinite(r->loss)) {
			char *text = cl_status_text(&r->status);
			cl_cli_message("%s: the run at θ failed: %s", id, text);
			g_free(text);
			status = CL_EXIT_FAILED;
		}
		if (r->not_ok) {
			char *text = cl_status_text(&r->first_problem);
			cl_cli_message("note: %s: %d of %d sample runs not ok (ZoBG uses %d terms, FoBG %d); the first: %s", id,
						   r->not_ok, samples, r->zobg_terms, r->fobg_terms, text);
			g_free(text);
		}
		if (quadrature && rq.quad[s].failed)
			cl_cli_message("note: %s: %d quadrature points without a finite loss", id, rq.quad[s].failed);
	}
	GString *text = g_string_new(NULL);
	if (!format || strcmp(format, "table") == 0)
		put_table(text, &rq);
	else if (strcmp(format, "csv") == 0) {
		ClSmoothTable table = table_of(&rq);
		GString *csv = cl_smooth_csv(&table);
		g_string_append_len(text, csv->str, (gssize)csv->len);
		g_string_free(csv, TRUE);
	}
	else
		put_json(text, &rq);
	if (terms_path) {
		GString *terms = terms_csv(&rq);
		if (!cl_write_output(terms_path, terms, &error))
			status = CL_EXIT_FAILED;
		g_string_free(terms, TRUE);
	}
	if (!error)
		cl_write_output("-", text, NULL);
	g_string_free(text, TRUE);
out:
	if (error) {
		if (status == CL_EXIT_OK)
			status = CL_EXIT_BAD_INPUT;
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	if (rq.results)
		for (int s = 0; s < rq.def.backend_count; s++)
			cl_smooth_result_clear(&rq.results[s]);
	g_free(rq.results);
	g_free(rq.quad);
	g_free(rq.params);
	g_free(rq.sigma);
	g_strfreev(rq.names);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_strfreev(param_names);
	g_free(format);
	g_free(terms_path);
	cl_cli_sampling_clear(&sampling);
	return status;
}
