#include "cl-gradient-view.h"

#include "agreement.h"
#include "backend-style.h"
#include "cl-workbench.h"
#include "numbers.h"

#include <stdlib.h>

#include <math.h>

/* Above this many balls the table shows the balls that matter first. */
#define BALLS_SHOWN_ALL 4

struct _ClGradientView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkWidget *legend;
	GtkToggleButton *all_balls;
	GtkDropDown *fd_choice;
	GtkWidget *add_param_button;
	GtkWidget *param_list;
	GtkWidget *copy_button;
	GtkWidget *stale_label;
	GtkWidget *placeholder;
	GtkWidget *notes;
	GtkWidget *grid;

	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	ClRunner *runner;
	gulong changed_handler, runner_handler;
	GArray *highlight; /* Highlight */
	char **step_columns; /* a lesson step's own columns, or NULL for the table's */
	gboolean syncing;  /* the Add parameter checks are being set, not toggled */
};

typedef struct {
	int backend;
	char parameter[CL_NAME_MAX]; /* "" for the whole row */
} Highlight;

static void cl_gradient_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClGradientView, cl_gradient_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_gradient_view_view_init))

static void format_value(double value, char *out, size_t size)
{
	if (isnan(value))
		g_snprintf(out, size, "NaN");
	else if (isinf(value))
		g_snprintf(out, size, value > 0 ? "+Inf" : "−Inf");
	else {
		char buffer[G_ASCII_DTOSTR_BUF_SIZE];
		g_ascii_formatd(buffer, sizeof buffer, "%.6g", value);
		g_snprintf(out, size, "%s", buffer);
	}
}

static void format_full(double value, char *out, size_t size)
{
	char buffer[G_ASCII_DTOSTR_BUF_SIZE];
	if (!isfinite(value))
		format_value(value, out, size);
	else
		g_snprintf(out, size, "%s", g_ascii_formatd(buffer, sizeof buffer, "%.12g", value));
}

static ClPlotThemeKind theme_of(GtkWidget *widget)
{
	GdkRGBA fg;
	gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
	return fg.red + fg.green + fg.blue > 1.5 ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT;
}

static void clear_grid(ClGradientView *self)
{
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(self->grid)))
		gtk_grid_remove(GTK_GRID(self->grid), child);
	while ((child = gtk_widget_get_first_child(self->notes)))
		gtk_box_remove(GTK_BOX(self->notes), child);
}

static GtkWidget *header_label(const char *markup, const char *accessible)
{
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_widget_add_css_class(label, "column-header");
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);
	return label;
}

/* "ball2.velocity.x" → "∂L/∂v_x" over "ball2", "ground.angle" → "∂L/∂angle"
 * over "ground": reads better than the raw name */
static char *column_title(const char *name)
{
	g_auto(GStrv) parts = g_strsplit(name, ".", -1);
	guint n = g_strv_length(parts);
	if (n >= 3) {
		const char *what = g_str_equal(parts[1], "position") ? "p"
						   : g_str_equal(parts[1], "velocity") ? "v"
						   : g_str_equal(parts[1], "point")	   ? "point"
															   : "u₀";
		return g_markup_printf_escaped("<b>∂L/∂%s<sub>%s</sub></b>\n<small>%s</small>", what, parts[2], parts[0]);
	}
	if (n == 2 && g_str_equal(parts[0], "gravity"))
		return g_markup_printf_escaped("<b>∂L/∂g<sub>%s</sub></b>", parts[1]);
	if (n == 2)
		return g_markup_printf_escaped("<b>∂L/∂%s</b>\n<small>%s</small>", parts[1], parts[0]);
	return g_markup_printf_escaped("<b>∂L/∂%s</b>", name);
}

static void add_note(ClGradientView *self, const char *icon, const char *markup)
{
	GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	GtkWidget *image = gtk_image_new_from_icon_name(icon);
	gtk_widget_set_valign(image, GTK_ALIGN_START);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_label_set_wrap(GTK_LABEL(label), TRUE);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_set_hexpand(label, TRUE);
	gtk_box_append(GTK_BOX(row), image);
	gtk_box_append(GTK_BOX(row), label);
	gtk_widget_add_css_class(row, "note");
	gtk_box_append(GTK_BOX(self->notes), row);
}

