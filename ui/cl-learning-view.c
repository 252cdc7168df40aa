#include "cl-learning-view.h"

#include "cl-learning-job.h"
#include "cl-workbench.h"
#include "numbers.h"
#include "scene-file.h"

#include <math.h>
#include <stdlib.h>

/* How often the table follows the live curves (only rows whose backend
 * moved on); the curves grow at every job progress signal. */
#define TABLE_UPDATE_MS 500

enum { REFERENCE_ANALYTIC, REFERENCE_CUSTOM, REFERENCE_NONE };

/* One backend's row of the table, kept while its run is shown. */
typedef struct {
	GtkWidget *status, *iterations, *final_loss, *exact, *contacts, *values;
	int iterations_shown; /* −1: not filled yet */
	gboolean finished_shown;
} TableRow;

struct _ClLearningView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkDropDown *optimizer, *reference_kind, *estimator;
	GtkSpinButton *learning_rate, *iterations, *reference_value, *sigma, *samples;
	GtkWidget *smoothing_grid;
	GtkBox *parameter_box;
	GtkCheckButton *log_scale;
	GtkWidget *cancel_button;
	GtkProgressBar *progress;
	GtkLabel *status;
	ClPlotView *plot;
	GtkGrid *table;

	GtkWidget *stale_label;
	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	gulong changed_handler;

	GPtrArray *parameter_checks; /* GtkCheckButton, labelled with the parameter name */
	char *signature;             /* of the scene the checks were made for */
	ClJob *job;                  /* the running run */
	ClResult *shown;             /* the running or shown run's result */
	gboolean complete;
	ClLearningTrace *traces; /* the last copy shown */
	int trace_count;
	ClLearningCurves *curves; /* where each trace's lines are in the plot's figure */
	char **param_names;       /* of the job's parameters */
	GArray *brief;            /* indices of the parameters the table shows (int) */
	ClResult *table_result;   /* the run the rows were made for (borrowed) */
	TableRow *rows;
	gint64 started, table_updated;
};

static void cl_learning_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClLearningView, cl_learning_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_learning_view_view_init))

static ClLearningRun *shown_run(ClLearningView *self)
{
	return self->shown ? cl_result_payload(self->shown) : NULL;
}

/* ----------------------------------------------------------- parameters */

/* The controls as a def says: its parameters checked, its rate, iterations
 * and optimizer (a lesson step's are the whole of what it runs). */
static void refresh_parameters(ClLearningView *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	/* the scene's own choice first, then every ball's vectors */
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (int k = 0; k < scene->optimize.parameter_count; k++)
		g_ptr_array_add(names, g_strdup(scene->optimize.parameters[k]));
	static const char *const vectors[] = {"position", "velocity", "control"};
	GPtrArray *more = g_ptr_array_new();
	for (int b = 0; b < scene->ball_count; b++)
		for (gsize v = 0; v < G_N_ELEMENTS(vectors); v++)
			g_ptr_array_add(more, g_strdup_printf("%s.%s", scene->balls[b].id, vectors[v]));
	/* then the physical parameters (system identification, design): the
	 * global ones, the radius and mass of the balls that matter, the walls' angles */
	g_ptr_array_add(more, g_strdup("elasticity"));
	g_ptr_array_add(more, g_strdup("friction"));
	for (int b = 0; b < scene->ball_count; b++)
		if (cl_scene_ball_matters(scene, b)) {
			g_ptr_array_add(more, g_strdup_printf("%s.radius", scene->balls[b].id));
			g_ptr_array_add(more, g_strdup_printf("%s.mass", scene->balls[b].id));
		}
	for (int w = 0; w < scene->wall_count; w++)
		g_ptr_array_add(more, g_strdup_printf("%s.angle", scene->walls[w].id));
	for (guint i = 0; i < more->len; i++) {
		char *name = g_ptr_array_index(more, i);
		if (!g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
			g_ptr_array_add(names, name);
		else
			g_free(name);
	}
	g_ptr_array_free(more, TRUE);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->parameter_box))))
		gtk_box_remove(self->parameter_box, child);
	g_ptr_array_set_size(self->parameter_checks, 0);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		GtkWidget *check = gtk_check_button_new_with_label(name);
		gtk_check_button_set_active(GTK_CHECK_BUTTON(check), (int)i < scene->optimize.parameter_count);
		gtk_box_append(self->parameter_box, check);
		g_ptr_array_add(self->parameter_checks, check);
	}
	g_ptr_array_free(names, TRUE);
	if (scene->optimize.learning_rate > 0)
		gtk_spin_button_set_value(self->learning_rate, scene->optimize.learning_rate);
	if (scene->optimize.iterations > 0)
		gtk_spin_button_set_value(self->iterations, scene->optimize.iterations);
	gtk_drop_down_set_selected(self->optimizer, scene->optimize.optimizer == CL_OPTIMIZER_ADAM ? 1 : 0);
	gtk_drop_down_set_selected(self->estimator, (guint)scene->optimize.gradient);
	if (scene->optimize.sigma > 0)
		gtk_spin_button_set_value(self->sigma, scene->optimize.sigma);
	gtk_spin_button_set_value(self->samples, scene->optimize.samples);
}

