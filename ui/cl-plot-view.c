#include "cl-plot-view.h"

#include "cl-workbench.h"
#include "numbers.h"

#include <math.h>

#define DEFAULT_DPI 150.0

struct _ClPlotView {
	GtkWidget parent_instance;
	GtkWidget *menu_button;
	ClPlotFigure *figure;
	char *placeholder;
	char *export_name;
	double export_width, export_height;
	ClPlotViewCsvFunc csv_func;
	gpointer csv_data;
	gboolean crosshair;
	gboolean faded;
	char *readout;
	/* the pointer, when it is over a plot area */
	gboolean hovering;
	double pointer_x, pointer_y;
	int hover_row, hover_col;
	double hover_x, hover_y;
	/* in a workbench: its document, whose hidden backends the figure hides */
	ClDocument *doc;
	gulong changed_handler;
	gboolean on_legend;
};

G_DEFINE_FINAL_TYPE(ClPlotView, cl_plot_view, GTK_TYPE_WIDGET)

enum { SIGNAL_HOVER, SIGNAL_PICK, N_SIGNALS };
static guint signals[N_SIGNALS];

static gboolean prefers_dark(GtkWidget *widget)
{
	gboolean dark = FALSE;
	g_object_get(gtk_widget_get_settings(widget), "gtk-application-prefer-dark-theme", &dark, NULL);
	return dark;
}

/* ------------------------------------------------------------- drawing */

static void draw_readout(ClPlotView *self, cairo_t *cr, double width, double height)
{
	char fallback[160];
	const char *markup = self->readout;
	if (!markup) {
		g_snprintf(fallback, sizeof fallback, "x = %s\ny = %s", cl_format_number(self->hover_x).text,
				   cl_format_number(self->hover_y).text);
		markup = fallback;
	}
	PangoLayout *layout = gtk_widget_create_pango_layout(GTK_WIDGET(self), NULL);
	PangoFontDescription *font = pango_font_description_from_string("Sans 8.5");
	pango_layout_set_font_description(layout, font);
	pango_font_description_free(font);
	pango_layout_set_markup(layout, markup, -1);
	int tw, th;
	pango_layout_get_pixel_size(layout, &tw, &th);
	double pad = 5, w = tw + 2 * pad, h = th + 2 * pad;
	/* beside the pointer, flipped to stay inside the widget */
	double x = self->pointer_x + 14, y = self->pointer_y + 14;
	if (x + w > width - 2)
		x = self->pointer_x - 14 - w;
	if (y + h > height - 2)
		y = self->pointer_y - 14 - h;
	x = MAX(x, 2);
	y = MAX(y, 2);
	cairo_new_path(cr);
	double r = 4;
	cairo_arc(cr, x + w - r, y + r, r, -G_PI / 2, 0);
	cairo_arc(cr, x + w - r, y + h - r, r, 0, G_PI / 2);
	cairo_arc(cr, x + r, y + h - r, r, G_PI / 2, G_PI);
	cairo_arc(cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
	cairo_close_path(cr);
	cairo_set_source_rgba(cr, 0.12, 0.12, 0.14, 0.88);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_move_to(cr, x + pad, y + pad);
	pango_cairo_show_layout(cr, layout);
	g_object_unref(layout);
}

static void cl_plot_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
	ClPlotView *self = CL_PLOT_VIEW(widget);
	double width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
	if (width < 10 || height < 10)
		return;
	cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
	if (self->figure) {
		cl_plot_figure_set_theme(self->figure, prefers_dark(widget) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
		cl_plot_figure_set_crosshair(self->figure, self->hovering && self->crosshair ? self->hover_x : NAN,
									 self->hovering && self->crosshair ? self->hover_y : NAN);
		cl_plot_figure_draw(self->figure, cr, width, height);
		if (self->faded) {
			/* a wash in the same drawing, not widget opacity: GTK 4.8's Cairo
			 * renderer, replaying some figures inside an opacity group, crashes
			 * in cairo 1.16 */
			ClPlotColor bg = cl_plot_theme_background(prefers_dark(widget) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
			cairo_set_source_rgba(cr, bg.r, bg.g, bg.b, 0.55);
			cairo_paint(cr);
		}
		if (self->hovering)
			draw_readout(self, cr, width, height);
	} else if (self->placeholder) {
		PangoLayout *layout = gtk_widget_create_pango_layout(widget, NULL);
		pango_layout_set_markup(layout, self->placeholder, -1);
		pango_layout_set_width(layout, (int)(MAX(width - 40, 50) * PANGO_SCALE));
		pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER);
		int tw, th;
		pango_layout_get_pixel_size(layout, &tw, &th);
		GdkRGBA fg;
		gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
		cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.6);
		cairo_move_to(cr, 20, (height - th) / 2);
		pango_cairo_show_layout(cr, layout);
		g_object_unref(layout);
	}
	cairo_destroy(cr);
	gtk_widget_snapshot_child(widget, self->menu_button, snapshot);
}

