#include "cl-heatmap-view.h"

#include "cl-heatmap-job.h"
#include "cl-job-watch.h"
#include "cl-window.h"
#include "figures.h"
#include "numbers.h"

#include <math.h>

/* How often finished tiles are drawn while the sweep runs. */
#define TILE_UPDATE_MS 150

struct _ClHeatmapView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkDropDown *x_param, *y_param, *quantity;
	GtkSpinButton *x_min, *x_max, *x_count, *y_min, *y_max, *y_count;
	GtkWidget *compute_button, *cancel_button;
	GtkProgressBar *progress;
	GtkLabel *status, *readout;
	ClPlotView *plot;

	/* borrowed */
	ClWindow *window;

	/* owned */
	GtkStringList *param_names;
	ClHeatmapJob *job;     /* the running sweep, or the one shown */
	ClJobWatch watch;      /* its cancellable and progress timer while it runs */
	gboolean running;
	gboolean complete;     /* every cell of job is computed */
	gboolean stale;        /* the scene changed beyond the swept parameters */
	ClSweepCell *cells;    /* what the figure shows, a copy of job's cells */
	int shown_done;        /* job's done count when cells were copied */
	int exact_slot;
	gint64 started;
	double seconds;
	GCancellable *build_cancellable;
	gboolean building, build_again;
	gboolean updating_controls;
};

G_DEFINE_FINAL_TYPE(ClHeatmapView, cl_heatmap_view, GTK_TYPE_WIDGET)

static void start_build(ClHeatmapView *self);
static void update_sensitivity(ClHeatmapView *self);

/* ---------------------------------------------------------- parameters */

/* The scene's scalar parameters a sweep can vary. */
static GPtrArray *scene_parameters(const ClScene *scene)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	static const char *const ball_fields[] = {"position.x", "position.y", "velocity.x", "velocity.y", "radius", "mass"};
	for (int b = 0; b < scene->ball_count; b++)
		for (gsize f = 0; f < G_N_ELEMENTS(ball_fields); f++)
			g_ptr_array_add(names, g_strdup_printf("%s.%s", scene->balls[b].id, ball_fields[f]));
	static const char *const globals[] = {"elasticity", "friction", "gravity.x", "gravity.y", "duration"};
	for (gsize g = 0; g < G_N_ELEMENTS(globals); g++)
		g_ptr_array_add(names, g_strdup(globals[g]));
	return names;
}

static const char *selected_name(ClHeatmapView *self, GtkDropDown *dropdown)
{
	guint i = gtk_drop_down_get_selected(dropdown);
	return i < g_list_model_get_n_items(G_LIST_MODEL(self->param_names))
			   ? gtk_string_list_get_string(self->param_names, i)
			   : NULL;
}

static gboolean select_name(ClHeatmapView *self, GtkDropDown *dropdown, const char *name)
{
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->param_names));
	for (guint i = 0; name && i < n; i++)
		if (g_str_equal(gtk_string_list_get_string(self->param_names, i), name)) {
			gtk_drop_down_set_selected(dropdown, i);
			return TRUE;
		}
	return FALSE;
}

/* A range that shows the parameter's neighbourhood in a physical interval. */
static void default_range(const ClScene *scene, const char *name, double *lo, double *hi)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	double v = cl_param_parse(scene, name, &p, message, sizeof message) ? cl_param_get(scene, &p) : 0;
	if (p.target == CL_PARAM_ELASTICITY || p.target == CL_PARAM_FRICTION) {
		*lo = 0;
		*hi = 1;
	} else if (p.target == CL_PARAM_RADIUS || p.target == CL_PARAM_MASS || p.target == CL_PARAM_DURATION) {
		*lo = 0.5 * v;
		*hi = 1.5 * v;
	} else {
		double half = fmax(1.0, 0.5 * fabs(v));
		*lo = v - half;
		*hi = v + half;
	}
}

static void reset_range(ClHeatmapView *self, gboolean x_axis)
{
	ClScene *scene = self->window ? cl_window_get_scene(self->window) : NULL;
	const char *name = selected_name(self, x_axis ? self->x_param : self->y_param);
	if (!scene || !name)
		return;
	double lo, hi;
	default_range(scene, name, &lo, &hi);
	gtk_spin_button_set_value(x_axis ? self->x_min : self->y_min, lo);
	gtk_spin_button_set_value(x_axis ? self->x_max : self->y_max, hi);
}

