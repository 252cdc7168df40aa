/* How each backend looks wherever it is drawn — canvas, gradient table,
 * plots, handouts, exports: one table, keyed by backend id, so a backend
 * added to the registry without a style is caught by a test. */
#pragma once

#include "contactlab/sim.h"
#include "plot.h"

typedef struct ClBackendStyle {
	const char *id;
	ClPlotColor color; /* CL_PLOT_FOREGROUND for the reference backend */
	ClPlotDash dash;
	ClPlotMarker marker; /* for sparse series (convergence points) */
	double width;        /* line width in points */
} ClBackendStyle;

/* NULL for a backend the table does not know (a test checks there is none). */
const ClBackendStyle *cl_backend_style(int backend);
/* The colour for a plot series or shape (CL_PLOT_FOREGROUND for the
 * reference, which the figure resolves against its theme). */
ClPlotColor cl_backend_plot_color(int backend);
/* The backend's colour on the theme's background, at WCAG AA contrast (the
 * reference's is the theme's foreground). */
ClPlotColor cl_backend_color(int backend, ClPlotThemeKind theme);
/* The background figures and the canvas are drawn on in a theme. */
ClPlotColor cl_theme_background(ClPlotThemeKind theme);
/* "#rrggbb" of that colour, for Pango markup and CSS. */
void cl_backend_color_hex(int backend, ClPlotThemeKind theme, char hex[8]);
/* Colour, dash and width on a plot series (its marker when with_marker). */
void cl_backend_style_series(ClPlotSeries *series, int backend, bool with_marker);