/* The scene's own def (its seed among the rest) with the controls applied. */
static ClOptimizeDef current_def(ClLearningView *self)
{
	ClOptimizeDef def = cl_document_get_scene(self->doc)->optimize;
	def.parameter_count = 0;
	for (guint i = 0; i < self->parameter_checks->len && def.parameter_count < CL_OPTIMIZE_PARAMS_MAX; i++) {
		GtkCheckButton *check = g_ptr_array_index(self->parameter_checks, i);
		if (gtk_check_button_get_active(check))
			g_strlcpy(def.parameters[def.parameter_count++], gtk_check_button_get_label(check), CL_NAME_MAX);
	}
	def.learning_rate = gtk_spin_button_get_value(self->learning_rate);
	def.iterations = gtk_spin_button_get_value_as_int(self->iterations);
	def.optimizer = gtk_drop_down_get_selected(self->optimizer) == 1 ? CL_OPTIMIZER_ADAM : CL_OPTIMIZER_GD;
	def.gradient = (ClGradientEstimator)gtk_drop_down_get_selected(self->estimator);
	def.sigma = def.gradient == CL_GRADIENT_ADJOINT || def.gradient == CL_GRADIENT_FD
					? def.sigma
					: gtk_spin_button_get_value(self->sigma);
	def.samples = gtk_spin_button_get_value_as_int(self->samples);
	return def;
}

/* ---------------------------------------------------------------- figure */

static double reference(ClLearningView *self, const ClScene *scene, char *label, size_t size)
{
	switch (gtk_drop_down_get_selected(self->reference_kind)) {
	case REFERENCE_ANALYTIC: {
		double optimum = cl_two_ball_optimum(scene, NULL);
		g_snprintf(label, size, "analytic optimum (%.4f)", optimum);
		return optimum;
	}
	case REFERENCE_CUSTOM: {
		double v = gtk_spin_button_get_value(self->reference_value);
		g_snprintf(label, size, "reference (%.4g)", v);
		return v;
	}
	default:
		return NAN;
	}
}

/* Once per run: the parameters' names, and which of them the table shows. */
static void name_parameters(ClLearningView *self)
{
	g_clear_pointer(&self->param_names, g_strfreev);
	g_array_set_size(self->brief, 0);
	ClLearningRun *run = shown_run(self);
	if (!run)
		return;
	const ClScene *scene = cl_result_scene(self->shown);
	int count = run->param_count, controls = 0;
	const ClParam *params = run->params;
	self->param_names = g_new0(char *, (gsize)count + 1);
	for (int k = 0; k < count; k++) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, &params[k], name, sizeof name);
		self->param_names[k] = g_strdup(name);
		if (params[k].target == CL_PARAM_CONTROL) {
			/* a control sequence: its first and last interval are enough for the table */
			if (params[k].step != 0 && params[k].step != scene->steps - 1)
				continue;
			if (controls++ >= 4)
				continue;
		}
		g_array_append_val(self->brief, k);
	}
}

