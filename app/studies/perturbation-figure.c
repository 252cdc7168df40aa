#include "perturbation-figure.h"

#include "backend-style.h"

#include <math.h>
#include <pango/pangocairo.h>

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
static double miss(const ClScene *scene, const ClRunData *result, const ClRunBackend *r, int ball)
{
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

void cl_perturbation_draw(cairo_t *cr, const ClScene *scene, const ClRunData *result, const gboolean *visible,
						  double width, double height, gboolean dark)
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
		const ClRunBackend *r = &result->backends[i];
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
		const ClRunBackend *r = &result->backends[i];
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
		ClPlotColor color = cl_backend_color(r->backend, dark ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
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
			worst = fmax(worst, miss(scene, result, r, b));
		char *title;
		if (isnan(worst))
			title = g_markup_printf_escaped("<b>%s</b>  <span foreground='#c01c28'>%s</span>",
											cl_backend_info(r->backend)->id, cl_status_name(r->row.status.code));
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