static void param_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClHeatmapView *self)
{
	(void)pspec;
	if (!self->updating_controls)
		reset_range(self, dropdown == self->x_param);
}

/* The parameter list follows the scene's balls; selections survive by name. */
static void refresh_parameters(ClHeatmapView *self)
{
	ClScene *scene = cl_window_get_scene(self->window);
	GPtrArray *names = scene_parameters(scene);
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->param_names));
	gboolean same = n == names->len;
	for (guint i = 0; same && i < n; i++)
		same = g_str_equal(gtk_string_list_get_string(self->param_names, i), g_ptr_array_index(names, i));
	if (same) {
		g_ptr_array_free(names, TRUE);
		return;
	}
	char *x = g_strdup(selected_name(self, self->x_param)), *y = g_strdup(selected_name(self, self->y_param));
	self->updating_controls = TRUE;
	g_ptr_array_add(names, NULL);
	gtk_string_list_splice(self->param_names, 0, n, (const char *const *)names->pdata);
	/* default: the first two scalars the scene optimizes, else ball 0's velocity */
	gboolean kept = select_name(self, self->x_param, x) && select_name(self, self->y_param, y);
	if (!kept) {
		int count = 0;
		char message[CL_MESSAGE_MAX];
		ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, message, sizeof message);
		char first[CL_NAME_MAX] = "", second[CL_NAME_MAX] = "";
		for (int k = 0, found = 0; params && k < count && found < 2; k++)
			if (params[k].target != CL_PARAM_CONTROL)
				cl_param_name(scene, &params[k], found++ ? second : first, CL_NAME_MAX);
		free(params);
		if (scene->ball_count > 0 && (!*first || !*second)) {
			g_snprintf(first, sizeof first, "%s.velocity.x", scene->balls[0].id);
			g_snprintf(second, sizeof second, "%s.velocity.y", scene->balls[0].id);
		}
		select_name(self, self->x_param, first);
		select_name(self, self->y_param, second);
	}
	self->updating_controls = FALSE;
	if (!kept) {
		reset_range(self, TRUE);
		reset_range(self, FALSE);
	}
	g_free(x);
	g_free(y);
	g_ptr_array_free(names, TRUE);
}

/* ------------------------------------------------------------- figure */

static ClSweepQuantity current_quantity(ClHeatmapView *self)
{
	guint q = gtk_drop_down_get_selected(self->quantity);
	return q < CL_SWEEP_QUANTITY_COUNT ? (ClSweepQuantity)q : CL_SWEEP_LOSS;
}

typedef struct {
	ClHeatmapJob *job;
	ClScene *scene; /* for the marker of the current point */
	ClSweepQuantity quantity;
	int exact_slot;
	int done;
	ClSweepCell *cells;
	ClPlotFigure *figure;
} Build;

static void build_free(gpointer data)
{
	Build *b = data;
	g_object_unref(b->job);
	cl_scene_free(b->scene);
	g_free(b->cells);
	cl_plot_figure_free(b->figure);
	g_free(b);
}

static void build_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)source, (void)cancellable;
	Build *b = data;
	b->done = cl_heatmap_job_done(b->job);
	b->cells = cl_heatmap_job_copy_cells(b->job);
	b->figure = cl_figure_heatmap(b->scene, cl_heatmap_job_def(b->job), b->cells, b->quantity, b->exact_slot);
	g_task_return_boolean(task, TRUE);
}

static void build_done(GObject *source, GAsyncResult *result, gpointer data)
{
	(void)data;
	ClHeatmapView *self = CL_HEATMAP_VIEW(source);
	GTask *task = G_TASK(result);
	gboolean cancelled = !g_task_propagate_boolean(task, NULL);
	Build *b = g_task_get_task_data(task);
	if (!cancelled && b->job == self->job) {
		double w, h;
		cl_figure_heatmap_size(b->figure, &w, &h);
		cl_plot_view_set_export_size(self->plot, w, h);
		cl_plot_view_set_figure(self->plot, g_steal_pointer(&b->figure));
		g_free(self->cells);
		self->cells = g_steal_pointer(&b->cells);
		self->shown_done = b->done;
	}
	if (cancelled)
		return;
	self->building = FALSE;
	g_clear_object(&self->build_cancellable);
	if (self->build_again) {
		self->build_again = FALSE;
		start_build(self);
	}
	update_sensitivity(self);
}

