#include "cl-convergence-view.h"

#include "cl-window.h"
#include "convergence-data.h"
#include "figures.h"
#include "lesson-figures.h"

/* How often the progress bar follows the workers. */
#define PROGRESS_UPDATE_MS 100

/* One run: what it computes, its progress (written by the workers) and its
 * result. The GTask owns it, so a cancelled run can finish on its own. */
typedef struct {
	ClScene *scene;
	char parameter[CL_NAME_MAX];
	GArray *steps, *backends;
	_Atomic int cancel;
	_Atomic int done, total;
	ClConvergenceRun *run;
} Job;

struct _ClConvergenceView {
	GtkWidget parent_instance;
	GtkWidget *box;
	GtkDropDown *parameter;
	GtkEntry *steps_entry;
	GtkWidget *compute_button, *cancel_button;
	GtkProgressBar *progress;
	GtkLabel *status;
	ClPlotView *plot;

	/* borrowed */
	ClWindow *window;

	/* owned */
	GtkStringList *names;
	GTask *task; /* the running run */
	ClConvergenceRun *run; /* the shown one */
	GArray *highlight;
	gboolean stale;
	gint64 started;
	double seconds;
	guint progress_source;
};

G_DEFINE_FINAL_TYPE(ClConvergenceView, cl_convergence_view, GTK_TYPE_WIDGET)

static void job_free(gpointer data)
{
	Job *job = data;
	cl_scene_free(job->scene);
	g_array_unref(job->steps);
	g_array_unref(job->backends);
	if (job->run)
		cl_convergence_run_free(job->run);
	g_free(job);
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

/* Every ball's initial state and first control: the derivatives the paper's
 * figures follow as dt shrinks. The choice survives by name. */
static void refresh_parameters(ClConvergenceView *self)
{
	const ClScene *scene = cl_window_get_scene(self->window);
	char *current = g_strdup(selected_parameter(self));
	static const char *const kinds[] = {"position.x", "position.y", "velocity.x", "velocity.y", "control[0].x",
										"control[0].y"};
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (int b = 0; b < scene->ball_count; b++)
		for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++)
			g_ptr_array_add(names, g_strdup_printf("%s.%s", scene->balls[b].id, kinds[k]));
	g_ptr_array_add(names, NULL);
	gtk_string_list_splice(self->names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->names)),
						   (const char *const *)names->pdata);
	if (!select_parameter(self, current) && scene->ball_count > 0) {
		char fallback[CL_NAME_MAX];
		g_snprintf(fallback, sizeof fallback, "%s.position.y", scene->balls[0].id);
		select_parameter(self, fallback);
	}
	g_ptr_array_free(names, TRUE);
	g_free(current);
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

static void rebuild_figure(ClConvergenceView *self)
{
	if (!self->run) {
		cl_plot_view_set_figure(self->plot, NULL);
		return;
	}
	ClPlotFigure *figure = cl_figure_convergence(self->run, self->highlight);
	char *title = g_markup_escape_text(cl_window_get_scene(self->window)->name, -1);
	cl_plot_figure_set_title(figure, title);
	g_free(title);
	cl_plot_view_set_figure(self->plot, figure);
	gtk_widget_set_opacity(GTK_WIDGET(self->plot), self->stale ? 0.45 : 1.0);
}

static GString *convergence_csv(gpointer data)
{
	ClConvergenceView *self = data;
	return self->run ? cl_convergence_csv(self->run) : NULL;
}

static void set_status(ClConvergenceView *self, const char *message)
{
	gboolean running = self->task != NULL;
	gtk_widget_set_visible(self->cancel_button, running);
	gtk_widget_set_visible(GTK_WIDGET(self->progress), running);
	char *text;
	if (message)
		text = g_strdup(message);
	else if (running) {
		Job *job = g_task_get_task_data(self->task);
		text = g_strdup_printf("%d of %d runs", job->done, job->total);
	} else if (self->run)
		text = g_strdup_printf("%u backends × %u step counts in %.2f s%s", self->run->backends->len,
							   self->run->steps->len, self->seconds,
							   self->stale ? " · the scene has changed since: Compute again" : "");
	else
		text = g_strdup("Choose a derivative and the step counts, then press Compute.");
	gtk_label_set_text(self->status, text);
	g_free(text);
}

/* ------------------------------------------------------------ computing */

static void report_progress(int done, int total, int backend_slot, int step_index, void *user)
{
	(void)backend_slot, (void)step_index;
	Job *job = user;
	job->total = total;
	job->done = done;
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)source, (void)cancellable;
	Job *job = data;
	GError *error = NULL;
	job->run = cl_convergence_run_new(job->scene, job->parameter, job->steps, job->backends, report_progress, job,
									  &job->cancel, &error);
	if (job->run)
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