/* The table's few values: a handful of formatted numbers, whatever the parameter count. */
static char *brief_summary(ClLearningView *self, const ClLearningTrace *t)
{
	GString *brief = g_string_new(NULL);
	for (guint i = 0; i < self->brief->len; i++) {
		int k = g_array_index(self->brief, int, i);
		if (k >= t->value_count)
			break;
		char value[32];
		g_snprintf(value, sizeof value, "%.4g", t->values[k]);
		g_string_append_printf(brief, "%s%s = %s", brief->len ? ", " : "", self->param_names[k], value);
	}
	return g_string_free(brief, FALSE);
}

/* Every learned value, one a line (the cell's tooltip). */
static char *full_summary(ClLearningView *self, const ClLearningTrace *t)
{
	GString *all = g_string_new(NULL);
	for (int k = 0; self->param_names && self->param_names[k] && k < t->value_count; k++)
		g_string_append_printf(all, "%s%s = %s", all->len ? "\n" : "", self->param_names[k],
							   cl_format_number(t->values[k]).text);
	return g_string_free(all, FALSE);
}

static GtkWidget *cell(const char *text, const char *css)
{
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_add_css_class(label, "cell");
	if (css)
		gtk_widget_add_css_class(label, css);
	return label;
}

static void set_css_class(GtkWidget *widget, const char *css, gboolean on)
{
	if (on)
		gtk_widget_add_css_class(widget, css);
	else
		gtk_widget_remove_css_class(widget, css);
}

/* A running backend's values change every iteration: its tooltip is written
 * when it is shown, not at every update. A finished one has it set. */
static gboolean values_tooltip(GtkWidget *values, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
							   ClLearningView *self)
{
	(void)x, (void)y, (void)keyboard;
	int i = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(values), "cl-row"));
	if (!self->shown || i >= self->trace_count || self->traces[i].finished)
		return FALSE; /* the text set on the label */
	char *full = full_summary(self, &self->traces[i]);
	gtk_tooltip_set_text(tooltip, full);
	g_free(full);
	return TRUE;
}

/* The header and one row of empty cells per backend of the shown run. */
static void reset_table(ClLearningView *self)
{
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->table))))
		gtk_grid_remove(self->table, child);
	g_clear_pointer(&self->rows, g_free);
	self->table_result = self->shown;
	if (!self->shown)
		return;
	static const char *const headers[] = {"Backend", "Status", "Iterations", "Final loss (own dynamics)",
										  "Loss under exact dynamics", "Contacts", "Learned parameters"};
	for (int c = 0; c < (int)G_N_ELEMENTS(headers); c++)
		gtk_grid_attach(self->table, cell(headers[c], "column-header"), c, 0, 1, 1);
	self->rows = g_new0(TableRow, (gsize)MAX(self->trace_count, 1));
	for (int i = 0; i < self->trace_count; i++) {
		TableRow *r = &self->rows[i];
		int row = i + 1;
		gtk_grid_attach(self->table, cell(cl_backend_info(self->traces[i].backend)->id, "row-header"), 0, row, 1, 1);
		GtkWidget **cells[] = {&r->status, &r->iterations, &r->final_loss, &r->exact, &r->contacts, &r->values};
		for (int c = 0; c < (int)G_N_ELEMENTS(cells); c++) {
			*cells[c] = cell("", c == 0 || c == 4 ? NULL : "numeric");
			gtk_grid_attach(self->table, *cells[c], c + 1, row, 1, 1);
		}
		gtk_label_set_ellipsize(GTK_LABEL(r->values), PANGO_ELLIPSIZE_END);
		gtk_label_set_max_width_chars(GTK_LABEL(r->values), 60);
		gtk_label_set_selectable(GTK_LABEL(r->values), TRUE);
		g_object_set_data(G_OBJECT(r->values), "cl-row", GINT_TO_POINTER(i));
		g_signal_connect(r->values, "query-tooltip", G_CALLBACK(values_tooltip), self);
		r->iterations_shown = -1;
	}
}

