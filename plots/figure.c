/* Building figures: panels and the items they hold (data are copied). */
#include "figure-private.h"

#include <math.h>
#include <string.h>

static void series_free(gpointer data)
{
	ClPlotSeries *s = data;
	g_free(s->label);
	g_free(s->group);
	g_free(s->x);
	g_free(s->y);
	g_free(s);
}

static void heatmap_free(gpointer data)
{
	ClPlotHeatmap *h = data;
	g_free(h->values);
	g_free(h);
}

static void quiver_free(gpointer data)
{
	ClPlotQuiver *q = data;
	g_free(q->x);
	g_free(q->y);
	g_free(q->u);
	g_free(q->v);
	g_free(q);
}

static void shape_free(gpointer data)
{
	ClPlotShape *s = data;
	g_free(s->x);
	g_free(s->y);
	g_free(s);
}

static void text_free(gpointer data)
{
	PlotText *t = data;
	g_free(t->text);
	g_free(t);
}

static void panel_init(ClPlotPanel *panel, ClPlotFigure *figure)
{
	panel->figure = figure;
	panel->x = (PlotAxis){.scale = CL_PLOT_SCALE_LINEAR, .fixed_min = NAN, .fixed_max = NAN};
	panel->y = panel->x;
	panel->grid = -1;
	panel->legend = CL_PLOT_LEGEND_AUTO;
	panel->series = g_ptr_array_new_with_free_func(series_free);
	panel->heatmaps = g_ptr_array_new_with_free_func(heatmap_free);
	panel->quivers = g_ptr_array_new_with_free_func(quiver_free);
	panel->shapes = g_ptr_array_new_with_free_func(shape_free);
	panel->texts = g_ptr_array_new_with_free_func(text_free);
}

static void panel_clear(ClPlotPanel *panel)
{
	cl_plot_panel_set_drawing(panel, NULL, NULL, NULL);
	g_free(panel->title);
	g_free(panel->group);
	g_free(panel->x.label);
	g_free(panel->y.label);
	g_ptr_array_free(panel->series, TRUE);
	g_ptr_array_free(panel->heatmaps, TRUE);
	g_ptr_array_free(panel->quivers, TRUE);
	g_ptr_array_free(panel->shapes, TRUE);
	g_ptr_array_free(panel->texts, TRUE);
}

ClPlotFigure *cl_plot_figure_new(int rows, int cols)
{
	g_return_val_if_fail(rows > 0 && cols > 0, NULL);
	ClPlotFigure *f = g_new0(ClPlotFigure, 1);
	f->rows = rows;
	f->cols = cols;
	f->panels = g_new0(ClPlotPanel, (gsize)rows * (gsize)cols);
	f->row_weights = g_new(double, (gsize)rows);
	for (int r = 0; r < rows; r++)
		f->row_weights[r] = 1.0;
	for (int i = 0; i < rows * cols; i++)
		panel_init(&f->panels[i], f);
	f->theme = CL_PLOT_THEME_LIGHT;
	f->font_size = 9.0;
	f->legend = CL_PLOT_LEGEND_AUTO;
	f->colormap = CL_PLOT_COLORMAP_VIRIDIS;
	f->color_min = f->color_max = NAN;
	f->crosshair_x = f->crosshair_y = NAN;
	return f;
}

void cl_plot_figure_free(ClPlotFigure *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->rows * f->cols; i++)
		panel_clear(&f->panels[i]);
	g_free(f->panels);
	g_free(f->row_weights);
	g_free(f->title);
	g_free(f->color_label);
	if (f->hidden_groups)
		g_hash_table_unref(f->hidden_groups);
	if (f->legend_hits)
		g_array_unref(f->legend_hits);
	g_free(f);
}

int cl_plot_figure_rows(const ClPlotFigure *f)
{
	return f->rows;
}

int cl_plot_figure_cols(const ClPlotFigure *f)
{
	return f->cols;
}

static void replace_string(char **slot, const char *value)
{
	g_free(*slot);
	*slot = value && *value ? g_strdup(value) : NULL;
}