/* Rebuilds the figure off the main thread; one build at a time. */
static void start_build(ClHeatmapView *self)
{
	if (!self->job || !self->window)
		return;
	if (self->building) {
		self->build_again = TRUE;
		return;
	}
	Build *b = g_new0(Build, 1);
	b->job = g_object_ref(self->job);
	/* the marker follows the scene; a stale sweep keeps the scene it was made for */
	b->scene = cl_scene_copy(self->stale ? cl_heatmap_job_scene(self->job) : cl_window_get_scene(self->window));
	b->quantity = current_quantity(self);
	b->exact_slot = self->exact_slot;
	self->building = TRUE;
	self->build_cancellable = g_cancellable_new();
	GTask *task = g_task_new(self, self->build_cancellable, build_done, NULL);
	g_task_set_task_data(task, b, build_free);
	g_task_run_in_thread(task, build_in_thread);
	g_object_unref(task);
}

static void quantity_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClHeatmapView *self)
{
	(void)dropdown, (void)pspec;
	start_build(self);
}

static GString *heatmap_csv(gpointer data)
{
	ClHeatmapView *self = data;
	if (!self->job || !self->cells)
		return NULL;
	return cl_figure_heatmap_csv(cl_heatmap_job_def(self->job), self->cells, current_quantity(self), self->exact_slot);
}

/* --------------------------------------------------------------- hover */

static int cell_index(const ClSweepAxis *axis, double value)
{
	if (axis->count <= 1)
		return 0;
	double i = (value - axis->min) / (axis->max - axis->min) * (axis->count - 1);
	return CLAMP((int)lround(i), 0, axis->count - 1);
}

static gboolean slot_shown(ClHeatmapView *self, int slot)
{
	ClSweepQuantity q = current_quantity(self);
	return !((q == CL_SWEEP_ANGLE_ERROR || q == CL_SWEEP_SIGN_AGREEMENT) && slot == self->exact_slot);
}

static void format_cell_value(double v, char *out, size_t size)
{
	if (isnan(v))
		g_strlcpy(out, "—", size);
	else {
		char buffer[G_ASCII_DTOSTR_BUF_SIZE];
		g_strlcpy(out, g_ascii_formatd(buffer, sizeof buffer, "%.5g", v), size);
	}
}