static void update_row(ClLearningView *self, int i)
{
	const ClLearningTrace *t = &self->traces[i];
	TableRow *r = &self->rows[i];
	const char *state = !t->finished ? (self->job ? "running" : "stopped") : cl_status_name(t->status.code);
	gtk_label_set_text(GTK_LABEL(r->status), state);
	set_css_class(r->status, "not-ok", t->finished && t->status.code != CL_STATUS_OK);
	gtk_widget_set_tooltip_text(r->status, t->status.message[0] ? t->status.message : NULL);
	char text[64];
	g_snprintf(text, sizeof text, "%d", t->iterations);
	gtk_label_set_text(GTK_LABEL(r->iterations), text);
	g_snprintf(text, sizeof text, "%.6g", t->final_loss);
	gtk_label_set_text(GTK_LABEL(r->final_loss), t->finished ? text : "");
	g_snprintf(text, sizeof text, "%.6g", t->exact_loss);
	gtk_label_set_text(GTK_LABEL(r->exact), t->finished ? text : "");
	/* a backend "wins" only if its result is also good under the true dynamics */
	set_css_class(r->exact, "worse-under-exact",
				  t->finished && isfinite(t->exact_loss) && isfinite(t->final_loss) &&
					  t->exact_loss > 1.5 * t->final_loss + 1e-9);
	gtk_label_set_text(GTK_LABEL(r->contacts), t->finished ? t->contacts : "");
	char *brief = brief_summary(self, t);
	gtk_label_set_text(GTK_LABEL(r->values), brief);
	g_free(brief);
	if (t->finished && !r->finished_shown) {
		char *full = full_summary(self, t);
		gtk_widget_set_tooltip_text(r->values, full);
		g_free(full);
	} else if (!t->finished) {
		gtk_widget_set_tooltip_text(r->values, NULL);
		gtk_widget_set_has_tooltip(r->values, TRUE); /* values_tooltip writes it */
	}
	r->iterations_shown = t->iterations;
	r->finished_shown = t->finished;
}

/* The rows whose backend moved on since they were filled; all with force
 * (the run ended: running rows become stopped). */
static void update_table(ClLearningView *self, gboolean force)
{
	if (self->table_result != self->shown)
		reset_table(self);
	for (int i = 0; self->shown && i < self->trace_count; i++)
		if (force || self->rows[i].iterations_shown != self->traces[i].iterations ||
			self->rows[i].finished_shown != self->traces[i].finished)
			update_row(self, i);
	self->table_updated = g_get_monotonic_time();
}

static void rebuild_figure(ClLearningView *self)
{
	ClLearningRun *run = shown_run(self);
	gboolean stale = run && self->doc && cl_document_is_stale(self->doc, self->shown);
	gtk_widget_set_visible(self->stale_label, stale);
	cl_plot_view_set_faded(self->plot, stale);
	if (!run) {
		cl_plot_view_set_figure(self->plot, NULL);
		return;
	}
	const ClScene *scene = cl_result_scene(self->shown);
	char label[128];
	double ref = reference(self, scene, label, sizeof label);
	self->curves = g_renew(ClLearningCurves, self->curves, (gsize)MAX(self->trace_count, 1));
	ClPlotFigure *figure = cl_learning_figure(scene, run->params, run->param_count, run->tracked, self->traces,
											  self->trace_count, gtk_check_button_get_active(self->log_scale), ref,
											  label, self->curves);
	cl_plot_view_set_figure(self->plot, figure);
}

/* Everything from a whole copy of the run (its start and its end). */
static void refresh(ClLearningView *self)
{
	if (shown_run(self)) {
		cl_learning_traces_free(self->traces, self->trace_count);
		self->traces = cl_learning_run_copy_traces(shown_run(self), &self->trace_count);
	}
	rebuild_figure(self);
	update_table(self, TRUE);
}

/* While it runs: only what changed since the last tick. */
static void refresh_live(ClLearningView *self)
{
	ClLearningRun *run = shown_run(self);
	cl_learning_run_update_traces(run, self->traces, self->trace_count);
	if (cl_learning_figure_grow(cl_result_scene(self->shown), run->params, run->param_count, run->tracked,
								self->traces, self->trace_count, self->curves))
		gtk_widget_queue_draw(GTK_WIDGET(self->plot));
	else
		rebuild_figure(self);
	if (g_get_monotonic_time() - self->table_updated >= TABLE_UPDATE_MS * 1000)
		update_table(self, FALSE);
}