void cl_plot_figure_set_title(ClPlotFigure *f, const char *title)
{
	replace_string(&f->title, title);
}

void cl_plot_figure_set_theme(ClPlotFigure *f, ClPlotThemeKind theme)
{
	f->theme = theme;
}

void cl_plot_figure_set_font_size(ClPlotFigure *f, double size)
{
	if (size > 0 && isfinite(size))
		f->font_size = size;
}

void cl_plot_figure_share_axes(ClPlotFigure *f, bool share_x, bool share_y)
{
	f->share_x = share_x;
	f->share_y = share_y;
}

void cl_plot_figure_set_legend(ClPlotFigure *f, ClPlotLegend legend)
{
	f->legend = legend;
}

void cl_plot_figure_set_row_weight(ClPlotFigure *f, int row, double weight)
{
	g_return_if_fail(row >= 0 && row < f->rows);
	if (weight > 0 && isfinite(weight))
		f->row_weights[row] = weight;
}

void cl_plot_figure_set_color_scale(ClPlotFigure *f, ClPlotColormap map, double min, double max, ClPlotScale scale,
									const char *label)
{
	f->colormap = map;
	f->color_min = min;
	f->color_max = max;
	f->color_scale = scale;
	replace_string(&f->color_label, label);
}

void cl_plot_figure_set_crosshair(ClPlotFigure *f, double x, double y)
{
	f->crosshair_x = x;
	f->crosshair_y = y;
}

ClPlotPanel *cl_plot_figure_panel(ClPlotFigure *f, int row, int col)
{
	g_return_val_if_fail(row >= 0 && row < f->rows && col >= 0 && col < f->cols, NULL);
	return &f->panels[row * f->cols + col];
}

void cl_plot_panel_set_title(ClPlotPanel *p, const char *title)
{
	replace_string(&p->title, title);
}

void cl_plot_panel_set_x_axis(ClPlotPanel *p, const char *label, ClPlotScale scale)
{
	replace_string(&p->x.label, label);
	p->x.scale = scale;
}

void cl_plot_panel_set_y_axis(ClPlotPanel *p, const char *label, ClPlotScale scale)
{
	replace_string(&p->y.label, label);
	p->y.scale = scale;
}

void cl_plot_panel_set_x_range(ClPlotPanel *p, double min, double max)
{
	p->x.fixed_min = min;
	p->x.fixed_max = max;
}

void cl_plot_panel_set_y_range(ClPlotPanel *p, double min, double max)
{
	p->y.fixed_min = min;
	p->y.fixed_max = max;
}

void cl_plot_panel_set_equal_aspect(ClPlotPanel *p, bool equal)
{
	p->equal_aspect = equal;
}

void cl_plot_panel_set_grid(ClPlotPanel *p, bool grid)
{
	p->grid = grid;
}

void cl_plot_panel_set_legend(ClPlotPanel *p, ClPlotLegend legend)
{
	p->legend = legend;
}

void cl_plot_panel_set_visible(ClPlotPanel *p, bool visible)
{
	p->hidden = !visible;
}

void cl_plot_panel_set_drawing(ClPlotPanel *p, ClPlotDrawingFunc draw, gpointer data, GDestroyNotify destroy)
{
	if (p->draw_destroy)
		p->draw_destroy(p->draw_data);
	p->draw = draw;
	p->draw_data = data;
	p->draw_destroy = destroy;
}

static ClPlotSeries *add_series(ClPlotPanel *p, SeriesKind kind, const char *label, const double *x, const double *y,
								int count)
{
	ClPlotSeries *s = g_new0(ClPlotSeries, 1);
	s->kind = kind;
	s->label = label && *label ? g_strdup(label) : NULL;
	cl_plot_series_append(s, x, y, count);
	s->width = kind == SERIES_LINE ? 1.5 : 1.0;
	s->marker_size = 5.0;
	s->marker_every = 1;
	s->line_visible = kind != SERIES_MARKER;
	if (kind == SERIES_LINE || kind == SERIES_BARS)
		s->palette_index = p->next_color++;
	g_ptr_array_add(p->series, s);
	return s;
}

