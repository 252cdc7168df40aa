#include "cl-heatmap-view.h"

#include "cl-heatmap-job.h"
#include "cl-workbench.h"
#include "figures.h"
#include "numbers.h"

#include <math.h>
#include <stdlib.h>

struct _ClHeatmapView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkDropDown *x_param, *y_param, *quantity;
	GtkSpinButton *x_min, *x_max, *x_count, *y_min, *y_max, *y_count, *sigma, *samples;
	GtkWidget *smoothing_grid;
	GtkWidget *compute_button, *cancel_button;
	GtkProgressBar *progress;
	GtkLabel *status, *readout, *key;
	ClPlotView *plot;

	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	gulong changed_handler;

	GtkStringList *param_names;
	ClJob *job;         /* the running sweep */
	ClResult *shown;    /* what the figure shows: the running sweep's, or the document's */
	ClSweepCell *cells; /* a copy of its cells the figure was built from */
	int shown_done;     /* their count when copied */
	gint64 started;
	double seconds;
	ClJob *build;       /* the figure being built off the main thread */
	gboolean build_again;
	gboolean updating_controls;
};

static void cl_heatmap_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClHeatmapView, cl_heatmap_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_heatmap_view_view_init))

static void start_build(ClHeatmapView *self);
static void update_sensitivity(ClHeatmapView *self);

static ClHeatmapData *shown_data(ClHeatmapView *self)
{
	return self->shown ? cl_result_payload(self->shown) : NULL;
}

static gboolean is_stale(ClHeatmapView *self)
{
	return self->shown && !self->job && self->doc && cl_document_is_stale(self->doc, self->shown);
}

/* ---------------------------------------------------------- parameters */

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
	const char *name = selected_name(self, x_axis ? self->x_param : self->y_param);
	if (!self->doc || !name)
		return;
	double lo, hi;
	default_range(cl_document_get_scene(self->doc), name, &lo, &hi);
	gtk_spin_button_set_value(x_axis ? self->x_min : self->y_min, lo);
	gtk_spin_button_set_value(x_axis ? self->x_max : self->y_max, hi);
}

static void param_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClHeatmapView *self)
{
	(void)pspec;
	if (!self->updating_controls)
		reset_range(self, dropdown == self->x_param);
}

/* The list follows the scene's parameters (cl_scene_params); choices
 * survive by name, else the first two scalars the scene optimizes, else
 * ball 0's velocity. */
static void refresh_parameters(ClHeatmapView *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	int count;
	ClParam *params = cl_scene_params_new(scene, CL_PARAMS_SWEEPABLE, -1, &count);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	char name[CL_NAME_MAX];
	for (int k = 0; k < count; k++) {
		cl_param_name(scene, &params[k], name, sizeof name);
		g_ptr_array_add(names, g_strdup(name));
	}
	free(params);
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->param_names));
	gboolean same = n == names->len;
	for (guint i = 0; same && i < n; i++)
		same = g_str_equal(gtk_string_list_get_string(self->param_names, i), g_ptr_array_index(names, i));
	if (same)
		return;
	g_autofree char *x = g_strdup(selected_name(self, self->x_param));
	g_autofree char *y = g_strdup(selected_name(self, self->y_param));
	self->updating_controls = TRUE;
	g_ptr_array_add(names, NULL);
	gtk_string_list_splice(self->param_names, 0, n, (const char *const *)names->pdata);
	gboolean kept = select_name(self, self->x_param, x) && select_name(self, self->y_param, y);
	if (!kept) {
		int expanded = 0;
		ClParam *optimized = cl_optimize_expand(scene, &scene->optimize, &expanded, NULL, 0);
		char first[CL_NAME_MAX] = "", second[CL_NAME_MAX] = "";
		for (int k = 0, found = 0; optimized && k < expanded && found < 2; k++)
			if (optimized[k].target != CL_PARAM_CONTROL)
				cl_param_name(scene, &optimized[k], found++ ? second : first, CL_NAME_MAX);
		free(optimized);
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
}

/* ------------------------------------------------------------- figure */

