#include "cl-view-actions.h"

#include "numbers.h"
#include "scene-file.h"

#include <errno.h>

#define EXPORT_DPI 150.0
#define BUSY_POLL_MS 100

typedef enum { EXPORT_HEATMAP, EXPORT_LEARNING, EXPORT_ALL } ExportKind;

typedef struct {
	ExportKind kind;
	char *path;
} PendingExport;

typedef struct {
	ClWindow *window; /* borrowed: this state lives on the window */
	ClHeatmapView *heatmap;
	ClLearningView *learning;
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

static void report_error(ClWindow *window, const char *primary, const GError *error)
{
	/* also in the log: a script driving the app over D-Bus sees no dialog */
	g_warning("%s: %s", primary, error->message);
	GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(window), GTK_DIALOG_DESTROY_WITH_PARENT, GTK_MESSAGE_ERROR,
											   GTK_BUTTONS_CLOSE, "%s", primary);
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog), "%s", error->message);
	g_signal_connect(dialog, "response", G_CALLBACK(gtk_window_destroy), NULL);
	gtk_window_present(GTK_WINDOW(dialog));
}

/* ------------------------------------------------------------ session */

typedef struct {
	const char *folder;
	GString *manifest;
	int count;
} Manifest;

static void manifest_add(Manifest *m, const char *file, const char *kind, const char *description)
{
	g_string_append_printf(m->manifest, "%s\n    {\"file\": ", m->count++ ? "," : "");
	cl_json_append_string(m->manifest, file);
	g_string_append(m->manifest, ", \"kind\": ");
	cl_json_append_string(m->manifest, kind);
	g_string_append(m->manifest, ", \"description\": ");
	cl_json_append_string(m->manifest, description);
	g_string_append(m->manifest, "}");
}

static gboolean write_text(Manifest *m, const char *file, GString *text, const char *description, GError **error)
{
	if (!text)
		return TRUE;
	char *path = g_build_filename(m->folder, file, NULL);
	gboolean ok = cl_write_output(path, text, error);
	g_free(path);
	g_string_free(text, TRUE);
	if (ok)
		manifest_add(m, file, "table", description);
	return ok;
}

static gboolean write_figures(Manifest *m, ClPlotView *plot, const char *stem, const char *description,
							  GError **error)
{
	static const char *const extensions[] = {"png", "svg", "pdf"};
	for (gsize i = 0; i < G_N_ELEMENTS(extensions); i++) {
		char *file = g_strdup_printf("%s.%s", stem, extensions[i]);
		char *path = g_build_filename(m->folder, file, NULL);
		gboolean ok = cl_plot_view_export(plot, path, EXPORT_DPI, error);
		if (ok)
			manifest_add(m, file, "figure", description);
		g_free(path);
		g_free(file);
		if (!ok)
			return FALSE;
	}
	return TRUE;
}

static GString *trajectories_csv(const ClComputeResult *result)
{
	GString *out = g_string_new("backend,step,time,ball,x,y,vx,vy\n");
	const ClScene *scene = result->scene;
	int size = cl_state_size(scene);
	double dt = cl_scene_dt(scene);
	for (int i = 0; i < result->backend_count; i++) {
		const ClBackendResult *r = &result->backends[i];
		for (int n = 0; n <= r->steps_done; n++)
			for (int b = 0; b < scene->ball_count; b++) {
				const double *s = r->states + (gsize)n * (gsize)size + CL_BALL_STATE * (gsize)b;
				g_string_append_printf(out, "%s,%d,%s,", cl_backend_info(r->backend)->id, n,
									   cl_format_number(n * dt).text);
				cl_csv_append_field(out, scene->balls[b].id);
				for (int c = 0; c < 4; c++)
					g_string_append_printf(out, ",%s", cl_format_number(s[c]).text);
				g_string_append_c(out, '\n');
			}
	}
	return out;
}