ClPlotSeries *cl_plot_panel_add_line(ClPlotPanel *p, const char *label, const double *x, const double *y, int count)
{
	return add_series(p, SERIES_LINE, label, x, y, count);
}

ClPlotSeries *cl_plot_panel_add_histogram(ClPlotPanel *p, const char *label, const double *edges, const double *heights,
										  int bins)
{
	ClPlotSeries *s = add_series(p, SERIES_BARS, label, NULL, NULL, 0);
	if (bins <= 0)
		return s;
	double *y = g_new(double, (gsize)bins + 1);
	memcpy(y, heights, sizeof(double) * (gsize)bins);
	y[bins] = NAN;
	cl_plot_series_append(s, edges, y, bins + 1);
	g_free(y);
	s->width = 1.0;
	return s;
}

void cl_plot_series_set_group(ClPlotSeries *s, const char *group)
{
	g_free(s->group);
	s->group = g_strdup(group);
}

const char *cl_plot_series_group(const ClPlotSeries *s)
{
	return s->group ? s->group : s->label;
}

bool cl_plot_series_hidden(const ClPlotFigure *f, const ClPlotSeries *s)
{
	const char *group = cl_plot_series_group(s);
	return f->hidden_groups && group && g_hash_table_contains(f->hidden_groups, group);
}

void cl_plot_panel_set_group(ClPlotPanel *p, const char *group)
{
	g_free(p->group);
	p->group = g_strdup(group);
}

bool cl_plot_panel_group_hidden(const ClPlotFigure *f, const ClPlotPanel *p)
{
	return f->hidden_groups && p->group && g_hash_table_contains(f->hidden_groups, p->group);
}

void cl_plot_figure_set_group_hidden(ClPlotFigure *f, const char *group, bool hidden)
{
	if (!f->hidden_groups)
		f->hidden_groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (hidden)
		g_hash_table_add(f->hidden_groups, g_strdup(group));
	else
		g_hash_table_remove(f->hidden_groups, group);
}

ClPlotSeries *cl_plot_panel_add_legend_entry(ClPlotPanel *p, const char *label)
{
	return add_series(p, SERIES_LINE, label, NULL, NULL, 0);
}

void cl_plot_series_append(ClPlotSeries *s, const double *x, const double *y, int count)
{
	if (count <= 0)
		return;
	if (s->count + count > s->capacity) {
		/* doubling: a curve grown point by point costs amortized O(1) a point */
		s->capacity = MAX(s->count + count, 2 * s->capacity);
		s->x = g_renew(double, s->x, (gsize)s->capacity);
		s->y = g_renew(double, s->y, (gsize)s->capacity);
	}
	memcpy(s->x + s->count, x, sizeof(double) * (gsize)count);
	memcpy(s->y + s->count, y, sizeof(double) * (gsize)count);
	s->count += count;
}

void cl_plot_series_set_points(ClPlotSeries *s, const double *x, const double *y, int count)
{
	s->count = 0;
	cl_plot_series_append(s, x, y, count);
}

void cl_plot_series_set_color(ClPlotSeries *s, ClPlotColor color)
{
	s->color = color;
	s->color_set = true;
}

void cl_plot_series_set_width(ClPlotSeries *s, double width)
{
	s->width = MAX(width, 0.0);
}

void cl_plot_series_set_dash(ClPlotSeries *s, ClPlotDash dash)
{
	s->dash = dash;
}

void cl_plot_series_set_marker(ClPlotSeries *s, ClPlotMarker marker, double size, int every)
{
	s->marker = marker;
	s->marker_size = size > 0 ? size : 5.0;
	s->marker_every = MAX(every, 1);
}

void cl_plot_series_set_line_visible(ClPlotSeries *s, bool visible)
{
	s->line_visible = visible;
}

ClPlotSeries *cl_plot_panel_add_hline(ClPlotPanel *p, double y, const char *label)
{
	ClPlotSeries *s = add_series(p, SERIES_HLINE, label, &y, &y, 1);
	s->dash = CL_PLOT_DASH_DASHED;
	return s;
}