static ClSweepQuantity current_quantity(ClHeatmapView *self)
{
	guint q = gtk_drop_down_get_selected(self->quantity);
	return q < CL_SWEEP_QUANTITY_COUNT ? (ClSweepQuantity)q : CL_SWEEP_LOSS;
}

typedef struct {
	ClResult *result;
	ClScene *scene; /* for the marker of the current point */
	ClSweepQuantity quantity;
	int done;
	ClSweepCell *cells;
	ClPlotFigure *figure;
} Build;

static void build_free(gpointer data)
{
	Build *b = data;
	cl_result_unref(b->result);
	cl_scene_free(b->scene);
	g_free(b->cells);
	cl_plot_figure_free(b->figure);
	g_free(b);
}

static gboolean build_figure(ClJob *job, gpointer data, GError **error)
{
	(void)job, (void)error;
	Build *b = data;
	ClHeatmapData *h = cl_result_payload(b->result);
	b->done = cl_heatmap_data_done(h);
	b->cells = cl_heatmap_data_copy_cells(h);
	b->figure = cl_figure_heatmap(b->scene, &h->def, b->cells, b->quantity, h->exact_slot);
	return TRUE;
}

static void build_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClHeatmapView *self = data;
	ClJob *job = CL_JOB(source);
	gboolean ok = cl_job_finish(job, res, NULL);
	if (job == self->build) {
		Build *b = cl_job_get_data(job);
		if (ok && b->result == self->shown) {
			double w, h;
			cl_figure_heatmap_size(b->figure, &w, &h);
			cl_plot_view_set_export_size(self->plot, w, h);
			cl_plot_view_set_figure(self->plot, g_steal_pointer(&b->figure));
			g_free(self->cells);
			self->cells = g_steal_pointer(&b->cells);
			self->shown_done = b->done;
		}
		g_clear_object(&self->build);
		if (self->build_again) {
			self->build_again = FALSE;
			start_build(self);
		}
		update_sensitivity(self);
	}
	g_object_unref(self);
}

/* Rebuilds the figure off the main thread; one build at a time. */
static void start_build(ClHeatmapView *self)
{
	if (!self->shown || !self->doc)
		return;
	if (self->build) {
		self->build_again = TRUE;
		return;
	}
	shown_data(self)->quantity = current_quantity(self);
	Build *b = g_new0(Build, 1);
	b->result = cl_result_ref(self->shown);
	/* the marker follows the scene; a sweep of another scene (stale, or still
	 * running after a load) keeps the scene it was made for */
	gboolean other_scene = cl_document_is_stale(self->doc, self->shown);
	b->scene = cl_scene_copy(other_scene ? cl_result_scene(self->shown) : cl_document_get_scene(self->doc));
	b->quantity = current_quantity(self);
	self->build = cl_job_new(1, build_figure, b, build_free);
	cl_job_run_async(self->build, build_done, g_object_ref(self));
}

#define READOUT_HINT "Hover a panel to read the cell in every panel; click to move the scene there (Ctrl+Z undoes it)."

/* A new map or another quantity: the last hover's numbers are not its. */
static void reset_readout(ClHeatmapView *self)
{
	gtk_label_set_text(self->readout, READOUT_HINT);
	cl_plot_view_set_readout(self->plot, NULL);
	gtk_label_set_text(self->key, cl_figure_heatmap_key(current_quantity(self)));
}

/* A smoothed quantity the shown sweep lacks needs Compute; the others only a redraw. */
static void quantity_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClHeatmapView *self)
{
	(void)dropdown, (void)pspec;
	reset_readout(self);
	unsigned needs = cl_sweep_quantity_needs(current_quantity(self));
	gtk_widget_set_sensitive(self->smoothing_grid, (needs & CL_SWEEP_NEEDS_SMOOTHING) != 0);
	ClHeatmapData *h = shown_data(self);
	if (h && (((needs & CL_SWEEP_NEEDS_SMOOTHING) && h->def.smoothing.samples == 0) ||
			  ((needs & CL_SWEEP_NEEDS_FOBG) && !h->def.smoothing.first_order))) {
		gtk_label_set_text(self->status, "This quantity needs the sweep computed with it: press Compute.");
		return;
	}
	start_build(self);
}

