#include "cl-backend-list.h"

#include "backend-style.h"
#include "cl-workbench.h"

#include <math.h>

typedef struct {
	int backend;
	int param;
	GtkWidget *widget;
} ParamWidget;

struct _ClBackendList {
	GtkWidget parent_instance;
	GtkWidget *box;
	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	gulong changed_handler;
	GtkWidget **checks; /* per backend */
	GArray *params;     /* ParamWidget */
	gboolean updating;
};

G_DEFINE_FINAL_TYPE(ClBackendList, cl_backend_list, GTK_TYPE_WIDGET)

static void draw_swatch(GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
	GdkRGBA fg;
	gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(area)), &fg);
	gboolean dark = fg.red + fg.green + fg.blue > 1.5;
	ClPlotColor c = cl_backend_color(GPOINTER_TO_INT(data), dark ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
	cairo_arc(cr, w / 2.0, h / 2.0, MIN(w, h) / 2.0 - 1, 0, 2 * G_PI);
	cairo_set_source_rgb(cr, c.r, c.g, c.b);
	cairo_fill(cr);
}

static void enabled_toggled(GtkCheckButton *check, ClBackendList *self)
{
	if (self->updating || !self->doc)
		return;
	cl_document_set_backend_enabled(self->doc, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(check), "backend")),
									gtk_check_button_get_active(check));
}

typedef struct {
	const ParamWidget *param;
	double value;
} ParamEdit;

static gboolean apply_param(ClScene *scene, gpointer data, char *message, gsize size)
{
	const ParamEdit *e = data;
	const char *name = cl_backend_info(e->param->backend)->params[e->param->param].name;
	return cl_scene_set_backend_param(scene, e->param->backend, name, e->value, message, size);
}

static void set_param(ClBackendList *self, const ParamWidget *p, double value)
{
	if (self->updating || !self->doc)
		return;
	if (cl_document_get_scene(self->doc)->backend_params[p->backend].values[p->param] == value)
		return;
	const ClBackendInfo *info = cl_backend_info(p->backend);
	g_autofree char *label = g_strdup_printf("Set %s.%s", info->id, info->params[p->param].name);
	g_autofree char *key = g_strdup_printf("param:%d:%d", p->backend, p->param);
	ParamEdit edit = {p, value};
	g_autoptr(GError) error = NULL;
	if (!cl_document_edit(self->doc, label, key, apply_param, &edit, &error) && self->workbench)
		cl_workbench_notify(self->workbench, error->message);
}

static ParamWidget *param_of(ClBackendList *self, GtkWidget *widget)
{
	for (guint i = 0; i < self->params->len; i++) {
		ParamWidget *p = &g_array_index(self->params, ParamWidget, i);
		if (p->widget == widget)
			return p;
	}
	return NULL;
}

static void spin_changed(GtkSpinButton *spin, ClBackendList *self)
{
	ParamWidget *p = param_of(self, GTK_WIDGET(spin));
	if (p)
		set_param(self, p, gtk_spin_button_get_value(spin));
}

static void dropdown_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClBackendList *self)
{
	(void)pspec;
	ParamWidget *p = param_of(self, GTK_WIDGET(dropdown));
	if (p)
		set_param(self, p, gtk_drop_down_get_selected(dropdown));
}

static void switch_changed(GtkSwitch *sw, GParamSpec *pspec, ClBackendList *self)
{
	(void)pspec;
	ParamWidget *p = param_of(self, GTK_WIDGET(sw));
	if (p)
		set_param(self, p, gtk_switch_get_active(sw) ? 1 : 0);
}

static int digits_for(const ClParamDesc *d)
{
	double span = d->max - d->min;
	if (!isfinite(span) || span > 1e3)
		return 1;
	return span > 10 ? 2 : 4;
}

static GtkWidget *param_widget(ClBackendList *self, int backend, int index)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	const ClParamDesc *d = &info->params[index];
	GtkWidget *w;
	switch (d->kind) {
	case CL_PARAM_KIND_CHOICE:
		w = gtk_drop_down_new_from_strings(d->choices);
		g_signal_connect(w, "notify::selected", G_CALLBACK(dropdown_changed), self);
		break;
	case CL_PARAM_KIND_BOOL:
		w = gtk_switch_new();
		gtk_widget_set_halign(w, GTK_ALIGN_START);
		g_signal_connect(w, "notify::active", G_CALLBACK(switch_changed), self);
		break;
	case CL_PARAM_KIND_INT:
	case CL_PARAM_KIND_REAL: {
		gboolean integer = d->kind == CL_PARAM_KIND_INT;
		double step = integer ? 1 : fmax(pow(10, floor(log10(fmax(fabs(d->default_value), 1e-12)))) / 10, 1e-6);
		GtkAdjustment *adj = gtk_adjustment_new(d->default_value, d->min, d->max, step, step * 10, 0);
		w = gtk_spin_button_new(adj, step, integer ? 0 : (guint)digits_for(d));
		gtk_spin_button_set_numeric(GTK_SPIN_BUTTON(w), TRUE);
		g_signal_connect(w, "value-changed", G_CALLBACK(spin_changed), self);
		break;
	}
	default:
		w = gtk_label_new("?");
	}
	char *tip = g_strdup_printf("%s%s%s%s (default %g, range [%g, %g])", d->help, d->unit && *d->unit ? " [" : "",
								d->unit ? d->unit : "", d->unit && *d->unit ? "]" : "", d->default_value, d->min,
								d->max);
	gtk_widget_set_tooltip_text(w, tip);
	g_free(tip);
	char *name = g_strdup_printf("%s %s", info->id, d->name);
	gtk_accessible_update_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL, name,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, d->help, -1);
	g_free(name);
	ParamWidget p = {backend, index, w};
	g_array_append_val(self->params, p);
	return w;
}

