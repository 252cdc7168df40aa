#include "cl-convergence-view.h"

#include "cl-convergence-job.h"
#include "cl-workbench.h"
#include "figures.h"
#include "lesson-figures.h"

#include <stdlib.h>

struct _ClConvergenceView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkDropDown *parameter;
	GtkEntry *steps_entry;
	GtkWidget *compute_button, *cancel_button;
	GtkProgressBar *progress;
	GtkLabel *status;
	GtkWidget *stale_label;
	ClPlotView *plot;

	ClDocument *doc; /* while rooted */
	gulong changed_handler;

	GtkStringList *names;
	ClJob *job;       /* the running run */
	ClResult *shown;  /* the finished run shown */
	GArray *highlight;
	gint64 started;
	double seconds;
};

static void cl_convergence_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClConvergenceView, cl_convergence_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_convergence_view_view_init))

static ClConvergenceRun *shown_run(ClConvergenceView *self)
{
	return self->shown ? cl_result_payload(self->shown) : NULL;
}

/* ------------------------------------------------------------- controls */

static const char *selected_parameter(ClConvergenceView *self)
{
	GtkStringObject *item = gtk_drop_down_get_selected_item(self->parameter);
	return item ? gtk_string_object_get_string(item) : NULL;
}

static gboolean select_parameter(ClConvergenceView *self, const char *name)
{
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->names));
	for (guint i = 0; name && i < n; i++)
		if (g_str_equal(gtk_string_list_get_string(self->names, i), name)) {
			gtk_drop_down_set_selected(self->parameter, i);
			return TRUE;
		}
	return FALSE;
}

/* Every ball's initial state and first control (cl_scene_params): the
 * derivatives the paper's figures follow as dt shrinks. The choice
 * survives by name. */
static void refresh_parameters(ClConvergenceView *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	g_autofree char *current = g_strdup(selected_parameter(self));
	int count;
	ClParam *params = cl_scene_params_new(scene, CL_PARAMS_TABLE, -1, &count);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	char name[CL_NAME_MAX];
	for (int k = 0; k < count; k++) {
		cl_param_name(scene, &params[k], name, sizeof name);
		g_ptr_array_add(names, g_strdup(name));
	}
	free(params);
	g_ptr_array_add(names, NULL);
	gtk_string_list_splice(self->names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->names)),
						   (const char *const *)names->pdata);
	if (!select_parameter(self, current) && scene->ball_count > 0) {
		g_snprintf(name, sizeof name, "%s.position.y", scene->balls[0].id);
		select_parameter(self, name);
	}
}

static void set_steps_text(ClConvergenceView *self, const GArray *steps)
{
	GString *text = g_string_new(NULL);
	for (guint k = 0; k < steps->len; k++)
		g_string_append_printf(text, "%s%d", k ? "," : "", g_array_index(steps, int, k));
	gtk_editable_set_text(GTK_EDITABLE(self->steps_entry), text->str);
	g_string_free(text, TRUE);
}

/* -------------------------------------------------------------- figure */

static gboolean is_stale(ClConvergenceView *self)
{
	return self->shown && self->doc && cl_document_is_stale(self->doc, self->shown);
}

static void rebuild_figure(ClConvergenceView *self)
{
	gtk_widget_set_visible(self->stale_label, is_stale(self));
	if (!self->shown) {
		cl_plot_view_set_figure(self->plot, NULL);
		return;
	}
	ClPlotFigure *figure = cl_figure_convergence(shown_run(self), self->highlight);
	g_autofree char *title = g_markup_escape_text(cl_result_scene(self->shown)->name, -1);
	cl_plot_figure_set_title(figure, title);
	cl_plot_view_set_figure(self->plot, figure);
	cl_plot_view_set_faded(self->plot, is_stale(self));
}

static GString *convergence_csv(gpointer data)
{
	ClConvergenceView *self = data;
	return self->shown ? cl_convergence_csv(shown_run(self)) : NULL;
}

