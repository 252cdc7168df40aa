/* Layout and drawing of a figure onto any cairo_t. */
#include "figure-private.h"

#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#define FONT_FAMILY "DejaVu Sans, Liberation Sans, Sans"
#define AXIS_WIDTH 0.8
#define TICK_LENGTH 3.5
#define MINOR_TICK_LENGTH 2.0
#define PAD 4.0
#define OUTER_PAD 6.0
#define LEGEND_SAMPLE 18.0
#define COLORBAR_WIDTH 10.0

typedef struct Theme {
	ClPlotColor background, foreground, grid, missing, hatch, legend_background, legend_border;
} Theme;

static Theme theme_of(ClPlotThemeKind kind)
{
	if (kind == CL_PLOT_THEME_DARK)
		return (Theme){
			.background = {0.141, 0.141, 0.141, 1},
			.foreground = {0.90, 0.90, 0.90, 1},
			.grid = {1, 1, 1, 0.12},
			.missing = {0.30, 0.30, 0.30, 1},
			.hatch = {0.62, 0.62, 0.62, 1},
			.legend_background = {0.141, 0.141, 0.141, 0.85},
			.legend_border = {1, 1, 1, 0.25},
		};
	return (Theme){
		.background = {1, 1, 1, 1},
		.foreground = {0.13, 0.13, 0.13, 1},
		.grid = {0, 0, 0, 0.09},
		.missing = {0.86, 0.86, 0.86, 1},
		.hatch = {0.55, 0.55, 0.55, 1},
		.legend_background = {1, 1, 1, 0.85},
		.legend_border = {0, 0, 0, 0.2},
	};
}

ClPlotColor cl_plot_theme_background(ClPlotThemeKind kind)
{
	return theme_of(kind).background;
}

static void set_color(cairo_t *cr, ClPlotColor c)
{
	cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
}

/* ------------------------------------------------------------------- text */

typedef struct Text {
	PangoLayout *layout;
	double w, h;
} Text;

/* Pango 1.50 sizes <sub>/<sup> from font metrics that ignore the context's
 * resolution (they come out larger than the text); spell them out instead. */
static char *explicit_scripts(const char *markup, double size)
{
	if (!strstr(markup, "<su"))
		return g_strdup(markup);
	int script_size = (int)lround(0.72 * size * PANGO_SCALE);
	char *sub = g_strdup_printf("<span size=\"%d\" rise=\"%d\">", script_size, -(int)lround(0.18 * size * PANGO_SCALE));
	char *sup = g_strdup_printf("<span size=\"%d\" rise=\"%d\">", script_size, (int)lround(0.42 * size * PANGO_SCALE));
	GString *out = g_string_new(NULL);
	for (const char *c = markup; *c;) {
		if (g_str_has_prefix(c, "<sub>") || g_str_has_prefix(c, "<sup>")) {
			g_string_append(out, c[3] == 'b' ? sub : sup);
			c += 5;
		} else if (g_str_has_prefix(c, "</sub>") || g_str_has_prefix(c, "</sup>")) {
			g_string_append(out, "</span>");
			c += 6;
		} else {
			g_string_append_c(out, *c++);
		}
	}
	g_free(sub);
	g_free(sup);
	return g_string_free(out, FALSE);
}

/* Same metrics on screen and in PNG/SVG/PDF: no hinting of glyph positions. */
static Text text_new(cairo_t *cr, const char *markup, double size)
{
	PangoLayout *layout = pango_cairo_create_layout(cr);
	cairo_font_options_t *options = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
	PangoContext *context = pango_layout_get_context(layout);
	pango_cairo_context_set_font_options(context, options);
	/* one point per user unit; relative sizes (<sub>, <sup>) need a point size, not an absolute one */
	pango_cairo_context_set_resolution(context, 72.0);
	cairo_font_options_destroy(options);
	pango_layout_context_changed(layout);
	PangoFontDescription *font = pango_font_description_from_string(FONT_FAMILY);
	pango_font_description_set_size(font, (int)lround(size * PANGO_SCALE));
	pango_layout_set_font_description(layout, font);
	pango_font_description_free(font);
	char *explicit_markup = explicit_scripts(markup, size);
	if (!pango_parse_markup(explicit_markup, -1, 0, NULL, NULL, NULL, NULL))
		pango_layout_set_text(layout, markup, -1);
	else
		pango_layout_set_markup(layout, explicit_markup, -1);
	g_free(explicit_markup);
	PangoRectangle logical;
	pango_layout_get_extents(layout, NULL, &logical);
	return (Text){layout, (double)logical.width / PANGO_SCALE, (double)logical.height / PANGO_SCALE};
}

static void text_free(Text *t)
{
	g_clear_object(&t->layout);
}

/* Draws with (x, y) at fraction (ax, ay) of the text box, rotated by angle. */
static void text_show(cairo_t *cr, Text *t, double x, double y, double ax, double ay, double angle)
{
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, angle);
	cairo_move_to(cr, -ax * t->w, -ay * t->h);
	pango_cairo_show_layout(cr, t->layout);
	cairo_restore(cr);
}

static double text_width(cairo_t *cr, const char *markup, double size)
{
	Text t = text_new(cr, markup, size);
	double w = t.w;
	text_free(&t);
	return w;
}

static double text_height(cairo_t *cr, double size)
{
	Text t = text_new(cr, "0.5", size);
	double h = t.h;
	text_free(&t);
	return h;
}

static void draw_text(cairo_t *cr, const char *markup, double size, ClPlotColor color, double x, double y, double ax,
					  double ay, double angle)
{
	Text t = text_new(cr, markup, size);
	set_color(cr, color);
	text_show(cr, &t, x, y, ax, ay, angle);
	text_free(&t);
}

/* ------------------------------------------------------------------- axes */

static double axis_transform(const PlotAxis *axis, double v)
{
	return axis->scale == CL_PLOT_SCALE_LOG ? (v > 0 ? log10(v) : NAN) : v;
}

double cl_plot_axis_fraction(const PlotAxis *axis, double value)
{
	double lo = axis_transform(axis, axis->min), hi = axis_transform(axis, axis->max);
	return (axis_transform(axis, value) - lo) / (hi - lo);
}

static double to_x(const ClPlotPanel *p, double v)
{
	return p->area.x + cl_plot_axis_fraction(&p->x, v) * p->area.w;
}

static double to_y(const ClPlotPanel *p, double v)
{
	return p->area.y + p->area.h - cl_plot_axis_fraction(&p->y, v) * p->area.h;
}

static double from_fraction(const PlotAxis *axis, double t)
{
	double lo = axis_transform(axis, axis->min), hi = axis_transform(axis, axis->max);
	double v = lo + t * (hi - lo);
	return axis->scale == CL_PLOT_SCALE_LOG ? pow(10.0, v) : v;
}

/* A panel with axes: visible and not a drawing. */
static bool shows_axes(const ClPlotPanel *p)
{
	return !p->hidden && !p->draw;
}

typedef struct Extent {
	double lo, hi;
	bool tight; /* no padding */
	bool any_padded;
} Extent;

static void extent_add(Extent *e, const PlotAxis *axis, double v, bool padded)
{
	if (!isfinite(v) || (axis->scale == CL_PLOT_SCALE_LOG && v <= 0))
		return;
	e->lo = MIN(e->lo, v);
	e->hi = MAX(e->hi, v);
	if (padded)
		e->any_padded = true;
}