static void cl_plot_view_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
								 int *natural, int *minimum_baseline, int *natural_baseline)
{
	(void)for_size;
	ClPlotView *self = CL_PLOT_VIEW(widget);
	int child_min, child_nat;
	gtk_widget_measure(self->menu_button, orientation, -1, &child_min, &child_nat, NULL, NULL);
	gboolean horizontal = orientation == GTK_ORIENTATION_HORIZONTAL;
	*minimum = MAX(child_min, horizontal ? 240 : 180);
	*natural = horizontal ? 640 : 420;
	*minimum_baseline = *natural_baseline = -1;
}

static void cl_plot_view_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
	(void)height, (void)baseline;
	ClPlotView *self = CL_PLOT_VIEW(widget);
	GtkRequisition size;
	gtk_widget_get_preferred_size(self->menu_button, &size, NULL);
	/* top right, clear of the figure's title */
	gtk_widget_size_allocate(self->menu_button,
							 &(GtkAllocation){MAX(width - size.width - 4, 0), 4, size.width, size.height}, -1);
}

/* --------------------------------------------------------------- hover */

/* The backend whose legend entry is under (px, py) in the last draw, or −1. */
static int legend_backend_at(ClPlotView *self, double px, double py)
{
	const char *group = self->doc && self->figure ? cl_plot_figure_legend_pick(self->figure, px, py) : NULL;
	return group ? cl_backend_find(group) : -1;
}

static void update_hover(ClPlotView *self, double px, double py)
{
	gboolean on_legend = legend_backend_at(self, px, py) >= 0;
	if (on_legend != self->on_legend) {
		self->on_legend = on_legend;
		gtk_widget_set_cursor_from_name(GTK_WIDGET(self), on_legend ? "pointer" : NULL);
	}
	int row = -1, col = -1;
	double x = NAN, y = NAN;
	gboolean inside = self->figure && cl_plot_figure_pick(self->figure, px, py, &row, &col, &x, &y);
	self->pointer_x = px;
	self->pointer_y = py;
	if (inside != self->hovering || inside) {
		self->hovering = inside;
		self->hover_row = row;
		self->hover_col = col;
		self->hover_x = x;
		self->hover_y = y;
		g_signal_emit(self, signals[SIGNAL_HOVER], 0, row, col, x, y);
		gtk_widget_queue_draw(GTK_WIDGET(self));
	}
}

static void motion(GtkEventControllerMotion *controller, double x, double y, ClPlotView *self)
{
	(void)controller;
	update_hover(self, x, y);
}

static void leave(GtkEventControllerMotion *controller, ClPlotView *self)
{
	(void)controller;
	if (self->hovering) {
		self->hovering = FALSE;
		g_signal_emit(self, signals[SIGNAL_HOVER], 0, -1, -1, NAN, NAN);
		gtk_widget_queue_draw(GTK_WIDGET(self));
	}
}

