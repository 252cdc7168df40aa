#include "cl-results-view.h"

G_DEFINE_INTERFACE(ClResultsView, cl_results_view, GTK_TYPE_WIDGET)

static void cl_results_view_default_init(ClResultsViewInterface *iface)
{
	(void)iface;
}

gboolean cl_results_view_show_step(ClResultsView *self, const ClLessonStep *step, GError **error)
{
	ClResultsViewInterface *iface = CL_RESULTS_VIEW_GET_IFACE(self);
	return iface->show_step ? iface->show_step(self, step, error) : TRUE;
}

void cl_results_view_highlight(ClResultsView *self, const ClLessonStep *step)
{
	ClResultsViewInterface *iface = CL_RESULTS_VIEW_GET_IFACE(self);
	if (iface->highlight)
		iface->highlight(self, step);
}
