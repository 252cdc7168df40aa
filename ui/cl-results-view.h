/* A results view (Gradients, Perturbation, Heatmaps, Learning, Convergence):
 * what a lesson step asks of the view it shows — take the step's settings
 * completely (nothing the user set before may change its numbers), compute,
 * and outline the cells or curves the step points at. */
#pragma once

#include "lesson-file.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_RESULTS_VIEW (cl_results_view_get_type())
G_DECLARE_INTERFACE(ClResultsView, cl_results_view, CL, RESULTS_VIEW, GtkWidget)

struct _ClResultsViewInterface {
	GTypeInterface parent_iface;
	/* Sets the view up as step->view says and starts its computation;
	 * FALSE with an error when the scene does not have what it names. */
	gboolean (*show_step)(ClResultsView *self, const ClLessonStep *step, GError **error);
	/* Outlines what step->highlights point at; NULL clears it. */
	void (*highlight)(ClResultsView *self, const ClLessonStep *step);
};

gboolean cl_results_view_show_step(ClResultsView *self, const ClLessonStep *step, GError **error);
void cl_results_view_highlight(ClResultsView *self, const ClLessonStep *step);

G_END_DECLS