static void pressed(GtkGestureClick *gesture, int n_press, double x, double y, ClPlotView *self)
{
	(void)n_press;
	guint button = gtk_gesture_single_get_current_button(GTK_GESTURE_SINGLE(gesture));
	gtk_widget_grab_focus(GTK_WIDGET(self));
	if (button == GDK_BUTTON_SECONDARY) {
		gtk_menu_button_popup(GTK_MENU_BUTTON(self->menu_button));
		return;
	}
	/* a click on a backend in the legend hides or shows it everywhere, as on the canvas */
	int backend = button == GDK_BUTTON_PRIMARY ? legend_backend_at(self, x, y) : -1;
	if (backend >= 0) {
		cl_document_toggle_backend_hidden(self->doc, backend);
		return;
	}
	int row, col;
	double dx, dy;
	if (button == GDK_BUTTON_PRIMARY && self->figure && cl_plot_figure_pick(self->figure, x, y, &row, &col, &dx, &dy))
		g_signal_emit(self, signals[SIGNAL_PICK], 0, row, col, dx, dy);
}

/* -------------------------------------------------------------- export */

static gboolean write_csv(ClPlotView *self, const char *path, GError **error)
{
	GString *csv = self->csv_func ? self->csv_func(self->csv_data) : NULL;
	if (!csv) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "this figure has no data to export yet");
		return FALSE;
	}
	gboolean ok = cl_write_output(path, csv, error);
	g_string_free(csv, TRUE);
	return ok;
}

gboolean cl_plot_view_export(ClPlotView *self, const char *path, double dpi, GError **error)
{
	const char *dot = strrchr(path, '.');
	if (dot && g_ascii_strcasecmp(dot, ".csv") == 0)
		return write_csv(self, path, error);
	if (!self->figure) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no figure to export yet");
		return FALSE;
	}
	/* publication output: the light theme, no hover decorations */
	cl_plot_figure_set_theme(self->figure, CL_PLOT_THEME_LIGHT);
	cl_plot_figure_set_crosshair(self->figure, NAN, NAN);
	gboolean ok = cl_plot_figure_export(self->figure, path, CL_PLOT_FORMAT_AUTO, self->export_width,
										self->export_height, dpi > 0 ? dpi : DEFAULT_DPI, error);
	/* the export's layout replaced the screen's: draw again before picking */
	gtk_widget_queue_draw(GTK_WIDGET(self));
	return ok;
}

static void show_error(ClPlotView *self, const char *primary, const char *secondary)
{
	GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
	GtkWidget *dialog = gtk_message_dialog_new(GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL,
											   GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT, GTK_MESSAGE_ERROR,
											   GTK_BUTTONS_CLOSE, "%s", primary);
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog), "%s", secondary);
	g_signal_connect(dialog, "response", G_CALLBACK(gtk_window_destroy), NULL);
	gtk_window_present(GTK_WINDOW(dialog));
}

static const char *const formats[] = {"png", "svg", "pdf", "csv", NULL};
static const char *const format_labels[] = {"PNG image", "SVG drawing", "PDF document", "CSV data", NULL};
static const char *const dpis[] = {"72", "150", "300", "600", NULL};
static const char *const dpi_labels[] = {"72 dpi (screen)", "150 dpi", "300 dpi (print)", "600 dpi", NULL};

static void export_chosen(GtkNativeDialog *dialog, int response, ClPlotView *self)
{
	if (response == GTK_RESPONSE_ACCEPT) {
		GtkFileChooser *chooser = GTK_FILE_CHOOSER(dialog);
		GFile *file = gtk_file_chooser_get_file(chooser);
		char *path = file ? g_file_get_path(file) : NULL;
		const char *format = gtk_file_chooser_get_choice(chooser, "format");
		const char *dpi = gtk_file_chooser_get_choice(chooser, "dpi");
		if (path) {
			/* a known extension wins; otherwise the chosen format's is added */
			const char *dot = strrchr(path, '.');
			gboolean known = FALSE;
			for (int i = 0; dot && formats[i]; i++)
				known |= g_ascii_strcasecmp(dot + 1, formats[i]) == 0;
			if (!known) {
				char *full = g_strdup_printf("%s.%s", path, format ? format : "png");
				g_free(path);
				path = full;
			}
			GError *error = NULL;
			if (!cl_plot_view_export(self, path, dpi ? g_ascii_strtod(dpi, NULL) : DEFAULT_DPI, &error)) {
				show_error(self, "Could not export the figure", error->message);
				g_error_free(error);
			}
		}
		g_free(path);
		g_clear_object(&file);
	}
	g_object_unref(dialog);
	g_object_unref(self);
}