static void hover(ClPlotView *plot, int row, int col, double x, double y, ClHeatmapView *self)
{
	(void)plot;
	if (row < 0 || !self->job || !self->cells) {
		cl_plot_view_set_readout(self->plot, NULL);
		return;
	}
	const ClSweepDef *def = cl_heatmap_job_def(self->job);
	ClPlotFigure *figure = cl_plot_view_get_figure(self->plot);
	int panel = row * cl_plot_figure_cols(figure) + col;
	int ix = cell_index(&def->x, x), iy = cell_index(&def->y, y);
	ClSweepQuantity q = current_quantity(self);
	const ClScene *scene = cl_heatmap_job_scene(self->job);
	char xname[CL_NAME_MAX], yname[CL_NAME_MAX];
	cl_param_name(scene, &def->x.param, xname, sizeof xname);
	cl_param_name(scene, &def->y.param, yname, sizeof yname);
	char xv[32], yv[32];
	format_cell_value(cl_sweep_axis_value(&def->x, ix), xv, sizeof xv);
	format_cell_value(cl_sweep_axis_value(&def->y, iy), yv, sizeof yv);
	GString *text = g_string_new(NULL);
	char *head = g_markup_printf_escaped("%s = %s, %s = %s · %s: ", xname, xv, yname, yv, cl_sweep_quantity_name(q));
	g_string_append(text, head);
	g_free(head);
	char *pointer_text = NULL;
	for (int b = 0, shown = 0; b < def->backend_count; b++) {
		if (!slot_shown(self, b))
			continue;
		const ClSweepCell *cell = &self->cells[cl_sweep_index(def, b, ix, iy)];
		const ClSweepCell *exact = self->exact_slot >= 0 ? &self->cells[cl_sweep_index(def, self->exact_slot, ix, iy)] : NULL;
		char value[64];
		format_cell_value(cl_sweep_quantity(q, cell, exact), value, sizeof value);
		const char *id = cl_backend_info(def->backends[b])->id;
		const char *note = cell->status == CL_STATUS_OK || cell->status == CL_STATUS_CANCELLED ? "" : cl_status_name(cell->status);
		/* ids, values and status names are plain ASCII: no markup to escape */
		gboolean here = shown == panel;
		g_string_append_printf(text, "%s%s%s %s%s%s%s%s", shown ? "  ·  " : "", here ? "<b>" : "", id, value,
							   *note ? " (" : "", note, *note ? ")" : "", here ? "</b>" : "");
		if (shown == panel)
			pointer_text = g_markup_printf_escaped("<b>%s</b>\n%s = %s", id, cl_sweep_quantity_name(q), value);
		shown++;
	}
	gtk_label_set_markup(self->readout, text->str);
	if (pointer_text) {
		char *full = g_markup_printf_escaped("%s = %s\n%s = %s", xname, xv, yname, yv);
		char *joined = g_strdup_printf("%s\n%s", pointer_text, full);
		cl_plot_view_set_readout(self->plot, joined);
		g_free(joined);
		g_free(full);
	}
	g_free(pointer_text);
	g_string_free(text, TRUE);
}

/* A click moves the scene to the cell: an ordinary, undoable edit. */
static void pick(ClPlotView *plot, int row, int col, double x, double y, ClHeatmapView *self)
{
	(void)plot, (void)row, (void)col;
	if (!self->job || !self->window)
		return;
	const ClSweepDef *def = cl_heatmap_job_def(self->job);
	ClScene *scene = cl_window_get_scene(self->window);
	/* the sweep's parameters name balls of the scene it was made for */
	if (self->stale || !cl_param_fits(scene, &def->x.param) || !cl_param_fits(scene, &def->y.param)) {
		gtk_label_set_text(self->status, "This heatmap was computed for another scene: compute it again to pick a "
										 "cell.");
		return;
	}
	ClScene *before = cl_scene_copy(scene);
	double vx = cl_sweep_axis_value(&def->x, cell_index(&def->x, x));
	double vy = cl_sweep_axis_value(&def->y, cell_index(&def->y, y));
	cl_param_set(scene, &def->x.param, vx);
	cl_param_set(scene, &def->y.param, vy);
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(scene, message, sizeof message)) {
		cl_param_set(scene, &def->x.param, cl_param_get(before, &def->x.param));
		cl_param_set(scene, &def->y.param, cl_param_get(before, &def->y.param));
		gtk_label_set_text(self->status, message);
	} else {
		char xname[CL_NAME_MAX], yname[CL_NAME_MAX];
		cl_param_name(scene, &def->x.param, xname, sizeof xname);
		cl_param_name(scene, &def->y.param, yname, sizeof yname);
		char *label = g_strdup_printf("Set %s, %s from the heatmap", xname, yname);
		cl_window_scene_edited(self->window, before, label, NULL);
		g_free(label);
	}
	cl_scene_free(before);
}

/* ------------------------------------------------------------ computing */

static void set_status(ClHeatmapView *self)
{
	char *text = NULL;
	if (!self->job)
		text = g_strdup("Choose two parameters and press Compute.");
	else {
		const ClSweepDef *def = cl_heatmap_job_def(self->job);
		int done = cl_heatmap_job_done(self->job), total = cl_heatmap_job_total(self->job);
		if (self->running)
			text = g_strdup_printf("%d of %d cells · %d × %d × %d backends", done, total, def->x.count, def->y.count,
								   def->backend_count);
		else if (self->complete)
			text = g_strdup_printf("%d × %d cells × %d backends in %.2f s%s", def->x.count, def->y.count,
								   def->backend_count, self->seconds,
								   self->stale ? " · the scene has changed since: Compute again" : "");
		else
			text = g_strdup_printf("Stopped after %d of %d cells", done, total);
	}
	gtk_label_set_text(self->status, text);
	g_free(text);
	gtk_widget_set_opacity(GTK_WIDGET(self->plot), self->stale ? 0.45 : 1.0);
}