static void panel_extents(const ClPlotPanel *p, Extent *ex, Extent *ey)
{
	*ex = *ey = (Extent){INFINITY, -INFINITY, false, false};
	if (p->heatmaps->len > 0) {
		/* a heatmap fills its panel exactly; what is drawn over it does not widen it */
		for (guint i = 0; i < p->heatmaps->len; i++) {
			const ClPlotHeatmap *h = g_ptr_array_index(p->heatmaps, i);
			extent_add(ex, &p->x, h->x_min, false);
			extent_add(ex, &p->x, h->x_max, false);
			extent_add(ey, &p->y, h->y_min, false);
			extent_add(ey, &p->y, h->y_max, false);
		}
		ex->tight = ey->tight = true;
		return;
	}
	for (guint i = 0; i < p->series->len; i++) {
		const ClPlotSeries *s = g_ptr_array_index(p->series, i);
		for (int k = 0; k < s->count; k++) {
			if (s->kind != SERIES_HLINE)
				extent_add(ex, &p->x, s->x[k], true);
			if (s->kind != SERIES_VLINE)
				extent_add(ey, &p->y, s->y[k], true);
		}
		if (s->kind == SERIES_BARS && s->count > 1)
			extent_add(ey, &p->y, 0.0, true); /* bars stand on 0 */
	}
	for (guint i = 0; i < p->quivers->len; i++) {
		const ClPlotQuiver *q = g_ptr_array_index(p->quivers, i);
		for (int k = 0; k < q->count; k++) {
			extent_add(ex, &p->x, q->x[k], true);
			extent_add(ey, &p->y, q->y[k], true);
		}
	}
	for (guint i = 0; i < p->shapes->len; i++) {
		const ClPlotShape *s = g_ptr_array_index(p->shapes, i);
		if (s->circle) {
			extent_add(ex, &p->x, s->cx - s->r, true);
			extent_add(ex, &p->x, s->cx + s->r, true);
			extent_add(ey, &p->y, s->cy - s->r, true);
			extent_add(ey, &p->y, s->cy + s->r, true);
		}
		for (int k = 0; k < s->count; k++) {
			extent_add(ex, &p->x, s->x[k], true);
			extent_add(ey, &p->y, s->y[k], true);
		}
	}
	for (guint i = 0; i < p->texts->len; i++) {
		const PlotText *t = g_ptr_array_index(p->texts, i);
		extent_add(ex, &p->x, t->x, true);
		extent_add(ey, &p->y, t->y, true);
	}
	ex->tight = !ex->any_padded;
	ey->tight = !ey->any_padded;
}

/* Range from the extent: 4% padding (in the axis's own scale), fixed ends win. */
static void resolve_axis(PlotAxis *axis, Extent e)
{
	bool log_scale = axis->scale == CL_PLOT_SCALE_LOG;
	double lo = e.lo, hi = e.hi;
	if (!(lo <= hi)) {
		lo = log_scale ? 1 : 0;
		hi = log_scale ? 10 : 1;
	} else {
		lo = axis_transform(axis, lo);
		hi = axis_transform(axis, hi);
		if (hi - lo < 1e-12 * MAX(1.0, fabs(lo))) {
			double d = log_scale ? 0.5 : MAX(fabs(lo) * 0.1, 0.5);
			lo -= d;
			hi += d;
		} else if (!e.tight) {
			double pad = 0.04 * (hi - lo);
			lo -= pad;
			hi += pad;
		}
		if (log_scale) {
			lo = pow(10.0, lo);
			hi = pow(10.0, hi);
		}
	}
	if (isfinite(axis->fixed_min) && (!log_scale || axis->fixed_min > 0))
		lo = axis->fixed_min;
	if (isfinite(axis->fixed_max) && (!log_scale || axis->fixed_max > 0))
		hi = axis->fixed_max;
	if (!(hi > lo))
		hi = lo + (log_scale ? lo * 9 : 1);
	axis->min = lo;
	axis->max = hi;
}

static void resolve_ranges(ClPlotFigure *f)
{
	int n = f->rows * f->cols;
	for (int i = 0; i < n; i++) {
		ClPlotPanel *p = &f->panels[i];
		Extent ex, ey;
		panel_extents(p, &ex, &ey);
		resolve_axis(&p->x, ex);
		resolve_axis(&p->y, ey);
	}
	if (f->share_x || f->share_y) {
		double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
		for (int i = 0; i < n; i++) {
			if (!shows_axes(&f->panels[i]))
				continue;
			x_lo = MIN(x_lo, f->panels[i].x.min);
			x_hi = MAX(x_hi, f->panels[i].x.max);
			y_lo = MIN(y_lo, f->panels[i].y.min);
			y_hi = MAX(y_hi, f->panels[i].y.max);
		}
		for (int i = 0; i < n; i++) {
			if (f->share_x) {
				f->panels[i].x.min = x_lo;
				f->panels[i].x.max = x_hi;
			}
			if (f->share_y) {
				f->panels[i].y.min = y_lo;
				f->panels[i].y.max = y_hi;
			}
		}
	}
}

static void resolve_colors(ClPlotFigure *f)
{
	double lo = INFINITY, hi = -INFINITY;
	f->has_heatmap = false;
	for (int i = 0; i < f->rows * f->cols; i++) {
		const ClPlotPanel *p = &f->panels[i];
		for (guint k = 0; k < p->heatmaps->len; k++) {
			const ClPlotHeatmap *h = g_ptr_array_index(p->heatmaps, k);
			f->has_heatmap = true;
			for (int c = 0; c < h->nx * h->ny; c++) {
				double v = h->values[c];
				if (isfinite(v) && (f->color_scale != CL_PLOT_SCALE_LOG || v > 0)) {
					lo = MIN(lo, v);
					hi = MAX(hi, v);
				}
			}
		}
	}
	bool log_scale = f->color_scale == CL_PLOT_SCALE_LOG;
	if (!(lo <= hi)) {
		lo = log_scale ? 1 : 0;
		hi = log_scale ? 10 : 1;
	}
	if (f->colormap == CL_PLOT_COLORMAP_COOLWARM && !log_scale) {
		double m = MAX(fabs(lo), fabs(hi));
		lo = -m;
		hi = m;
	}
	if (isfinite(f->color_min))
		lo = f->color_min;
	if (isfinite(f->color_max))
		hi = f->color_max;
	if (!(hi > lo)) {
		double d = log_scale ? lo * 9 : MAX(fabs(lo) * 0.1, 1.0);
		lo = log_scale ? lo : lo - d;
		hi = log_scale ? lo + d : hi + d;
	}
	f->color_lo = lo;
	f->color_hi = hi;
}

static double color_fraction(const ClPlotFigure *f, double v)
{
	if (f->color_scale == CL_PLOT_SCALE_LOG)
		return v > 0 ? (log10(v) - log10(f->color_lo)) / (log10(f->color_hi) - log10(f->color_lo)) : NAN;
	return (v - f->color_lo) / (f->color_hi - f->color_lo);
}

ClPlotColor cl_plot_figure_value_color(const ClPlotFigure *f, double value)
{
	double t = color_fraction(f, value);
	if (!isfinite(value) || isnan(t))
		return theme_of(f->theme).missing;
	return cl_plot_colormap(f->colormap, t);
}

/* ----------------------------------------------------------------- layout */

typedef struct Layout {
	double font, label_font, title_font;
	double tick_label_h, label_h, panel_title_h, figure_title_h;
	double y_tick_w; /* widest y tick label */
	PlotRect grid;   /* the panels' cells */
	PlotRect colorbar;
	PlotRect legend; /* figure legend */
	ClPlotTicks color_ticks;
} Layout;

static bool panel_has_heatmap(const ClPlotPanel *p)
{
	return p->heatmaps->len > 0;
}

