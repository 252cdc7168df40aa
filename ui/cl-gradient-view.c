#include "backend-style.h"
#include "cl-gradient-view.h"

#include "cl-scene-render.h"

#include <math.h>

struct _ClGradientView {
	GtkWidget parent_instance;
	GtkWidget *box;
	GtkWidget *grid;
	GtkWidget *notes;
	GtkWidget *copy_button;
	GtkWidget *placeholder;
	ClComputeResult *result;
	GArray *highlight; /* Highlight */
};

typedef struct {
	int backend;
	char parameter[CL_NAME_MAX]; /* "" for the whole row */
} Highlight;

G_DEFINE_FINAL_TYPE(ClGradientView, cl_gradient_view, GTK_TYPE_WIDGET)

/* Below this both values count as zero: rounding, not a derivative. */
#define ZERO_THRESHOLD 1e-9

ClAgreement cl_gradient_agreement(double value, double exact, double *relative_error)
{
	if (relative_error)
		*relative_error = NAN;
	if (!isfinite(value) || !isfinite(exact))
		return CL_AGREEMENT_UNKNOWN;
	double error = fabs(value - exact) / fmax(fabs(exact), ZERO_THRESHOLD);
	if (fabs(exact) < ZERO_THRESHOLD && fabs(value) < ZERO_THRESHOLD)
		error = 0;
	if (relative_error)
		*relative_error = error;
	if (fabs(value) >= ZERO_THRESHOLD && fabs(exact) >= ZERO_THRESHOLD && (value > 0) != (exact > 0))
		return CL_AGREEMENT_WRONG_SIGN;
	return error < 1e-3 ? CL_AGREEMENT_GOOD : error < 0.1 ? CL_AGREEMENT_FAIR : CL_AGREEMENT_POOR;
}

static const char *const agreement_class[] = {
	[CL_AGREEMENT_REFERENCE] = "reference", [CL_AGREEMENT_GOOD] = "good",		   [CL_AGREEMENT_FAIR] = "fair",
	[CL_AGREEMENT_POOR] = "poor",			[CL_AGREEMENT_WRONG_SIGN] = "wrong-sign", [CL_AGREEMENT_UNKNOWN] = "unknown",
};

static const char *const agreement_text[] = {
	[CL_AGREEMENT_REFERENCE] = "the reference (exact event-driven gradient)",
	[CL_AGREEMENT_GOOD] = "agrees with exact (relative error below 0.1 %)",
	[CL_AGREEMENT_FAIR] = "close to exact (relative error below 10 %)",
	[CL_AGREEMENT_POOR] = "same sign as exact, but off by 10 % or more",
	[CL_AGREEMENT_WRONG_SIGN] = "WRONG SIGN: a descent step along it goes uphill under the true dynamics",
	[CL_AGREEMENT_UNKNOWN] = "cannot be compared (no exact value, or not finite)",
};

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

