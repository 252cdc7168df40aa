#include "cl-workbench.h"

G_DEFINE_INTERFACE(ClWorkbench, cl_workbench, GTK_TYPE_WIDGET)

static void cl_workbench_default_init(ClWorkbenchInterface *iface)
{
	(void)iface;
}

ClWorkbench *cl_workbench_of(GtkWidget *widget)
{
	GtkWidget *ancestor = gtk_widget_get_ancestor(widget, CL_TYPE_WORKBENCH);
	return ancestor ? CL_WORKBENCH(ancestor) : NULL;
}

ClDocument *cl_workbench_get_document(ClWorkbench *self)
{
	return CL_WORKBENCH_GET_IFACE(self)->get_document(self);
}

ClRunner *cl_workbench_get_runner(ClWorkbench *self)
{
	return CL_WORKBENCH_GET_IFACE(self)->get_runner(self);
}

ClResultsView *cl_workbench_get_view(ClWorkbench *self, const char *name)
{
	return CL_WORKBENCH_GET_IFACE(self)->get_view(self, name);
}

void cl_workbench_present_view(ClWorkbench *self, const char *name)
{
	CL_WORKBENCH_GET_IFACE(self)->present_view(self, name);
}

void cl_workbench_notify(ClWorkbench *self, const char *message)
{
	CL_WORKBENCH_GET_IFACE(self)->notify(self, message);
}

void cl_workbench_report(ClWorkbench *self, const char *primary, const char *detail)
{
	CL_WORKBENCH_GET_IFACE(self)->report(self, primary, detail);
}

void cl_workbench_report_error(ClWorkbench *self, const char *primary, const GError *error)
{
	if (error)
		cl_workbench_report(self, primary, error->message);
}

double cl_workbench_ui_scale(GtkWidget *widget)
{
	int dpi = 0;
	g_object_get(gtk_widget_get_settings(widget), "gtk-xft-dpi", &dpi, NULL);
	return dpi > 0 ? CLAMP(dpi / (96.0 * 1024), 1.0, 3.0) : 1.0;
}