gboolean cl_session_export_all(ClWindow *window, ClHeatmapView *heatmap, ClLearningView *learning, const char *folder,
							   GError **error)
{
	if (g_mkdir_with_parents(folder, 0755) != 0) {
		g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s: %s", folder, g_strerror(errno));
		return FALSE;
	}
	Manifest m = {folder, g_string_new(NULL), 0};
	const ClScene *scene = cl_window_get_scene(window);
	gboolean ok = TRUE;
	char *scene_path = g_build_filename(folder, "scene.json", NULL);
	ok = cl_scene_file_save(scene, scene_path, error);
	g_free(scene_path);
	if (ok)
		manifest_add(&m, "scene.json", "scene", "the scene as edited, loadable with Open or by the CLI");
	ClComputeResult *result = cl_window_get_result(window);
	if (ok && result) {
		char *gradients = cl_compute_result_to_csv(result);
		GString *text = g_string_new(gradients);
		g_free(gradients);
		ok = write_text(&m, "gradients.csv", text,
						"gradient table: backend,parameter,value (adjoint),fd (own central difference),status", error) &&
			 write_text(&m, "trajectories.csv", trajectories_csv(result),
						"trajectories: backend,step,time,ball,x,y,vx,vy", error);
	}
	if (ok && cl_heatmap_view_has_result(heatmap)) {
		gboolean stale = cl_heatmap_view_is_stale(heatmap);
		ok = write_figures(&m, cl_heatmap_view_get_plot(heatmap), "heatmap",
						   stale ? "heatmap small multiples, computed before the last scene change"
								 : "heatmap small multiples: one panel per backend, one colour scale",
						   error) &&
			 write_text(&m, "heatmap.csv", cl_heatmap_view_grid_csv(heatmap),
						stale ? "heatmap grid (before the last scene change): x,y,backend,quantity,value"
							  : "heatmap grid: x,y,backend,quantity,value",
						error);
	}
	if (ok && cl_learning_view_has_result(learning))
		ok = write_figures(&m, cl_learning_view_get_plot(learning), "learning-curves",
						   "learning curves of every backend and the learned parameters", error) &&
			 write_text(&m, "learning-curves.csv", cl_learning_view_curves_csv(learning),
						"learning curves: backend,iteration,loss (iteration = iterations: the result's loss)", error) &&
			 write_text(&m, "learned-parameters.csv", cl_learning_view_parameters_csv(learning),
						"learned parameters: backend,parameter,value", error) &&
			 write_text(&m, "learning-summary.csv", cl_learning_view_summary_csv(learning),
						"per backend: status, final loss under its own and under the exact dynamics, walls reached",
						error);
	if (ok) {
		/* the manifest last: its presence means the export is complete */
		GString *manifest = g_string_new("{\n  \"generator\": \"ContactLab " CL_VERSION "\",\n  \"scene\": ");
		cl_json_append_string(manifest, scene->name);
		GDateTime *now = g_date_time_new_now_utc();
		char *created = g_date_time_format_iso8601(now);
		g_string_append(manifest, ",\n  \"created\": ");
		cl_json_append_string(manifest, created);
		g_free(created);
		g_date_time_unref(now);
		g_string_append_printf(manifest, ",\n  \"files\": [%s\n  ]\n}\n", m.manifest->str);
		char *path = g_build_filename(folder, "manifest.json", NULL);
		ok = cl_write_output(path, manifest, error);
		g_free(path);
		g_string_free(manifest, TRUE);
	}
	g_string_free(m.manifest, TRUE);
	return ok;
}

/* ------------------------------------------------------ deferred export */

static gboolean busy(ViewActions *va)
{
	return cl_heatmap_view_is_busy(va->heatmap) || cl_learning_view_is_busy(va->learning);
}