static gboolean progress_tick(gpointer data)
{
	ClConvergenceView *self = data;
	if (self->task) {
		Job *job = g_task_get_task_data(self->task);
		gtk_progress_bar_set_fraction(self->progress, job->total ? (double)job->done / job->total : 0);
		set_status(self, NULL);
	}
	return G_SOURCE_CONTINUE;
}

static void run_done(GObject *source, GAsyncResult *result, gpointer data)
{
	(void)data;
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(source);
	GTask *task = G_TASK(result);
	GError *error = NULL;
	gboolean ok = g_task_propagate_boolean(task, &error);
	if (task != self->task) { /* superseded */
		g_clear_error(&error);
		return;
	}
	g_clear_object(&self->task);
	g_clear_handle_id(&self->progress_source, g_source_remove);
	if (ok) {
		Job *job = g_task_get_task_data(task);
		if (self->run)
			cl_convergence_run_free(self->run);
		self->run = g_steal_pointer(&job->run);
		self->stale = FALSE;
		self->seconds = (g_get_monotonic_time() - self->started) / 1e6;
		rebuild_figure(self);
	}
	set_status(self, error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? error->message
					 : error																 ? "Cancelled."
																							 : NULL);
	g_clear_error(&error);
}

gboolean cl_convergence_view_compute(ClConvergenceView *self, const char *parameter, const GArray *steps,
									 GError **error)
{
	if (!self->window)
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
	GArray *parsed = cl_convergence_parse_steps(gtk_editable_get_text(GTK_EDITABLE(self->steps_entry)), error);
	if (!parsed)
		return FALSE;
	/* every enabled backend, and exact (the reference line) always, in registry order */
	const gboolean *enabled = cl_window_get_enabled(self->window);
	int exact = cl_backend_reference();
	GArray *backends = g_array_new(FALSE, FALSE, sizeof(int));
	for (int b = 0; b < cl_backend_count(); b++)
		if (enabled[b] || b == exact)
			g_array_append_val(backends, b);
	cl_convergence_view_cancel(self);
	Job *job = g_new0(Job, 1);
	job->scene = cl_scene_copy(cl_window_get_scene(self->window));
	g_strlcpy(job->parameter, name, sizeof job->parameter);
	job->steps = parsed;
	job->backends = backends;
	job->total = (int)(parsed->len * backends->len);
	self->task = g_task_new(self, NULL, run_done, NULL);
	g_task_set_task_data(self->task, job, job_free);
	self->started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress, 0);
	self->progress_source = g_timeout_add(PROGRESS_UPDATE_MS, progress_tick, self);
	g_task_run_in_thread(self->task, run_in_thread);
	set_status(self, NULL);
	return TRUE;
}

void cl_convergence_view_cancel(ClConvergenceView *self)
{
	if (!self->task)
		return;
	Job *job = g_task_get_task_data(self->task);
	job->cancel = 1;
	/* its result is dropped when it lands: run_done sees a superseded task */
	g_clear_object(&self->task);
	g_clear_handle_id(&self->progress_source, g_source_remove);
	set_status(self, "Cancelled.");
}

gboolean cl_convergence_view_is_busy(ClConvergenceView *self)
{
	return self->task != NULL;
}

ClPlotView *cl_convergence_view_get_plot(ClConvergenceView *self)
{
	return self->plot;
}

void cl_convergence_view_set_highlight(ClConvergenceView *self, const GArray *backends)
{
	g_clear_pointer(&self->highlight, g_array_unref);
	if (backends && backends->len) {
		self->highlight = g_array_sized_new(FALSE, FALSE, sizeof(int), backends->len);
		g_array_append_vals(self->highlight, backends->data, backends->len);
	}
	rebuild_figure(self);
}

static void compute_clicked(GtkButton *button, ClConvergenceView *self)
{
	(void)button;
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

/* The shown figure belongs to the scene it was computed for. */
static void scene_changed(ClWindow *window, ClConvergenceView *self)
{
	(void)window;
	refresh_parameters(self);
	if (self->run && !self->stale) {
		self->stale = TRUE;
		gtk_widget_set_opacity(GTK_WIDGET(self->plot), 0.45);
		set_status(self, NULL);
	}
}

void cl_convergence_view_set_window(ClConvergenceView *self, ClWindow *window)
{
	self->window = window;
	g_signal_connect_object(window, "scene-changed", G_CALLBACK(scene_changed), self, 0);
	refresh_parameters(self);
	set_status(self, NULL);
}

/* ------------------------------------------------------------ lifecycle */

static void cl_convergence_view_dispose(GObject *object)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(object);
	cl_convergence_view_cancel(self);
	g_clear_pointer(&self->box, gtk_widget_unparent);
	g_clear_object(&self->names);
	G_OBJECT_CLASS(cl_convergence_view_parent_class)->dispose(object);
}