/* As many ticks as fit: labels at least a font size apart along the axis. */
static void axis_ticks_fit(cairo_t *cr, PlotAxis *axis, double length, double font, bool horizontal)
{
	double spacing = horizontal ? 3.0 * font : (axis->scale == CL_PLOT_SCALE_LOG ? 2.2 : 3.0) * font;
	for (int target = MAX(2, (int)floor(length / spacing)); target >= 2; target--) {
		cl_plot_nice_ticks(axis->min, axis->max, axis->scale, target, &axis->ticks);
		if (axis->ticks.count < 2)
			return;
		double gap = length * fabs(cl_plot_axis_fraction(axis, axis->ticks.values[1]) -
							cl_plot_axis_fraction(axis, axis->ticks.values[0]));
		double need = 0;
		for (int k = 0; k < axis->ticks.count; k++) {
			char label[96];
			cl_plot_format_tick(axis->ticks.values[k], &axis->ticks, axis->scale, label, sizeof label);
			need = MAX(need, horizontal ? text_width(cr, label, font) : text_height(cr, font));
		}
		if (gap >= need + font)
			return;
	}
}

static double widest_y_tick(cairo_t *cr, const ClPlotFigure *f, double font)
{
	double w = 0;
	for (int i = 0; i < f->rows * f->cols; i++) {
		const ClPlotPanel *p = &f->panels[i];
		if (!p->show_y_labels || !shows_axes(p))
			continue;
		for (int k = 0; k < p->y.ticks.count; k++) {
			char label[96];
			cl_plot_format_tick(p->y.ticks.values[k], &p->y.ticks, p->y.scale, label, sizeof label);
			w = MAX(w, text_width(cr, label, font));
		}
	}
	return w;
}

static bool any_label(const ClPlotFigure *f, bool x_axis)
{
	for (int i = 0; i < f->rows * f->cols; i++)
		if (x_axis ? f->panels[i].x.label != NULL : f->panels[i].y.label != NULL)
			return true;
	return false;
}

static bool row_has_title(const ClPlotFigure *f, int row)
{
	for (int c = 0; c < f->cols; c++)
		if (f->panels[row * f->cols + c].title)
			return true;
	return false;
}

/* Legend entries: labelled series; in a figure legend merged by label. */
static GPtrArray *legend_entries(ClPlotFigure *f, ClPlotPanel *only)
{
	GPtrArray *entries = g_ptr_array_new();
	for (int i = 0; i < f->rows * f->cols; i++) {
		ClPlotPanel *p = &f->panels[i];
		if ((only && p != only) || p->hidden)
			continue;
		for (guint k = 0; k < p->series->len; k++) {
			ClPlotSeries *s = g_ptr_array_index(p->series, k);
			if (!s->label)
				continue;
			bool seen = false;
			for (guint e = 0; e < entries->len && !only; e++)
				seen = seen || strcmp(((ClPlotSeries *)g_ptr_array_index(entries, e))->label, s->label) == 0;
			if (!seen)
				g_ptr_array_add(entries, s);
		}
	}
	return entries;
}

static void legend_size(cairo_t *cr, GPtrArray *entries, double font, bool horizontal, double max_width, double *w,
						double *h)
{
	double line_h = text_height(cr, font);
	double row_w = 0, widest = 0;
	int rows = entries->len ? 1 : 0;
	*w = 0;
	for (guint i = 0; i < entries->len; i++) {
		ClPlotSeries *s = g_ptr_array_index(entries, i);
		double entry_w = LEGEND_SAMPLE + PAD + text_width(cr, s->label, font);
		widest = MAX(widest, entry_w);
		if (horizontal) {
			if (row_w > 0 && row_w + 3 * PAD + entry_w > max_width - 2 * PAD) {
				*w = MAX(*w, row_w);
				row_w = 0;
				rows++;
			}
			row_w += (row_w > 0 ? 3 * PAD : 0) + entry_w;
		}
	}
	if (horizontal) {
		*w = MAX(*w, row_w) + 2 * PAD;
		*h = rows * line_h + 2 * PAD;
	} else {
		*w = widest + 2 * PAD;
		*h = entries->len * line_h + 2 * PAD;
	}
}

static void layout_compute(ClPlotFigure *f, cairo_t *cr, double width, double height, Layout *L)
{
	L->font = f->font_size;
	L->label_font = f->font_size + 1;
	L->title_font = f->font_size + 2;
	L->tick_label_h = text_height(cr, L->font);
	L->label_h = text_height(cr, L->label_font);
	L->panel_title_h = L->label_h;
	L->figure_title_h = f->title ? text_height(cr, L->title_font) : 0;

	resolve_ranges(f);
	resolve_colors(f);
	for (int r = 0; r < f->rows; r++)
		for (int c = 0; c < f->cols; c++) {
			ClPlotPanel *p = &f->panels[r * f->cols + c];
			/* with shared x, the lowest visible panel of each column keeps its labels */
			p->show_x_labels = !f->share_x || r == f->rows - 1 || !shows_axes(&f->panels[(r + 1) * f->cols + c]);
			p->show_y_labels = !f->share_y || c == 0;
		}

	PlotRect area = {OUTER_PAD, OUTER_PAD, width - 2 * OUTER_PAD, height - 2 * OUTER_PAD};
	if (f->title) {
		area.y += L->figure_title_h + 2 * PAD;
		area.h -= L->figure_title_h + 2 * PAD;
	}
	L->legend = (PlotRect){0};
	if (f->legend == CL_PLOT_LEGEND_BELOW || f->legend == CL_PLOT_LEGEND_RIGHT) {
		GPtrArray *entries = legend_entries(f, NULL);
		if (entries->len) {
			bool below = f->legend == CL_PLOT_LEGEND_BELOW;
			legend_size(cr, entries, L->font, below, area.w, &L->legend.w, &L->legend.h);
			if (below) {
				L->legend.x = area.x + (area.w - L->legend.w) / 2;
				L->legend.y = area.y + area.h - L->legend.h;
				area.h -= L->legend.h + PAD;
			} else {
				L->legend.x = area.x + area.w - L->legend.w;
				L->legend.y = area.y;
				area.w -= L->legend.w + 2 * PAD;
			}
		}
		g_ptr_array_free(entries, TRUE);
	}
	L->colorbar = (PlotRect){0};
	if (f->has_heatmap) {
		cl_plot_nice_ticks(f->color_lo, f->color_hi, f->color_scale, 6, &L->color_ticks);
		double widest = 0;
		for (int k = 0; k < L->color_ticks.count; k++) {
			char label[96];
			cl_plot_format_tick(L->color_ticks.values[k], &L->color_ticks, f->color_scale, label, sizeof label);
			widest = MAX(widest, text_width(cr, label, L->font));
		}
		double need = 2 * PAD + COLORBAR_WIDTH + TICK_LENGTH + 2 + widest + (f->color_label ? PAD + L->label_h : 0);
		L->colorbar = (PlotRect){area.x + area.w - need + 2 * PAD, 0, COLORBAR_WIDTH, 0};
		area.w -= need;
	}
	L->grid = area;

	bool x_label = any_label(f, true), y_label = any_label(f, false);
	double bottom_full = TICK_LENGTH + 2 + L->tick_label_h + (x_label ? 2 + L->label_h : 0);
	double gap = 2.5 * PAD;
	/* two rounds: tick counts depend on the plot size, margins on the labels */
	L->y_tick_w = 3 * L->font;
	for (int round = 0; round < 2; round++) {
		double left_full = (y_label ? L->label_h + PAD : 0) + L->y_tick_w + TICK_LENGTH + 3;
		double right = 0.5 * 3 * L->font; /* the last x tick label may overhang */
		double widths = 0, heights = 0;
		for (int c = 0; c < f->cols; c++)
			widths += ((!f->share_y || c == 0) ? left_full : gap) + right;
		for (int r = 0; r < f->rows; r++)
			heights += ((!f->share_x || r == f->rows - 1) ? bottom_full : gap) +
					   (row_has_title(f, r) ? L->panel_title_h + 2 * PAD : PAD);
		double plot_w = MAX((area.w - widths) / f->cols, 10.0);
		double weight_sum = 0;
		for (int r = 0; r < f->rows; r++)
			weight_sum += f->row_weights[r];
		double y = area.y;
		for (int r = 0; r < f->rows; r++) {
			double top = row_has_title(f, r) ? L->panel_title_h + 2 * PAD : PAD;
			double plot_h = MAX((area.h - heights) * f->row_weights[r] / weight_sum, 10.0);
			double x = area.x;
			double bottom = (!f->share_x || r == f->rows - 1) ? bottom_full : gap;
			for (int c = 0; c < f->cols; c++) {
				ClPlotPanel *p = &f->panels[r * f->cols + c];
				double left = (!f->share_y || c == 0) ? left_full : gap;
				/* a drawing has no axes: it takes their margins too, short of the next cell */
				p->area = p->draw ? (PlotRect){x, y + top, left + plot_w + right - PAD, plot_h + bottom}
								  : (PlotRect){x + left, y + top, plot_w, plot_h};
				x += left + plot_w + right;
			}
			y += top + plot_h + bottom;
		}
		for (int i = 0; i < f->rows * f->cols; i++) {
			ClPlotPanel *p = &f->panels[i];
			if (p->draw)
				continue;
			if (p->equal_aspect && p->x.scale == CL_PLOT_SCALE_LINEAR && p->y.scale == CL_PLOT_SCALE_LINEAR) {
				/* resolve from the data again so that the second round does not grow twice */
				Extent ex, ey;
				panel_extents(p, &ex, &ey);
				resolve_axis(&p->x, ex);
				resolve_axis(&p->y, ey);
				double ux = (p->x.max - p->x.min) / p->area.w, uy = (p->y.max - p->y.min) / p->area.h;
				bool fixed = isfinite(p->x.fixed_min) && isfinite(p->x.fixed_max) && isfinite(p->y.fixed_min) &&
							 isfinite(p->y.fixed_max);
				if (fixed) {
					/* the ranges were chosen: shrink the plot area instead, centred in its cell */
					if (ux < uy) {
						double w = p->area.w * ux / uy;
						p->area.x += 0.5 * (p->area.w - w);
						p->area.w = w;
					} else {
						double h = p->area.h * uy / ux;
						p->area.y += 0.5 * (p->area.h - h);
						p->area.h = h;
					}
				} else if (ux < uy) {
					double mid = 0.5 * (p->x.min + p->x.max), half = 0.5 * uy * p->area.w;
					p->x.min = mid - half;
					p->x.max = mid + half;
				} else {
					double mid = 0.5 * (p->y.min + p->y.max), half = 0.5 * ux * p->area.h;
					p->y.min = mid - half;
					p->y.max = mid + half;
				}
			}
			axis_ticks_fit(cr, &p->x, p->area.w, L->font, true);
			axis_ticks_fit(cr, &p->y, p->area.h, L->font, false);
		}
		L->y_tick_w = widest_y_tick(cr, f, L->font);
	}
	if (f->has_heatmap) {
		const ClPlotPanel *first = &f->panels[0], *last = &f->panels[(f->rows - 1) * f->cols];
		L->colorbar.y = first->area.y;
		L->colorbar.h = last->area.y + last->area.h - first->area.y;
	}
	f->laid_out = true;
}