/* Whether the lesson points at backend's cell of column name, or at its
 * whole row (name NULL: the row header carries that outline). */
static gboolean highlighted(const ClGradientView *self, int backend, const char *name)
{
	for (guint i = 0; self->highlight && i < self->highlight->len; i++) {
		const Highlight *h = &g_array_index(self->highlight, Highlight, i);
		if (h->backend == backend && g_str_equal(h->parameter, name ? name : ""))
			return TRUE;
	}
	return FALSE;
}

static GtkWidget *row_header(ClGradientView *self, const ClRunBackend *r)
{
	const ClBackendInfo *info = cl_backend_info(r->backend);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	char hex[8];
	cl_backend_color_hex(r->backend, theme_of(GTK_WIDGET(self)), hex);
	g_autofree char *markup =
		g_markup_printf_escaped("<span foreground='%s'>●</span> <b>%s</b>\n<small>%s</small>", hex, info->id, info->mirrors);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_box_append(GTK_BOX(box), label);
	const ClStatus *status = &r->row.status;
	if (status->code != CL_STATUS_OK) {
		GtkWidget *icon = gtk_image_new_from_icon_name("dialog-warning-symbolic");
		g_autofree char *tip = g_strdup_printf("%s: %s%s%s", cl_status_name(status->code),
											   cl_status_explanation(status->code), status->message[0] ? "\n" : "",
											   status->message);
		gtk_widget_set_tooltip_text(icon, tip);
		gtk_accessible_update_property(GTK_ACCESSIBLE(icon), GTK_ACCESSIBLE_PROPERTY_LABEL, tip, -1);
		gtk_box_append(GTK_BOX(box), icon);
	}
	gtk_widget_add_css_class(box, "row-header");
	g_autofree char *name = g_strdup_printf("%s: %s", info->id, info->label);
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
	gtk_widget_set_tooltip_text(box, info->summary);
	return box;
}

static GtkWidget *loss_cell(const ClRunBackend *r)
{
	char text[64], full[64];
	format_value(r->row.loss, text, sizeof text);
	format_full(r->row.loss, full, sizeof full);
	const char *id = cl_backend_info(r->backend)->id;
	g_autofree char *markup = g_markup_printf_escaped("<span font_features='tnum'>%s</span>", text);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_label_set_xalign(GTK_LABEL(label), 1);
	gtk_widget_add_css_class(label, "cell");
	gtk_widget_add_css_class(label, "loss");
	g_autofree char *tip = g_strdup_printf("Loss L computed with %s: %s", id, full);
	gtk_widget_set_tooltip_text(label, tip);
	g_autofree char *accessible = g_strdup_printf("%s loss = %s", id, full);
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);
	return label;
}