void cl_plot_view_choose_export(ClPlotView *self, const char *format)
{
	GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
		"Export Figure", GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	GtkFileChooser *fc = GTK_FILE_CHOOSER(chooser);
	/* GTK 4.8 takes the option tables as non-const; it copies them */
	gtk_file_chooser_add_choice(fc, "format", "Format", (const char **)formats, (const char **)format_labels);
	gtk_file_chooser_add_choice(fc, "dpi", "PNG resolution", (const char **)dpis, (const char **)dpi_labels);
	gboolean known = FALSE;
	for (int i = 0; formats[i]; i++)
		known |= g_strcmp0(format, formats[i]) == 0;
	format = known ? format : "png";
	gtk_file_chooser_set_choice(fc, "format", format);
	gtk_file_chooser_set_choice(fc, "dpi", "150");
	char *name = g_strdup_printf("%s.%s", self->export_name, format);
	gtk_file_chooser_set_current_name(fc, name);
	g_free(name);
	g_signal_connect(chooser, "response", G_CALLBACK(export_chosen), g_object_ref(self));
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void export_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
	(void)name;
	cl_plot_view_choose_export(CL_PLOT_VIEW(widget), g_variant_get_string(parameter, NULL));
}

/* ------------------------------------------------------------- public */

GtkWidget *cl_plot_view_new(void)
{
	return g_object_new(CL_TYPE_PLOT_VIEW, NULL);
}

