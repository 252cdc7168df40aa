/* ContactLab figures: axes, line series, heatmaps with a colour bar, quiver
 * fields, annotations and small-multiple grids, drawn with Cairo + Pango.
 *
 * No GTK: a figure is a description (panels holding copies of their data)
 * drawn onto any cairo_t by cl_plot_figure_draw, so the widget on screen and
 * the PNG/SVG/PDF exports run the same code. Sizes are in user units: points
 * for exports (1/72 in), pixels on screen.
 */
#pragma once

#include <cairo.h>
#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

typedef struct ClPlotColor {
	double r, g, b, a;
} ClPlotColor;

/* Wherever a colour is set, this one stands for the theme's foreground
 * (near-black on light, near-white on dark): the reference curve. */
#define CL_PLOT_FOREGROUND_INIT {-1, -1, -1, 1}
#define CL_PLOT_FOREGROUND ((ClPlotColor)CL_PLOT_FOREGROUND_INIT)
bool cl_plot_color_is_foreground(ClPlotColor color);

/* "#rrggbb" → colour (alpha 1); black on a malformed string. */
ClPlotColor cl_plot_color_hex(const char *hex);
/* WCAG 2 contrast ratio of two colours (1 … 21; alpha ignored). */
double cl_plot_contrast(ClPlotColor a, ClPlotColor b);
/* color moved towards black (on a light background) or white (on a dark
 * one) just far enough to reach ratio against background: the same hue,
 * legible in either theme. */
ClPlotColor cl_plot_color_legible(ClPlotColor color, ClPlotColor background, double ratio);
/* What lines, markers and legend chips of data reach against the
 * background: WCAG AA for text, 4.5:1. */
#define CL_PLOT_LEGIBLE_CONTRAST 4.5
/* Categorical colours (Tableau 10), repeating after 10. */
ClPlotColor cl_plot_palette(int index);

/* ------------------------------------------------------------ colour maps */

typedef enum ClPlotColormap {
	CL_PLOT_COLORMAP_VIRIDIS,  /* sequential, perceptually uniform: losses, errors */
	CL_PLOT_COLORMAP_COOLWARM, /* diverging through grey at the centre: signed values */
} ClPlotColormap;

/* Colour at t ∈ [0, 1] (clamped). */
ClPlotColor cl_plot_colormap(ClPlotColormap map, double t);

/* ------------------------------------------------------------------ ticks */

typedef enum ClPlotScale {
	CL_PLOT_SCALE_LINEAR,
	CL_PLOT_SCALE_LOG, /* base 10; only positive values are shown */
} ClPlotScale;

#define CL_PLOT_TICKS_MAX 32

typedef struct ClPlotTicks {
	int count;
	double values[CL_PLOT_TICKS_MAX]; /* inside [lo, hi], increasing */
	double step;                      /* linear: spacing; log: decades between labels */
} ClPlotTicks;

/* Ticks at 1, 2, 2.5 or 5 × 10^k (linear) or at powers of ten (log; with
 * 2× and 5× when the range spans less than about two decades), about target
 * of them in [lo, hi]. Returns the count. */
int cl_plot_nice_ticks(double lo, double hi, ClPlotScale scale, int target, ClPlotTicks *ticks);
/* Pango markup for a tick label: "0.25", "−3", "10<sup>−4</sup>", "2×10<sup>5</sup>". */
void cl_plot_format_tick(double value, const ClPlotTicks *ticks, ClPlotScale scale, char *buffer, size_t size);

/* ----------------------------------------------------------------- styles */

typedef enum ClPlotThemeKind {
	CL_PLOT_THEME_LIGHT,
	CL_PLOT_THEME_DARK,
} ClPlotThemeKind;

typedef enum ClPlotDash {
	CL_PLOT_DASH_SOLID,
	CL_PLOT_DASH_DASHED,
	CL_PLOT_DASH_DOTTED,
	CL_PLOT_DASH_DASH_DOT,
} ClPlotDash;

typedef enum ClPlotMarker {
	CL_PLOT_MARKER_NONE,
	CL_PLOT_MARKER_CIRCLE,
	CL_PLOT_MARKER_SQUARE,
	CL_PLOT_MARKER_TRIANGLE,
	CL_PLOT_MARKER_DIAMOND,
	CL_PLOT_MARKER_CROSS,
	CL_PLOT_MARKER_PLUS,
	CL_PLOT_MARKER_STAR,
} ClPlotMarker;