static GtkWidget *backend_row(ClBackendList *self, int b)
{
	const ClBackendInfo *info = cl_backend_info(b);
	GtkWidget *row = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
	gtk_widget_add_css_class(row, "backend-row");
	GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	GtkWidget *swatch = gtk_drawing_area_new();
	gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(swatch), 12);
	gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(swatch), 12);
	gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(swatch), draw_swatch, GINT_TO_POINTER(b), NULL);
	gtk_widget_set_valign(swatch, GTK_ALIGN_CENTER);
	gtk_accessible_update_property(GTK_ACCESSIBLE(swatch), GTK_ACCESSIBLE_PROPERTY_LABEL, "Trajectory colour", -1);
	GtkWidget *check = gtk_check_button_new();
	char *markup = g_markup_printf_escaped("<b>%s</b>  <small>%s · mirrors %s%s</small>", info->id, info->family,
										   info->mirrors, info->toi ? " · TOI" : "");
	GtkWidget *label = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(label), markup);
	g_free(markup);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
	gtk_check_button_set_child(GTK_CHECK_BUTTON(check), label);
	char *name = g_strdup_printf("Enable %s", info->id);
	gtk_accessible_update_property(GTK_ACCESSIBLE(check), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
	g_free(name);
	gtk_widget_set_tooltip_text(check, info->label);
	g_object_set_data(G_OBJECT(check), "backend", GINT_TO_POINTER(b));
	g_signal_connect(check, "toggled", G_CALLBACK(enabled_toggled), self);
	self->checks[b] = check;
	gtk_box_append(GTK_BOX(top), swatch);
	gtk_box_append(GTK_BOX(top), check);
	gtk_box_append(GTK_BOX(row), top);

	/* one sentence anyone can read, the details (and parameters) below it */
	GtkWidget *intro = gtk_label_new(info->intro);
	gtk_label_set_wrap(GTK_LABEL(intro), TRUE);
	gtk_label_set_xalign(GTK_LABEL(intro), 0);
	gtk_label_set_max_width_chars(GTK_LABEL(intro), 40);
	gtk_widget_set_margin_start(intro, 24);
	gtk_widget_add_css_class(intro, "backend-intro");
	gtk_box_append(GTK_BOX(row), intro);
	/* not in the details: a scene value it ignores must not pass unnoticed */
	if (info->cannot_express) {
		char *text = g_strdup_printf("Cannot express: %s", info->cannot_express);
		GtkWidget *cannot = gtk_label_new(text);
		g_free(text);
		gtk_label_set_wrap(GTK_LABEL(cannot), TRUE);
		gtk_label_set_xalign(GTK_LABEL(cannot), 0);
		gtk_label_set_max_width_chars(GTK_LABEL(cannot), 40);
		gtk_widget_set_margin_start(cannot, 24);
		gtk_widget_add_css_class(cannot, "backend-intro");
		gtk_widget_add_css_class(cannot, "warning");
		gtk_box_append(GTK_BOX(row), cannot);
	}

	GtkWidget *expander = gtk_expander_new("Details and parameters");
	char *expander_name = g_strdup_printf("%s details and parameters", info->id);
	gtk_accessible_update_property(GTK_ACCESSIBLE(expander), GTK_ACCESSIBLE_PROPERTY_LABEL, expander_name, -1);
	g_free(expander_name);
	gtk_widget_set_margin_start(expander, 24);
	GtkWidget *inner = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	GtkWidget *summary = gtk_label_new(info->summary);
	gtk_label_set_wrap(GTK_LABEL(summary), TRUE);
	gtk_label_set_xalign(GTK_LABEL(summary), 0);
	gtk_label_set_max_width_chars(GTK_LABEL(summary), 40);
	gtk_widget_add_css_class(summary, "backend-summary");
	gtk_box_append(GTK_BOX(inner), summary);
	if (!info->gradient_is_derivative) {
		GtkWidget *warn = gtk_label_new("Its gradient is not the derivative of its own forward map: "
										"expect it to differ from its FD column.");
		gtk_label_set_wrap(GTK_LABEL(warn), TRUE);
		gtk_label_set_xalign(GTK_LABEL(warn), 0);
		gtk_widget_add_css_class(warn, "backend-summary");
		gtk_box_append(GTK_BOX(inner), warn);
	}
	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
	gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
	for (int i = 0; i < info->param_count; i++) {
		const ClParamDesc *d = &info->params[i];
		char *text = d->unit && *d->unit ? g_strdup_printf("%s [%s]", d->name, d->unit) : g_strdup(d->name);
		GtkWidget *l = gtk_label_new(text);
		g_free(text);
		gtk_label_set_xalign(GTK_LABEL(l), 0);
		gtk_widget_add_css_class(l, "dim-label");
		gtk_widget_set_tooltip_text(l, d->help);
		GtkWidget *w = param_widget(self, b, i);
		gtk_widget_set_hexpand(w, TRUE);
		gtk_grid_attach(GTK_GRID(grid), l, 0, i, 1, 1);
		gtk_grid_attach(GTK_GRID(grid), w, 1, i, 1, 1);
	}
	gtk_box_append(GTK_BOX(inner), grid);
	gtk_expander_set_child(GTK_EXPANDER(expander), inner);
	gtk_box_append(GTK_BOX(row), expander);
	return row;
}