static void set_status(ClConvergenceView *self, const char *message)
{
	gboolean running = self->job != NULL;
	gtk_widget_set_visible(self->cancel_button, running);
	gtk_widget_set_visible(GTK_WIDGET(self->progress), running);
	g_autofree char *text = NULL;
	if (message)
		text = g_strdup(message);
	else if (running)
		text = g_strdup_printf("%.0f %% of the runs", 100 * cl_job_get_progress(self->job));
	else if (self->shown)
		text = g_strdup_printf("%u backends × %u step counts in %.2f s%s", shown_run(self)->backends->len,
							   shown_run(self)->steps->len, self->seconds,
							   is_stale(self) ? " · the scene has changed since: Compute again" : "");
	else
		text = g_strdup("Choose a derivative and the step counts, then press Compute.");
	gtk_label_set_text(self->status, text);
}

/* ------------------------------------------------------------ computing */

static void run_progress(ClJob *job, ClConvergenceView *self)
{
	if (job != self->job)
		return;
	gtk_progress_bar_set_fraction(self->progress, cl_job_get_progress(job));
	set_status(self, NULL);
}

static void run_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClConvergenceView *self = data;
	ClJob *job = CL_JOB(source);
	g_autoptr(GError) error = NULL;
	gboolean ok = cl_job_finish(job, res, &error);
	if (job == self->job) {
		if (ok) {
			g_clear_pointer(&self->shown, cl_result_unref);
			self->shown = cl_result_ref(cl_study_job_result(job));
			self->seconds = (g_get_monotonic_time() - self->started) / 1e6;
			if (self->doc)
				cl_document_set_result(self->doc, self->shown);
		}
		g_clear_object(&self->job);
		rebuild_figure(self);
		set_status(self, error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? error->message
						 : error																 ? "Cancelled."
																								 : NULL);
	}
	g_object_unref(self);
}

gboolean cl_convergence_view_compute(ClConvergenceView *self, const char *parameter, const GArray *steps,
									 GError **error)
{
	if (!self->doc)
		return FALSE;
	refresh_parameters(self);
	if (parameter && !select_parameter(self, parameter)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "the scene has no parameter %s", parameter);
		return FALSE;
	}
	if (steps)
		set_steps_text(self, steps);
	const char *name = selected_parameter(self);
	if (!name) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "choose a parameter");
		return FALSE;
	}
	GArray *parsed = cl_convergence_parse_steps(gtk_editable_get_text(GTK_EDITABLE(self->steps_entry)), "Step counts N",
												error);
	if (!parsed)
		return FALSE;
	/* every enabled backend, and exact (the reference line) always, in registry order */
	int exact = cl_backend_reference();
	g_autoptr(GArray) backends = g_array_new(FALSE, FALSE, sizeof(int));
	for (int b = 0; b < cl_backend_count(); b++)
		if (cl_document_backend_enabled(self->doc, b) || b == exact)
			g_array_append_val(backends, b);
	g_autoptr(ClJob) job = cl_convergence_job_new(cl_document_get_scene(self->doc), cl_document_get_revision(self->doc),
												  name, parsed, backends, error);
	g_array_unref(parsed);
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

void cl_convergence_view_cancel(ClConvergenceView *self)
{
	if (self->job)
		cl_job_cancel(self->job);
}

gboolean cl_convergence_view_is_busy(ClConvergenceView *self)
{
	return self->job != NULL;
}

ClPlotView *cl_convergence_view_get_plot(ClConvergenceView *self)
{
	return self->plot;
}

/* Backends a lesson points at are drawn wider, the others lighter, as on its handout. */
static void set_highlight(ClResultsView *view, const ClLessonStep *step)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(view);
	g_clear_pointer(&self->highlight, g_array_unref);
	for (guint i = 0; step && i < step->highlights->len; i++) {
		int b = g_array_index(step->highlights, ClLessonHighlight, i).backend;
		if (!self->highlight)
			self->highlight = g_array_new(FALSE, FALSE, sizeof(int));
		gboolean seen = FALSE;
		for (guint k = 0; k < self->highlight->len && !seen; k++)
			seen = g_array_index(self->highlight, int, k) == b;
		if (!seen)
			g_array_append_val(self->highlight, b);
	}
	rebuild_figure(self);
}