/* ---------------------------------------------------------------- drawing */

static void set_dash(cairo_t *cr, ClPlotDash dash, double w)
{
	w = MAX(w, 0.5);
	switch (dash) {
	case CL_PLOT_DASH_DASHED: {
		double d[] = {3.7 * w, 1.6 * w};
		cairo_set_dash(cr, d, 2, 0);
		break;
	}
	case CL_PLOT_DASH_DOTTED: {
		double d[] = {0.01, 1.65 * w + w};
		cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
		cairo_set_dash(cr, d, 2, 0);
		break;
	}
	case CL_PLOT_DASH_DASH_DOT: {
		double d[] = {6.4 * w, 1.6 * w, 0.01, 1.6 * w + w};
		cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
		cairo_set_dash(cr, d, 4, 0);
		break;
	}
	case CL_PLOT_DASH_SOLID:
	default:
		cairo_set_dash(cr, NULL, 0, 0);
		break;
	}
}

/* A set colour, with CL_PLOT_FOREGROUND resolved against the theme. */
static ClPlotColor themed(ClPlotColor color, const Theme *theme)
{
	if (!cl_plot_color_is_foreground(color))
		return color;
	ClPlotColor fg = theme->foreground;
	fg.a = color.a;
	return fg;
}

/* Lines and markers of data stay legible on the theme's background. */
static ClPlotColor series_color(const ClPlotSeries *s, const Theme *theme)
{
	ClPlotColor color = s->color_set				 ? themed(s->color, theme)
						: s->kind == SERIES_LINE || s->kind == SERIES_BARS ? cl_plot_palette(s->palette_index)
												 : theme->foreground;
	ClPlotColor legible = cl_plot_color_legible(color, theme->background, CL_PLOT_LEGIBLE_CONTRAST);
	legible.a = color.a;
	return legible;
}

static void marker_path(cairo_t *cr, ClPlotMarker marker, double x, double y, double size)
{
	double r = size / 2;
	switch (marker) {
	case CL_PLOT_MARKER_CIRCLE:
		cairo_new_sub_path(cr);
		cairo_arc(cr, x, y, r, 0, 2 * G_PI);
		break;
	case CL_PLOT_MARKER_SQUARE:
		cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r);
		break;
	case CL_PLOT_MARKER_TRIANGLE:
		cairo_move_to(cr, x, y - 1.15 * r);
		cairo_line_to(cr, x + r, y + 0.6 * r);
		cairo_line_to(cr, x - r, y + 0.6 * r);
		cairo_close_path(cr);
		break;
	case CL_PLOT_MARKER_DIAMOND:
		cairo_move_to(cr, x, y - 1.2 * r);
		cairo_line_to(cr, x + 0.85 * r, y);
		cairo_line_to(cr, x, y + 1.2 * r);
		cairo_line_to(cr, x - 0.85 * r, y);
		cairo_close_path(cr);
		break;
	case CL_PLOT_MARKER_STAR:
		for (int k = 0; k < 10; k++) {
			double a = -G_PI / 2 + k * G_PI / 5, rr = (k % 2 ? 0.45 : 1.2) * r;
			if (k == 0)
				cairo_move_to(cr, x + rr * cos(a), y + rr * sin(a));
			else
				cairo_line_to(cr, x + rr * cos(a), y + rr * sin(a));
		}
		cairo_close_path(cr);
		break;
	case CL_PLOT_MARKER_CROSS:
		cairo_move_to(cr, x - r, y - r);
		cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x - r, y + r);
		cairo_line_to(cr, x + r, y - r);
		break;
	case CL_PLOT_MARKER_PLUS:
		cairo_move_to(cr, x - r, y);
		cairo_line_to(cr, x + r, y);
		cairo_move_to(cr, x, y - r);
		cairo_line_to(cr, x, y + r);
		break;
	case CL_PLOT_MARKER_NONE:
	default:
		break;
	}
}

