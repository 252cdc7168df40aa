#include "cl-smoothing-view.h"

#include "agreement.h"

#include "cl-smoothing-job.h"
#include "cl-workbench.h"
#include "figures.h"

#include <math.h>
#include <stdlib.h>

struct _ClSmoothingView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkBox *parameter_box;
	GtkSpinButton *sigma, *samples, *seed;
	GtkCheckButton *antithetic, *quadrature;
	GtkWidget *cancel_button, *stale_label, *gamma_scale, *gamma_auto;
	GtkProgressBar *progress;
	GtkLabel *status, *rule_label;
	GtkGrid *table;
	GtkDropDown *backend_choice, *parameter_choice;
	ClPlotView *plot;
	GtkAdjustment *gamma_adjustment;

	ClDocument *doc; /* while rooted */
	gulong changed_handler;

	GPtrArray *parameter_checks; /* GtkCheckButton, labelled with the parameter's name */
	char *signature;             /* of the scene the checks were made for */
	GtkStringList *backend_names, *param_names;
	ClJob *job;      /* the running computation */
	ClResult *shown; /* the finished one shown */
	gboolean updating; /* setting the γ slider or the choices, not the user */
	gint64 started;
	double seconds;
};

static void cl_smoothing_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClSmoothingView, cl_smoothing_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_smoothing_view_view_init))

static ClSmoothingRun *shown_run(ClSmoothingView *self)
{
	return self->shown ? cl_result_payload(self->shown) : NULL;
}

static gboolean is_stale(ClSmoothingView *self)
{
	return self->shown && self->doc && cl_document_is_stale(self->doc, self->shown);
}

/* ----------------------------------------------------------- parameters */

static GtkCheckButton *parameter_check(ClSmoothingView *self, const char *name)
{
	for (guint i = 0; i < self->parameter_checks->len; i++) {
		GtkCheckButton *check = g_ptr_array_index(self->parameter_checks, i);
		if (g_str_equal(gtk_check_button_get_label(check), name))
			return check;
	}
	return NULL;
}

static GtkCheckButton *add_parameter_check(ClSmoothingView *self, const char *name, gboolean active)
{
	GtkWidget *check = gtk_check_button_new_with_label(name);
	gtk_check_button_set_active(GTK_CHECK_BUTTON(check), active);
	gtk_box_append(self->parameter_box, check);
	g_ptr_array_add(self->parameter_checks, check);
	return GTK_CHECK_BUTTON(check);
}

/* Every ball's initial state and first control, and the scene's physical
 * values (cl_scene_params; those have no adjoint: ZoBG only). The checked
 * ones survive by name; none checked: the first ball's height. */
static void refresh_parameters(ClSmoothingView *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	g_autoptr(GHashTable) checked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < self->parameter_checks->len; i++) {
		GtkCheckButton *check = g_ptr_array_index(self->parameter_checks, i);
		if (gtk_check_button_get_active(check))
			g_hash_table_add(checked, g_strdup(gtk_check_button_get_label(check)));
	}
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->parameter_box))))
		gtk_box_remove(self->parameter_box, child);
	g_ptr_array_set_size(self->parameter_checks, 0);
	int count;
	ClParam *params = cl_scene_params_new(scene, CL_PARAMS_TABLE | CL_PARAMS_GLOBAL, -1, &count);
	gboolean any = FALSE;
	for (int k = 0; k < count; k++) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, &params[k], name, sizeof name);
		any |= gtk_check_button_get_active(add_parameter_check(self, name, g_hash_table_contains(checked, name)));
	}
	free(params);
	if (!any && scene->ball_count > 0) {
		char name[CL_NAME_MAX];
		g_snprintf(name, sizeof name, "%s.position.y", scene->balls[0].id);
		GtkCheckButton *check = parameter_check(self, name);
		if (check)
			gtk_check_button_set_active(check, TRUE);
	}
}