static void update_sensitivity(ClHeatmapView *self)
{
	gtk_widget_action_set_enabled(GTK_WIDGET(self), "heatmap.cancel", self->running);
	gtk_widget_set_visible(self->cancel_button, self->running);
	set_status(self);
}

static gboolean tick(gpointer data)
{
	ClHeatmapView *self = data;
	if (!self->job)
		return G_SOURCE_CONTINUE;
	int done = cl_heatmap_job_done(self->job), total = cl_heatmap_job_total(self->job);
	gtk_progress_bar_set_fraction(self->progress, total ? (double)done / total : 0);
	if (done != self->shown_done && !self->building)
		start_build(self);
	set_status(self);
	return G_SOURCE_CONTINUE;
}

static void sweep_done(GObject *source, GAsyncResult *result, gpointer data)
{
	ClHeatmapView *self = data;
	ClHeatmapJob *job = CL_HEATMAP_JOB(source);
	GError *error = NULL;
	gboolean ok = cl_heatmap_job_finish(job, result, &error);
	if (job == self->job) {
		self->running = FALSE;
		self->complete = ok;
		self->seconds = (g_get_monotonic_time() - self->started) / 1e6;
		cl_job_watch_finish(&self->watch);
		gtk_progress_bar_set_fraction(self->progress, ok ? 1.0 : gtk_progress_bar_get_fraction(self->progress));
		start_build(self);
		update_sensitivity(self);
		if (!ok && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			gtk_label_set_text(self->status, error->message);
	}
	g_clear_error(&error);
	g_object_unref(self);
}

static gboolean parse_param(ClHeatmapView *self, const ClScene *scene, GtkDropDown *dropdown, ClParam *param,
							GError **error)
{
	const char *name = selected_name(self, dropdown);
	char message[CL_MESSAGE_MAX];
	if (!name || !cl_param_parse(scene, name, param, message, sizeof message)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", name ? message : "choose a parameter");
		return FALSE;
	}
	return TRUE;
}

static gboolean apply_options(ClHeatmapView *self, GVariant *options, GError **error)
{
	if (!options)
		return TRUE;
	const char *name;
	if (g_variant_lookup(options, "x", "&s", &name) && !select_name(self, self->x_param, name)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "x: the scene has no parameter %s", name);
		return FALSE;
	}
	if (g_variant_lookup(options, "y", "&s", &name) && !select_name(self, self->y_param, name)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "y: the scene has no parameter %s", name);
		return FALSE;
	}
	static const char *const doubles[] = {"x-min", "x-max", "y-min", "y-max"};
	GtkSpinButton *spins[] = {self->x_min, self->x_max, self->y_min, self->y_max};
	for (int i = 0; i < 4; i++) {
		double v;
		if (g_variant_lookup(options, doubles[i], "d", &v))
			gtk_spin_button_set_value(spins[i], v);
	}
	gint32 n;
	if (g_variant_lookup(options, "resolution", "i", &n)) {
		gtk_spin_button_set_value(self->x_count, n);
		gtk_spin_button_set_value(self->y_count, n);
	}
	if (g_variant_lookup(options, "x-points", "i", &n))
		gtk_spin_button_set_value(self->x_count, n);
	if (g_variant_lookup(options, "y-points", "i", &n))
		gtk_spin_button_set_value(self->y_count, n);
	if (g_variant_lookup(options, "quantity", "&s", &name)) {
		int q = cl_sweep_quantity_find(name);
		if (q < 0) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
						"quantity %s: expected loss, grad-x, grad-y, angle-error or sign-agreement", name);
			return FALSE;
		}
		gtk_drop_down_set_selected(self->quantity, (guint)q);
	}
	return TRUE;
}