static void draw_marker(cairo_t *cr, ClPlotMarker marker, double x, double y, double size, ClPlotColor color,
						const Theme *theme)
{
	if (marker == CL_PLOT_MARKER_NONE)
		return;
	cairo_save(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	marker_path(cr, marker, x, y, size);
	set_color(cr, color);
	if (marker == CL_PLOT_MARKER_CROSS || marker == CL_PLOT_MARKER_PLUS) {
		cairo_set_line_width(cr, MAX(1.0, size / 5));
		cairo_stroke(cr);
	} else {
		cairo_fill_preserve(cr);
		/* a thin halo keeps overlapping markers apart */
		set_color(cr, theme->background);
		cairo_set_line_width(cr, 0.5);
		cairo_stroke(cr);
	}
	cairo_restore(cr);
}

static bool visible(const ClPlotPanel *p, double x, double y)
{
	return isfinite(x) && isfinite(y) && (p->x.scale != CL_PLOT_SCALE_LOG || x > 0) &&
		   (p->y.scale != CL_PLOT_SCALE_LOG || y > 0);
}

static void draw_series(cairo_t *cr, const ClPlotPanel *p, const ClPlotSeries *s, const Theme *theme)
{
	ClPlotColor color = series_color(s, theme);
	cairo_save(cr);
	cairo_set_line_width(cr, s->width);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	set_dash(cr, s->dash, s->width);
	set_color(cr, color);
	const PlotRect *a = &p->area;
	if (s->kind == SERIES_HLINE && visible(p, p->x.min, s->y[0])) {
		double y = to_y(p, s->y[0]);
		cairo_move_to(cr, a->x, y);
		cairo_line_to(cr, a->x + a->w, y);
		cairo_stroke(cr);
	}
	if (s->kind == SERIES_VLINE && visible(p, s->x[0], p->y.min)) {
		double x = to_x(p, s->x[0]);
		cairo_move_to(cr, x, a->y);
		cairo_line_to(cr, x, a->y + a->h);
		cairo_stroke(cr);
	}
	if (s->kind == SERIES_LINE && s->line_visible && s->width > 0) {
		bool pen_down = false;
		for (int k = 0; k < s->count; k++) {
			if (!visible(p, s->x[k], s->y[k])) {
				pen_down = false;
				continue;
			}
			double x = to_x(p, s->x[k]), y = to_y(p, s->y[k]);
			if (pen_down)
				cairo_line_to(cr, x, y);
			else
				cairo_move_to(cr, x, y);
			pen_down = true;
		}
		cairo_stroke(cr);
	}
	if (s->kind == SERIES_BARS) {
		/* on a log y axis the bars start at the bottom of the plot area */
		double base = p->y.scale == CL_PLOT_SCALE_LOG ? a->y + a->h : to_y(p, 0.0);
		for (int k = 0; k + 1 < s->count; k++) {
			if (!visible(p, s->x[k], s->y[k]) || !visible(p, s->x[k + 1], s->y[k]))
				continue;
			double x0 = to_x(p, s->x[k]), x1 = to_x(p, s->x[k + 1]), top = to_y(p, s->y[k]);
			cairo_rectangle(cr, x0, MIN(top, base), x1 - x0, fabs(base - top));
		}
		ClPlotColor fill = color;
		fill.a *= 0.35;
		set_color(cr, fill);
		cairo_fill_preserve(cr);
		set_color(cr, color);
		cairo_set_line_width(cr, s->width);
		cairo_stroke(cr);
	}
	if ((s->kind == SERIES_LINE || s->kind == SERIES_MARKER) && s->marker != CL_PLOT_MARKER_NONE)
		for (int k = 0; k < s->count; k += s->marker_every)
			if (visible(p, s->x[k], s->y[k]))
				draw_marker(cr, s->marker, to_x(p, s->x[k]), to_y(p, s->y[k]), s->marker_size, color, theme);
	cairo_restore(cr);
}

/* Edge k of n cells spread evenly over [lo, hi] in the axis's own scale. */
static double cell_edge(const PlotAxis *axis, double lo, double hi, int k, int n)
{
	double a = cl_plot_axis_fraction(axis, lo), b = cl_plot_axis_fraction(axis, hi);
	return from_fraction(axis, a + (double)k / n * (b - a));
}

static void draw_heatmap(cairo_t *cr, const ClPlotFigure *f, const ClPlotPanel *p, const ClPlotHeatmap *h,
						 const Theme *theme)
{
	guint32 lut[256];
	for (int i = 0; i < 256; i++) {
		ClPlotColor c = cl_plot_colormap(f->colormap, i / 255.0);
		lut[i] = (guint32)lround(c.r * 255) << 16 | (guint32)lround(c.g * 255) << 8 | (guint32)lround(c.b * 255);
	}
	ClPlotColor m = theme->missing;
	guint32 missing = (guint32)lround(m.r * 255) << 16 | (guint32)lround(m.g * 255) << 8 | (guint32)lround(m.b * 255);
	double x0 = to_x(p, h->x_min), x1 = to_x(p, h->x_max), y0 = to_y(p, h->y_min), y1 = to_y(p, h->y_max);
	bool linear = p->x.scale == CL_PLOT_SCALE_LINEAR && p->y.scale == CL_PLOT_SCALE_LINEAR;
	bool any_missing = false;
	if (linear) {
		cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, h->nx, h->ny);
		int stride = cairo_image_surface_get_stride(image) / 4;
		guint32 *pixels = (guint32 *)cairo_image_surface_get_data(image);
		for (int j = 0; j < h->ny; j++)
			for (int i = 0; i < h->nx; i++) {
				double t = color_fraction(f, h->values[j * h->nx + i]);
				bool ok = isfinite(t);
				any_missing = any_missing || !ok;
				/* image row 0 is the top: the highest y */
				pixels[(h->ny - 1 - j) * stride + i] = ok ? lut[(int)lround(CLAMP(t, 0.0, 1.0) * 255)] : missing;
			}
		cairo_surface_mark_dirty(image);
		cairo_save(cr);
		cairo_translate(cr, x0, y1);
		cairo_scale(cr, (x1 - x0) / h->nx, (y0 - y1) / h->ny);
		cairo_set_source_surface(cr, image, 0, 0);
		cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
		cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
		cairo_rectangle(cr, 0, 0, h->nx, h->ny);
		cairo_fill(cr);
		cairo_restore(cr);
		cairo_surface_destroy(image);
	} else {
		/* cells are uneven on a log axis: one rectangle each */
		for (int j = 0; j < h->ny; j++)
			for (int i = 0; i < h->nx; i++) {
				double t = color_fraction(f, h->values[j * h->nx + i]);
				double cx0 = to_x(p, cell_edge(&p->x, h->x_min, h->x_max, i, h->nx));
				double cx1 = to_x(p, cell_edge(&p->x, h->x_min, h->x_max, i + 1, h->nx));
				double cy0 = to_y(p, cell_edge(&p->y, h->y_min, h->y_max, j, h->ny));
				double cy1 = to_y(p, cell_edge(&p->y, h->y_min, h->y_max, j + 1, h->ny));
				bool ok = isfinite(t);
				any_missing = any_missing || !ok;
				set_color(cr, ok ? cl_plot_colormap(f->colormap, t) : theme->missing);
				cairo_rectangle(cr, cx0, cy1, cx1 - cx0, cy0 - cy1);
				cairo_fill(cr);
			}
	}
	if (!any_missing)
		return;
	/* hatch the cells without a value (NaN, failed runs) */
	cairo_save(cr);
	for (int j = 0; j < h->ny; j++)
		for (int i = 0; i < h->nx; i++)
			if (!isfinite(color_fraction(f, h->values[j * h->nx + i]))) {
				double cx0 = to_x(p, cell_edge(&p->x, h->x_min, h->x_max, i, h->nx));
				double cx1 = to_x(p, cell_edge(&p->x, h->x_min, h->x_max, i + 1, h->nx));
				double cy0 = to_y(p, cell_edge(&p->y, h->y_min, h->y_max, j, h->ny));
				double cy1 = to_y(p, cell_edge(&p->y, h->y_min, h->y_max, j + 1, h->ny));
				cairo_rectangle(cr, cx0, cy1, cx1 - cx0, cy0 - cy1);
			}
	cairo_clip(cr);
	set_color(cr, theme->hatch);
	cairo_set_line_width(cr, 0.6);
	double span = p->area.w + p->area.h;
	for (double d = -p->area.h; d < span; d += 4.0) {
		cairo_move_to(cr, p->area.x + d, p->area.y + p->area.h);
		cairo_line_to(cr, p->area.x + d + p->area.h, p->area.y);
	}
	cairo_stroke(cr);
	cairo_restore(cr);
}