void cl_plot_view_set_figure(ClPlotView *self, ClPlotFigure *figure)
{
	if (self->figure != figure)
		cl_plot_figure_free(self->figure);
	self->figure = figure;
	if (figure && self->doc)
		cl_document_hide_in_figure(self->doc, figure);
	gtk_widget_action_set_enabled(GTK_WIDGET(self), "plot.export", figure != NULL);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

ClPlotFigure *cl_plot_view_get_figure(ClPlotView *self)
{
	return self->figure;
}

void cl_plot_view_set_placeholder(ClPlotView *self, const char *text)
{
	g_free(self->placeholder);
	self->placeholder = g_strdup(text);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_plot_view_set_export_size(ClPlotView *self, double width, double height)
{
	self->export_width = width;
	self->export_height = height;
}

void cl_plot_view_get_export_size(ClPlotView *self, double *width, double *height)
{
	*width = self->export_width;
	*height = self->export_height;
}

void cl_plot_view_set_export_name(ClPlotView *self, const char *stem)
{
	g_free(self->export_name);
	self->export_name = g_strdup(stem);
}

void cl_plot_view_set_csv_func(ClPlotView *self, ClPlotViewCsvFunc func, gpointer user_data)
{
	self->csv_func = func;
	self->csv_data = user_data;
}

void cl_plot_view_set_crosshair(ClPlotView *self, gboolean crosshair)
{
	self->crosshair = crosshair;
}

void cl_plot_view_set_readout(ClPlotView *self, const char *markup)
{
	if (g_strcmp0(self->readout, markup) == 0)
		return;
	g_free(self->readout);
	self->readout = g_strdup(markup);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_plot_view_set_faded(ClPlotView *view, gboolean faded)
{
	g_return_if_fail(CL_IS_PLOT_VIEW(view));
	if (view->faded == !!faded)
		return;
	view->faded = !!faded;
	gtk_widget_queue_draw(GTK_WIDGET(view));
}

/* ----------------------------------------------------------- lifecycle */

static void document_changed(ClDocument *doc, guint what, ClPlotView *self)
{
	if (!(what & CL_DOCUMENT_BACKENDS) || !self->figure)
		return;
	cl_document_hide_in_figure(doc, self->figure);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void cl_plot_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_plot_view_parent_class)->root(widget);
	ClPlotView *self = CL_PLOT_VIEW(widget);
	ClWorkbench *workbench = cl_workbench_of(widget);
	if (!workbench)
		return;
	self->doc = cl_workbench_get_document(workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	document_changed(self->doc, CL_DOCUMENT_BACKENDS, self);
}

static void cl_plot_view_unroot(GtkWidget *widget)
{
	ClPlotView *self = CL_PLOT_VIEW(widget);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	GTK_WIDGET_CLASS(cl_plot_view_parent_class)->unroot(widget);
}

static void cl_plot_view_dispose(GObject *object)
{
	ClPlotView *self = CL_PLOT_VIEW(object);
	g_clear_pointer(&self->menu_button, gtk_widget_unparent);
	G_OBJECT_CLASS(cl_plot_view_parent_class)->dispose(object);
}

static void cl_plot_view_finalize(GObject *object)
{
	ClPlotView *self = CL_PLOT_VIEW(object);
	cl_plot_figure_free(self->figure);
	g_free(self->placeholder);
	g_free(self->export_name);
	g_free(self->readout);
	G_OBJECT_CLASS(cl_plot_view_parent_class)->finalize(object);
}

static void cl_plot_view_class_init(ClPlotViewClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_plot_view_dispose;
	object_class->finalize = cl_plot_view_finalize;
	widget_class->snapshot = cl_plot_view_snapshot;
	widget_class->root = cl_plot_view_root;
	widget_class->unroot = cl_plot_view_unroot;
	widget_class->measure = cl_plot_view_measure;
	widget_class->size_allocate = cl_plot_view_size_allocate;
	/* row, col, x, y of the panel and data point under the pointer; row −1 when it left */
	signals[SIGNAL_HOVER] = g_signal_new("hover", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
										 G_TYPE_NONE, 4, G_TYPE_INT, G_TYPE_INT, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
	/* a primary click on a plot area */
	signals[SIGNAL_PICK] = g_signal_new("pick", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
										G_TYPE_NONE, 4, G_TYPE_INT, G_TYPE_INT, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
	gtk_widget_class_install_action(widget_class, "plot.export", "s", export_action);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "plot.export",
										"s", "png");
	gtk_widget_class_set_css_name(widget_class, "plotview");
	gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void cl_plot_view_init(ClPlotView *self)
{
	GtkWidget *widget = GTK_WIDGET(self);
	self->export_width = 540;
	self->export_height = 360;
	self->export_name = g_strdup("figure");
	self->crosshair = TRUE;
	gtk_widget_set_focusable(widget, TRUE);
	gtk_widget_set_hexpand(widget, TRUE);
	gtk_widget_set_vexpand(widget, TRUE);

	GMenu *menu = g_menu_new();
	GMenu *figure = g_menu_new();
	g_menu_append(figure, "Export as PNG…", "plot.export::png");
	g_menu_append(figure, "Export as SVG…", "plot.export::svg");
	g_menu_append(figure, "Export as PDF…", "plot.export::pdf");
	g_menu_append_section(menu, NULL, G_MENU_MODEL(figure));
	GMenu *data = g_menu_new();
	g_menu_append(data, "Export Data as CSV…", "plot.export::csv");
	g_menu_append_section(menu, NULL, G_MENU_MODEL(data));
	self->menu_button = gtk_menu_button_new();
	gtk_menu_button_set_icon_name(GTK_MENU_BUTTON(self->menu_button), "document-save-symbolic");
	gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(self->menu_button), G_MENU_MODEL(menu));
	gtk_widget_set_tooltip_text(self->menu_button, "Export the figure (Ctrl+Shift+E) or its data");
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->menu_button), GTK_ACCESSIBLE_PROPERTY_LABEL, "Export figure",
								   -1);
	gtk_widget_add_css_class(self->menu_button, "flat");
	gtk_widget_add_css_class(self->menu_button, "plot-export");
	gtk_widget_set_parent(self->menu_button, widget);
	g_object_unref(figure);
	g_object_unref(data);
	g_object_unref(menu);
	gtk_widget_action_set_enabled(widget, "plot.export", FALSE);

	GtkEventController *m = gtk_event_controller_motion_new();
	g_signal_connect(m, "motion", G_CALLBACK(motion), self);
	g_signal_connect(m, "leave", G_CALLBACK(leave), self);
	gtk_widget_add_controller(widget, m);
	GtkGesture *click = gtk_gesture_click_new();
	gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), 0);
	g_signal_connect(click, "pressed", G_CALLBACK(pressed), self);
	gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));
}