/* σ and the sample count matter only for the smoothed estimators. */
static void estimator_changed(ClLearningView *self)
{
	guint e = gtk_drop_down_get_selected(self->estimator);
	gtk_widget_set_sensitive(self->smoothing_grid, e != CL_GRADIENT_ADJOINT && e != CL_GRADIENT_FD);
}

static void options_changed(ClLearningView *self)
{
	gtk_widget_set_sensitive(GTK_WIDGET(self->reference_value),
							 gtk_drop_down_get_selected(self->reference_kind) == REFERENCE_CUSTOM);
	rebuild_figure(self);
}

/* ------------------------------------------------------------- running */

static void set_status(ClLearningView *self, const char *override)
{
	char *text;
	if (override)
		text = g_strdup(override);
	else if (!self->shown)
		text = g_strdup("Choose what to optimize and press Run.");
	else if (self->job)
		text = g_strdup_printf("Optimizing with %d backends… %.0f %%", self->trace_count,
							   100 * cl_learning_run_progress(shown_run(self)));
	else {
		double seconds = (g_get_monotonic_time() - self->started) / 1e6;
		text = self->complete ? g_strdup_printf("%d backends in %.1f s. The last column of the table is each "
												"result re-run under the exact dynamics.",
												self->trace_count, seconds)
							  : g_strdup("Stopped.");
	}
	gtk_label_set_text(self->status, text);
	g_free(text);
}

static void update_sensitivity(ClLearningView *self)
{
	gtk_widget_action_set_enabled(GTK_WIDGET(self), "learning.cancel", self->job != NULL);
	gtk_widget_set_visible(self->cancel_button, self->job != NULL);
}

static void run_progress(ClJob *job, ClLearningView *self)
{
	if (job != self->job)
		return;
	gtk_progress_bar_set_fraction(self->progress, cl_job_get_progress(job));
	refresh_live(self);
	set_status(self, NULL);
}

static void run_done(GObject *source, GAsyncResult *result, gpointer data)
{
	ClLearningView *self = data;
	ClJob *job = CL_JOB(source);
	gboolean ok = cl_job_finish(job, result, NULL);
	if (job == self->job) {
		g_clear_object(&self->job);
		self->complete = ok;
		if (ok) {
			gtk_progress_bar_set_fraction(self->progress, 1);
			if (self->doc)
				cl_document_set_result(self->doc, self->shown);
		}
		refresh(self);
		update_sensitivity(self);
		set_status(self, NULL);
	}
	g_object_unref(self);
}

static gboolean apply_options(ClLearningView *self, GVariant *options, GError **error)
{
	if (!options)
		return TRUE;
	gint32 n;
	double d;
	const char *s;
	gboolean b;
	if (g_variant_lookup(options, "iterations", "i", &n))
		gtk_spin_button_set_value(self->iterations, n);
	if (g_variant_lookup(options, "learning-rate", "d", &d))
		gtk_spin_button_set_value(self->learning_rate, d);
	if (g_variant_lookup(options, "optimizer", "&s", &s)) {
		if (!g_str_equal(s, "gd") && !g_str_equal(s, "adam")) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "optimizer %s: expected gd or adam", s);
			return FALSE;
		}
		gtk_drop_down_set_selected(self->optimizer, g_str_equal(s, "adam"));
	}
	if (g_variant_lookup(options, "log", "b", &b))
		gtk_check_button_set_active(self->log_scale, b);
	if (g_variant_lookup(options, "gradient", "&s", &s)) {
		int e = cl_gradient_estimator_find(s);
		if (e < 0) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "gradient %s: expected adjoint, zobg, fobg, aobg or fd",
						s);
			return FALSE;
		}
		gtk_drop_down_set_selected(self->estimator, (guint)e);
	}
	if (g_variant_lookup(options, "sigma", "d", &d))
		gtk_spin_button_set_value(self->sigma, d);
	if (g_variant_lookup(options, "samples", "i", &n))
		gtk_spin_button_set_value(self->samples, n);
	return TRUE;
}