static void draw_quiver(cairo_t *cr, const ClPlotPanel *p, const ClPlotQuiver *q, const Theme *theme)
{
	if (q->count == 0)
		return;
	double sx = p->area.w / (p->x.max - p->x.min), sy = p->area.h / (p->y.max - p->y.min);
	double longest = 0;
	for (int k = 0; k < q->count; k++) {
		double len = hypot(q->u[k] * sx, q->v[k] * sy);
		if (isfinite(len))
			longest = MAX(longest, len);
	}
	if (longest <= 0)
		return;
	double spacing = sqrt(p->area.w * p->area.h / q->count);
	double max_len = 0.85 * spacing;
	set_color(cr, q->color_set ? themed(q->color, theme) : theme->foreground);
	cairo_set_line_width(cr, MAX(0.6, MIN(1.2, max_len / 12)));
	for (int k = 0; k < q->count; k++) {
		if (!visible(p, q->x[k], q->y[k]))
			continue;
		double dx = q->u[k] * sx, dy = -q->v[k] * sy, len = hypot(dx, dy);
		if (!isfinite(len) || len <= 0)
			continue;
		double target = q->normalize ? max_len : len / longest * max_len;
		dx *= target / len;
		dy *= target / len;
		/* pivot at the middle: the arrow belongs to the cell it sits in */
		double cx = to_x(p, q->x[k]), cy = to_y(p, q->y[k]);
		double tx = cx - dx / 2, ty = cy - dy / 2, hx = cx + dx / 2, hy = cy + dy / 2;
		double head = MIN(0.35 * target, 5.0), ux = dx / target, uy = dy / target;
		double bx = hx - head * ux, by = hy - head * uy;
		cairo_move_to(cr, tx, ty);
		cairo_line_to(cr, bx, by);
		cairo_stroke(cr);
		cairo_move_to(cr, hx, hy);
		cairo_line_to(cr, bx - 0.45 * head * uy, by + 0.45 * head * ux);
		cairo_line_to(cr, bx + 0.45 * head * uy, by - 0.45 * head * ux);
		cairo_close_path(cr);
		cairo_fill(cr);
	}
}

static void draw_shape(cairo_t *cr, const ClPlotPanel *p, const ClPlotShape *s, const Theme *theme)
{
	cairo_save(cr);
	if (s->circle) {
		double cx = to_x(p, s->cx), cy = to_y(p, s->cy);
		double rx = fabs(to_x(p, s->cx + s->r) - cx), ry = fabs(to_y(p, s->cy + s->r) - cy);
		cairo_translate(cr, cx, cy);
		cairo_scale(cr, MAX(rx, 1e-6), MAX(ry, 1e-6));
		cairo_arc(cr, 0, 0, 1, 0, 2 * G_PI);
		cairo_restore(cr);
		cairo_save(cr);
	} else {
		for (int k = 0; k < s->count; k++)
			cairo_line_to(cr, to_x(p, s->x[k]), to_y(p, s->y[k]));
		cairo_close_path(cr);
	}
	if (s->has_fill) {
		set_color(cr, themed(s->fill, theme));
		cairo_fill_preserve(cr);
	}
	if (s->outline_width > 0) {
		set_color(cr, themed(s->outline, theme));
		cairo_set_line_width(cr, s->outline_width);
		cairo_stroke_preserve(cr);
	}
	cairo_new_path(cr);
	cairo_restore(cr);
}

static void draw_legend_sample(cairo_t *cr, const ClPlotSeries *s, double x, double y, const Theme *theme)
{
	ClPlotColor color = series_color(s, theme);
	if (s->kind == SERIES_BARS) {
		cairo_save(cr);
		cairo_rectangle(cr, x + 2, y - 4, LEGEND_SAMPLE - 4, 8);
		ClPlotColor fill = color;
		fill.a *= 0.35;
		set_color(cr, fill);
		cairo_fill_preserve(cr);
		set_color(cr, color);
		cairo_set_line_width(cr, 1.0);
		cairo_stroke(cr);
		cairo_restore(cr);
		return;
	}
	if (s->line_visible && s->kind != SERIES_MARKER) {
		cairo_save(cr);
		set_color(cr, color);
		cairo_set_line_width(cr, s->width);
		set_dash(cr, s->dash, s->width);
		cairo_move_to(cr, x, y);
		cairo_line_to(cr, x + LEGEND_SAMPLE, y);
		cairo_stroke(cr);
		cairo_restore(cr);
	}
	draw_marker(cr, s->marker, x + LEGEND_SAMPLE / 2, y, s->marker_size, color, theme);
}

