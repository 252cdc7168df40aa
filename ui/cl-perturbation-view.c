#include "backend-style.h"
#include "cl-perturbation-view.h"

#include "cl-scene-render.h"

#include <math.h>
#include <pango/pangocairo.h>

struct _ClPerturbationView {
	GtkWidget parent_instance;
	GtkWidget *box;
	GtkWidget *dropdown;
	GtkStringList *names;
	GtkWidget *delta;
	GtkWidget *area;
	ClComputeResult *result;
	gboolean *visible;
	gboolean updating;
};

G_DEFINE_FINAL_TYPE(ClPerturbationView, cl_perturbation_view, GTK_TYPE_WIDGET)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct {
	double x0, y0, x1, y1;
} Box;

static void grow(Box *b, double x, double y)
{
	if (!isfinite(x) || !isfinite(y) || fabs(x) > 1e4 || fabs(y) > 1e4)
		return;
	b->x0 = fmin(b->x0, x), b->y0 = fmin(b->y0, y);
	b->x1 = fmax(b->x1, x), b->y1 = fmax(b->y1, y);
}

typedef struct {
	double ox, oy, scale; /* screen = o + scale·(x, −y) */
} Map;

static void to_screen(const Map *m, double x, double y, double *sx, double *sy)
{
	*sx = m->ox + m->scale * x;
	*sy = m->oy - m->scale * y;
}

static void path(cairo_t *cr, const Map *m, const double *states, int ns, int ball, int count, const int *steps,
				 const double *tangents, double sign, double delta)
{
	gboolean pen = FALSE;
	for (int k = 0; k < count; k++) {
		int n = steps ? steps[k] : k;
		const double *s = states + (gsize)n * (gsize)ns + CL_BALL_STATE * ball;
		double x = s[0], y = s[1];
		if (tangents) {
			x += sign * delta * tangents[(gsize)k * (gsize)ns + CL_BALL_STATE * ball];
			y += sign * delta * tangents[(gsize)k * (gsize)ns + CL_BALL_STATE * ball + 1];
		}
		if (!isfinite(x) || !isfinite(y)) {
			pen = FALSE;
			continue;
		}
		double sx, sy;
		to_screen(m, x, y, &sx, &sy);
		if (pen)
			cairo_line_to(cr, sx, sy);
		else
			cairo_move_to(cr, sx, sy);
		pen = TRUE;
	}
}

static void label(cairo_t *cr, PangoLayout *layout, double x, double y, const char *markup)
{
	pango_layout_set_markup(layout, markup, -1);
	cairo_move_to(cr, x, y);
	pango_cairo_show_layout(cr, layout);
	cairo_new_path(cr);
}

/* Distance at t = T between the prediction and its simulation, relative to
 * how far the simulation moved: 0 = the gradient predicts the perturbation. */
static double miss(const ClComputeResult *result, const ClBackendResult *r, int ball)
{
	const ClScene *scene = result->scene;
	int ns = cl_state_size(scene), n = scene->steps, k = r->tangent_count - 1;
	if (r->steps_done < n || k < 0 || r->tangent_steps[k] != n)
		return NAN;
	double worst = 0;
	for (int sign = -1; sign <= 1; sign += 2) {
		gsize at = (gsize)n * (gsize)ns + CL_BALL_STATE * (gsize)ball;
		const double *sim = (sign > 0 ? r->plus_states : r->minus_states) + at;
		const double *base = r->states + at;
		const double *t = r->tangents + (gsize)k * (gsize)ns + CL_BALL_STATE * (gsize)ball;
		double px = base[0] + sign * result->perturb_delta * t[0], py = base[1] + sign * result->perturb_delta * t[1];
		double moved = hypot(sim[0] - base[0], sim[1] - base[1]);
		double off = hypot(sim[0] - px, sim[1] - py);
		worst = fmax(worst, off / fmax(moved, 1e-12));
	}
	return worst;
}