gboolean cl_heatmap_view_compute(ClHeatmapView *self, GVariant *options, GError **error)
{
	if (!self->window)
		return FALSE;
	refresh_parameters(self);
	if (!apply_options(self, options, error))
		return FALSE;
	ClScene *scene = cl_window_get_scene(self->window);
	ClSweepAxis x = {.min = gtk_spin_button_get_value(self->x_min), .max = gtk_spin_button_get_value(self->x_max),
					 .count = gtk_spin_button_get_value_as_int(self->x_count)};
	ClSweepAxis y = {.min = gtk_spin_button_get_value(self->y_min), .max = gtk_spin_button_get_value(self->y_max),
					 .count = gtk_spin_button_get_value_as_int(self->y_count)};
	if (!parse_param(self, scene, self->x_param, &x.param, error) ||
		!parse_param(self, scene, self->y_param, &y.param, error))
		return FALSE;
	/* every enabled backend, and exact (the reference) always, in registry order */
	const gboolean *enabled = cl_window_get_enabled(self->window);
	int exact = cl_backend_reference();
	GArray *backends = g_array_new(FALSE, FALSE, sizeof(int));
	int exact_slot = -1;
	for (int b = 0; b < cl_backend_count(); b++)
		if (enabled[b] || b == exact) {
			if (b == exact)
				exact_slot = (int)backends->len;
			g_array_append_val(backends, b);
		}
	cl_heatmap_view_cancel(self);
	ClHeatmapJob *job = cl_heatmap_job_new(scene, &x, &y, (const int *)(void *)backends->data, (int)backends->len,
										   (int)g_get_num_processors());
	g_array_free(backends, TRUE);
	g_clear_object(&self->job);
	self->job = job;
	self->exact_slot = exact_slot;
	self->running = TRUE;
	self->complete = FALSE;
	self->stale = FALSE;
	self->shown_done = -1;
	self->started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress, 0);
	/* a sweep still finishing its cells keeps no timer: its result is ignored */
	GCancellable *cancellable = cl_job_watch_start(&self->watch, TILE_UPDATE_MS, tick, self);
	cl_heatmap_job_run_async(job, cancellable, sweep_done, g_object_ref(self));
	start_build(self);
	update_sensitivity(self);
	return TRUE;
}

void cl_heatmap_view_cancel(ClHeatmapView *self)
{
	cl_job_watch_cancel(&self->watch);
}

gboolean cl_heatmap_view_is_busy(ClHeatmapView *self)
{
	return self->running || self->building;
}

gboolean cl_heatmap_view_is_stale(ClHeatmapView *self)
{
	return self->stale;
}

gboolean cl_heatmap_view_has_result(ClHeatmapView *self)
{
	return self->complete && self->cells != NULL;
}

ClPlotView *cl_heatmap_view_get_plot(ClHeatmapView *self)
{
	return self->plot;
}

GString *cl_heatmap_view_grid_csv(ClHeatmapView *self)
{
	return heatmap_csv(self);
}

static void compute_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	ClHeatmapView *self = CL_HEATMAP_VIEW(widget);
	GError *error = NULL;
	if (!cl_heatmap_view_compute(self, NULL, &error) && error) {
		gtk_label_set_text(self->status, error->message);
		g_error_free(error);
	}
}

static void cancel_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_heatmap_view_cancel(CL_HEATMAP_VIEW(widget));
}

/* ---------------------------------------------------------------- scene */

/* The shown sweep stays valid when only the swept parameters changed
 * (a click on a cell); then just the marker moves. */
static gboolean still_valid(ClHeatmapView *self, const ClScene *scene)
{
	const ClSweepDef *def = cl_heatmap_job_def(self->job);
	const ClScene *swept = cl_heatmap_job_scene(self->job);
	if (scene->ball_count != swept->ball_count || scene->steps != swept->steps ||
		!cl_param_fits(scene, &def->x.param) || !cl_param_fits(scene, &def->y.param))
		return FALSE;
	ClScene *copy = cl_scene_copy(scene);
	cl_param_set(copy, &def->x.param, cl_param_get(swept, &def->x.param));
	cl_param_set(copy, &def->y.param, cl_param_get(swept, &def->y.param));
	gboolean same = cl_scene_equal(copy, swept);
	cl_scene_free(copy);
	return same;
}