static gboolean show_step(ClResultsView *view, const ClLessonStep *step, GError **error)
{
	return cl_convergence_view_compute(CL_CONVERGENCE_VIEW(view), step->view.parameter, step->view.steps, error);
}

static void cl_convergence_view_view_init(ClResultsViewInterface *iface)
{
	iface->show_step = show_step;
	iface->highlight = set_highlight;
}

/* The Compute button, and Enter in the step counts */
static void compute_requested(GtkWidget *source, ClConvergenceView *self)
{
	(void)source;
	GError *error = NULL;
	if (!cl_convergence_view_compute(self, NULL, NULL, &error) && error) {
		set_status(self, error->message);
		g_error_free(error);
	}
}

static void cancel_clicked(GtkButton *button, ClConvergenceView *self)
{
	(void)button;
	cl_convergence_view_cancel(self);
}

/* The shown figure belongs to the scene it was computed for: stale after a change. */
static void document_changed(ClDocument *doc, guint what, ClConvergenceView *self)
{
	(void)doc;
	if (what & CL_DOCUMENT_SCENE) {
		refresh_parameters(self);
		rebuild_figure(self);
		set_status(self, NULL);
	}
}

/* ------------------------------------------------------------ lifecycle */

static void cl_convergence_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_convergence_view_parent_class)->root(widget);
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(widget);
	ClWorkbench *workbench = cl_workbench_of(widget);
	if (!workbench)
		return;
	self->doc = cl_workbench_get_document(workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	refresh_parameters(self);
	set_status(self, NULL);
}

static void cl_convergence_view_unroot(GtkWidget *widget)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(widget);
	cl_convergence_view_cancel(self);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	GTK_WIDGET_CLASS(cl_convergence_view_parent_class)->unroot(widget);
}

static void cl_convergence_view_dispose(GObject *object)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(object);
	cl_job_replace(&self->job, NULL);
	g_clear_pointer(&self->shown, cl_result_unref);
	g_clear_object(&self->names);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_CONVERGENCE_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_convergence_view_parent_class)->dispose(object);
}

static void cl_convergence_view_finalize(GObject *object)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(object);
	g_clear_pointer(&self->highlight, g_array_unref);
	G_OBJECT_CLASS(cl_convergence_view_parent_class)->finalize(object);
}

static void cl_convergence_view_class_init(ClConvergenceViewClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_convergence_view_dispose;
	object_class->finalize = cl_convergence_view_finalize;
	widget_class->root = cl_convergence_view_root;
	widget_class->unroot = cl_convergence_view_unroot;
	g_type_ensure(CL_TYPE_PLOT_VIEW);
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-convergence-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, parameter);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, steps_entry);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, compute_button);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, cancel_button);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, progress);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, status);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, stale_label);
	gtk_widget_class_bind_template_child(widget_class, ClConvergenceView, plot);
	gtk_widget_class_bind_template_callback(widget_class, compute_requested);
	gtk_widget_class_bind_template_callback(widget_class, cancel_clicked);
	gtk_widget_class_set_css_name(widget_class, "convergenceview");
}

static void cl_convergence_view_init(ClConvergenceView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	self->names = gtk_string_list_new(NULL);
	gtk_drop_down_set_model(self->parameter, G_LIST_MODEL(self->names));
	GArray *defaults = cl_convergence_default_steps();
	set_steps_text(self, defaults);
	g_array_unref(defaults);
	cl_plot_view_set_export_size(self->plot, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT);
	cl_plot_view_set_export_name(self->plot, "convergence");
	cl_plot_view_set_csv_func(self->plot, convergence_csv, self);
	cl_plot_view_set_placeholder(self->plot, "<big>No convergence plot yet</big>\n\nChoose a derivative and the "
											 "step counts, then <b>Compute</b>.\nEach enabled backend's value is "
											 "drawn against N = T/dt, exact as the reference.");
	set_status(self, NULL);
}