static GString *heatmap_csv(gpointer data)
{
	ClHeatmapView *self = data;
	ClHeatmapData *h = shown_data(self);
	if (!h || !self->cells)
		return NULL;
	return cl_figure_heatmap_csv(&h->def, self->cells, current_quantity(self), h->exact_slot);
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
	return !((q == CL_SWEEP_ANGLE_ERROR || q == CL_SWEEP_SIGN_AGREEMENT) && slot == shown_data(self)->exact_slot);
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
	ClHeatmapData *h = shown_data(self);
	if (row < 0 || !h || !self->cells) {
		cl_plot_view_set_readout(self->plot, NULL);
		return;
	}
	const ClSweepDef *def = &h->def;
	ClPlotFigure *figure = cl_plot_view_get_figure(self->plot);
	int panel = row * cl_plot_figure_cols(figure) + col;
	int ix = cell_index(&def->x, x), iy = cell_index(&def->y, y);
	ClSweepQuantity q = current_quantity(self);
	const ClScene *scene = cl_result_scene(self->shown);
	char xname[CL_NAME_MAX], yname[CL_NAME_MAX];
	cl_param_name(scene, &def->x.param, xname, sizeof xname);
	cl_param_name(scene, &def->y.param, yname, sizeof yname);
	char xv[32], yv[32];
	format_cell_value(cl_sweep_axis_value(&def->x, ix), xv, sizeof xv);
	format_cell_value(cl_sweep_axis_value(&def->y, iy), yv, sizeof yv);
	GString *text = g_string_new(NULL);
	g_autofree char *head =
		g_markup_printf_escaped("%s = %s, %s = %s · %s: ", xname, xv, yname, yv, cl_sweep_quantity_name(q));
	g_string_append(text, head);
	g_autofree char *pointer_text = NULL;
	for (int b = 0, shown = 0; b < def->backend_count; b++) {
		if (!slot_shown(self, b))
			continue;
		const ClSweepCell *cell = &self->cells[cl_sweep_index(def, b, ix, iy)];
		const ClSweepCell *exact = h->exact_slot >= 0 ? &self->cells[cl_sweep_index(def, h->exact_slot, ix, iy)] : NULL;
		char value[64];
		format_cell_value(cl_sweep_quantity(q, cell, exact), value, sizeof value);
		const char *id = cl_backend_info(def->backends[b])->id;
		const char *note =
			cell->status == CL_STATUS_OK || cell->status == CL_STATUS_CANCELLED ? "" : cl_status_name(cell->status);
		/* ids, values and status names are plain ASCII: no markup to escape */
		gboolean here = shown == panel;
		g_string_append_printf(text, "%s%s%s %s%s%s%s%s", shown ? "  ·  " : "", here ? "<b>" : "", id, value,
							   *note ? " (" : "", note, *note ? ")" : "", here ? "</b>" : "");
		if (here)
			pointer_text = g_markup_printf_escaped("<b>%s</b>\n%s = %s", id, cl_sweep_quantity_name(q), value);
		shown++;
	}
	gtk_label_set_markup(self->readout, text->str);
	if (pointer_text) {
		g_autofree char *full = g_markup_printf_escaped("%s = %s\n%s = %s", xname, xv, yname, yv);
		g_autofree char *joined = g_strdup_printf("%s\n%s", pointer_text, full);
		cl_plot_view_set_readout(self->plot, joined);
	}
	g_string_free(text, TRUE);
}

typedef struct {
	const ClSweepDef *def;
	double x, y;
} Pick;

static gboolean set_swept(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	const Pick *p = data;
	cl_param_set(scene, &p->def->x.param, p->x);
	cl_param_set(scene, &p->def->y.param, p->y);
	return TRUE;
}

/* The sweep stays valid for a scene that differs from its own only in the
 * swept parameters (a click on a cell). */
