/* A figure of the plots/ library on screen: the snapshot draws it through
 * the same cl_plot_figure_draw the exports use; hovering shows a crosshair
 * (in every panel at once) and a readout; in a workbench, the backends its
 * document hides are hidden in the figure and a click on a backend in the
 * legend hides or shows it everywhere; an export menu (also on the right
 * button and Ctrl+Shift+E) writes PNG at a chosen resolution, SVG, PDF, or
 * the figure's data as CSV, each atomically. */
#pragma once

#include "plot.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_PLOT_VIEW (cl_plot_view_get_type())
G_DECLARE_FINAL_TYPE(ClPlotView, cl_plot_view, CL, PLOT_VIEW, GtkWidget)

/* The CSV of the data the figure shows; NULL when there is none. */
typedef GString *(*ClPlotViewCsvFunc)(gpointer user_data);

GtkWidget *cl_plot_view_new(void);
/* Takes ownership; NULL shows the placeholder text instead. */
void cl_plot_view_set_figure(ClPlotView *view, ClPlotFigure *figure);
ClPlotFigure *cl_plot_view_get_figure(ClPlotView *view);
void cl_plot_view_set_placeholder(ClPlotView *view, const char *text);
/* Export size in points (default 540 × 360) and file name stem ("figure"). */
void cl_plot_view_set_export_size(ClPlotView *view, double width, double height);
void cl_plot_view_get_export_size(ClPlotView *view, double *width, double *height);
void cl_plot_view_set_export_name(ClPlotView *view, const char *stem);
void cl_plot_view_set_csv_func(ClPlotView *view, ClPlotViewCsvFunc func, gpointer user_data);
/* Whether hovering draws the figure's crosshair (panels sharing axes). */
void cl_plot_view_set_crosshair(ClPlotView *view, gboolean crosshair);
/* The text shown next to the pointer (Pango markup); NULL: the data
 * coordinates. Owners set it from the "hover" signal. */
void cl_plot_view_set_readout(ClPlotView *view, const char *markup);
/* Shows the figure faded: its results belong to another scene. */
void cl_plot_view_set_faded(ClPlotView *view, gboolean faded);

/* Writes the figure (.png/.svg/.pdf, light theme, no crosshair) or its
 * data (.csv) at path, by the extension. dpi: PNG only. */
gboolean cl_plot_view_export(ClPlotView *view, const char *path, double dpi, GError **error);
/* Asks for a file, format preselected ("png", "svg", "pdf", "csv"). */
void cl_plot_view_choose_export(ClPlotView *view, const char *format);

G_END_DECLS