static char *column_title(const char *name)
{
	if (g_str_equal(name, "loss"))
		return g_strdup("<b>L</b>");
	/* "ball2.velocity.x" → "∂L/∂ ball2 vₓ" reads better than the raw name */
	char **parts = g_strsplit(name, ".", -1);
	char *title;
	if (g_strv_length(parts) >= 3) {
		const char *what = g_str_equal(parts[1], "position") ? "p" : g_str_equal(parts[1], "velocity") ? "v" : "u₀";
		title = g_markup_printf_escaped("<b>∂L/∂%s<sub>%s</sub></b>\n<small>%s</small>", what, parts[2], parts[0]);
	} else
		title = g_markup_printf_escaped("<b>∂L/∂%s</b>", name);
	g_strfreev(parts);
	return title;
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

static const char *status_explanation(ClStatusCode code)
{
	switch (code) {
	case CL_STATUS_OK:
		return "";
	case CL_STATUS_GRAZING:
		return "a contact is tangential: the saltation matrix is undefined there, so the gradient is not trustworthy";
	case CL_STATUS_SIMULTANEOUS:
		return "two impacts happen at the same instant: the order of impacts, and so the gradient, is ambiguous";
	case CL_STATUS_ZENO:
		return "infinitely many impacts (the ball comes to rest): the event-driven gradient does not exist";
	case CL_STATUS_IN_CONTACT:
		return "a contact is active at t = 0: the derivative with respect to the initial state is one-sided";
	case CL_STATUS_DIVERGED:
		return "the state blew up: the contact stiffness is too large for this time step (try more steps or substeps)";
	case CL_STATUS_NOT_FINITE:
		return "a NaN or Inf appeared in the state";
	case CL_STATUS_SOLVER_FAILED:
		return "the contact solver did not converge";
	case CL_STATUS_UNSUPPORTED:
		return "this backend cannot simulate this scene";
	case CL_STATUS_IMPACT_LIMIT:
		return "the impacts never end (a nearly inelastic cluster): the event-driven run was stopped";
	case CL_STATUS_MEMORY_LIMIT:
		return "the run needs more memory than its budget: it was stopped before the machine ran out";
	case CL_STATUS_CANCELLED:
		return "cancelled";
	case CL_STATUS_COUNT:
		break;
	}
	return "";
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

static GtkWidget *row_header(const ClBackendResult *r)
{
	const ClBackendInfo *info = cl_backend_info(r->backend);
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	ClPlotColor color = cl_backend_color(r->backend, (FALSE) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
	double rgb[3] = {color.r, color.g, color.b};
	char *markup = g_markup_printf_escaped("<span foreground='#%02x%02x%02x'>●</span> <b>%s</b>\n<small>%s</small>",
										   (int)(rgb[0] * 255), (int)(rgb[1] * 255), (int)(rgb[2] * 255), info->id,
										   info->mirrors);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	g_free(markup);
	gtk_box_append(GTK_BOX(box), label);
	if (r->status.code != CL_STATUS_OK) {
		GtkWidget *icon = gtk_image_new_from_icon_name("dialog-warning-symbolic");
		char *tip = g_strdup_printf("%s: %s%s%s", cl_status_name(r->status.code), status_explanation(r->status.code),
									r->status.message[0] ? "\n" : "", r->status.message);
		gtk_widget_set_tooltip_text(icon, tip);
		gtk_accessible_update_property(GTK_ACCESSIBLE(icon), GTK_ACCESSIBLE_PROPERTY_LABEL, tip, -1);
		g_free(tip);
		gtk_box_append(GTK_BOX(box), icon);
	}
	gtk_widget_add_css_class(box, "row-header");
	char *name = g_strdup_printf("%s: %s", info->id, info->label);
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
	g_free(name);
	gtk_widget_set_tooltip_text(box, info->summary);
	return box;
}

static GtkWidget *cell(const ClGradientView *self, const ClComputeResult *result, const ClBackendResult *r, const ClBackendResult *exact, int k)
{
	const char *id = cl_backend_info(r->backend)->id;
	const char *name = result->column_names[k];
	double value = r->gradient[k], fd = r->fd[k];
	double reference = exact ? exact->gradient[k] : NAN;
	double error;
	ClAgreement agreement = r == exact ? CL_AGREEMENT_REFERENCE : cl_gradient_agreement(value, reference, &error);
	if (r == exact)
		error = 0;
	char text[64], fd_text[64], full[64];
	format_value(value, text, sizeof text);
	format_value(fd, fd_text, sizeof fd_text);
	format_full(value, full, sizeof full);
	/* a gradient that is not the derivative of its own forward map shows up here */
	double fd_error;
	ClAgreement self_check = k == 0 ? CL_AGREEMENT_GOOD : cl_gradient_agreement(fd, value, &fd_error);
	gboolean fd_differs = self_check != CL_AGREEMENT_GOOD && self_check != CL_AGREEMENT_FAIR && isfinite(fd);
	char *markup;
	if (k == 0)
		markup = g_markup_printf_escaped("<span font_features='tnum'>%s</span>", text);
	else
		markup = g_markup_printf_escaped(fd_differs ? "<span font_features='tnum'>%s</span>\n<small><span "
													  "foreground='#c64600' weight='bold'>FD %s</span></small>"
													: "<span font_features='tnum'>%s</span>\n<small><span "
													  "alpha='60%%'>FD %s</span></small>",
										 text, fd_text);
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	g_free(markup);
	gtk_label_set_xalign(GTK_LABEL(label), 1);
	gtk_widget_add_css_class(label, "cell");
	gtk_widget_add_css_class(label, agreement_class[agreement]);
	gboolean pointed_at = k > 0 && highlighted(self, r->backend, name);
	if (pointed_at)
		gtk_widget_add_css_class(label, "highlighted");

	GString *tip = g_string_new(NULL);
	if (k == 0)
		g_string_append_printf(tip, "Loss L computed with %s: %s", id, full);
	else
		g_string_append_printf(tip, "∂L/∂%s by %s (adjoint through its own step Jacobians): %s", name, id, full);
	if (exact && r != exact) {
		char exact_text[64];
		format_full(reference, exact_text, sizeof exact_text);
		g_string_append_printf(tip, "\nexact: %s", exact_text);
		if (isfinite(error))
			g_string_append_printf(tip, "\nrelative error against exact: %.3g %%", 100 * error);
	}
	g_string_append_printf(tip, "\n→ %s", agreement_text[agreement]);
	if (k > 0) {
		g_string_append_printf(tip, "\nFD: central difference of %s's own forward map, h = %.1e: %s", id, r->fd_step,
							   fd_text);
		if (fd_differs)
			g_string_append(tip, "\n→ the gradient is not the derivative of the backend's own simulation");
	}
	if (r->status.code != CL_STATUS_OK)
		g_string_append_printf(tip, "\nstatus %s: %s", cl_status_name(r->status.code), status_explanation(r->status.code));
	gtk_widget_set_tooltip_text(label, tip->str);
	g_string_free(tip, TRUE);
	/* the accessible name carries the full-precision number for screen readers and tests */
	char *accessible = g_strdup_printf("%s %s = %s", id, name, full);
	char *description = g_strdup_printf("%s%s", agreement_text[agreement], pointed_at ? " (highlighted)" : "");
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
	g_free(description);
	g_free(accessible);
	return label;
}

static void rebuild(ClGradientView *self)
{
	clear_grid(self);
	ClComputeResult *result = self->result;
	gtk_widget_set_visible(self->placeholder, !result || result->backend_count == 0);
	gtk_widget_set_sensitive(self->copy_button, result != NULL);
	if (!result)
		return;
	GtkGrid *grid = GTK_GRID(self->grid);
	gtk_grid_attach(grid, header_label("<b>backend</b>", "backend"), 0, 0, 1, 1);
	for (int k = 0; k < result->column_count; k++) {
		char *title = column_title(result->column_names[k]);
		GtkWidget *h = header_label(title, result->column_names[k]);
		gtk_label_set_xalign(GTK_LABEL(h), 1);
		gtk_label_set_justify(GTK_LABEL(h), GTK_JUSTIFY_RIGHT);
		gtk_grid_attach(grid, h, k + 1, 0, 1, 1);
		g_free(title);
	}
	const ClBackendResult *exact = cl_compute_result_find(result, cl_backend_reference());
	if (exact && exact->status.code != CL_STATUS_OK && exact->steps_done < result->scene->steps)
		exact = NULL; /* a failed reference cannot judge anything */
	int row = 1;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < result->backend_count; i++) {
			const ClBackendResult *r = &result->backends[i];
			if ((r == exact) != (pass == 0))
				continue;
			GtkWidget *header = row_header(r);
			if (highlighted(self, r->backend, NULL))
				gtk_widget_add_css_class(header, "highlighted");
			gtk_grid_attach(grid, header, 0, row, 1, 1);
			for (int k = 0; k < result->column_count; k++)
				gtk_grid_attach(grid, cell(self, result, r, exact, k), k + 1, row, 1, 1);
			row++;
		}
	}
	/* every result that is not ok gets a sentence, not just an icon */
	for (int i = 0; i < result->backend_count; i++) {
		const ClBackendResult *r = &result->backends[i];
		if (r->status.code == CL_STATUS_OK)
			continue;
		const char *id = cl_backend_info(r->backend)->id;
		char step[32] = "";
		if (r->status.step >= 0)
			g_snprintf(step, sizeof step, " at step %d", r->status.step);
		char *markup = g_markup_printf_escaped("<b>%s</b> — %s%s: %s.%s%s", id, cl_status_name(r->status.code), step,
											   status_explanation(r->status.code), r->status.message[0] ? " " : "",
											   r->status.message);
		gboolean warning = r->steps_done == result->scene->steps;
		add_note(self, warning ? "dialog-warning-symbolic" : "dialog-error-symbolic", markup);
		g_free(markup);
	}
	if (!exact)
		add_note(self, "dialog-information-symbolic",
				 "No exact reference for this scene: cells are not coloured by agreement.");
}

static void copy_csv(GtkButton *button, ClGradientView *self)
{
	(void)button;
	if (!self->result)
		return;
	char *csv = cl_compute_result_to_csv(self->result);
	gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(self)), csv);
	g_free(csv);
}