static GtkWidget *cell(ClGradientView *self, ClRunData *data, const char *name, int slot, int exact_slot, int k)
{
	const ClRunBackend *r = &data->backends[slot];
	const char *id = cl_backend_info(r->backend)->id;
	ClGradientCell c = cl_run_data_cell(data, slot, k);
	/* elasticity, a wall's angle, …: not every backend differentiates them */
	gboolean has_adjoint = cl_backend_has_param_adjoint(r->backend, &data->columns[k]);
	double reference = exact_slot >= 0 ? cl_run_data_cell(data, exact_slot, k).adjoint : NAN;
	double error;
	ClAgreement agreement =
		slot == exact_slot ? CL_AGREEMENT_REFERENCE : cl_agreement(c.adjoint, reference, &error);
	char text[64], fd_text[64], full[64];
	if (has_adjoint) {
		format_value(c.adjoint, text, sizeof text);
		format_full(c.adjoint, full, sizeof full);
	} else {
		g_snprintf(text, sizeof text, "no adjoint");
		g_snprintf(full, sizeof full, "no adjoint");
		agreement = slot == exact_slot ? CL_AGREEMENT_REFERENCE : CL_AGREEMENT_UNKNOWN;
	}
	gboolean asked = c.fd_step > 0, taken = asked && (isfinite(c.fd) || !r->row.complete || c.fd_status != CL_STATUS_OK);
	if (taken)
		format_value(c.fd, fd_text, sizeof fd_text);
	else
		g_snprintf(fd_text, sizeof fd_text, "…");
	/* a gradient that is not the derivative of its own forward map shows up here */
	ClAgreement self_check = cl_agreement(c.fd, c.adjoint, NULL);
	gboolean fd_differs = has_adjoint && taken && isfinite(c.fd) && self_check != CL_AGREEMENT_GOOD && self_check != CL_AGREEMENT_FAIR;
	g_autofree char *markup =
		!asked ? g_markup_printf_escaped("<span font_features='tnum'>%s</span>", text)
		: fd_differs
			? g_markup_printf_escaped("<span font_features='tnum'>%s</span>\n<small><span weight='bold'>FD %s "
									  "≠</span></small>",
									  text, fd_text)
			: g_markup_printf_escaped("<span font_features='tnum'>%s</span>\n<small><span alpha='70%%'>FD %s</span>"
									  "</small>",
									  text, fd_text);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_label_set_xalign(GTK_LABEL(label), 1);
	gtk_widget_add_css_class(label, "cell");
	gtk_widget_add_css_class(label, cl_agreement_name(agreement));
	if (fd_differs)
		gtk_widget_add_css_class(label, "fd-differs");
	gboolean pointed_at = highlighted(self, r->backend, name);
	if (pointed_at)
		gtk_widget_add_css_class(label, "highlighted");

	GString *tip = g_string_new(NULL);
	if (has_adjoint)
		g_string_append_printf(tip, "∂L/∂%s by %s (adjoint through its own step Jacobians): %s", name, id, full);
	else
		g_string_append_printf(tip, "∂L/∂%s by %s: no adjoint (its peer does not differentiate %s; the FD "
							   "below is of its forward map)",
							   name, id, name);
	if (exact_slot >= 0 && slot != exact_slot) {
		char exact_text[64];
		format_full(reference, exact_text, sizeof exact_text);
		g_string_append_printf(tip, "\nexact: %s", exact_text);
		if (isfinite(error))
			g_string_append_printf(tip, "\nrelative error against exact: %.3g %%", 100 * error);
	}
	g_string_append_printf(tip, "\n→ %s", cl_agreement_sentence(agreement));
	if (asked) {
		g_string_append_printf(tip, "\nFD: central difference of %s's own forward map, h = %.1e: %s", id, c.fd_step,
							   taken ? fd_text : "being computed");
		if (fd_differs)
			g_string_append(tip, "\n→ the gradient is not the derivative of the backend's own simulation");
	} else
		g_string_append(tip, "\nFD: not asked for (the table's FD choice)");
	if (r->row.status.code != CL_STATUS_OK)
		g_string_append_printf(tip, "\nstatus %s: %s", cl_status_name(r->row.status.code),
							   cl_status_explanation(r->row.status.code));
	gtk_widget_set_tooltip_text(label, tip->str);
	g_string_free(tip, TRUE);
	/* the accessible name carries the full-precision number for screen readers and tests */
	g_autofree char *accessible = g_strdup_printf("%s %s = %s", id, name, full);
	g_autofree char *description =
		g_strdup_printf("%s%s", cl_agreement_sentence(agreement), pointed_at ? " (highlighted)" : "");
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
	return label;
}

/* Whether column param is shown: those a lesson step lists while it is
 * shown; else every one, or with many balls those of the selected ball and
 * of the balls that take part in the loss or are actuated. */
static gboolean column_shown(ClGradientView *self, const ClScene *scene, const ClParam *param)
{
	if (self->step_columns) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, param, name, sizeof name);
		return g_strv_contains((const char *const *)self->step_columns, name);
	}
	if (scene->ball_count <= BALLS_SHOWN_ALL || gtk_toggle_button_get_active(self->all_balls) || param->ball < 0)
		return TRUE;
	ClPick selected = cl_document_get_selection(self->doc);
	return (selected.kind == CL_PICK_BALL && selected.index == param->ball) || cl_scene_ball_matters(scene, param->ball);
}

