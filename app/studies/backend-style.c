#include "backend-style.h"

#include <glib.h>
#include <math.h>
#include <string.h>

/* Tableau 10 without its grey (the reference is drawn in the foreground
 * colour), and two more for the seed systems (TDS in magenta, Dojo in purple). The model without TOI of a
 * TOI pair is dotted; the reference is dashed, so curves under it show. */
static const ClBackendStyle styles[] = {
	{"exact", CL_PLOT_FOREGROUND_INIT, CL_PLOT_DASH_DASHED, CL_PLOT_MARKER_NONE, 1.8},
	{"lcp-nimble", {0.122, 0.467, 0.706, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_CIRCLE, 1.3},
	{"convex-toi", {1.000, 0.498, 0.055, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_SQUARE, 1.3},
	{"convex", {0.173, 0.627, 0.173, 1}, CL_PLOT_DASH_DOTTED, CL_PLOT_MARKER_SQUARE, 1.3},
	{"impulse-toi", {0.839, 0.153, 0.157, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_TRIANGLE, 1.3},
	{"impulse", {0.580, 0.404, 0.741, 1}, CL_PLOT_DASH_DOTTED, CL_PLOT_MARKER_TRIANGLE, 1.3},
	{"compliant-warp", {0.549, 0.337, 0.294, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_DIAMOND, 1.3},
	{"compliant-brax", {0.890, 0.467, 0.761, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_DIAMOND, 1.3},
	{"pbd-warp", {0.737, 0.741, 0.133, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_CROSS, 1.3},
	{"pbd-brax", {0.090, 0.745, 0.812, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_PLUS, 1.3},
	{"impulse-tds", {0.941, 0.196, 0.902, 1}, CL_PLOT_DASH_SOLID, CL_PLOT_MARKER_STAR, 1.3},
	{"ncp-dojo", {0.596, 0.306, 0.639, 1}, CL_PLOT_DASH_DASH_DOT, CL_PLOT_MARKER_CIRCLE, 1.3},
};

const ClBackendStyle *cl_backend_style(int backend)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	for (gsize i = 0; info && i < G_N_ELEMENTS(styles); i++)
		if (strcmp(styles[i].id, info->id) == 0)
			return &styles[i];
	return NULL;
}

ClPlotColor cl_backend_plot_color(int backend)
{
	const ClBackendStyle *style = cl_backend_style(backend);
	return style ? style->color : CL_PLOT_FOREGROUND;
}

ClPlotColor cl_backend_color(int backend, ClPlotThemeKind theme)
{
	ClPlotColor color = cl_backend_plot_color(backend);
	gboolean dark = theme == CL_PLOT_THEME_DARK;
	if (cl_plot_color_is_foreground(color)) {
		double v = dark ? 0.92 : 0.10;
		return (ClPlotColor){v, v, v, 1};
	}
	return cl_plot_color_legible(color, cl_theme_background(theme), CL_PLOT_LEGIBLE_CONTRAST);
}

ClPlotColor cl_theme_background(ClPlotThemeKind theme)
{
	/* the plots' (plots/render.c) and the scene canvas's */
	return theme == CL_PLOT_THEME_DARK ? (ClPlotColor){0.141, 0.141, 0.141, 1} : (ClPlotColor){1, 1, 1, 1};
}

void cl_backend_color_hex(int backend, ClPlotThemeKind theme, char hex[8])
{
	ClPlotColor c = cl_backend_color(backend, theme);
	g_snprintf(hex, 8, "#%02x%02x%02x", (int)lround(c.r * 255), (int)lround(c.g * 255), (int)lround(c.b * 255));
}

void cl_backend_style_series(ClPlotSeries *series, int backend, bool with_marker)
{
	/* every curve of a backend hides with it (a legend click), labelled or not */
	cl_plot_series_set_group(series, cl_backend_info(backend)->id);
	const ClBackendStyle *style = cl_backend_style(backend);
	if (!style)
		return;
	cl_plot_series_set_color(series, style->color);
	cl_plot_series_set_width(series, style->width);
	cl_plot_series_set_dash(series, style->dash);
	if (with_marker)
		cl_plot_series_set_marker(series, style->marker, 5, 1);
}