static void cl_gradient_view_dispose(GObject *object)
{
	ClGradientView *self = CL_GRADIENT_VIEW(object);
	g_clear_pointer(&self->box, gtk_widget_unparent);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	g_clear_pointer(&self->highlight, g_array_unref);
	G_OBJECT_CLASS(cl_gradient_view_parent_class)->dispose(object);
}

static void cl_gradient_view_class_init(ClGradientViewClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_gradient_view_dispose;
	gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
	gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "gradientview");
}

static void cl_gradient_view_init(ClGradientView *self)
{
	self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
	gtk_widget_set_parent(self->box, GTK_WIDGET(self));

	GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	GtkWidget *legend = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(legend),
						 "<small><span background='#d7f0d7'>  agrees  </span> <span background='#fcefc2'>  &lt;10 %  "
						 "</span> <span background='#fbd3b0'>  ≥10 %  </span> <span background='#f6b2b5'>  wrong sign  "
						 "</span>   each cell: adjoint value, then the backend's own finite difference (FD)</small>");
	gtk_label_set_xalign(GTK_LABEL(legend), 0);
	gtk_widget_set_hexpand(legend, TRUE);
	gtk_box_append(GTK_BOX(bar), legend);
	self->copy_button = gtk_button_new_with_label("Copy CSV");
	gtk_widget_set_tooltip_text(self->copy_button, "Copy the table as CSV: backend,parameter,value,fd,status");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->copy_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Copy gradients as CSV", -1);
	g_signal_connect(self->copy_button, "clicked", G_CALLBACK(copy_csv), self);
	gtk_box_append(GTK_BOX(bar), self->copy_button);
	gtk_box_append(GTK_BOX(self->box), bar);

	self->placeholder = gtk_label_new("Press Run (Ctrl+R) to compute gradients for every enabled backend.");
	gtk_widget_add_css_class(self->placeholder, "dim-label");
	gtk_box_append(GTK_BOX(self->box), self->placeholder);

	GtkWidget *scroll = gtk_scrolled_window_new();
	gtk_widget_set_vexpand(scroll, TRUE);
	self->grid = gtk_grid_new();
	gtk_widget_add_css_class(self->grid, "gradient-table");
	gtk_grid_set_column_spacing(GTK_GRID(self->grid), 0);
	gtk_grid_set_row_spacing(GTK_GRID(self->grid), 0);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->grid), GTK_ACCESSIBLE_PROPERTY_LABEL, "Gradient table", -1);
	GtkWidget *content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
	/* explanations first: a result that is not ok must not hide below the fold */
	self->notes = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	gtk_box_append(GTK_BOX(content), self->notes);
	gtk_box_append(GTK_BOX(content), self->grid);
	gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), content);
	gtk_box_append(GTK_BOX(self->box), scroll);
	gtk_widget_set_sensitive(self->copy_button, FALSE);
}

GtkWidget *cl_gradient_view_new(void)
{
	return g_object_new(CL_TYPE_GRADIENT_VIEW, NULL);
}

void cl_gradient_view_set_result(ClGradientView *self, ClComputeResult *result)
{
	if (result)
		cl_compute_result_ref(result);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	self->result = result;
	rebuild(self);
}

void cl_gradient_view_set_progress_state(ClGradientView *self, int runs_completed, gboolean computing)
{
	char *text = g_strdup_printf("runs completed: %d; computing: %s", runs_completed, computing ? "yes" : "no");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->grid), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
	g_free(text);
}

void cl_gradient_view_set_highlight(ClGradientView *self, const int *backends, const char *const *parameters,
									int count)
{
	g_clear_pointer(&self->highlight, g_array_unref);
	if (count > 0) {
		self->highlight = g_array_sized_new(FALSE, TRUE, sizeof(Highlight), (guint)count);
		for (int i = 0; i < count; i++) {
			Highlight h = {.backend = backends[i]};
			if (parameters && parameters[i])
				g_strlcpy(h.parameter, parameters[i], sizeof h.parameter);
			g_array_append_val(self->highlight, h);
		}
	}
	rebuild(self);
}