static GArray *shown_columns(ClGradientView *self, const ClScene *scene, const ClParam *columns, int count)
{
	GArray *shown = g_array_new(FALSE, FALSE, sizeof(int));
	for (int k = 0; k < count; k++)
		if (column_shown(self, scene, &columns[k]))
			g_array_append_val(shown, k);
	return shown;
}

static void rebuild(ClGradientView *self)
{
	clear_grid(self);
	ClResult *result = self->doc ? cl_document_get_result(self->doc, CL_RESULT_RUN) : NULL;
	ClRunData *data = result ? cl_result_payload(result) : NULL;
	gtk_widget_set_visible(self->placeholder, !data || data->backend_count == 0);
	gtk_widget_set_sensitive(self->copy_button, data != NULL);
	gboolean stale = result && cl_document_is_stale(self->doc, result);
	gtk_widget_set_visible(self->stale_label, stale);
	/* stale numbers stay readable but visibly out of date until the rerun lands */
	gtk_widget_set_opacity(self->grid, stale ? 0.45 : 1.0);
	if (!data)
		return;
	const ClScene *scene = cl_result_scene(result);
	gtk_widget_set_visible(GTK_WIDGET(self->all_balls), scene->ball_count > BALLS_SHOWN_ALL);
	g_autoptr(GArray) shown = shown_columns(self, scene, data->columns, data->column_count);
	GtkGrid *grid = GTK_GRID(self->grid);
	gtk_grid_attach(grid, header_label("<b>backend</b>", "backend"), 0, 0, 1, 1);
	gtk_grid_attach(grid, header_label("<b>L</b>", "loss"), 1, 0, 1, 1);
	char name[CL_NAME_MAX];
	for (guint c = 0; c < shown->len; c++) {
		cl_param_name(scene, &data->columns[g_array_index(shown, int, c)], name, sizeof name);
		g_autofree char *title = column_title(name);
		GtkWidget *h = header_label(title, name);
		gtk_widget_set_tooltip_text(h, name);
		gtk_label_set_xalign(GTK_LABEL(h), 1);
		gtk_label_set_justify(GTK_LABEL(h), GTK_JUSTIFY_RIGHT);
		gtk_grid_attach(grid, h, (int)c + 2, 0, 1, 1);
	}
	int exact_slot = cl_run_data_reference_slot(data);
	int row = 1;
	/* the reference first: every row below is read against it */
	for (int pass = 0; pass < 2; pass++)
		for (int b = 0; b < data->backend_count; b++) {
			if ((b == exact_slot) != (pass == 0))
				continue;
			const ClRunBackend *r = &data->backends[b];
			GtkWidget *header = row_header(self, r);
			if (highlighted(self, r->backend, NULL))
				gtk_widget_add_css_class(header, "highlighted");
			gtk_grid_attach(grid, header, 0, row, 1, 1);
			gtk_grid_attach(grid, loss_cell(r), 1, row, 1, 1);
			for (guint c = 0; c < shown->len; c++) {
				int k = g_array_index(shown, int, c);
				cl_param_name(scene, &data->columns[k], name, sizeof name);
				gtk_grid_attach(grid, cell(self, data, name, b, exact_slot, k), (int)c + 2, row, 1, 1);
			}
			row++;
		}
	/* every result that is not ok gets a sentence, not just an icon */
	for (int b = 0; b < data->backend_count; b++) {
		const ClRunBackend *r = &data->backends[b];
		if (r->row.status.code == CL_STATUS_OK)
			continue;
		char step[32] = "";
		if (r->row.status.step >= 0)
			g_snprintf(step, sizeof step, " at step %d", r->row.status.step);
		g_autofree char *markup = g_markup_printf_escaped(
			"<b>%s</b> — %s%s: %s.%s%s", cl_backend_info(r->backend)->id, cl_status_name(r->row.status.code), step,
			cl_status_explanation(r->row.status.code), r->row.status.message[0] ? " " : "", r->row.status.message);
		add_note(self, r->row.complete ? "dialog-warning-symbolic" : "dialog-error-symbolic", markup);
	}
	for (int b = 0; b < cl_backend_count(); b++) {
		char why[CL_MESSAGE_MAX];
		if (cl_document_backend_enabled(self->doc, b) && !cl_backend_can_run(b, scene, why, sizeof why)) {
			g_autofree char *markup = g_markup_printf_escaped("<b>%s</b> is enabled but left out of this scene: %s.",
															  cl_backend_info(b)->id, why);
			add_note(self, "dialog-information-symbolic", markup);
		}
	}
	if (exact_slot < 0)
		add_note(self, "dialog-information-symbolic",
				 "No exact reference for this scene: cells are not coloured by agreement.");
	if (self->step_columns)
		add_note(self, "dialog-information-symbolic",
				 "Showing the columns this lesson step is about; “All lessons” leaves the lesson and shows every one.");
	else if ((int)shown->len < data->column_count)
		add_note(self, "dialog-information-symbolic",
				 "Showing the columns of the selected ball and of the balls in the loss; “All balls” shows every "
				 "one (their differences are taken after these).");
}