static gboolean covers(const ClHeatmapData *h, const ClScene *swept, const ClScene *scene)
{
	if (scene->ball_count != swept->ball_count || scene->steps != swept->steps ||
		!cl_param_fits(scene, &h->def.x.param) || !cl_param_fits(scene, &h->def.y.param))
		return FALSE;
	ClScene *copy = cl_scene_copy(scene);
	cl_param_set(copy, &h->def.x.param, cl_param_get(swept, &h->def.x.param));
	cl_param_set(copy, &h->def.y.param, cl_param_get(swept, &h->def.y.param));
	g_strlcpy(copy->name, swept->name, sizeof copy->name); /* a new name changes no cell */
	gboolean same = cl_scene_equal(copy, swept);
	cl_scene_free(copy);
	return same;
}

/* A click moves the scene to the cell: an ordinary, undoable edit. */
static void pick(ClPlotView *plot, int row, int col, double x, double y, ClHeatmapView *self)
{
	(void)plot, (void)row, (void)col;
	ClHeatmapData *h = shown_data(self);
	if (!h || !self->doc)
		return;
	/* the sweep's parameters name balls of the scene it was made for */
	if (is_stale(self)) {
		cl_workbench_notify(self->workbench, "This heatmap was computed for another scene: compute it again to pick "
											 "a cell.");
		return;
	}
	Pick p = {&h->def, cl_sweep_axis_value(&h->def.x, cell_index(&h->def.x, x)),
			  cl_sweep_axis_value(&h->def.y, cell_index(&h->def.y, y))};
	char xname[CL_NAME_MAX], yname[CL_NAME_MAX];
	cl_param_name(cl_result_scene(self->shown), &h->def.x.param, xname, sizeof xname);
	cl_param_name(cl_result_scene(self->shown), &h->def.y.param, yname, sizeof yname);
	g_autofree char *label = g_strdup_printf("Set %s, %s from the heatmap", xname, yname);
	g_autoptr(GError) error = NULL;
	if (!cl_document_edit(self->doc, label, NULL, set_swept, &p, &error))
		cl_workbench_notify(self->workbench, error->message);
}

/* ------------------------------------------------------------ computing */

static void set_status(ClHeatmapView *self)
{
	g_autofree char *text = NULL;
	ClHeatmapData *h = shown_data(self);
	if (!h)
		text = g_strdup("Choose two parameters and press Compute.");
	else {
		int done = cl_heatmap_data_done(h), total = cl_heatmap_data_total(h);
		if (self->job)
			text = g_strdup_printf("%d of %d cells · %d × %d × %d backends", done, total, h->def.x.count,
								   h->def.y.count, h->def.backend_count);
		else if (done == total)
			text = g_strdup_printf("%d × %d cells × %d backends in %.2f s%s", h->def.x.count, h->def.y.count,
								   h->def.backend_count, self->seconds,
								   is_stale(self) ? " · the scene has changed since: Compute again" : "");
		else
			text = g_strdup_printf("Stopped after %d of %d cells", done, total);
	}
	gtk_label_set_text(self->status, text);
	cl_plot_view_set_faded(self->plot, is_stale(self));
}

static void update_sensitivity(ClHeatmapView *self)
{
	gtk_widget_action_set_enabled(GTK_WIDGET(self), "heatmap.cancel", self->job != NULL);
	gtk_widget_set_visible(self->cancel_button, self->job != NULL);
	set_status(self);
}

static void sweep_progress(ClJob *job, ClHeatmapView *self)
{
	if (job != self->job)
		return;
	gtk_progress_bar_set_fraction(self->progress, cl_job_get_progress(job));
	if (cl_heatmap_data_done(shown_data(self)) != self->shown_done)
		start_build(self);
	set_status(self);
}