typedef enum ClPlotLegend {
	CL_PLOT_LEGEND_AUTO, /* panel: the emptiest inside corner; figure: none */
	CL_PLOT_LEGEND_NONE,
	CL_PLOT_LEGEND_UPPER_RIGHT,
	CL_PLOT_LEGEND_UPPER_LEFT,
	CL_PLOT_LEGEND_LOWER_LEFT,
	CL_PLOT_LEGEND_LOWER_RIGHT,
	CL_PLOT_LEGEND_BELOW, /* figure only: one legend under the grid, entries merged by label */
	CL_PLOT_LEGEND_RIGHT, /* figure only: one legend right of the grid */
} ClPlotLegend;

typedef enum ClPlotAnchor {
	CL_PLOT_ANCHOR_CENTER,
	CL_PLOT_ANCHOR_LEFT,   /* text starts at the point */
	CL_PLOT_ANCHOR_RIGHT,  /* text ends at the point */
	CL_PLOT_ANCHOR_ABOVE,
	CL_PLOT_ANCHOR_BELOW,
} ClPlotAnchor;

/* ---------------------------------------------------------------- figures */

typedef struct ClPlotFigure ClPlotFigure;
typedef struct ClPlotPanel ClPlotPanel;
typedef struct ClPlotSeries ClPlotSeries;
typedef struct ClPlotHeatmap ClPlotHeatmap;
typedef struct ClPlotQuiver ClPlotQuiver;
typedef struct ClPlotShape ClPlotShape;

/* A rows × cols grid of panels. */
ClPlotFigure *cl_plot_figure_new(int rows, int cols);
void cl_plot_figure_free(ClPlotFigure *figure);
int cl_plot_figure_rows(const ClPlotFigure *figure);
int cl_plot_figure_cols(const ClPlotFigure *figure);

/* Titles and labels accept Pango markup ("v<sub>x</sub>"); invalid markup is shown as text. */
void cl_plot_figure_set_title(ClPlotFigure *figure, const char *title);
void cl_plot_figure_set_theme(ClPlotFigure *figure, ClPlotThemeKind theme);
/* The colour a figure of this theme is drawn on. */
ClPlotColor cl_plot_theme_background(ClPlotThemeKind theme);
/* Base font size in user units (default 9): tick labels use it, labels +1, titles +2. */
void cl_plot_figure_set_font_size(ClPlotFigure *figure, double size);
/* Shared axes: one range over all panels; inner tick labels are dropped. */
void cl_plot_figure_share_axes(ClPlotFigure *figure, bool share_x, bool share_y);
void cl_plot_figure_set_legend(ClPlotFigure *figure, ClPlotLegend legend);
/* Relative height of a row's plot areas (default 1 each). */
void cl_plot_figure_set_row_weight(ClPlotFigure *figure, int row, double weight);
/* The one colour scale of every heatmap in the figure. min/max NAN: from the
 * data (symmetric about zero for the diverging map). Drawn as a colour bar. */
void cl_plot_figure_set_color_scale(ClPlotFigure *figure, ClPlotColormap map, double min, double max,
									ClPlotScale scale, const char *label);
/* A crosshair at data (x, y) in every panel (linked hover); NAN hides it. */
void cl_plot_figure_set_crosshair(ClPlotFigure *figure, double x, double y);

ClPlotPanel *cl_plot_figure_panel(ClPlotFigure *figure, int row, int col);

void cl_plot_panel_set_title(ClPlotPanel *panel, const char *title);
void cl_plot_panel_set_x_axis(ClPlotPanel *panel, const char *label, ClPlotScale scale);
void cl_plot_panel_set_y_axis(ClPlotPanel *panel, const char *label, ClPlotScale scale);
/* Fixed ranges; NAN for either end means "from the data". */
void cl_plot_panel_set_x_range(ClPlotPanel *panel, double min, double max);
void cl_plot_panel_set_y_range(ClPlotPanel *panel, double min, double max);
/* One data unit is as long on x as on y (trajectories): ranges from the data
 * grow to fit; when all four ends are fixed the plot area shrinks instead. */