static char *problem_signature(const ClScene *scene)
{
	GString *sig = g_string_new(scene->name);
	for (int b = 0; b < scene->ball_count; b++)
		g_string_append_printf(sig, "|%s", scene->balls[b].id);
	return g_string_free(sig, FALSE);
}

/* -------------------------------------------------------------- table */

static GtkWidget *cell(const char *text, const char *css)
{
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_add_css_class(label, "cell");
	if (css)
		gtk_widget_add_css_class(label, css);
	return label;
}

/* A value cell, named for scripts and screen readers "BACKEND PARAMETER ESTIMATOR: TEXT". */
static GtkWidget *value_cell(const char *backend, const char *parameter, const char *estimator, const char *text)
{
	GtkWidget *label = cell(text, "numeric");
	g_autofree char *name = g_strdup_printf("%s %s %s: %s", backend, parameter, estimator, text);
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
	return label;
}

/* The sign of a against the reference r, when r is clearly not zero. */
static gboolean wrong_sign(double a, ClSmoothEstimate r)
{
	return isfinite(a) && isfinite(r.mean) && (!isfinite(r.se) || fabs(r.mean) > 2 * r.se) && a * r.mean < 0;
}

/* smoothing.md §3: an estimate is green within 2 SE of the reference (the SE of
 * their difference, counting both as independent, which common random numbers
 * only make cautious) and red for a sign the reference clearly does not have. */
static void colour_estimate(GtkWidget *cell, ClSmoothEstimate e, ClSmoothEstimate r)
{
	double se_e = isfinite(e.se) ? e.se : 0, se_r = isfinite(r.se) ? r.se : 0;
	ClAgreement a = CL_AGREEMENT_UNKNOWN;
	if (wrong_sign(e.mean, r))
		a = CL_AGREEMENT_WRONG_SIGN;
	else if (isfinite(e.mean) && isfinite(r.mean) && fabs(e.mean - r.mean) <= 2 * sqrt(se_e * se_e + se_r * se_r))
		a = CL_AGREEMENT_GOOD;
	if (a == CL_AGREEMENT_UNKNOWN)
		return;
	gtk_widget_add_css_class(cell, cl_agreement_name(a));
	if (!gtk_widget_get_tooltip_text(cell))
		gtk_widget_set_tooltip_text(cell, a == CL_AGREEMENT_GOOD
											  ? "Within 2 SE of exact's smoothed gradient"
											  : "Wrong sign: exact's smoothed gradient clearly has the other");
}