gboolean cl_learning_view_run(ClLearningView *self, GVariant *options, GError **error)
{
	if (!self->doc || !apply_options(self, options, error))
		return FALSE;
	g_autoptr(GArray) backends = cl_document_enabled_backends(self->doc);
	if (backends->len == 0) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no backend is enabled (see the Backends tab)");
		return FALSE;
	}
	g_autoptr(ClScene) scene = cl_scene_copy(cl_document_get_scene(self->doc));
	scene->optimize = current_def(self);
	g_autoptr(ClJob) job = cl_learning_job_new(scene, cl_document_get_revision(self->doc),
											   (const int *)(const void *)backends->data, (int)backends->len, error);
	if (!job)
		return FALSE;
	cl_job_replace(&self->job, job);
	g_clear_pointer(&self->shown, cl_result_unref);
	self->shown = cl_result_ref(cl_study_job_result(job));
	self->table_result = NULL; /* new rows */
	name_parameters(self);
	self->complete = FALSE;
	self->started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress, 0);
	g_signal_connect(job, "progress", G_CALLBACK(run_progress), self);
	cl_job_run_async(job, run_done, g_object_ref(self));
	refresh(self);
	update_sensitivity(self);
	set_status(self, NULL);
	return TRUE;
}

void cl_learning_view_cancel(ClLearningView *self)
{
	if (self->job)
		cl_job_cancel(self->job);
}

gboolean cl_learning_view_is_busy(ClLearningView *self)
{
	return self->job != NULL;
}

ClPlotView *cl_learning_view_get_plot(ClLearningView *self)
{
	return self->plot;
}

static GString *curves_csv(gpointer data)
{
	ClLearningView *self = data;
	return self->shown ? cl_learning_curves_csv(self->traces, self->trace_count) : NULL;
}

static void run_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	ClLearningView *self = CL_LEARNING_VIEW(widget);
	GError *error = NULL;
	if (!cl_learning_view_run(self, NULL, &error) && error) {
		set_status(self, error->message);
		g_error_free(error);
	}
}

static void cancel_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_learning_view_cancel(CL_LEARNING_VIEW(widget));
}

static void export_binding(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_plot_view_choose_export(CL_LEARNING_VIEW(widget)->plot, "png");
}

/* ---------------------------------------------------------------- scene */

/* What decides the parameter list: the scene's balls and its own problem. */
static char *problem_signature(const ClScene *scene)
{
	GString *sig = g_string_new(scene->name);
	for (int b = 0; b < scene->ball_count; b++)
		g_string_append_printf(sig, "|%s", scene->balls[b].id);
	for (int k = 0; k < scene->optimize.parameter_count; k++)
		g_string_append_printf(sig, "|%s", scene->optimize.parameters[k]);
	return g_string_free(sig, FALSE);
}

/* A different problem brings its own choices; other edits keep the user's.
 * Either way the shown curves are now of an older scene: marked stale. */
static void document_changed(ClDocument *doc, guint what, ClLearningView *self)
{
	if (!(what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_RESULTS)))
		return;
	if (what & CL_DOCUMENT_SCENE) {
		g_autofree char *signature = problem_signature(cl_document_get_scene(doc));
		if (g_strcmp0(signature, self->signature) != 0) {
			g_free(self->signature);
			self->signature = g_steal_pointer(&signature);
			refresh_parameters(self);
		}
	}
	rebuild_figure(self);
	set_status(self, NULL);
}

/* ------------------------------------------------------ ClResultsView */

/* A lesson step runs exactly the scene's own problem (the step sets it):
 * whatever the user chose before, the controls take the step's def. */
static gboolean show_step(ClResultsView *view, const ClLessonStep *step, GError **error)
{
	ClLearningView *self = CL_LEARNING_VIEW(view);
	g_clear_pointer(&self->signature, g_free);
	refresh_parameters(self);
	gtk_check_button_set_active(self->log_scale, step->view.log_scale);
	return cl_learning_view_run(self, NULL, error);
}