void cl_perturbation_draw(cairo_t *cr, const ClComputeResult *result, const gboolean *visible, double width,
						  double height, gboolean dark)
{
	double fg = dark ? 0.92 : 0.1;
	cairo_set_source_rgb(cr, dark ? 0.13 : 1, dark ? 0.13 : 1, dark ? 0.13 : 1);
	cairo_paint(cr);
	PangoLayout *layout = pango_cairo_create_layout(cr);
	PangoFontDescription *font = pango_font_description_from_string("Sans 9");
	pango_layout_set_font_description(layout, font);
	pango_font_description_free(font);
	if (!result || !result->has_perturbation) {
		cairo_set_source_rgba(cr, fg, fg, fg, 0.6);
		label(cr, layout, 12, 12, "Computing the perturbed runs… (Run, Ctrl+R, if nothing happens)");
		g_object_unref(layout);
		return;
	}
	const ClScene *scene = result->scene;
	int ns = cl_state_size(scene);
	int panels = 0;
	for (int i = 0; i < result->backend_count; i++)
		panels += visible[result->backends[i].backend];
	if (!panels) {
		g_object_unref(layout);
		return;
	}
	int columns = (int)ceil(sqrt(panels * width / fmax(height, 1) / 1.3));
	columns = CLAMP(columns, 1, panels);
	int rows = (panels + columns - 1) / columns;
	double pw = width / columns, ph = height / rows;
	/* one world box for every panel, so they compare at a glance */
	Box box = {INFINITY, INFINITY, -INFINITY, -INFINITY};
	for (int i = 0; i < result->backend_count; i++) {
		const ClBackendResult *r = &result->backends[i];
		if (!visible[r->backend])
			continue;
		for (int n = 0; n <= r->steps_done; n++)
			for (int b = 0; b < scene->ball_count; b++) {
				gsize at = (gsize)n * (gsize)ns + CL_BALL_STATE * (gsize)b;
				grow(&box, r->states[at], r->states[at + 1]);
				grow(&box, r->plus_states[at], r->plus_states[at + 1]);
			}
	}
	if (!isfinite(box.x0))
		box = (Box){-1, -1, 1, 1};
	double bw = fmax(box.x1 - box.x0, 1e-3), bh = fmax(box.y1 - box.y0, 1e-3);
	int p = 0;
	for (int i = 0; i < result->backend_count; i++) {
		const ClBackendResult *r = &result->backends[i];
		if (!visible[r->backend])
			continue;
		double x = (p % columns) * pw, y = (p / columns) * ph;
		p++;
		cairo_save(cr);
		cairo_rectangle(cr, x + 4, y + 4, pw - 8, ph - 8);
		cairo_set_source_rgba(cr, fg, fg, fg, 0.25);
		cairo_set_line_width(cr, 1);
		cairo_stroke_preserve(cr);
		cairo_clip(cr);
		double top = 40;
		Map m;
		m.scale = fmin((pw - 24) / bw, (ph - top - 14) / bh);
		m.ox = x + pw / 2 - m.scale * (box.x0 + box.x1) / 2;
		m.oy = y + top + (ph - top - 6) / 2 + m.scale * (box.y0 + box.y1) / 2;
		ClPlotColor color = cl_backend_color(r->backend, (dark) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
		double rgb[3] = {color.r, color.g, color.b};
		cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
		for (int b = 0; b < scene->ball_count; b++) {
			/* the unperturbed run */
			path(cr, &m, r->states, ns, b, r->steps_done + 1, NULL, NULL, 0, 0);
			cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.35);
			cairo_set_line_width(cr, 1);
			cairo_stroke(cr);
			for (int sign = -1; sign <= 1; sign += 2) {
				/* simulated at θ ± δ: solid */
				path(cr, &m, sign > 0 ? r->plus_states : r->minus_states, ns, b, scene->steps + 1, NULL, NULL, 0, 0);
				cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.95);
				cairo_set_line_width(cr, sign > 0 ? 1.8 : 1.2);
				cairo_stroke(cr);
				/* predicted from the gradient: dashed, in the foreground colour */
				path(cr, &m, r->states, ns, b, r->tangent_count, r->tangent_steps, r->tangents, sign,
					 result->perturb_delta);
				double dash[] = {4, 3};
				cairo_set_dash(cr, dash, 2, 0);
				cairo_set_source_rgba(cr, fg, fg, fg, 0.85);
				cairo_set_line_width(cr, sign > 0 ? 1.6 : 1.1);
				cairo_stroke(cr);
				cairo_set_dash(cr, NULL, 0, 0);
			}
		}
		double worst = 0;
		for (int b = 0; b < scene->ball_count; b++)
			worst = fmax(worst, miss(result, r, b));
		char *title;
		if (isnan(worst))
			title = g_markup_printf_escaped("<b>%s</b>  <span foreground='#c01c28'>%s</span>",
											cl_backend_info(r->backend)->id, cl_status_name(r->status.code));
		else
			title = g_markup_printf_escaped("<b>%s</b>\n<small>prediction off by %.0f %% at T</small>",
											cl_backend_info(r->backend)->id, 100 * worst);
		cairo_set_source_rgb(cr, fg, fg, fg);
		label(cr, layout, x + 10, y + 8, title);
		g_free(title);
		cairo_restore(cr);
	}
	g_object_unref(layout);
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
	ClPerturbationView *self = data;
	GdkRGBA fg;
	gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(area)), &fg);
	cl_perturbation_draw(cr, self->result, self->visible, w, h, fg.red + fg.green + fg.blue > 1.5);
}