static void rebuild_table(ClSmoothingView *self)
{
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->table))))
		gtk_grid_remove(self->table, child);
	ClSmoothingRun *run = shown_run(self);
	if (!run)
		return;
	static const char *const headers[] = {"Backend", "∂/∂",		 "Point ∇f(θ)",	 "ZoBG ± SE",
										  "FoBG ± SE", "AoBG ± SE", "α (rule)",		 "Exact's ZoBG (reference)"};
	for (int c = 0; c < (int)G_N_ELEMENTS(headers); c++)
		gtk_grid_attach(self->table, cell(headers[c], "column-header"), c, 0, 1, 1);
	if (run->quad)
		gtk_grid_attach(self->table, cell("Quadrature ∇F_σ (own loss)", "column-header"), 8, 0, 1, 1);
	int row = 1;
	for (int s = 0; s < run->backend_count; s++) {
		const ClSmoothResult *r = &run->results[s];
		const char *id = cl_backend_info(r->backend)->id;
		for (int k = 0; k < run->param_count; k++, row++) {
			const ClSmoothGradient *g = &r->gradient[k];
			const char *name = run->names[k];
			ClSmoothEstimate ref = run->exact_slot >= 0 ? run->results[run->exact_slot].gradient[k].zobg
														: (ClSmoothEstimate){NAN, NAN};
			gtk_grid_attach(self->table, cell(k == 0 ? id : "", "row-header"), 0, row, 1, 1);
			gtk_grid_attach(self->table, cell(name, NULL), 1, row, 1, 1);
			char text[96];
			cl_smooth_format_estimate(text, sizeof text, (ClSmoothEstimate){g->point, NAN}, TRUE);
			GtkWidget *point = value_cell(id, name, "point", text);
			if (s != run->exact_slot)
				colour_estimate(point, (ClSmoothEstimate){g->point, NAN}, ref);
			gtk_grid_attach(self->table, point, 2, row, 1, 1);
			cl_smooth_format_estimate(text, sizeof text, g->zobg, TRUE);
			GtkWidget *zobg = value_cell(id, name, "zobg", text);
			if (s != run->exact_slot)
				colour_estimate(zobg, g->zobg, ref);
			gtk_grid_attach(self->table, zobg, 3, row, 1, 1);
			cl_smooth_format_estimate(text, sizeof text, g->fobg, g->has_adjoint);
			GtkWidget *fobg = value_cell(id, name, "fobg", text);
			/* biased against exact's smoothed gradient beyond 3 SE of the paired difference */
			ClSmoothEstimate bias = g->fobg_bias;
			if (isfinite(bias.mean) && isfinite(bias.se) && fabs(bias.mean) > 3 * bias.se) {
				char b[64];
				cl_smooth_format_estimate(b, sizeof b, bias, TRUE);
				g_autofree char *tip = g_strdup_printf("FoBG − exact's ZoBG = %s: biased (more than 3 SE)", b);
				gtk_widget_set_tooltip_text(fobg, tip);
			}
			if (g->has_adjoint)
				colour_estimate(fobg, g->fobg, ref);
			gtk_grid_attach(self->table, fobg, 4, row, 1, 1);
			cl_smooth_format_estimate(text, sizeof text, g->aobg, g->has_adjoint);
			GtkWidget *aobg = value_cell(id, name, "aobg", text);
			if (g->has_adjoint)
				colour_estimate(aobg, g->aobg, ref);
			gtk_grid_attach(self->table, aobg, 5, row, 1, 1);
			char alpha[32];
			g_ascii_formatd(alpha, sizeof alpha, "%.3g", r->alpha.alpha);
			g_snprintf(text, sizeof text, "%s (%s)", alpha, cl_smooth_alpha_rule_name(r->alpha.rule));
			gtk_grid_attach(self->table, value_cell(id, name, "alpha", text), 6, row, 1, 1);
			if (run->exact_slot >= 0)
				cl_smooth_format_estimate(text, sizeof text, ref, TRUE);
			else
				g_strlcpy(text, "enable exact", sizeof text);
			gtk_grid_attach(self->table, value_cell(id, name, "exact-zobg", text), 7, row, 1, 1);
			if (run->quad) {
				const ClSmoothQuadrature *q = &run->quad[s];
				cl_smooth_format_estimate(text, sizeof text, (ClSmoothEstimate){q->grad[k], NAN}, TRUE);
				GtkWidget *quad = value_cell(id, name, "quadrature", text);
				if (q->failed) {
					g_autofree char *tip = g_strdup_printf("%d grid points without a finite loss", q->failed);
					gtk_widget_set_tooltip_text(quad, tip);
				}
				gtk_grid_attach(self->table, quad, 8, row, 1, 1);
			}
		}
	}
}

/* ------------------------------------------------------ figure and rule */

static int chosen_slot(ClSmoothingView *self)
{
	ClSmoothingRun *run = shown_run(self);
	guint s = gtk_drop_down_get_selected(self->backend_choice);
	return run && s != GTK_INVALID_LIST_POSITION && (int)s < run->backend_count ? (int)s : -1;
}

static int chosen_parameter(ClSmoothingView *self)
{
	ClSmoothingRun *run = shown_run(self);
	guint k = gtk_drop_down_get_selected(self->parameter_choice);
	return run && k != GTK_INVALID_LIST_POSITION && (int)k < run->param_count ? (int)k : -1;
}