static void sweep_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClHeatmapView *self = data;
	ClJob *job = CL_JOB(source);
	g_autoptr(GError) error = NULL;
	gboolean ok = cl_job_finish(job, res, &error);
	if (job == self->job) {
		g_clear_object(&self->job);
		self->seconds = (g_get_monotonic_time() - self->started) / 1e6;
		if (ok) {
			gtk_progress_bar_set_fraction(self->progress, 1.0);
			if (self->doc)
				cl_document_set_result(self->doc, self->shown);
		}
		start_build(self);
		update_sensitivity(self);
		if (!ok && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			gtk_label_set_text(self->status, error->message);
	}
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
						"quantity %s: expected loss, grad-x, grad-y, angle-error, sign-agreement, smoothed-loss, "
						"zobg-x, zobg-y, fobg-x, fobg-y, fobg-bias-x or fobg-bias-y",
						name);
			return FALSE;
		}
		gtk_drop_down_set_selected(self->quantity, (guint)q);
	}
	double sigma;
	if (g_variant_lookup(options, "sigma", "d", &sigma))
		gtk_spin_button_set_value(self->sigma, sigma);
	if (g_variant_lookup(options, "samples", "i", &n))
		gtk_spin_button_set_value(self->samples, n);
	return TRUE;
}

gboolean cl_heatmap_view_compute(ClHeatmapView *self, GVariant *options, GError **error)
{
	if (!self->doc)
		return FALSE;
	refresh_parameters(self);
	if (!apply_options(self, options, error))
		return FALSE;
	const ClScene *scene = cl_document_get_scene(self->doc);
	ClSweepAxis x = {.min = gtk_spin_button_get_value(self->x_min), .max = gtk_spin_button_get_value(self->x_max),
					 .count = gtk_spin_button_get_value_as_int(self->x_count)};
	ClSweepAxis y = {.min = gtk_spin_button_get_value(self->y_min), .max = gtk_spin_button_get_value(self->y_max),
					 .count = gtk_spin_button_get_value_as_int(self->y_count)};
	if (!parse_param(self, scene, self->x_param, &x.param, error) ||
		!parse_param(self, scene, self->y_param, &y.param, error))
		return FALSE;
	g_autoptr(GArray) backends = cl_document_enabled_backends(self->doc);
	/* the smoothed quantities are computed only when one of them is shown */
	unsigned needs = cl_sweep_quantity_needs(current_quantity(self));
	double sigma = gtk_spin_button_get_value(self->sigma);
	ClSweepSmoothing smoothing = {.samples = gtk_spin_button_get_value_as_int(self->samples),
								  .sigma_x = sigma,
								  .sigma_y = sigma,
								  .seed = 1,
								  .first_order = (needs & CL_SWEEP_NEEDS_FOBG) != 0};
	cl_job_replace(&self->job, NULL);
	g_autoptr(ClJob) job = cl_heatmap_job_new(scene, cl_document_get_revision(self->doc), &x, &y,
											  needs & CL_SWEEP_NEEDS_SMOOTHING ? &smoothing : NULL,
											  (const int *)(const void *)backends->data, (int)backends->len);
	cl_job_replace(&self->job, job);
	g_clear_pointer(&self->shown, cl_result_unref);
	self->shown = cl_result_ref(cl_study_job_result(job));
	self->shown_done = -1;
	self->started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress, 0);
	reset_readout(self);
	g_signal_connect(job, "progress", G_CALLBACK(sweep_progress), self);
	cl_job_run_async(job, sweep_done, g_object_ref(self));
	start_build(self);
	update_sensitivity(self);
	return TRUE;
}

void cl_heatmap_view_cancel(ClHeatmapView *self)
{
	if (self->job)
		cl_job_cancel(self->job);
}

gboolean cl_heatmap_view_is_busy(ClHeatmapView *self)
{
	return self->job || self->build;
}

ClPlotView *cl_heatmap_view_get_plot(ClHeatmapView *self)
{
	return self->plot;
}

static void compute_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	ClHeatmapView *self = CL_HEATMAP_VIEW(widget);
	g_autoptr(GError) error = NULL;
	if (!cl_heatmap_view_compute(self, NULL, &error) && error)
		gtk_label_set_text(self->status, error->message);
}

static void cancel_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name, (void)parameter;
	cl_heatmap_view_cancel(CL_HEATMAP_VIEW(widget));
}

/* ---------------------------------------------------------------- scene */