static void draw_legend_box(cairo_t *cr, ClPlotFigure *f, GPtrArray *entries, PlotRect box, double font,
							bool horizontal, const Theme *theme)
{
	cairo_rectangle(cr, box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
	set_color(cr, theme->legend_background);
	cairo_fill_preserve(cr);
	set_color(cr, theme->legend_border);
	cairo_set_line_width(cr, 0.6);
	cairo_stroke(cr);
	double line_h = text_height(cr, font);
	double x = box.x + PAD, y = box.y + PAD;
	for (guint i = 0; i < entries->len; i++) {
		const ClPlotSeries *s = g_ptr_array_index(entries, i);
		Text t = text_new(cr, s->label, font);
		double entry_w = LEGEND_SAMPLE + PAD + t.w;
		if (horizontal && x > box.x + PAD && x + entry_w > box.x + box.w - PAD + 0.5) {
			x = box.x + PAD;
			y += line_h;
		}
		bool hidden = cl_plot_series_hidden(f, s);
		if (hidden)
			cairo_push_group(cr);
		draw_legend_sample(cr, s, x, y + line_h / 2, theme);
		set_color(cr, theme->foreground);
		text_show(cr, &t, x + LEGEND_SAMPLE + PAD, y + line_h / 2, 0, 0.5, 0);
		if (hidden) { /* struck through and dimmed, as the canvas legend shows a hidden backend */
			cairo_set_line_width(cr, 1);
			cairo_move_to(cr, x, y + line_h / 2);
			cairo_line_to(cr, x + entry_w, y + line_h / 2);
			cairo_stroke(cr);
			cairo_pop_group_to_source(cr);
			cairo_paint_with_alpha(cr, 0.45);
		}
		text_free(&t);
		PlotLegendHit hit = {{x, y, entry_w, line_h}, s};
		g_array_append_val(f->legend_hits, hit);
		if (horizontal)
			x += entry_w + 3 * PAD;
		else
			y += line_h;
	}
}

/* The inside corner that covers the fewest data points. */
static PlotRect panel_legend_rect(const ClPlotPanel *p, double w, double h)
{
	const PlotRect *a = &p->area;
	PlotRect corners[4] = {
		{a->x + a->w - w - PAD, a->y + PAD, w, h},
		{a->x + PAD, a->y + PAD, w, h},
		{a->x + PAD, a->y + a->h - h - PAD, w, h},
		{a->x + a->w - w - PAD, a->y + a->h - h - PAD, w, h},
	};
	int choice = 0;
	switch (p->legend) {
	case CL_PLOT_LEGEND_UPPER_LEFT:
		return corners[1];
	case CL_PLOT_LEGEND_LOWER_LEFT:
		return corners[2];
	case CL_PLOT_LEGEND_LOWER_RIGHT:
		return corners[3];
	case CL_PLOT_LEGEND_UPPER_RIGHT:
		return corners[0];
	default:
		break;
	}
	long best = G_MAXLONG;
	for (int c = 0; c < 4; c++) {
		long hits = 0;
		for (guint i = 0; i < p->series->len; i++) {
			const ClPlotSeries *s = g_ptr_array_index(p->series, i);
			if (s->kind != SERIES_LINE && s->kind != SERIES_MARKER && s->kind != SERIES_BARS)
				continue;
			for (int k = 0; k < s->count; k++) {
				if (!visible(p, s->x[k], s->y[k]))
					continue;
				/* sample along segments too, so long straight lines count */
				int samples = k + 1 < s->count ? 4 : 1;
				for (int m = 0; m < samples; m++) {
					double t = (double)m / samples;
					double x = to_x(p, s->x[k]), y = to_y(p, s->y[k]);
					if (m > 0 && visible(p, s->x[k + 1], s->y[k + 1])) {
						x += t * (to_x(p, s->x[k + 1]) - x);
						y += t * (to_y(p, s->y[k + 1]) - y);
					}
					if (x >= corners[c].x && x <= corners[c].x + w && y >= corners[c].y && y <= corners[c].y + h)
						hits++;
				}
			}
		}
		if (hits < best) {
			best = hits;
			choice = c;
		}
	}
	return corners[choice];
}

static void draw_title(cairo_t *cr, const ClPlotPanel *p, const Layout *L, const Theme *theme)
{
	if (p->title)
		draw_text(cr, p->title, L->label_font, theme->foreground, p->area.x + p->area.w / 2, p->area.y - PAD, 0.5, 1,
				  0);
}

static void draw_axes(cairo_t *cr, const ClPlotPanel *p, const Layout *L, const Theme *theme)
{
	const PlotRect *a = &p->area;
	set_color(cr, theme->foreground);
	cairo_set_line_width(cr, AXIS_WIDTH);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_SQUARE);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_stroke(cr);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	/* minor ticks between decades on log axes */
	for (int axis = 0; axis < 2; axis++) {
		const PlotAxis *ax = axis ? &p->y : &p->x;
		if (ax->scale != CL_PLOT_SCALE_LOG || ax->ticks.step < 1 || ax->ticks.step > 1)
			continue;
		for (int e = (int)floor(log10(ax->min)); e <= (int)ceil(log10(ax->max)); e++)
			for (int m = 2; m <= 9; m++) {
				double v = m * pow(10.0, e);
				if (v < ax->min || v > ax->max)
					continue;
				if (axis) {
					double y = to_y(p, v);
					cairo_move_to(cr, a->x, y);
					cairo_line_to(cr, a->x - MINOR_TICK_LENGTH, y);
				} else {
					double x = to_x(p, v);
					cairo_move_to(cr, x, a->y + a->h);
					cairo_line_to(cr, x, a->y + a->h + MINOR_TICK_LENGTH);
				}
			}
	}
	for (int k = 0; k < p->x.ticks.count; k++) {
		double x = to_x(p, p->x.ticks.values[k]);
		cairo_move_to(cr, x, a->y + a->h);
		cairo_line_to(cr, x, a->y + a->h + TICK_LENGTH);
	}
	for (int k = 0; k < p->y.ticks.count; k++) {
		double y = to_y(p, p->y.ticks.values[k]);
		cairo_move_to(cr, a->x, y);
		cairo_line_to(cr, a->x - TICK_LENGTH, y);
	}
	cairo_stroke(cr);
	char label[96];
	if (p->show_x_labels) {
		for (int k = 0; k < p->x.ticks.count; k++) {
			cl_plot_format_tick(p->x.ticks.values[k], &p->x.ticks, p->x.scale, label, sizeof label);
			draw_text(cr, label, L->font, theme->foreground, to_x(p, p->x.ticks.values[k]),
					  a->y + a->h + TICK_LENGTH + 2, 0.5, 0, 0);
		}
		if (p->x.label)
			draw_text(cr, p->x.label, L->label_font, theme->foreground, a->x + a->w / 2,
					  a->y + a->h + TICK_LENGTH + 2 + L->tick_label_h + 2, 0.5, 0, 0);
	}
	if (p->show_y_labels) {
		for (int k = 0; k < p->y.ticks.count; k++) {
			cl_plot_format_tick(p->y.ticks.values[k], &p->y.ticks, p->y.scale, label, sizeof label);
			draw_text(cr, label, L->font, theme->foreground, a->x - TICK_LENGTH - 3, to_y(p, p->y.ticks.values[k]),
					  1, 0.5, 0);
		}
		if (p->y.label)
			draw_text(cr, p->y.label, L->label_font, theme->foreground,
					  a->x - TICK_LENGTH - 3 - L->y_tick_w - PAD, a->y + a->h / 2, 0.5, 1, -G_PI / 2);
	}
	draw_title(cr, p, L, theme);
}

static void draw_grid(cairo_t *cr, const ClPlotPanel *p, const Theme *theme)
{
	const PlotRect *a = &p->area;
	set_color(cr, theme->grid);
	cairo_set_line_width(cr, 0.6);
	for (int k = 0; k < p->x.ticks.count; k++) {
		double x = to_x(p, p->x.ticks.values[k]);
		cairo_move_to(cr, x, a->y);
		cairo_line_to(cr, x, a->y + a->h);
	}
	for (int k = 0; k < p->y.ticks.count; k++) {
		double y = to_y(p, p->y.ticks.values[k]);
		cairo_move_to(cr, a->x, y);
		cairo_line_to(cr, a->x + a->w, y);
	}
	cairo_stroke(cr);
}

/* The callback's drawing in the panel's cell (a frame, if any, is its own). */
static void draw_drawing(cairo_t *cr, const ClPlotFigure *f, const ClPlotPanel *p, const Layout *L,
						 const Theme *theme)
{
	const PlotRect *a = &p->area;
	cairo_save(cr);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_clip(cr);
	cairo_translate(cr, a->x, a->y);
	cairo_new_path(cr);
	p->draw(cr, a->w, a->h, f->theme, f->font_size, p->draw_data);
	cairo_restore(cr);
	draw_title(cr, p, L, theme);
}

static void draw_panel_legend(cairo_t *cr, const ClPlotFigure *f, ClPlotPanel *p, const Layout *L,
							  const Theme *theme)
{
	if (f->legend != CL_PLOT_LEGEND_AUTO || p->legend == CL_PLOT_LEGEND_NONE)
		return;
	GPtrArray *entries = legend_entries(p->figure, p);
	if (entries->len) {
		double w, h;
		legend_size(cr, entries, L->font, false, p->area.w, &w, &h);
		draw_legend_box(cr, p->figure, entries, panel_legend_rect(p, w, h), L->font, false, theme);
	}
	g_ptr_array_free(entries, TRUE);
}