static void rebuild_figure(ClSmoothingView *self)
{
	gtk_widget_set_visible(self->stale_label, is_stale(self));
	ClSmoothingRun *run = shown_run(self);
	int slot = chosen_slot(self), k = chosen_parameter(self);
	if (!run || slot < 0 || k < 0) {
		cl_plot_view_set_figure(self->plot, NULL);
		return;
	}
	cl_plot_view_set_figure(self->plot, cl_figure_smoothing_terms(run, slot, k));
	cl_plot_view_set_faded(self->plot, is_stale(self));
}

static void format_value(char *text, size_t size, const char *format, double x)
{
	if (isfinite(x))
		g_ascii_formatd(text, size, format, x);
	else
		g_strlcpy(text, "n/a", size);
}

/* The rule at the slider's γ on the chosen backend's stored terms, step by step. */
static void update_rule(ClSmoothingView *self)
{
	ClSmoothingRun *run = shown_run(self);
	int slot = chosen_slot(self);
	gtk_widget_set_sensitive(self->gamma_scale, slot >= 0);
	gtk_widget_set_sensitive(self->gamma_auto, slot >= 0);
	if (slot < 0) {
		gtk_label_set_text(self->rule_label, "Compute first: the rule is then recomputed from the stored samples "
											 "at every γ, without new rollouts.");
		return;
	}
	double gamma = gtk_adjustment_get_value(self->gamma_adjustment);
	ClSmoothAlpha a = cl_smoothing_alpha(run, slot, gamma > 0 ? gamma : 1e-12);
	char v0[32], v1[32], bound[32], gap[32], eps[32], g[32], alpha[32], delta[32];
	format_value(v0, sizeof v0, "%.4g", a.zobg_variance);
	format_value(v1, sizeof v1, "%.4g", a.fobg_variance);
	format_value(bound, sizeof bound, "%.4g", a.bound);
	format_value(gap, sizeof gap, "%.4g", a.gap);
	format_value(eps, sizeof eps, "%.4g", a.epsilon);
	format_value(g, sizeof g, "%.4g", a.gamma);
	format_value(alpha, sizeof alpha, "%.4g", a.alpha);
	format_value(delta, sizeof delta, "%g", a.delta);
	GString *text = g_string_new(NULL);
	g_string_append_printf(text, "%s, N = %d terms, d = %d\n", cl_backend_info(run->results[slot].backend)->id,
						   a.terms, a.dimension);
	g_string_append_printf(text, "1. Variances (trace): σ̂0² = %s (ZoBG), σ̂1² = %s (FoBG)\n", v0,
						   isfinite(a.fobg_variance) ? v1 : "none (no adjoint)");
	g_string_append_printf(text, "2. ε = √(2σ̂0² log((d+1)/δ)/N) + 2R log((d+1)/δ)/(3N) = %s, with δ = %s, "
								 "R = max ‖ZoBG term‖ = %s\n",
						   eps, delta, bound);
	g_string_append_printf(text, "3. γ = %s, ‖ĝ1 − ĝ0‖ = %s\n", g, gap);
	double weight = a.zobg_variance + a.fobg_variance > 0 ? a.zobg_variance / (a.zobg_variance + a.fobg_variance) : 1;
	char w[32], wg[32], room[32];
	format_value(w, sizeof w, "%.4g", weight);
	format_value(wg, sizeof wg, "%.4g", weight * a.gap);
	format_value(room, sizeof room, "%.4g", a.gamma - a.epsilon);
	switch (a.rule) {
	case CL_SMOOTH_ALPHA_NO_FOBG:
		g_string_append_printf(text, "→ no FoBG (no adjoint or no usable sample): α = 0, ZoBG.\n");
		break;
	case CL_SMOOTH_ALPHA_ZOBG:
		g_string_append_printf(text, "→ ε = %s > γ = %s: ZoBG's own uncertainty exceeds the tolerated bias, so "
									 "nothing certifies FoBG: α = 0 (eps>gamma).\n",
							   eps, g);
		break;
	case CL_SMOOTH_ALPHA_OPTIMUM:
		g_string_append_printf(text, "→ ε ≤ γ and α*·‖ĝ1 − ĝ0‖ = %s ≤ γ − ε = %s: the inverse-variance weight "
									 "α* = σ̂0²/(σ̂0² + σ̂1²) = %s (optimum).\n",
							   wg, room, w);
		break;
	case CL_SMOOTH_ALPHA_CONSTRAINT:
		g_string_append_printf(text, "→ ε ≤ γ but α*·‖ĝ1 − ĝ0‖ = %s > γ − ε = %s: α = (γ − ε)/‖ĝ1 − ĝ0‖ "
									 "(constraint).\n",
							   wg, room);
		break;
	default:
		break;
	}
	g_string_append_printf(text, "α = %s (%s)", alpha, cl_smooth_alpha_rule_name(a.rule));
	for (int k = 0; k < run->param_count; k++) {
		char e[96];
		cl_smooth_format_estimate(e, sizeof e, cl_smoothing_aobg(run, slot, k, a.alpha), TRUE);
		g_string_append_printf(text, "\nAoBG ∂/∂%s = %s", run->names[k], e);
	}
	gtk_label_set_text(self->rule_label, text->str);
	g_string_free(text, TRUE);
}

