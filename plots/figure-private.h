/* The figure model shared by the builder, the layout and the renderer. */
#pragma once

#include "plot.h"

typedef enum SeriesKind {
	SERIES_LINE,
	SERIES_HLINE,
	SERIES_VLINE,
	SERIES_MARKER,
	SERIES_BARS, /* a histogram: bar k over [x[k], x[k+1]] of height y[k]; the last y is unused */
} SeriesKind;

struct ClPlotSeries {
	SeriesKind kind;
	char *label;
	double *x, *y;
	int count;
	int capacity; /* of x and y */
	ClPlotColor color;
	bool color_set; /* otherwise the palette entry `palette_index`, or the foreground for annotations */
	int palette_index;
	double width;
	ClPlotDash dash;
	ClPlotMarker marker;
	double marker_size;
	int marker_every;
	bool line_visible;
	char *group; /* what hiding and legend clicks act on; NULL: the label */
};

struct ClPlotHeatmap {
	int nx, ny;
	double *values;
	double x_min, x_max, y_min, y_max;
};

struct ClPlotQuiver {
	int count;
	double *x, *y, *u, *v;
	ClPlotColor color;
	bool color_set;
	bool normalize;
};

struct ClPlotShape {
	bool circle;
	double *x, *y;
	int count;
	double cx, cy, r;
	ClPlotColor fill;
	bool has_fill;
	ClPlotColor outline;
	double outline_width;
};

typedef struct PlotText {
	double x, y;
	ClPlotAnchor anchor;
	char *text;
} PlotText;

typedef struct PlotAxis {
	char *label;
	ClPlotScale scale;
	double fixed_min, fixed_max; /* NAN: from the data */
	double min, max;             /* resolved by the last layout */
	ClPlotTicks ticks;
} PlotAxis;

typedef struct PlotRect {
	double x, y, w, h;
} PlotRect;

typedef struct PlotLegendHit {
	PlotRect rect;
	const ClPlotSeries *series;
} PlotLegendHit;

/* The group a series is hidden and picked by: its group, else its label. */
const char *cl_plot_series_group(const ClPlotSeries *series);
bool cl_plot_series_hidden(const ClPlotFigure *figure, const ClPlotSeries *series);
bool cl_plot_panel_group_hidden(const ClPlotFigure *figure, const ClPlotPanel *panel);

struct ClPlotPanel {
	ClPlotFigure *figure;
	char *title;
	PlotAxis x, y;
	bool equal_aspect;
	bool hidden;
	char *group; /* a hidden group's panel leaves its cell empty; NULL: none */
	int grid; /* −1: on unless the panel shows a heatmap */
	ClPlotLegend legend;
	GPtrArray *series, *heatmaps, *quivers, *shapes, *texts;
	int next_color;
	ClPlotDrawingFunc draw; /* a drawing panel: its cell is drawn by this */
	gpointer draw_data;
	GDestroyNotify draw_destroy;
	PlotRect area; /* plot area (a drawing's cell) of the last draw */
	bool show_x_labels, show_y_labels;
};

struct ClPlotFigure {
	int rows, cols;
	ClPlotPanel *panels;
	double *row_weights;
	char *title;
	ClPlotThemeKind theme;
	double font_size;
	bool share_x, share_y;
	ClPlotLegend legend;
	ClPlotColormap colormap;
	double color_min, color_max; /* requested; NAN: from the data */
	ClPlotScale color_scale;
	char *color_label;
	double crosshair_x, crosshair_y;
	GHashTable *hidden_groups; /* groups not drawn (their legend entries dimmed); NULL: none */
	/* resolved by the last draw */
	GArray *legend_hits; /* PlotLegendHit: where each legend entry was drawn */
	bool has_heatmap;
	double color_lo, color_hi;
	bool laid_out;
};

double cl_plot_axis_fraction(const PlotAxis *axis, double value);