/* The runner differences the shown columns first. */
static void prioritise_shown(ClGradientView *self)
{
	if (!self->runner)
		return;
	const ClScene *scene = cl_document_get_scene(self->doc);
	int count;
	ClParam *columns = cl_runner_columns(self->runner, scene, &count);
	g_autoptr(GArray) first = shown_columns(self, scene, columns, count);
	cl_runner_set_fd_first(self->runner, (const int *)(const void *)first->data, (int)first->len);
	free(columns);
}

/* Which backends differentiate param, for its check's tooltip: "exact, impulse". */
static char *adjoint_backends(const ClParam *param)
{
	GString *ids = g_string_new(NULL);
	for (int b = 0; b < cl_backend_count(); b++)
		if (cl_backend_has_param_adjoint(b, param))
			g_string_append_printf(ids, "%s%s", ids->len ? ", " : "", cl_backend_info(b)->id);
	return g_string_free(ids, FALSE);
}

static void param_toggled(GtkToggleButton *check, ClGradientView *self)
{
	if (self->syncing || !self->runner)
		return;
	const char *name = g_object_get_data(G_OBJECT(check), "parameter");
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	for (const char *const *n = cl_runner_get_extra_columns(self->runner); *n; n++)
		if (!g_str_equal(*n, name))
			g_strv_builder_add(builder, *n);
	/* a column added goes last, as a further --param would */
	if (gtk_toggle_button_get_active(check))
		g_strv_builder_add(builder, name);
	g_auto(GStrv) names = g_strv_builder_end(builder);
	cl_runner_set_extra_columns(self->runner, (const char *const *)names);
	prioritise_shown(self);
}

/* The Add parameter menu: a toggle per parameter of the scene beyond the
 * table's own (cl_scene_params, CL_PARAMS_PHYSICAL), checked when its
 * column is part of the runs. */
static void rebuild_param_list(ClGradientView *self)
{
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(self->param_list)))
		gtk_box_remove(GTK_BOX(self->param_list), child);
	if (!self->doc || !self->runner)
		return;
	const ClScene *scene = cl_document_get_scene(self->doc);
	const char *const *chosen = cl_runner_get_extra_columns(self->runner);
	int count;
	ClParam *params = cl_scene_params_new(scene, CL_PARAMS_PHYSICAL | CL_PARAMS_BACKENDS, -1, &count);
	int listed = 0;
	self->syncing = TRUE;
	for (int k = 0; params && k < count; k++) {
		/* a backend's own parameters while it is enabled: its row is the one they move */
		if (params[k].target == CL_PARAM_BACKEND && !cl_document_backend_enabled(self->doc, params[k].backend))
			continue;
		listed++;
		char name[CL_NAME_MAX];
		cl_param_name(scene, &params[k], name, sizeof name);
		/* a toggle, not a check button: it is pressed while its column is
		 * shown, and assistive tools can click it */
		GtkWidget *check = gtk_toggle_button_new_with_label(name);
		gtk_widget_add_css_class(check, "flat");
		gtk_label_set_xalign(GTK_LABEL(gtk_button_get_child(GTK_BUTTON(check))), 0);
		g_object_set_data_full(G_OBJECT(check), "parameter", g_strdup(name), g_free);
		gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(check), g_strv_contains(chosen, name));
		g_autofree char *ids = adjoint_backends(&params[k]);
		g_autofree char *tip = g_strdup_printf(
			"A column ∂L/∂%s after the default ones: the adjoint of %s, “no adjoint” for the other backends, "
			"each with its own central FD beside it (contactlab gradients --param %s)",
			name, ids[0] ? ids : "no backend", name);
		gtk_widget_set_tooltip_text(check, tip);
		g_signal_connect(check, "toggled", G_CALLBACK(param_toggled), self);
		gtk_box_append(GTK_BOX(self->param_list), check);
	}
	self->syncing = FALSE;
	gtk_widget_set_sensitive(self->add_param_button, listed > 0);
	free(params);
}