/* The slider over a range that shows all three cases for the chosen
 * backend, at its automatic γ (what the table's AoBG used). */
static void reset_gamma(ClSmoothingView *self)
{
	ClSmoothingRun *run = shown_run(self);
	int slot = chosen_slot(self);
	if (slot >= 0) {
		ClSmoothAlpha a = cl_smoothing_alpha(run, slot, 0);
		double upper = 4 * a.gamma;
		if (isfinite(a.epsilon))
			upper = fmax(upper, 1.5 * a.epsilon);
		if (isfinite(a.epsilon) && isfinite(a.gap))
			upper = fmax(upper, 1.25 * (a.epsilon + a.gap));
		self->updating = TRUE;
		gtk_adjustment_configure(self->gamma_adjustment, a.gamma, 0, upper, upper / 1000, upper / 20, 0);
		self->updating = FALSE;
	}
	update_rule(self);
}

static void choice_changed(ClSmoothingView *self)
{
	if (self->updating)
		return;
	rebuild_figure(self);
	reset_gamma(self);
}

static void gamma_changed(ClSmoothingView *self)
{
	if (!self->updating)
		update_rule(self);
}

static void gamma_auto_clicked(ClSmoothingView *self)
{
	reset_gamma(self);
}

/* Everything from the shown run: the choices keep their names. */
static void show_run(ClSmoothingView *self)
{

	ClSmoothingRun *run = shown_run(self);
	g_autofree char *backend = NULL, *parameter = NULL;
	GtkStringObject *item = gtk_drop_down_get_selected_item(self->backend_choice);
	backend = item ? g_strdup(gtk_string_object_get_string(item)) : NULL;
	item = gtk_drop_down_get_selected_item(self->parameter_choice);
	parameter = item ? g_strdup(gtk_string_object_get_string(item)) : NULL;
	self->updating = TRUE; /* one rebuild below, not one per choice */
	g_autoptr(GPtrArray) ids = g_ptr_array_new();
	for (int s = 0; run && s < run->backend_count; s++)
		g_ptr_array_add(ids, (gpointer)cl_backend_info(run->backends[s])->id);
	g_ptr_array_add(ids, NULL);
	gtk_string_list_splice(self->backend_names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->backend_names)),
						   (const char *const *)ids->pdata);
	gtk_string_list_splice(self->param_names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->param_names)),
						   run ? (const char *const *)run->names : NULL);
	/* the same backend as before, else the first that is not exact (the
	 * interesting one: its terms against exact's) */
	guint pick = 0;
	for (int s = 0; run && s < run->backend_count; s++)
		if (backend ? g_str_equal(backend, ids->pdata[s]) : run->backend_count > 1 && s != run->exact_slot) {
			pick = (guint)s;
			break;
		}
	gtk_drop_down_set_selected(self->backend_choice, pick);
	pick = 0;
	for (int k = 0; run && parameter && k < run->param_count; k++)
		if (g_str_equal(parameter, run->names[k]))
			pick = (guint)k;
	gtk_drop_down_set_selected(self->parameter_choice, pick);
	self->updating = FALSE;
	rebuild_table(self);
	rebuild_figure(self);
	reset_gamma(self);
}