/* The checks and parameter widgets follow the document (an undo, a load, a lesson step). */
static void refresh(ClBackendList *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	self->updating = TRUE;
	for (int b = 0; b < cl_backend_count(); b++)
		gtk_check_button_set_active(GTK_CHECK_BUTTON(self->checks[b]), cl_document_backend_enabled(self->doc, b));
	for (guint i = 0; i < self->params->len; i++) {
		ParamWidget *p = &g_array_index(self->params, ParamWidget, i);
		double v = scene->backend_params[p->backend].values[p->param];
		if (GTK_IS_SPIN_BUTTON(p->widget))
			gtk_spin_button_set_value(GTK_SPIN_BUTTON(p->widget), v);
		else if (GTK_IS_DROP_DOWN(p->widget))
			gtk_drop_down_set_selected(GTK_DROP_DOWN(p->widget), (guint)v);
		else if (GTK_IS_SWITCH(p->widget))
			gtk_switch_set_active(GTK_SWITCH(p->widget), v != 0);
	}
	self->updating = FALSE;
}

static void document_changed(ClDocument *doc, guint what, ClBackendList *self)
{
	(void)doc;
	if (what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_BACKENDS))
		refresh(self);
}

static void cl_backend_list_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_backend_list_parent_class)->root(widget);
	ClBackendList *self = CL_BACKEND_LIST(widget);
	self->workbench = cl_workbench_of(widget);
	if (!self->workbench)
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	refresh(self);
}

static void cl_backend_list_unroot(GtkWidget *widget)
{
	ClBackendList *self = CL_BACKEND_LIST(widget);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	self->workbench = NULL;
	GTK_WIDGET_CLASS(cl_backend_list_parent_class)->unroot(widget);
}

static void cl_backend_list_dispose(GObject *object)
{
	ClBackendList *self = CL_BACKEND_LIST(object);
	g_clear_pointer(&self->box, gtk_widget_unparent);
	g_clear_pointer(&self->checks, g_free);
	g_clear_pointer(&self->params, g_array_unref);
	G_OBJECT_CLASS(cl_backend_list_parent_class)->dispose(object);
}

static void cl_backend_list_class_init(ClBackendListClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_backend_list_dispose;
	GTK_WIDGET_CLASS(klass)->root = cl_backend_list_root;
	GTK_WIDGET_CLASS(klass)->unroot = cl_backend_list_unroot;
	gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

static void cl_backend_list_init(ClBackendList *self)
{
	self->params = g_array_new(FALSE, FALSE, sizeof(ParamWidget));
	self->checks = g_new0(GtkWidget *, (gsize)cl_backend_count());
	self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
	gtk_widget_set_margin_start(self->box, 10);
	gtk_widget_set_margin_end(self->box, 10);
	gtk_widget_set_margin_top(self->box, 8);
	gtk_widget_set_margin_bottom(self->box, 10);
	gtk_widget_set_parent(self->box, GTK_WIDGET(self));
	GtkWidget *intro = gtk_label_new("Tick the contact models to simulate and compare. exact is the reference; "
									 "open a model for what it does and its parameters.");
	gtk_label_set_wrap(GTK_LABEL(intro), TRUE);
	gtk_label_set_xalign(GTK_LABEL(intro), 0);
	gtk_widget_add_css_class(intro, "dim-label");
	gtk_box_append(GTK_BOX(self->box), intro);
	for (int b = 0; b < cl_backend_count(); b++)
		gtk_box_append(GTK_BOX(self->box), backend_row(self, b));
}
