/* What a widget of the workbench may ask of the window around it: the
 * document it shows and edits, the runner that keeps its Run current, the
 * results views by name (to present one or set it up, as a lesson step
 * does), and one way to tell the user something. Widgets find it as their
 * ancestor when they are rooted (cl_workbench_of), so nothing is handed a
 * window, a mutable scene or a sibling widget. */
#pragma once

#include "cl-document.h"
#include "cl-runner.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_WORKBENCH (cl_workbench_get_type())
G_DECLARE_INTERFACE(ClWorkbench, cl_workbench, CL, WORKBENCH, GtkWidget)

typedef struct _ClResultsView ClResultsView;

struct _ClWorkbenchInterface {
	GTypeInterface parent_iface;
	ClDocument *(*get_document)(ClWorkbench *self);
	ClRunner *(*get_runner)(ClWorkbench *self);
	/* name: gradients, perturbation, heatmaps, learning, convergence */
	ClResultsView *(*get_view)(ClWorkbench *self, const char *name);
	void (*present_view)(ClWorkbench *self, const char *name);
	/* A message that passes (a toast or the status line). */
	void (*notify)(ClWorkbench *self, const char *message);
	/* An error the user must see: a dialog (and the log, for scripts). */
	void (*report)(ClWorkbench *self, const char *primary, const char *detail);
};

/* The workbench a widget is part of, or NULL while it is not rooted in one. */
ClWorkbench *cl_workbench_of(GtkWidget *widget);

ClDocument *cl_workbench_get_document(ClWorkbench *self);
ClRunner *cl_workbench_get_runner(ClWorkbench *self);
ClResultsView *cl_workbench_get_view(ClWorkbench *self, const char *name);
void cl_workbench_present_view(ClWorkbench *self, const char *name);
void cl_workbench_notify(ClWorkbench *self, const char *message);
void cl_workbench_report(ClWorkbench *self, const char *primary, const char *detail);
/* report with an error's message (error may be NULL: nothing happens). */
void cl_workbench_report_error(ClWorkbench *self, const char *primary, const GError *error);

/* The factor text, lines and markers of figures are drawn at: the font
 * resolution over 96 dpi (presentation mode raises it; so does the
 * desktop's text scaling), at least 1. */
double cl_workbench_ui_scale(GtkWidget *widget);

G_END_DECLS