static void cl_learning_view_view_init(ClResultsViewInterface *iface)
{
	iface->show_step = show_step;
}

/* ------------------------------------------------------------ lifecycle */

static void cl_learning_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_learning_view_parent_class)->root(widget);
	ClLearningView *self = CL_LEARNING_VIEW(widget);
	self->workbench = cl_workbench_of(widget);
	if (!self->workbench)
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	document_changed(self->doc, CL_DOCUMENT_SCENE, self);
}

/* A closed window stops the run; the view outlives it until the run's
 * callback (which holds it) has run, and must not touch the document then. */
static void cl_learning_view_unroot(GtkWidget *widget)
{
	ClLearningView *self = CL_LEARNING_VIEW(widget);
	cl_learning_view_cancel(self);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	self->workbench = NULL;
	GTK_WIDGET_CLASS(cl_learning_view_parent_class)->unroot(widget);
}

static void cl_learning_view_dispose(GObject *object)
{
	ClLearningView *self = CL_LEARNING_VIEW(object);
	cl_job_replace(&self->job, NULL);
	g_clear_pointer(&self->shown, cl_result_unref);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_LEARNING_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_learning_view_parent_class)->dispose(object);
}

static void cl_learning_view_finalize(GObject *object)
{
	ClLearningView *self = CL_LEARNING_VIEW(object);
	cl_learning_traces_free(self->traces, self->trace_count);
	g_free(self->curves);
	g_free(self->rows);
	g_strfreev(self->param_names);
	g_array_free(self->brief, TRUE);
	g_ptr_array_free(self->parameter_checks, TRUE);
	g_free(self->signature);
	G_OBJECT_CLASS(cl_learning_view_parent_class)->finalize(object);
}

static void cl_learning_view_class_init(ClLearningViewClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_learning_view_dispose;
	object_class->finalize = cl_learning_view_finalize;
	widget_class->root = cl_learning_view_root;
	widget_class->unroot = cl_learning_view_unroot;
	g_type_ensure(CL_TYPE_PLOT_VIEW);
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-learning-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, optimizer);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, reference_kind);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, learning_rate);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, iterations);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, reference_value);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, parameter_box);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, log_scale);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, cancel_button);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, progress);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, status);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, plot);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, table);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, stale_label);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, estimator);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, sigma);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, samples);
	gtk_widget_class_bind_template_child(widget_class, ClLearningView, smoothing_grid);
	gtk_widget_class_install_action(widget_class, "learning.run", NULL, run_action);
	gtk_widget_class_install_action(widget_class, "learning.cancel", NULL, cancel_action);
	gtk_widget_class_install_action(widget_class, "learning.export", NULL, export_binding);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "learning.export",
										NULL);
	gtk_widget_class_set_css_name(widget_class, "learningview");
}

static void cl_learning_view_init(ClLearningView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	self->parameter_checks = g_ptr_array_new();
	self->brief = g_array_new(FALSE, FALSE, sizeof(int));
	cl_plot_view_set_export_name(self->plot, "learning-curves");
	cl_plot_view_set_export_size(self->plot, 620, 300);
	cl_plot_view_set_crosshair(self->plot, FALSE);
	cl_plot_view_set_csv_func(self->plot, curves_csv, self);
	cl_plot_view_set_placeholder(self->plot, "<big>No run yet</big>\n\nChoose the optimizer, learning rate, "
											 "iterations and parameters, then <b>Run</b>.\nEvery enabled backend "
											 "optimizes at once; the curves grow as they learn.");
	g_signal_connect_swapped(self->reference_kind, "notify::selected", G_CALLBACK(options_changed), self);
	g_signal_connect_swapped(self->reference_value, "value-changed", G_CALLBACK(options_changed), self);
	g_signal_connect_swapped(self->log_scale, "toggled", G_CALLBACK(options_changed), self);
	g_signal_connect_swapped(self->estimator, "notify::selected", G_CALLBACK(estimator_changed), self);
	estimator_changed(self);
	update_sensitivity(self);
}