static void run_export(ViewActions *va, const PendingExport *p)
{
	GError *error = NULL;
	gboolean ok;
	if (p->kind == EXPORT_ALL)
		ok = cl_session_export_all(va->window, va->heatmap, va->learning, p->path, &error);
	else {
		ClPlotView *plot = p->kind == EXPORT_HEATMAP ? cl_heatmap_view_get_plot(va->heatmap)
													  : cl_learning_view_get_plot(va->learning);
		ok = cl_plot_view_export(plot, p->path, EXPORT_DPI, &error);
	}
	if (!ok) {
		report_error(va->window, p->kind == EXPORT_ALL ? "Could not export the session" : "Could not export", error);
		g_error_free(error);
	}
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

/* -------------------------------------------------------------- actions */

/* An action run from a menu or a script shows the view it acts on. */
static void present(GtkWidget *view)
{
	GtkWidget *parent = gtk_widget_get_parent(view);
	if (GTK_IS_STACK(parent))
		gtk_stack_set_visible_child(GTK_STACK(parent), view);
}

static ViewActions *actions_of(gpointer window)
{
	return g_object_get_data(G_OBJECT(window), "cl-view-actions");
}

static void heatmap_compute(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	GError *error = NULL;
	present(GTK_WIDGET(va->heatmap));
	if (!cl_heatmap_view_compute(va->heatmap, parameter, &error) && error) {
		report_error(va->window, "Could not compute the heatmap", error);
		g_error_free(error);
	}
}

static void learning_run(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	GError *error = NULL;
	present(GTK_WIDGET(va->learning));
	if (!cl_learning_view_run(va->learning, parameter, &error) && error) {
		report_error(va->window, "Could not start learning", error);
		g_error_free(error);
	}
}

/* Cancel of a view that computes nothing does nothing. */
static void heatmap_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_heatmap_view_cancel(actions_of(data)->heatmap);
}

static void learning_cancel(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	cl_learning_view_cancel(actions_of(data)->learning);
}

static void heatmap_export(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	const char *path = g_variant_get_string(parameter, NULL);
	if (*path)
		queue_export(va, EXPORT_HEATMAP, path);
	else
		cl_plot_view_choose_export(cl_heatmap_view_get_plot(va->heatmap), "png");
}

static void learning_export(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ViewActions *va = actions_of(data);
	const char *path = g_variant_get_string(parameter, NULL);
	if (*path)
		queue_export(va, EXPORT_LEARNING, path);
	else
		cl_plot_view_choose_export(cl_learning_view_get_plot(va->learning), "png");
}

static void folder_chosen(GtkNativeDialog *dialog, int response, gpointer data)
{
	ViewActions *va = actions_of(data);
	if (response == GTK_RESPONSE_ACCEPT) {
		GFile *folder = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		char *path = folder ? g_file_get_path(folder) : NULL;
		if (path)
			queue_export(va, EXPORT_ALL, path);
		g_free(path);
		g_clear_object(&folder);
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
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new("Export All Figures and Tables", GTK_WINDOW(va->window),
																GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Export",
																"_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	g_signal_connect(chooser, "response", G_CALLBACK(folder_chosen), va->window);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static const GActionEntry view_actions[] = {
	{.name = "heatmap-compute", .activate = heatmap_compute, .parameter_type = "a{sv}"},
	{.name = "heatmap-cancel", .activate = heatmap_cancel},
	{.name = "heatmap-export", .activate = heatmap_export, .parameter_type = "s"},
	{.name = "learning-run", .activate = learning_run, .parameter_type = "a{sv}"},
	{.name = "learning-cancel", .activate = learning_cancel},
	{.name = "learning-export", .activate = learning_export, .parameter_type = "s"},
	{.name = "export-all", .activate = export_all, .parameter_type = "s"},
};

void cl_view_actions_install(ClWindow *window, ClHeatmapView *heatmap, ClLearningView *learning)
{
	ViewActions *va = g_new0(ViewActions, 1);
	va->window = window;
	va->heatmap = heatmap;
	va->learning = learning;
	g_queue_init(&va->pending);
	g_object_set_data_full(G_OBJECT(window), "cl-view-actions", va, view_actions_free);
	g_action_map_add_action_entries(G_ACTION_MAP(window), view_actions, G_N_ELEMENTS(view_actions), window);
}