void cl_plot_panel_set_equal_aspect(ClPlotPanel *panel, bool equal);
void cl_plot_panel_set_grid(ClPlotPanel *panel, bool grid);
void cl_plot_panel_set_legend(ClPlotPanel *panel, ClPlotLegend legend);
/* A hidden panel keeps its grid cell empty (the last cells of a ragged grid). */
void cl_plot_panel_set_visible(ClPlotPanel *panel, bool visible);

/* A panel drawn by a callback instead of from data (a scene, a diagram):
 * the figure lays out its title, its cell and the legend, and calls draw
 * with cr translated so the cell is (0, 0, width, height), clipped to it,
 * in the figure's theme and base font size. */
typedef void (*ClPlotDrawingFunc)(cairo_t *cr, double width, double height, ClPlotThemeKind theme,
								  double font_size, gpointer data);
/* The panel shows draw's drawing in its whole cell, without axes, ticks or
 * grid; its legend entries still count. destroy (may be NULL) frees data
 * with the figure or when replaced; draw NULL: the panel shows data again. */
void cl_plot_panel_set_drawing(ClPlotPanel *panel, ClPlotDrawingFunc draw, gpointer data, GDestroyNotify destroy);
/* A legend entry with no data (a drawing's items), styled as a line. */
ClPlotSeries *cl_plot_panel_add_legend_entry(ClPlotPanel *panel, const char *label);

/* A line through (x[i], y[i]); NAN (or ≤ 0 on a log axis) breaks it. The data
 * are copied. label NULL: not in the legend. Colour: the palette by order. */
ClPlotSeries *cl_plot_panel_add_line(ClPlotPanel *panel, const char *label, const double *x, const double *y,
									 int count);
/* Adds points at the end of a line (a curve that grows while a run goes on)
 * or replaces them all; copied, and drawn from the next cl_plot_figure_draw. */
void cl_plot_series_append(ClPlotSeries *series, const double *x, const double *y, int count);
void cl_plot_series_set_points(ClPlotSeries *series, const double *x, const double *y, int count);
/* A histogram: bins bars, bar k over [edges[k], edges[k + 1]] (bins + 1
 * edges, increasing) from 0 to heights[k] (a count or a density), filled
 * translucent in the series' colour and outlined; NAN heights are left out.
 * Copied; the y range always takes in 0. Colour: the palette by order. */
ClPlotSeries *cl_plot_panel_add_histogram(ClPlotPanel *panel, const char *label, const double *edges,
										  const double *heights, int bins);
void cl_plot_series_set_color(ClPlotSeries *series, ClPlotColor color);
void cl_plot_series_set_width(ClPlotSeries *series, double width);
void cl_plot_series_set_dash(ClPlotSeries *series, ClPlotDash dash);
/* A marker every `every` points (1: all); size is the marker's diameter. */
void cl_plot_series_set_marker(ClPlotSeries *series, ClPlotMarker marker, double size, int every);
/* No line, markers only. */
void cl_plot_series_set_line_visible(ClPlotSeries *series, bool visible);
/* The group the series is hidden and picked with (a backend's curves in
 * several panels, labelled or not); without one, its label. */
void cl_plot_series_set_group(ClPlotSeries *series, const char *group);
/* A panel of one backend (a heatmap's): hidden with its group. */
void cl_plot_panel_set_group(ClPlotPanel *panel, const char *group);
/* A hidden group's series are not drawn (the ranges still count them, so
 * the axes stay put); its legend entries are dimmed and struck through; its
 * panels leave their cells empty. */
void cl_plot_figure_set_group_hidden(ClPlotFigure *figure, const char *group, bool hidden);

/* nx × ny cells over [x_min, x_max] × [y_min, y_max] (cell edges);
 * values[j·nx + i] is the cell at column i from x_min, row j from y_min.
 * NAN cells are hatched. The values are copied. */
ClPlotHeatmap *cl_plot_panel_add_heatmap(ClPlotPanel *panel, int nx, int ny, const double *values, double x_min,
										 double x_max, double y_min, double y_max);
/* Replaces the values (same size), e.g. as tiles of a sweep finish. */
void cl_plot_heatmap_set_values(ClPlotHeatmap *heatmap, const double *values);

/* Arrows (u[i], v[i]) at (x[i], y[i]), scaled so the longest is about the
 * spacing of the points; with normalize every arrow has that length. */