static void cl_convergence_view_finalize(GObject *object)
{
	ClConvergenceView *self = CL_CONVERGENCE_VIEW(object);
	if (self->run)
		cl_convergence_run_free(self->run);
	g_clear_pointer(&self->highlight, g_array_unref);
	G_OBJECT_CLASS(cl_convergence_view_parent_class)->finalize(object);
}

static void cl_convergence_view_class_init(ClConvergenceViewClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_convergence_view_dispose;
	G_OBJECT_CLASS(klass)->finalize = cl_convergence_view_finalize;
	gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
	gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "convergenceview");
}

static GtkWidget *heading(const char *text)
{
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_add_css_class(label, "view-heading");
	return label;
}

static void cl_convergence_view_init(ClConvergenceView *self)
{
	self->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
	gtk_widget_set_parent(self->box, GTK_WIDGET(self));

	GtkWidget *controls = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	gtk_widget_set_size_request(controls, 224, -1);
	gtk_widget_add_css_class(controls, "view-controls");
	gtk_box_append(GTK_BOX(controls), heading("Derivative dL/dθ of"));
	self->names = gtk_string_list_new(NULL);
	self->parameter = GTK_DROP_DOWN(gtk_drop_down_new(G_LIST_MODEL(g_object_ref(self->names)), NULL));
	gtk_drop_down_set_enable_search(self->parameter, TRUE);
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->parameter), "The parameter θ whose derivative is followed as dt shrinks");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->parameter), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Convergence parameter", -1);
	gtk_box_append(GTK_BOX(controls), GTK_WIDGET(self->parameter));
	gtk_box_append(GTK_BOX(controls), heading("Step counts N"));
	self->steps_entry = GTK_ENTRY(gtk_entry_new());
	GArray *defaults = cl_convergence_default_steps();
	set_steps_text(self, defaults);
	g_array_unref(defaults);
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->steps_entry),
								"Comma-separated step counts N; dt = T / N (e.g. 60,120,240,480)");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->steps_entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Convergence step counts", -1);
	g_signal_connect_swapped(self->steps_entry, "activate", G_CALLBACK(compute_clicked), self);
	gtk_box_append(GTK_BOX(controls), GTK_WIDGET(self->steps_entry));

	GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	gtk_widget_set_margin_top(buttons, 8);
	self->compute_button = gtk_button_new_with_label("Compute");
	gtk_widget_add_css_class(self->compute_button, "suggested-action");
	gtk_widget_set_tooltip_text(self->compute_button, "Run every enabled backend and exact at each step count");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->compute_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Compute convergence", -1);
	g_signal_connect(self->compute_button, "clicked", G_CALLBACK(compute_clicked), self);
	gtk_box_append(GTK_BOX(buttons), self->compute_button);
	self->cancel_button = gtk_button_new_with_label("Cancel");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->cancel_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Cancel convergence", -1);
	g_signal_connect(self->cancel_button, "clicked", G_CALLBACK(cancel_clicked), self);
	gtk_box_append(GTK_BOX(buttons), self->cancel_button);
	gtk_box_append(GTK_BOX(controls), buttons);
	self->progress = GTK_PROGRESS_BAR(gtk_progress_bar_new());
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->progress), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Convergence progress", -1);
	gtk_box_append(GTK_BOX(controls), GTK_WIDGET(self->progress));
	self->status = GTK_LABEL(gtk_label_new(NULL));
	gtk_label_set_wrap(self->status, TRUE);
	gtk_label_set_xalign(self->status, 0);
	gtk_widget_add_css_class(GTK_WIDGET(self->status), "view-status");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->status), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
								   "Convergence status", -1);
	gtk_box_append(GTK_BOX(controls), GTK_WIDGET(self->status));
	gtk_box_append(GTK_BOX(self->box), controls);

	self->plot = CL_PLOT_VIEW(cl_plot_view_new());
	gtk_widget_set_hexpand(GTK_WIDGET(self->plot), TRUE);
	gtk_widget_set_vexpand(GTK_WIDGET(self->plot), TRUE);
	cl_plot_view_set_export_size(self->plot, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT);
	cl_plot_view_set_export_name(self->plot, "convergence");
	cl_plot_view_set_csv_func(self->plot, convergence_csv, self);
	cl_plot_view_set_placeholder(self->plot, "<big>No convergence plot yet</big>\n\nChoose a derivative and the "
											 "step counts, then <b>Compute</b>.\nEach enabled backend's value is "
											 "drawn against N = T/dt, exact as the reference.");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->plot), GTK_ACCESSIBLE_PROPERTY_LABEL, "Convergence plot", -1);
	gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->plot));
	set_status(self, NULL);
}
