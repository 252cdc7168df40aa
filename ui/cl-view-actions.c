#include "cl-view-actions.h"

#include "cl-convergence-view.h"
#include "cl-heatmap-view.h"
#include "cl-learning-view.h"
#include "cl-smoothing-view.h"
#include "cl-session-export.h"

#define EXPORT_DPI 150.0
#define BUSY_POLL_MS 100

typedef enum { EXPORT_HEATMAP, EXPORT_LEARNING, EXPORT_CONVERGENCE, EXPORT_SMOOTHING, EXPORT_ALL } ExportKind;

typedef struct {
	ExportKind kind;
	char *path;
} PendingExport;

typedef struct {
	ClWorkbench *workbench; /* borrowed: this state lives on it */
	GQueue pending;
	guint poll_source;
} ViewActions;

static void pending_free(gpointer data)
{
	PendingExport *p = data;
	g_free(p->path);
	g_free(p);
}

static void view_actions_free(gpointer data)
{
	ViewActions *va = data;
	g_clear_handle_id(&va->poll_source, g_source_remove);
	g_queue_clear_full(&va->pending, pending_free);
	g_free(va);
}

static ClHeatmapView *heatmap_of(ViewActions *va)
{
	return CL_HEATMAP_VIEW(cl_workbench_get_view(va->workbench, "heatmaps"));
}

static ClLearningView *learning_of(ViewActions *va)
{
	return CL_LEARNING_VIEW(cl_workbench_get_view(va->workbench, "learning"));
}

static ClConvergenceView *convergence_of(ViewActions *va)
{
	return CL_CONVERGENCE_VIEW(cl_workbench_get_view(va->workbench, "convergence"));
}

static ClSmoothingView *smoothing_of(ViewActions *va)
{
	return CL_SMOOTHING_VIEW(cl_workbench_get_view(va->workbench, "smoothing"));
}

static gboolean busy(ViewActions *va)
{
	return cl_heatmap_view_is_busy(heatmap_of(va)) || cl_learning_view_is_busy(learning_of(va)) ||
		   cl_convergence_view_is_busy(convergence_of(va)) || cl_smoothing_view_is_busy(smoothing_of(va)) ||
		   cl_runner_is_running(cl_workbench_get_runner(va->workbench));
}

static ClPlotView *plot_of(ViewActions *va, ExportKind kind)
{
	switch (kind) {
	case EXPORT_HEATMAP:
		return cl_heatmap_view_get_plot(heatmap_of(va));
	case EXPORT_LEARNING:
		return cl_learning_view_get_plot(learning_of(va));
	case EXPORT_SMOOTHING:
		return cl_smoothing_view_get_plot(smoothing_of(va));
	default:
		return cl_convergence_view_get_plot(convergence_of(va));
	}
}

static gboolean dark(ViewActions *va)
{
	GdkRGBA fg;
	gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(va->workbench)), &fg);
	return fg.red + fg.green + fg.blue > 1.5;
}

static void run_export(ViewActions *va, const PendingExport *p)
{
	g_autoptr(GError) error = NULL;
	gboolean ok;
	if (p->kind == EXPORT_ALL)
		ok = cl_session_export(cl_workbench_get_document(va->workbench), p->path, dark(va), &error);
	else
		ok = cl_plot_view_export(plot_of(va, p->kind), p->path, EXPORT_DPI, &error);
	if (!ok)
		cl_workbench_report_error(va->workbench,
								  p->kind == EXPORT_ALL ? "Could not export the session" : "Could not export", error);
	else if (p->kind == EXPORT_ALL)
		cl_workbench_notify(va->workbench, "Exported every figure and table, with manifest.json");
}

static gboolean flush_pending(gpointer data)
{
	ViewActions *va = data;
	if (busy(va))
		return G_SOURCE_CONTINUE;
	PendingExport *p;
	while ((p = g_queue_pop_head(&va->pending))) {
		run_export(va, p);
		pending_free(p);
	}
	va->poll_source = 0;
	return G_SOURCE_REMOVE;
}

static void queue_export(ViewActions *va, ExportKind kind, const char *path)
{
	PendingExport *p = g_new(PendingExport, 1);
	p->kind = kind;
	p->path = g_strdup(path);
	g_queue_push_tail(&va->pending, p);
	if (!va->poll_source && busy(va))
		va->poll_source = g_timeout_add(BUSY_POLL_MS, flush_pending, va);
	else if (!va->poll_source)
		flush_pending(va);
}

static ViewActions *actions_of(gpointer window)
{
	return g_object_get_data(G_OBJECT(window), "cl-view-actions");
}

/* An action run from a menu or a script shows the view it acts on. */
static void heatmap_compute(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	g_autoptr(GError) error = NULL;
	cl_workbench_present_view(va->workbench, "heatmaps");
	if (!cl_heatmap_view_compute(heatmap_of(va), parameter, &error) && error)
		cl_workbench_report_error(va->workbench, "Could not compute the heatmap", error);
}