/* ------------------------------------------------------------ computing */

static void set_status(ClSmoothingView *self, const char *message)
{
	gboolean running = self->job != NULL;
	gtk_widget_set_visible(self->cancel_button, running);
	gtk_widget_action_set_enabled(GTK_WIDGET(self), "smoothing.cancel", running);
	g_autofree char *text = NULL;
	ClSmoothingRun *run = shown_run(self);
	if (message)
		text = g_strdup(message);
	else if (running)
		text = g_strdup_printf("Smoothing… %.0f %% of the runs", 100 * cl_job_get_progress(self->job));
	else if (run)
		text = g_strdup_printf("%d samples%s × %d backends in %.2f s, seed %" G_GUINT64_FORMAT
							   "; FoBG and ZoBG from the same samples%s",
							   run->def.samples, run->def.antithetic ? " in antithetic pairs" : "", run->backend_count,
							   self->seconds, run->def.seed,
							   is_stale(self) ? " · the scene has changed since: Compute again" : "");
	else
		text = g_strdup("Choose the parameters, σ and N, then press Compute.");
	gtk_label_set_text(self->status, text);
}

static void run_progress(ClJob *job, ClSmoothingView *self)
{
	if (job != self->job)
		return;
	gtk_progress_bar_set_fraction(self->progress, cl_job_get_progress(job));
	set_status(self, NULL);
}

static void run_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClSmoothingView *self = data;
	ClJob *job = CL_JOB(source);
	g_autoptr(GError) error = NULL;
	gboolean ok = cl_job_finish(job, res, &error);
	if (job == self->job) {
		if (ok) {
			g_clear_pointer(&self->shown, cl_result_unref);
			self->shown = cl_result_ref(cl_study_job_result(job));
			self->seconds = (g_get_monotonic_time() - self->started) / 1e6;
			gtk_progress_bar_set_fraction(self->progress, 1);
			if (self->doc)
				cl_document_set_result(self->doc, self->shown);
		}
		g_clear_object(&self->job);
		if (ok)
			show_run(self);
		set_status(self, error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? error->message
						 : error																 ? "Cancelled."
																								 : NULL);
	}
	g_object_unref(self);
}

static gboolean apply_options(ClSmoothingView *self, GVariant *options, GError **error)
{
	if (!options)
		return TRUE;
	g_autoptr(GVariant) names = g_variant_lookup_value(options, "parameters", G_VARIANT_TYPE_STRING_ARRAY);
	if (names) {
		for (guint i = 0; i < self->parameter_checks->len; i++)
			gtk_check_button_set_active(g_ptr_array_index(self->parameter_checks, i), FALSE);
		gsize count;
		g_autofree const char **list = g_variant_get_strv(names, &count);
		for (gsize i = 0; i < count; i++) {
			GtkCheckButton *check = parameter_check(self, list[i]);
			if (!check) /* any scalar the scene has (cl_smoothing_run_prepare checks it) */
				check = add_parameter_check(self, list[i], TRUE);
			gtk_check_button_set_active(check, TRUE);
		}
	}
	double d;
	gint32 n;
	guint64 t;
	gboolean b;
	if (g_variant_lookup(options, "sigma", "d", &d)) {
		if (!(d > 0)) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "sigma %g: expected a positive number", d);
			return FALSE;
		}
		gtk_spin_button_set_value(self->sigma, d);
	}
	if (g_variant_lookup(options, "samples", "i", &n))
		gtk_spin_button_set_value(self->samples, n);
	if (g_variant_lookup(options, "seed", "i", &n))
		gtk_spin_button_set_value(self->seed, n);
	else if (g_variant_lookup(options, "seed", "t", &t))
		gtk_spin_button_set_value(self->seed, (double)t);
	if (g_variant_lookup(options, "antithetic", "b", &b))
		gtk_check_button_set_active(self->antithetic, b);
	if (g_variant_lookup(options, "quadrature", "b", &b))
		gtk_check_button_set_active(self->quadrature, b);
	return TRUE;
}