static void changed(ClPerturbationView *self)
{
	if (!self->updating)
		g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void dropdown_changed(GObject *o, GParamSpec *p, ClPerturbationView *self)
{
	(void)o, (void)p;
	changed(self);
}

static void delta_changed(GtkSpinButton *spin, ClPerturbationView *self)
{
	(void)spin;
	changed(self);
}

void cl_perturbation_view_set_scene(ClPerturbationView *self, const ClScene *scene)
{
	char *current = g_strdup(cl_perturbation_view_get_parameter(self));
	self->updating = TRUE;
	guint count = g_list_model_get_n_items(G_LIST_MODEL(self->names));
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	static const char *const kinds[] = {"position.x", "position.y", "velocity.x", "velocity.y", "control[0].x",
										"control[0].y"};
	for (int b = 0; b < scene->ball_count; b++)
		for (int k = 0; k < 6; k++)
			g_ptr_array_add(names, g_strdup_printf("%s.%s", scene->balls[b].id, kinds[k]));
	g_ptr_array_add(names, NULL);
	gtk_string_list_splice(self->names, 0, count, (const char *const *)names->pdata);
	/* keep the choice; else the first ball's initial y, the paper's Task 1 question */
	guint selected = G_MAXUINT, fallback = 0;
	for (guint i = 0; i + 1 < names->len; i++) {
		if (current && g_str_equal(names->pdata[i], current) && selected == G_MAXUINT)
			selected = i;
		if (!fallback && g_str_has_suffix(names->pdata[i], "position.y"))
			fallback = i;
	}
	if (selected == G_MAXUINT)
		selected = fallback;
	gtk_drop_down_set_selected(GTK_DROP_DOWN(self->dropdown), selected);
	g_ptr_array_free(names, TRUE);
	g_free(current);
	self->updating = FALSE;
}

void cl_perturbation_view_set_result(ClPerturbationView *self, ClComputeResult *result, const gboolean *visible)
{
	if (result)
		cl_compute_result_ref(result);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	self->result = result;
	memcpy(self->visible, visible, sizeof *visible * (gsize)cl_backend_count());
	gtk_widget_queue_draw(self->area);
}

const char *cl_perturbation_view_get_parameter(ClPerturbationView *self)
{
	GtkStringObject *item = gtk_drop_down_get_selected_item(GTK_DROP_DOWN(self->dropdown));
	return item ? gtk_string_object_get_string(item) : NULL;
}

double cl_perturbation_view_get_delta(ClPerturbationView *self)
{
	return gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->delta));
}