static void draw_panel(cairo_t *cr, const ClPlotFigure *f, ClPlotPanel *p, const Layout *L, const Theme *theme)
{
	const PlotRect *a = &p->area;
	if (p->draw) {
		draw_drawing(cr, f, p, L, theme);
		draw_panel_legend(cr, f, p, L, theme);
		return;
	}
	bool grid = p->grid < 0 ? !panel_has_heatmap(p) : p->grid;
	cairo_save(cr);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_clip(cr);
	for (guint i = 0; i < p->heatmaps->len; i++)
		draw_heatmap(cr, f, p, g_ptr_array_index(p->heatmaps, i), theme);
	if (grid)
		draw_grid(cr, p, theme);
	for (guint i = 0; i < p->shapes->len; i++)
		draw_shape(cr, p, g_ptr_array_index(p->shapes, i), theme);
	for (guint i = 0; i < p->quivers->len; i++)
		draw_quiver(cr, p, g_ptr_array_index(p->quivers, i), theme);
	for (guint i = 0; i < p->series->len; i++)
		if (!cl_plot_series_hidden(f, g_ptr_array_index(p->series, i)))
			draw_series(cr, p, g_ptr_array_index(p->series, i), theme);
	for (guint i = 0; i < p->texts->len; i++) {
		const PlotText *t = g_ptr_array_index(p->texts, i);
		if (!visible(p, t->x, t->y))
			continue;
		static const double ax[] = {0.5, 0, 1, 0.5, 0.5}, ay[] = {0.5, 0.5, 0.5, 1, 0};
		double dx = t->anchor == CL_PLOT_ANCHOR_LEFT ? 3 : t->anchor == CL_PLOT_ANCHOR_RIGHT ? -3 : 0;
		double dy = t->anchor == CL_PLOT_ANCHOR_ABOVE ? -3 : t->anchor == CL_PLOT_ANCHOR_BELOW ? 3 : 0;
		draw_text(cr, t->text, L->font, theme->foreground, to_x(p, t->x) + dx, to_y(p, t->y) + dy, ax[t->anchor],
				  ay[t->anchor], 0);
	}
	if (isfinite(f->crosshair_x) && isfinite(f->crosshair_y)) {
		ClPlotColor c = theme->foreground;
		c.a = 0.6;
		set_color(cr, c);
		cairo_set_line_width(cr, 0.8);
		double x = to_x(p, f->crosshair_x), y = to_y(p, f->crosshair_y);
		cairo_move_to(cr, x, a->y);
		cairo_line_to(cr, x, a->y + a->h);
		cairo_move_to(cr, a->x, y);
		cairo_line_to(cr, a->x + a->w, y);
		cairo_stroke(cr);
	}
	cairo_restore(cr);
	draw_axes(cr, p, L, theme);
	draw_panel_legend(cr, f, p, L, theme);
}

static void draw_colorbar(cairo_t *cr, const ClPlotFigure *f, const Layout *L, const Theme *theme)
{
	const PlotRect *b = &L->colorbar;
	cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 256);
	int stride = cairo_image_surface_get_stride(image);
	unsigned char *data = cairo_image_surface_get_data(image);
	for (int i = 0; i < 256; i++) {
		ClPlotColor c = cl_plot_colormap(f->colormap, (255 - i) / 255.0);
		guint32 *px = (guint32 *)(data + i * stride);
		*px = (guint32)lround(c.r * 255) << 16 | (guint32)lround(c.g * 255) << 8 | (guint32)lround(c.b * 255);
	}
	cairo_surface_mark_dirty(image);
	cairo_save(cr);
	cairo_translate(cr, b->x, b->y);
	cairo_scale(cr, b->w, b->h / 256.0);
	cairo_set_source_surface(cr, image, 0, 0);
	cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
	cairo_rectangle(cr, 0, 0, 1, 256);
	cairo_fill(cr);
	cairo_restore(cr);
	cairo_surface_destroy(image);
	set_color(cr, theme->foreground);
	cairo_set_line_width(cr, AXIS_WIDTH);
	cairo_rectangle(cr, b->x, b->y, b->w, b->h);
	cairo_stroke(cr);
	double widest = 0;
	for (int k = 0; k < L->color_ticks.count; k++) {
		double t = color_fraction(f, L->color_ticks.values[k]);
		double y = b->y + b->h * (1 - t);
		cairo_move_to(cr, b->x + b->w, y);
		cairo_line_to(cr, b->x + b->w + TICK_LENGTH, y);
		cairo_stroke(cr);
		char label[96];
		cl_plot_format_tick(L->color_ticks.values[k], &L->color_ticks, f->color_scale, label, sizeof label);
		Text text = text_new(cr, label, L->font);
		widest = MAX(widest, text.w);
		text_show(cr, &text, b->x + b->w + TICK_LENGTH + 2, y, 0, 0.5, 0);
		text_free(&text);
	}
	if (f->color_label)
		draw_text(cr, f->color_label, L->label_font, theme->foreground,
				  b->x + b->w + TICK_LENGTH + 2 + widest + PAD, b->y + b->h / 2, 0.5, 0, -G_PI / 2);
}

void cl_plot_figure_draw(ClPlotFigure *f, cairo_t *cr, double width, double height)
{
	Theme theme = theme_of(f->theme);
	cairo_save(cr);
	cairo_rectangle(cr, 0, 0, width, height);
	cairo_clip(cr);
	set_color(cr, theme.background);
	cairo_paint(cr);
	if (!f->legend_hits)
		f->legend_hits = g_array_new(FALSE, FALSE, sizeof(PlotLegendHit));
	g_array_set_size(f->legend_hits, 0);
	Layout L;
	layout_compute(f, cr, width, height, &L);
	if (f->title)
		draw_text(cr, f->title, L.title_font, theme.foreground, width / 2, OUTER_PAD, 0.5, 0, 0);
	for (int i = 0; i < f->rows * f->cols; i++)
		if (!f->panels[i].hidden && !cl_plot_panel_group_hidden(f, &f->panels[i]))
			draw_panel(cr, f, &f->panels[i], &L, &theme);
	if (f->has_heatmap)
		draw_colorbar(cr, f, &L, &theme);
	if (L.legend.w > 0) {
		GPtrArray *entries = legend_entries(f, NULL);
		draw_legend_box(cr, f, entries, L.legend, L.font, f->legend == CL_PLOT_LEGEND_BELOW, &theme);
		g_ptr_array_free(entries, TRUE);
	}
	cairo_restore(cr);
}

bool cl_plot_figure_pick(const ClPlotFigure *f, double px, double py, int *row, int *col, double *x, double *y)
{
	if (!f->laid_out)
		return false;
	for (int i = 0; i < f->rows * f->cols; i++) {
		const ClPlotPanel *p = &f->panels[i];
		const PlotRect *a = &p->area;
		if (!shows_axes(p) || cl_plot_panel_group_hidden(f, p) || px < a->x || px > a->x + a->w || py < a->y || py > a->y + a->h)
			continue;
		if (row)
			*row = i / f->cols;
		if (col)
			*col = i % f->cols;
		if (x)
			*x = from_fraction(&p->x, (px - a->x) / a->w);
		if (y)
			*y = from_fraction(&p->y, 1 - (py - a->y) / a->h);
		return true;
	}
	return false;
}

const char *cl_plot_figure_legend_pick(const ClPlotFigure *f, double px, double py)
{
	for (guint i = 0; f->laid_out && f->legend_hits && i < f->legend_hits->len; i++) {
		const PlotLegendHit *hit = &g_array_index(f->legend_hits, PlotLegendHit, i);
		if (px >= hit->rect.x && px <= hit->rect.x + hit->rect.w && py >= hit->rect.y && py <= hit->rect.y + hit->rect.h)
			return cl_plot_series_group(hit->series);
	}
	return NULL;
}

bool cl_plot_figure_data_to_device(const ClPlotFigure *f, int row, int col, double x, double y, double *px,
								   double *py)
{
	if (!f->laid_out || row < 0 || row >= f->rows || col < 0 || col >= f->cols)
		return false;
	const ClPlotPanel *p = &f->panels[row * f->cols + col];
	if (p->draw)
		return false;
	*px = to_x(p, x);
	*py = to_y(p, y);
	return isfinite(*px) && isfinite(*py);
}