static void update_progress_state(ClGradientView *self)
{
	/* the table's accessible description: assistive tools (and the GUI tests) can wait on it */
	g_autofree char *text = g_strdup_printf("runs completed: %d; computing: %s",
											self->runner ? cl_runner_get_completed(self->runner) : 0,
											self->runner && cl_runner_is_running(self->runner) ? "yes" : "no");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->grid), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

static void document_changed(ClDocument *doc, guint what, ClGradientView *self)
{
	(void)doc;
	if (what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_BACKENDS))
		rebuild_param_list(self);
	if (what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_SELECTION))
		prioritise_shown(self);
	if (what & (CL_DOCUMENT_RESULTS | CL_DOCUMENT_SCENE | CL_DOCUMENT_SELECTION))
		rebuild(self);
}

static void runner_changed(ClRunner *runner, ClGradientView *self)
{
	(void)runner;
	update_progress_state(self);
}

static void copy_csv(GtkButton *button, ClGradientView *self)
{
	(void)button;
	ClResult *result = self->doc ? cl_document_get_result(self->doc, CL_RESULT_RUN) : NULL;
	if (!result)
		return;
	g_autoptr(GString) csv = cl_run_data_gradient_csv(cl_result_payload(result), cl_result_scene(result));
	gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(self)), csv->str);
}

static void fd_choice_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClGradientView *self)
{
	(void)pspec;
	if (self->runner)
		cl_runner_set_fd(self->runner, (ClFdChoice)gtk_drop_down_get_selected(dropdown));
}

static void all_balls_toggled(GtkToggleButton *button, ClGradientView *self)
{
	(void)button;
	if (!self->doc)
		return;
	prioritise_shown(self);
	rebuild(self);
}

/* ------------------------------------------------------ ClResultsView */

/* The step's parameters are the table's columns while the step is shown:
 * physical ones (elasticity, mirror.angle) become added columns of the runs,
 * so that the cells the text cites and outlines are there to see. */
static gboolean show_step(ClResultsView *view, const ClLessonStep *step, GError **error)
{
	(void)error;
	ClGradientView *self = CL_GRADIENT_VIEW(view);
	g_clear_pointer(&self->step_columns, g_strfreev);
	if (!step->view.parameters || !self->runner)
		return TRUE;
	self->step_columns = g_strdupv(step->view.parameters);
	g_autoptr(GStrvBuilder) extra = g_strv_builder_new();
	for (char **name = step->view.parameters; *name; name++) {
		ClParam param;
		if (cl_param_parse(step->scene, *name, &param, NULL, 0) && !cl_param_has_adjoint(&param))
			g_strv_builder_add(extra, *name);
	}
	g_auto(GStrv) names = g_strv_builder_end(extra);
	cl_runner_set_extra_columns(self->runner, (const char *const *)names);
	rebuild_param_list(self);
	return TRUE;
}