void cl_perturbation_view_set_delta(ClPerturbationView *self, double delta)
{
	self->updating = TRUE;
	gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->delta), delta);
	self->updating = FALSE;
}

gboolean cl_perturbation_view_set_parameter(ClPerturbationView *self, const char *name)
{
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->names));
	for (guint i = 0; i < n; i++)
		if (g_str_equal(gtk_string_list_get_string(self->names, i), name)) {
			self->updating = TRUE;
			gtk_drop_down_set_selected(GTK_DROP_DOWN(self->dropdown), i);
			self->updating = FALSE;
			return TRUE;
		}
	return FALSE;
}

static void cl_perturbation_view_dispose(GObject *object)
{
	ClPerturbationView *self = CL_PERTURBATION_VIEW(object);
	g_clear_pointer(&self->box, gtk_widget_unparent);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	g_clear_pointer(&self->visible, g_free);
	G_OBJECT_CLASS(cl_perturbation_view_parent_class)->dispose(object);
}

static void cl_perturbation_view_class_init(ClPerturbationViewClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_perturbation_view_dispose;
	gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
	signals[SIGNAL_CHANGED] =
		g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void cl_perturbation_view_init(ClPerturbationView *self)
{
	self->visible = g_new0(gboolean, (gsize)cl_backend_count());
	self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	gtk_widget_set_parent(self->box, GTK_WIDGET(self));
	GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
	gtk_widget_set_margin_start(bar, 8);
	gtk_widget_set_margin_end(bar, 8);
	gtk_box_append(GTK_BOX(bar), gtk_label_new("Perturb"));
	self->names = gtk_string_list_new(NULL);
	self->dropdown = gtk_drop_down_new(G_LIST_MODEL(self->names), NULL);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->dropdown), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Perturbed parameter", -1);
	gtk_widget_set_tooltip_text(self->dropdown, "The parameter θ to perturb");
	g_signal_connect(self->dropdown, "notify::selected", G_CALLBACK(dropdown_changed), self);
	gtk_box_append(GTK_BOX(bar), self->dropdown);
	gtk_box_append(GTK_BOX(bar), gtk_label_new("by ± δ ="));
	self->delta = gtk_spin_button_new_with_range(1e-4, 2, 0.01);
	gtk_spin_button_set_digits(GTK_SPIN_BUTTON(self->delta), 4);
	gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->delta), 0.05);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->delta), GTK_ACCESSIBLE_PROPERTY_LABEL, "Perturbation delta",
								   -1);
	g_signal_connect(self->delta, "value-changed", G_CALLBACK(delta_changed), self);
	gtk_box_append(GTK_BOX(bar), self->delta);
	GtkWidget *legend = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(legend), "<small>solid: simulated at θ ± δ (thick +δ) · dashed: predicted "
											"x(θ) ± δ·dx/dθ from the backend's own gradient · faint: θ</small>");
	gtk_label_set_xalign(GTK_LABEL(legend), 0);
	gtk_label_set_wrap(GTK_LABEL(legend), TRUE);
	gtk_widget_set_hexpand(legend, TRUE);
	gtk_box_append(GTK_BOX(bar), legend);
	gtk_box_append(GTK_BOX(self->box), bar);
	self->area = gtk_drawing_area_new();
	gtk_widget_set_vexpand(self->area, TRUE);
	gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->area), draw, self, NULL);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self->area), GTK_ACCESSIBLE_PROPERTY_LABEL,
								   "Perturbed trajectories and first-order predictions, one panel per backend", -1);
	gtk_box_append(GTK_BOX(self->box), self->area);
}