ClPlotQuiver *cl_plot_panel_add_quiver(ClPlotPanel *panel, int count, const double *x, const double *y,
									   const double *u, const double *v);
void cl_plot_quiver_set_color(ClPlotQuiver *quiver, ClPlotColor color);
void cl_plot_quiver_set_normalize(ClPlotQuiver *quiver, bool normalize);

/* Annotations. Colours default to the theme's foreground. */
ClPlotSeries *cl_plot_panel_add_hline(ClPlotPanel *panel, double y, const char *label);
ClPlotSeries *cl_plot_panel_add_vline(ClPlotPanel *panel, double x, const char *label);
ClPlotSeries *cl_plot_panel_add_marker(ClPlotPanel *panel, double x, double y, ClPlotMarker marker,
									   const char *label);
void cl_plot_panel_add_text(ClPlotPanel *panel, double x, double y, ClPlotAnchor anchor, const char *text);
/* A filled polygon in data coordinates (walls, bands); outline when line_width > 0. */
ClPlotShape *cl_plot_panel_add_polygon(ClPlotPanel *panel, const double *x, const double *y, int count);
/* A circle of data radius r (round with equal aspect). */
ClPlotShape *cl_plot_panel_add_circle(ClPlotPanel *panel, double cx, double cy, double r);
void cl_plot_shape_set_fill(ClPlotShape *shape, ClPlotColor fill);
void cl_plot_shape_set_outline(ClPlotShape *shape, ClPlotColor color, double line_width);

/* Draws the figure into the rectangle (0, 0, width, height) of cr. It
 * remembers the layout for cl_plot_figure_pick / _data_to_device. */
void cl_plot_figure_draw(ClPlotFigure *figure, cairo_t *cr, double width, double height);

/* From the last draw: which panel is under (px, py) and the data
 * coordinates there. False outside every plot area (a drawing has none). */
bool cl_plot_figure_pick(const ClPlotFigure *figure, double px, double py, int *row, int *col, double *x, double *y);
/* From the last draw: the group of the legend entry under (px, py), or NULL. */
const char *cl_plot_figure_legend_pick(const ClPlotFigure *figure, double px, double py);
/* From the last draw: where data (x, y) of a panel lands, in user units. */
bool cl_plot_figure_data_to_device(const ClPlotFigure *figure, int row, int col, double x, double y, double *px,
								   double *py);
/* The colour the last draw gave a heatmap value (for hover readouts and tests). */
ClPlotColor cl_plot_figure_value_color(const ClPlotFigure *figure, double value);

/* ----------------------------------------------------------------- export */

typedef enum ClPlotFormat {
	CL_PLOT_FORMAT_AUTO, /* from the file name's extension */
	CL_PLOT_FORMAT_PNG,
	CL_PLOT_FORMAT_SVG,
	CL_PLOT_FORMAT_PDF,
} ClPlotFormat;

#define CL_PLOT_ERROR (cl_plot_error_quark())
GQuark cl_plot_error_quark(void);

typedef enum ClPlotError {
	CL_PLOT_ERROR_FORMAT, /* unknown extension */
	CL_PLOT_ERROR_WRITE,
} ClPlotError;

/* Draws a document into a file. A PDF may have several pages: the callback
 * calls cairo_show_page between them. Returning FALSE (with error set)
 * abandons the file. */
typedef gboolean (*ClPlotDrawFunc)(cairo_t *cr, double width, double height, gpointer user, GError **error);

/* Renders draw() at width × height points (PNG: × dpi / 72 pixels) into path
 * atomically: a temporary file in the same folder, renamed on success, so a
 * failed export never leaves a half-written file or clobbers an old one.
 * A path that exists but is not a regular file (/dev/stdout, a FIFO) is
 * written directly: renaming over it would replace the device. */
gboolean cl_plot_export_document(const char *path, ClPlotFormat format, double width, double height, double dpi,
								 ClPlotDrawFunc draw, gpointer user, GError **error);

/* cl_plot_export_document of one figure. */
gboolean cl_plot_figure_export(ClPlotFigure *figure, const char *path, ClPlotFormat format, double width,
							   double height, double dpi, GError **error);
ClPlotFormat cl_plot_format_from_path(const char *path);

/* A PNG's pixels at most (an A0 poster at 300 dpi has 140 million). */
#define CL_PLOT_PNG_PIXELS_MAX 2e8

G_END_DECLS