static void set_highlight(ClResultsView *view, const ClLessonStep *step)
{
	ClGradientView *self = CL_GRADIENT_VIEW(view);
	/* another step's view, or the lesson left: the table's own columns again */
	if (!step || step->view.kind != CL_LESSON_VIEW_GRADIENTS)
		g_clear_pointer(&self->step_columns, g_strfreev);
	g_clear_pointer(&self->highlight, g_array_unref);
	if (step && step->highlights->len > 0) {
		self->highlight = g_array_new(FALSE, TRUE, sizeof(Highlight));
		for (guint i = 0; i < step->highlights->len; i++) {
			const ClLessonHighlight *h = &g_array_index(step->highlights, ClLessonHighlight, i);
			Highlight copy = {.backend = h->backend};
			g_strlcpy(copy.parameter, h->parameter, sizeof copy.parameter);
			g_array_append_val(self->highlight, copy);
		}
	}
	rebuild(self);
}

static void cl_gradient_view_view_init(ClResultsViewInterface *iface)
{
	iface->show_step = show_step;
	iface->highlight = set_highlight;
}

/* ------------------------------------------------------------ lifecycle */

static void cl_gradient_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_gradient_view_parent_class)->root(widget);
	ClGradientView *self = CL_GRADIENT_VIEW(widget);
	self->workbench = cl_workbench_of(widget);
	if (!self->workbench)
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->runner = cl_workbench_get_runner(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	self->runner_handler = g_signal_connect(self->runner, "state-changed", G_CALLBACK(runner_changed), self);
	gtk_drop_down_set_selected(self->fd_choice, (guint)cl_runner_get_fd(self->runner));
	rebuild_param_list(self);
	prioritise_shown(self);
	rebuild(self);
	update_progress_state(self);
}

static void cl_gradient_view_unroot(GtkWidget *widget)
{
	ClGradientView *self = CL_GRADIENT_VIEW(widget);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	if (self->runner)
		g_clear_signal_handler(&self->runner_handler, self->runner);
	self->doc = NULL;
	self->runner = NULL;
	self->workbench = NULL;
	GTK_WIDGET_CLASS(cl_gradient_view_parent_class)->unroot(widget);
}

static void cl_gradient_view_dispose(GObject *object)
{
	ClGradientView *self = CL_GRADIENT_VIEW(object);
	g_clear_pointer(&self->highlight, g_array_unref);
	g_clear_pointer(&self->step_columns, g_strfreev);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_GRADIENT_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_gradient_view_parent_class)->dispose(object);
}

static void cl_gradient_view_class_init(ClGradientViewClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_gradient_view_dispose;
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	widget_class->root = cl_gradient_view_root;
	widget_class->unroot = cl_gradient_view_unroot;
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-gradient-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, legend);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, all_balls);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, fd_choice);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, add_param_button);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, param_list);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, copy_button);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, stale_label);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, placeholder);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, notes);
	gtk_widget_class_bind_template_child(widget_class, ClGradientView, grid);
	gtk_widget_class_bind_template_callback(widget_class, all_balls_toggled);
	gtk_widget_class_bind_template_callback(widget_class, fd_choice_changed);
	gtk_widget_class_bind_template_callback(widget_class, copy_csv);
	gtk_widget_class_set_css_name(widget_class, "gradientview");
}

/* The colour legend's chips, from the one agreement table, before its note. */
static void add_legend_chips(ClGradientView *self)
{
	static const ClAgreement shown[] = {CL_AGREEMENT_GOOD, CL_AGREEMENT_FAIR, CL_AGREEMENT_POOR,
										CL_AGREEMENT_WRONG_SIGN};
	GtkWidget *previous = NULL;
	for (gsize i = 0; i < G_N_ELEMENTS(shown); i++) {
		GtkWidget *chip = gtk_label_new(cl_agreement_label(shown[i]));
		gtk_widget_add_css_class(chip, "legend-chip");
		gtk_widget_add_css_class(chip, cl_agreement_name(shown[i]));
		gtk_widget_set_tooltip_text(chip, cl_agreement_sentence(shown[i]));
		gtk_box_insert_child_after(GTK_BOX(self->legend), chip, previous);
		previous = chip;
	}
}

static void cl_gradient_view_init(ClGradientView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	add_legend_chips(self);
}