static void learning_run(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	g_autoptr(GError) error = NULL;
	cl_workbench_present_view(va->workbench, "learning");
	if (!cl_learning_view_run(learning_of(va), parameter, &error) && error)
		cl_workbench_report_error(va->workbench, "Could not start learning", error);
}

/* parameter: {"parameter": s, "steps": ai}, both optional (the view's own). */
static void convergence_compute(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	const char *name = NULL;
	g_autoptr(GVariant) steps_value = NULL;
	g_variant_lookup(parameter, "parameter", "&s", &name);
	g_autoptr(GArray) steps = NULL;
	if ((steps_value = g_variant_lookup_value(parameter, "steps", G_VARIANT_TYPE("ai")))) {
		gsize count;
		const gint32 *values = g_variant_get_fixed_array(steps_value, &count, sizeof(gint32));
		steps = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)count);
		for (gsize k = 0; k < count; k++)
			g_array_append_val(steps, values[k]);
	}
	g_autoptr(GError) error = NULL;
	cl_workbench_present_view(va->workbench, "convergence");
	if (!cl_convergence_view_compute(convergence_of(va), name, steps, &error) && error)
		cl_workbench_report_error(va->workbench, "Could not compute the convergence", error);
}

/* parameter: {"parameters": as, "sigma": d, "samples": i, "seed": i, "antithetic": b}, all optional. */
static void smoothing_compute(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	g_autoptr(GError) error = NULL;
	cl_workbench_present_view(va->workbench, "smoothing");
	if (!cl_smoothing_view_compute(smoothing_of(va), parameter, &error) && error)
		cl_workbench_report_error(va->workbench, "Could not compute the smoothed gradients", error);
}

static void smoothing_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_smoothing_view_cancel(smoothing_of(actions_of(data)));
}

/* Cancel of a view that computes nothing does nothing. */
static void heatmap_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_heatmap_view_cancel(heatmap_of(actions_of(data)));
}

static void learning_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_learning_view_cancel(learning_of(actions_of(data)));
}

static void convergence_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_convergence_view_cancel(convergence_of(actions_of(data)));
}

static void view_export(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	ViewActions *va = actions_of(data);
	const char *name = g_action_get_name(G_ACTION(a));
	ExportKind kind = g_str_equal(name, "heatmap-export")	   ? EXPORT_HEATMAP
					  : g_str_equal(name, "learning-export")  ? EXPORT_LEARNING
					  : g_str_equal(name, "smoothing-export") ? EXPORT_SMOOTHING
															  : EXPORT_CONVERGENCE;
	const char *path = g_variant_get_string(parameter, NULL);
	if (*path)
		queue_export(va, kind, path);
	else
		cl_plot_view_choose_export(plot_of(va, kind), "png");
}

static void folder_chosen(GtkNativeDialog *dialog, int response, gpointer data)
{
	ViewActions *va = actions_of(data);
	if (response == GTK_RESPONSE_ACCEPT) {
		g_autoptr(GFile) folder = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		g_autofree char *path = folder ? g_file_get_path(folder) : NULL;
		if (path)
			queue_export(va, EXPORT_ALL, path);
	}
	g_object_unref(dialog);
}

static void export_all(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	const char *path = g_variant_get_string(parameter, NULL);
	if (*path) {
		queue_export(va, EXPORT_ALL, path);
		return;
	}
	GtkFileChooserNative *chooser =
		gtk_file_chooser_native_new("Export All Figures and Tables", GTK_WINDOW(va->workbench),
									GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Export", "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	g_signal_connect(chooser, "response", G_CALLBACK(folder_chosen), data);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static const GActionEntry view_actions[] = {
	{.name = "heatmap-compute", .activate = heatmap_compute, .parameter_type = "a{sv}"},
	{.name = "heatmap-cancel", .activate = heatmap_cancel},
	{.name = "heatmap-export", .activate = view_export, .parameter_type = "s"},
	{.name = "learning-run", .activate = learning_run, .parameter_type = "a{sv}"},
	{.name = "learning-cancel", .activate = learning_cancel},
	{.name = "learning-export", .activate = view_export, .parameter_type = "s"},
	{.name = "convergence-compute", .activate = convergence_compute, .parameter_type = "a{sv}"},
	{.name = "convergence-cancel", .activate = convergence_cancel},
	{.name = "convergence-export", .activate = view_export, .parameter_type = "s"},
	{.name = "smoothing-compute", .activate = smoothing_compute, .parameter_type = "a{sv}"},
	{.name = "smoothing-cancel", .activate = smoothing_cancel},
	{.name = "smoothing-export", .activate = view_export, .parameter_type = "s"},
	{.name = "export-all", .activate = export_all, .parameter_type = "s"},
};

void cl_view_actions_install(ClWorkbench *workbench)
{
	ViewActions *va = g_new0(ViewActions, 1);
	va->workbench = workbench;
	g_queue_init(&va->pending);
	g_object_set_data_full(G_OBJECT(workbench), "cl-view-actions", va, view_actions_free);
	g_action_map_add_action_entries(G_ACTION_MAP(workbench), view_actions, G_N_ELEMENTS(view_actions), workbench);
}