static void scene_changed(ClWindow *window, ClHeatmapView *self)
{
	(void)window;
	refresh_parameters(self);
	if (!self->job)
		return;
	if (!still_valid(self, cl_window_get_scene(self->window))) {
		cl_heatmap_view_cancel(self);
		self->stale = TRUE;
	}
	start_build(self);
	set_status(self);
}

/* A closed window stops the sweep; the view outlives it until the sweep's
 * callback (which holds it) has run, and must not touch the window then. */
static void window_destroyed(GtkWidget *window, ClHeatmapView *self)
{
	(void)window;
	cl_heatmap_view_cancel(self);
	if (self->build_cancellable)
		g_cancellable_cancel(self->build_cancellable);
	self->window = NULL;
}

void cl_heatmap_view_set_window(ClHeatmapView *self, ClWindow *window)
{
	self->window = window;
	g_signal_connect_object(window, "scene-changed", G_CALLBACK(scene_changed), self, 0);
	g_signal_connect_object(window, "destroy", G_CALLBACK(window_destroyed), self, 0);
	refresh_parameters(self);
	set_status(self);
}

/* ------------------------------------------------------------ lifecycle */

static void cl_heatmap_view_dispose(GObject *object)
{
	ClHeatmapView *self = CL_HEATMAP_VIEW(object);
	cl_heatmap_view_cancel(self);
	if (self->build_cancellable)
		g_cancellable_cancel(self->build_cancellable);
	g_clear_object(&self->build_cancellable);
	cl_job_watch_clear(&self->watch);
	g_clear_object(&self->job);
	g_clear_object(&self->param_names);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_HEATMAP_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_heatmap_view_parent_class)->dispose(object);
}

static void cl_heatmap_view_finalize(GObject *object)
{
	g_free(CL_HEATMAP_VIEW(object)->cells);
	G_OBJECT_CLASS(cl_heatmap_view_parent_class)->finalize(object);
}

static void export_binding(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_plot_view_choose_export(CL_HEATMAP_VIEW(widget)->plot, "png");
}

static void cl_heatmap_view_class_init(ClHeatmapViewClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_heatmap_view_dispose;
	object_class->finalize = cl_heatmap_view_finalize;
	g_type_ensure(CL_TYPE_PLOT_VIEW);
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-heatmap-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, x_param);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, y_param);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, quantity);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, x_min);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, x_max);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, x_count);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, y_min);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, y_max);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, y_count);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, compute_button);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, cancel_button);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, progress);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, status);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, readout);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, plot);
	gtk_widget_class_install_action(widget_class, "heatmap.compute", NULL, compute_action);
	gtk_widget_class_install_action(widget_class, "heatmap.cancel", NULL, cancel_action);
	gtk_widget_class_install_action(widget_class, "heatmap.export", NULL, export_binding);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "heatmap.export",
										NULL);
	gtk_widget_class_set_css_name(widget_class, "heatmapview");
}

static void cl_heatmap_view_init(ClHeatmapView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	self->param_names = gtk_string_list_new(NULL);
	gtk_drop_down_set_model(self->x_param, G_LIST_MODEL(self->param_names));
	gtk_drop_down_set_model(self->y_param, G_LIST_MODEL(self->param_names));
	gtk_drop_down_set_enable_search(self->x_param, TRUE);
	gtk_drop_down_set_enable_search(self->y_param, TRUE);
	self->exact_slot = -1;
	cl_plot_view_set_export_name(self->plot, "heatmap");
	cl_plot_view_set_csv_func(self->plot, heatmap_csv, self);
	cl_plot_view_set_placeholder(self->plot, "<big>No heatmap yet</big>\n\nPick two parameters, their ranges and "
											 "the resolution, then <b>Compute</b>.\nEvery enabled backend gets a "
											 "panel next to exact, on one colour scale.");
	g_signal_connect(self->x_param, "notify::selected", G_CALLBACK(param_changed), self);
	g_signal_connect(self->y_param, "notify::selected", G_CALLBACK(param_changed), self);
	g_signal_connect(self->quantity, "notify::selected", G_CALLBACK(quantity_changed), self);
	g_signal_connect(self->plot, "hover", G_CALLBACK(hover), self);
	g_signal_connect(self->plot, "pick", G_CALLBACK(pick), self);
	update_sensitivity(self);
}