static void document_changed(ClDocument *doc, guint what, ClHeatmapView *self)
{
	if (what & CL_DOCUMENT_SCENE) {
		refresh_parameters(self);
		/* a change the sweep still covers (a click on a cell) only moves its marker */
		if (self->shown && !self->job &&
			covers(shown_data(self), cl_result_scene(self->shown), cl_document_get_scene(doc))) {
			ClResult *moved =
				cl_result_restamp(self->shown, cl_document_get_scene(doc), cl_document_get_revision(doc));
			g_clear_pointer(&self->shown, cl_result_unref);
			self->shown = moved;
			if (!(what & CL_DOCUMENT_PREVIEW))
				cl_document_set_result(doc, moved);
		} else if (self->job)
			cl_heatmap_view_cancel(self);
	}
	if (what & CL_DOCUMENT_RESULTS) {
		/* a heatmap stored by someone else (a lesson's, an older one restored) */
		ClResult *stored = cl_document_get_result(doc, CL_RESULT_HEATMAP);
		if (!self->job && stored && stored != self->shown) {
			g_clear_pointer(&self->shown, cl_result_unref);
			self->shown = cl_result_ref(stored);
		}
	}
	if (what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_RESULTS)) {
		start_build(self);
		set_status(self);
	}
}

/* ------------------------------------------------------ ClResultsView */

static gboolean show_step(ClResultsView *view, const ClLessonStep *step, GError **error)
{
	ClHeatmapView *self = CL_HEATMAP_VIEW(view);
	const ClLessonView *v = &step->view;
	GVariantDict options;
	g_variant_dict_init(&options, NULL);
	g_variant_dict_insert(&options, "x", "s", v->x.parameter);
	g_variant_dict_insert(&options, "y", "s", v->y.parameter);
	g_variant_dict_insert(&options, "x-min", "d", v->x.min);
	g_variant_dict_insert(&options, "x-max", "d", v->x.max);
	g_variant_dict_insert(&options, "y-min", "d", v->y.min);
	g_variant_dict_insert(&options, "y-max", "d", v->y.max);
	g_variant_dict_insert(&options, "x-points", "i", v->x.count);
	g_variant_dict_insert(&options, "y-points", "i", v->y.count);
	g_variant_dict_insert(&options, "quantity", "s", v->quantity);
	g_autoptr(GVariant) value = g_variant_ref_sink(g_variant_dict_end(&options));
	return cl_heatmap_view_compute(self, value, error);
}

static void cl_heatmap_view_view_init(ClResultsViewInterface *iface)
{
	iface->show_step = show_step;
}

/* ------------------------------------------------------------ lifecycle */

static void cl_heatmap_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_heatmap_view_parent_class)->root(widget);
	ClHeatmapView *self = CL_HEATMAP_VIEW(widget);
	self->workbench = cl_workbench_of(widget);
	if (!self->workbench)
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	refresh_parameters(self);
	set_status(self);
}

/* A closed window stops the sweep; the view outlives it until the sweep's
 * callback (which holds it) has run, and must not touch the document then. */
static void cl_heatmap_view_unroot(GtkWidget *widget)
{
	ClHeatmapView *self = CL_HEATMAP_VIEW(widget);
	cl_heatmap_view_cancel(self);
	if (self->build)
		cl_job_cancel(self->build);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	self->workbench = NULL;
	GTK_WIDGET_CLASS(cl_heatmap_view_parent_class)->unroot(widget);
}

static void cl_heatmap_view_dispose(GObject *object)
{
	ClHeatmapView *self = CL_HEATMAP_VIEW(object);
	cl_job_replace(&self->job, NULL);
	cl_job_replace(&self->build, NULL);
	g_clear_pointer(&self->shown, cl_result_unref);
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
	widget_class->root = cl_heatmap_view_root;
	widget_class->unroot = cl_heatmap_view_unroot;
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
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, key);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, plot);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, sigma);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, samples);
	gtk_widget_class_bind_template_child(widget_class, ClHeatmapView, smoothing_grid);
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
	reset_readout(self);
	gtk_widget_set_sensitive(self->smoothing_grid, FALSE);
	update_sensitivity(self);
}