gboolean cl_smoothing_view_compute(ClSmoothingView *self, GVariant *options, GError **error)
{
	if (!self->doc || !apply_options(self, options, error))
		return FALSE;
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	for (guint i = 0; i < self->parameter_checks->len; i++) {
		GtkCheckButton *check = g_ptr_array_index(self->parameter_checks, i);
		if (gtk_check_button_get_active(check))
			g_ptr_array_add(names, (gpointer)gtk_check_button_get_label(check));
	}
	int d = (int)names->len;
	g_autofree double *sigma = g_new(double, MAX(d, 1));
	for (int k = 0; k < d; k++)
		sigma[k] = gtk_spin_button_get_value(self->sigma);
	g_autoptr(GArray) backends = cl_document_enabled_backends(self->doc);
	g_autoptr(ClJob) job = cl_smoothing_job_new(
		cl_document_get_scene(self->doc), cl_document_get_revision(self->doc), (const char *const *)names->pdata,
		sigma, d, gtk_spin_button_get_value_as_int(self->samples), (guint64)gtk_spin_button_get_value(self->seed),
		gtk_check_button_get_active(self->antithetic), gtk_check_button_get_active(self->quadrature), (const int *)(const void *)backends->data, (int)backends->len,
		error);
	if (!job)
		return FALSE;
	cl_job_replace(&self->job, job);
	self->started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress, 0);
	g_signal_connect(job, "progress", G_CALLBACK(run_progress), self);
	cl_job_run_async(job, run_done, g_object_ref(self));
	set_status(self, NULL);
	return TRUE;
}

void cl_smoothing_view_cancel(ClSmoothingView *self)
{
	if (self->job)
		cl_job_cancel(self->job);
}

gboolean cl_smoothing_view_is_busy(ClSmoothingView *self)
{
	return self->job != NULL;
}

ClPlotView *cl_smoothing_view_get_plot(ClSmoothingView *self)
{
	return self->plot;
}

static GString *table_csv(gpointer data)
{
	ClSmoothingView *self = data;
	ClSmoothingRun *run = shown_run(self);
	if (!run)
		return NULL;
	ClSmoothTable table = cl_smoothing_run_table(run);
	return cl_smooth_csv(&table);
}

static void compute_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	ClSmoothingView *self = CL_SMOOTHING_VIEW(widget);
	GError *error = NULL;
	if (!cl_smoothing_view_compute(self, NULL, &error) && error) {
		set_status(self, error->message);
		g_error_free(error);
	}
}

static void cancel_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_smoothing_view_cancel(CL_SMOOTHING_VIEW(widget));
}

static void export_binding(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_plot_view_choose_export(CL_SMOOTHING_VIEW(widget)->plot, "png");
}

/* ---------------------------------------------------------------- scene */

/* Other balls bring their own parameters; any change makes the shown
 * estimates stale. */
static void document_changed(ClDocument *doc, guint what, ClSmoothingView *self)
{
	if (!(what & CL_DOCUMENT_SCENE))
		return;
	g_autofree char *signature = problem_signature(cl_document_get_scene(doc));
	if (g_strcmp0(signature, self->signature) != 0) {
		g_free(self->signature);
		self->signature = g_steal_pointer(&signature);
		refresh_parameters(self);
	}
	rebuild_figure(self);
	set_status(self, NULL);
}

/* ------------------------------------------------------ ClResultsView */

static void cl_smoothing_view_view_init(ClResultsViewInterface *iface)
{
	(void)iface; /* lesson steps show smoothing numbers in the Gradients view */
}

/* ------------------------------------------------------------ lifecycle */