ClPlotSeries *cl_plot_panel_add_vline(ClPlotPanel *p, double x, const char *label)
{
	ClPlotSeries *s = add_series(p, SERIES_VLINE, label, &x, &x, 1);
	s->dash = CL_PLOT_DASH_DASHED;
	return s;
}

ClPlotSeries *cl_plot_panel_add_marker(ClPlotPanel *p, double x, double y, ClPlotMarker marker, const char *label)
{
	ClPlotSeries *s = add_series(p, SERIES_MARKER, label, &x, &y, 1);
	s->marker = marker;
	s->marker_size = 7.0;
	return s;
}

void cl_plot_panel_add_text(ClPlotPanel *p, double x, double y, ClPlotAnchor anchor, const char *text)
{
	PlotText *t = g_new0(PlotText, 1);
	*t = (PlotText){x, y, anchor, g_strdup(text ? text : "")};
	g_ptr_array_add(p->texts, t);
}

ClPlotHeatmap *cl_plot_panel_add_heatmap(ClPlotPanel *p, int nx, int ny, const double *values, double x_min,
										 double x_max, double y_min, double y_max)
{
	g_return_val_if_fail(nx > 0 && ny > 0, NULL);
	ClPlotHeatmap *h = g_new0(ClPlotHeatmap, 1);
	*h = (ClPlotHeatmap){nx, ny, g_new(double, (gsize)nx * (gsize)ny), x_min, x_max, y_min, y_max};
	cl_plot_heatmap_set_values(h, values);
	g_ptr_array_add(p->heatmaps, h);
	return h;
}

void cl_plot_heatmap_set_values(ClPlotHeatmap *h, const double *values)
{
	gsize n = (gsize)h->nx * (gsize)h->ny;
	if (values)
		memcpy(h->values, values, sizeof(double) * n);
	else
		for (gsize i = 0; i < n; i++)
			h->values[i] = NAN;
}

ClPlotQuiver *cl_plot_panel_add_quiver(ClPlotPanel *p, int count, const double *x, const double *y, const double *u,
									   const double *v)
{
	ClPlotQuiver *q = g_new0(ClPlotQuiver, 1);
	q->count = MAX(count, 0);
	gsize bytes = sizeof(double) * (gsize)q->count;
	q->x = g_memdup2(x, bytes);
	q->y = g_memdup2(y, bytes);
	q->u = g_memdup2(u, bytes);
	q->v = g_memdup2(v, bytes);
	g_ptr_array_add(p->quivers, q);
	return q;
}

void cl_plot_quiver_set_color(ClPlotQuiver *q, ClPlotColor color)
{
	q->color = color;
	q->color_set = true;
}

void cl_plot_quiver_set_normalize(ClPlotQuiver *q, bool normalize)
{
	q->normalize = normalize;
}

static ClPlotShape *add_shape(ClPlotPanel *p)
{
	ClPlotShape *s = g_new0(ClPlotShape, 1);
	s->fill = (ClPlotColor){0.5, 0.5, 0.5, 0.3};
	s->has_fill = true;
	g_ptr_array_add(p->shapes, s);
	return s;
}

ClPlotShape *cl_plot_panel_add_polygon(ClPlotPanel *p, const double *x, const double *y, int count)
{
	ClPlotShape *s = add_shape(p);
	s->count = MAX(count, 0);
	s->x = g_memdup2(x, sizeof(double) * (gsize)s->count);
	s->y = g_memdup2(y, sizeof(double) * (gsize)s->count);
	return s;
}

ClPlotShape *cl_plot_panel_add_circle(ClPlotPanel *p, double cx, double cy, double r)
{
	ClPlotShape *s = add_shape(p);
	s->circle = true;
	s->cx = cx;
	s->cy = cy;
	s->r = r;
	return s;
}

void cl_plot_shape_set_fill(ClPlotShape *s, ClPlotColor fill)
{
	s->fill = fill;
	s->has_fill = fill.a > 0;
}

void cl_plot_shape_set_outline(ClPlotShape *s, ClPlotColor color, double line_width)
{
	s->outline = color;
	s->outline_width = line_width;
}