static void cl_smoothing_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_smoothing_view_parent_class)->root(widget);
	ClSmoothingView *self = CL_SMOOTHING_VIEW(widget);
	ClWorkbench *workbench = cl_workbench_of(widget);
	if (!workbench)
		return;
	self->doc = cl_workbench_get_document(workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	document_changed(self->doc, CL_DOCUMENT_SCENE, self);
}

static void cl_smoothing_view_unroot(GtkWidget *widget)
{
	ClSmoothingView *self = CL_SMOOTHING_VIEW(widget);
	cl_smoothing_view_cancel(self);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	GTK_WIDGET_CLASS(cl_smoothing_view_parent_class)->unroot(widget);
}

static void cl_smoothing_view_dispose(GObject *object)
{
	ClSmoothingView *self = CL_SMOOTHING_VIEW(object);
	cl_job_replace(&self->job, NULL);
	g_clear_pointer(&self->shown, cl_result_unref);
	g_clear_object(&self->backend_names);
	g_clear_object(&self->param_names);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_SMOOTHING_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_smoothing_view_parent_class)->dispose(object);
}

static void cl_smoothing_view_finalize(GObject *object)
{
	ClSmoothingView *self = CL_SMOOTHING_VIEW(object);
	g_ptr_array_free(self->parameter_checks, TRUE);
	g_free(self->signature);
	G_OBJECT_CLASS(cl_smoothing_view_parent_class)->finalize(object);
}

static void cl_smoothing_view_class_init(ClSmoothingViewClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_smoothing_view_dispose;
	object_class->finalize = cl_smoothing_view_finalize;
	widget_class->root = cl_smoothing_view_root;
	widget_class->unroot = cl_smoothing_view_unroot;
	g_type_ensure(CL_TYPE_PLOT_VIEW);
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-smoothing-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, parameter_box);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, sigma);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, samples);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, seed);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, antithetic);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, quadrature);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, cancel_button);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, stale_label);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, progress);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, status);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, table);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, backend_choice);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, parameter_choice);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, plot);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, gamma_scale);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, gamma_adjustment);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, gamma_auto);
	gtk_widget_class_bind_template_child(widget_class, ClSmoothingView, rule_label);
	gtk_widget_class_install_action(widget_class, "smoothing.compute", NULL, compute_action);
	gtk_widget_class_install_action(widget_class, "smoothing.cancel", NULL, cancel_action);
	gtk_widget_class_install_action(widget_class, "smoothing.export", NULL, export_binding);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "smoothing.export",
										NULL);
	gtk_widget_class_set_css_name(widget_class, "smoothingview");
}

static void cl_smoothing_view_init(ClSmoothingView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	self->parameter_checks = g_ptr_array_new();
	self->backend_names = gtk_string_list_new(NULL);
	self->param_names = gtk_string_list_new(NULL);
	gtk_drop_down_set_model(self->backend_choice, G_LIST_MODEL(self->backend_names));
	gtk_drop_down_set_model(self->parameter_choice, G_LIST_MODEL(self->param_names));
	g_signal_connect_swapped(self->backend_choice, "notify::selected", G_CALLBACK(choice_changed), self);
	g_signal_connect_swapped(self->parameter_choice, "notify::selected", G_CALLBACK(choice_changed), self);
	g_signal_connect_swapped(self->gamma_adjustment, "value-changed", G_CALLBACK(gamma_changed), self);
	g_signal_connect_swapped(self->gamma_auto, "clicked", G_CALLBACK(gamma_auto_clicked), self);
	cl_plot_view_set_export_size(self->plot, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT);
	cl_plot_view_set_export_name(self->plot, "smoothing-terms");
	cl_plot_view_set_crosshair(self->plot, FALSE);
	cl_plot_view_set_csv_func(self->plot, table_csv, self);
	cl_plot_view_set_placeholder(self->plot, "<big>No smoothed gradients yet</big>\n\nChoose the parameters, σ and "
											 "N, then <b>Compute</b>.\nEvery enabled backend runs the same samples "
											 "θ + w; the histogram shows one backend's terms.");
	update_rule(self);
	set_status(self, NULL);
}
