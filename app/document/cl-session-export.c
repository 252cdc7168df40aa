#include "cl-session-export.h"

#include "convergence-data.h"
#include "figures.h"
#include "heatmap-data.h"
#include "learning-run.h"
#include "lesson-figures.h"
#include "numbers.h"
#include "perturbation-figure.h"
#include "scene-figure.h"
#include "scene-file.h"
#include "smoothing-data.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>

#define EXPORT_DPI 150.0
#define PERTURBATION_WIDTH 720.0
#define PERTURBATION_HEIGHT 480.0

typedef struct {
	ClDocument *doc;
	const char *folder;
	gboolean dark;
	GString *files; /* the manifest's entries */
	int count;
} Session;

/* One entry: what the file is and the scene it belongs to. */
static void list(Session *s, const char *file, const char *kind, const char *description, const ClResult *result,
				 const char *scene_file)
{
	g_string_append_printf(s->files, "%s\n    {\"file\": ", s->count++ ? "," : "");
	cl_json_append_string(s->files, file);
	g_string_append(s->files, ", \"kind\": ");
	cl_json_append_string(s->files, kind);
	g_string_append(s->files, ", \"description\": ");
	cl_json_append_string(s->files, description);
	if (result) {
		g_string_append(s->files, ", \"computed_for\": ");
		cl_json_append_string(s->files, scene_file);
		g_string_append_printf(s->files, ", \"stale\": %s",
							   cl_document_is_stale(s->doc, result) ? "true" : "false");
	}
	g_string_append(s->files, "}");
}

static char *path_of(Session *s, const char *file)
{
	return g_build_filename(s->folder, file, NULL);
}

static gboolean write_text(Session *s, const char *file, GString *text, const char *description,
						   const ClResult *result, const char *scene_file, GError **error)
{
	g_autofree char *path = path_of(s, file);
	gboolean ok = cl_write_output(path, text, error);
	g_string_free(text, TRUE);
	if (ok)
		list(s, file, "table", description, result, scene_file);
	return ok;
}

/* The scene a result was computed for: the document's own file when it is
 * current, else written beside it as KIND-scene.json. */
static gboolean scene_of(Session *s, const ClResult *result, char **scene_file, GError **error)
{
	if (!cl_document_is_stale(s->doc, result)) {
		*scene_file = g_strdup("scene.json");
		return TRUE;
	}
	*scene_file = g_strdup_printf("%s-scene.json", cl_result_kind_name(cl_result_kind(result)));
	g_autofree char *path = path_of(s, *scene_file);
	if (!cl_scene_file_save(cl_result_scene(result), path, error))
		return FALSE;
	list(s, *scene_file, "scene", "the scene the stale results next to it were computed for", NULL, NULL);
	return TRUE;
}

/* A figure in every format, in the session's theme; takes the figure. */
static gboolean write_figure(Session *s, const char *stem, const char *description, ClPlotFigure *figure,
							 double width, double height, const ClResult *result, const char *scene_file,
							 GError **error)
{
	cl_plot_figure_set_theme(figure, s->dark ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
	static const char *const extensions[] = {"png", "svg", "pdf"};
	gboolean ok = TRUE;
	for (gsize i = 0; ok && i < G_N_ELEMENTS(extensions); i++) {
		g_autofree char *file = g_strdup_printf("%s.%s", stem, extensions[i]);
		g_autofree char *path = path_of(s, file);
		ok = cl_plot_figure_export(figure, path, CL_PLOT_FORMAT_AUTO, width, height, EXPORT_DPI, error);
		if (ok)
			list(s, file, "figure", description, result, scene_file);
	}
	cl_plot_figure_free(figure);
	return ok;
}

/* ------------------------------------------------------------------ Run */

static GString *trajectories_csv(const ClRunData *data, const ClScene *scene)
{
	GString *out = g_string_new(CL_TRAJECTORY_CSV_HEADER);
	for (int b = 0; b < data->backend_count; b++)
		cl_trajectory_csv_append(out, scene, data->backends[b].backend, data->backends[b].states,
								 data->backends[b].steps_done);
	return out;
}

static gboolean export_run(Session *s, ClResult *result, GError **error)
{
	g_autofree char *scene_file = NULL;
	if (!scene_of(s, result, &scene_file, error))
		return FALSE;
	ClRunData *data = cl_result_payload(result);
	const ClScene *scene = cl_result_scene(result);
	/* the figure `contactlab simulate --png` draws */
	gboolean ok =
		write_figure(s, "canvas", "the scene canvas: every backend's trajectory over exact's",
					 cl_scene_figure_new(scene, data), CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, result, scene_file, error) &&
		write_text(s, "gradients.csv", cl_run_data_gradient_csv(data, scene),
				   "gradient table: backend,parameter,value (adjoint; fd:PARAMETER rows: own central difference)",
				   result, scene_file, error) &&
		write_text(s, "trajectories.csv", trajectories_csv(data, scene),
				   "trajectories: backend,step,time,ball,x,y,vx,vy", result, scene_file, error);
	if (ok && data->has_perturbation)
		ok = write_figure(s, "perturbation", "the perturbation study: runs at θ ± δ beside the first-order prediction",
						  cl_perturbation_figure_new(scene, data), PERTURBATION_WIDTH, PERTURBATION_HEIGHT, result,
						  scene_file, error) &&
			 write_text(s, "perturbation.csv", cl_run_data_perturbation_csv(data, scene),
						"perturbation study: backend,offset,step,time,ball,x,y (offset −1, 0, +1: θ − δ, θ, θ + δ)",
						result, scene_file, error);
	return ok;
}

/* ------------------------------------------------------------- studies */

static gboolean export_heatmap(Session *s, ClResult *result, GError **error)
{
	g_autofree char *scene_file = NULL;
	if (!scene_of(s, result, &scene_file, error))
		return FALSE;
	ClHeatmapData *h = cl_result_payload(result);
	g_autofree ClSweepCell *cells = cl_heatmap_data_copy_cells(h);
	ClPlotFigure *figure = cl_figure_heatmap(cl_result_scene(result), &h->def, cells, h->quantity, h->exact_slot);
	double w, hh;
	cl_figure_heatmap_size(figure, &w, &hh);
	return write_figure(s, "heatmap", "heatmap small multiples: one panel per backend, one colour scale", figure, w,
						hh, result, scene_file, error) &&
		   write_text(s, "heatmap.csv", cl_figure_heatmap_csv(&h->def, cells, h->quantity, h->exact_slot),
					  "heatmap grid: x,y,backend,quantity,value", result, scene_file, error);
}

static gboolean export_learning(Session *s, ClResult *result, GError **error)
{
	g_autofree char *scene_file = NULL;
	if (!scene_of(s, result, &scene_file, error))
		return FALSE;
	ClLearningRun *run = cl_result_payload(result);
	const ClScene *scene = cl_result_scene(result);
	int count;
	ClLearningTrace *traces = cl_learning_run_copy_traces(run, &count);
	double optimum = cl_two_ball_optimum(scene, NULL);
	ClPlotFigure *figure = cl_learning_figure(scene, run->params, run->param_count, run->tracked, traces, count, FALSE,
											  optimum, isnan(optimum) ? NULL : "analytic optimum", NULL);
	gboolean ok =
		write_figure(s, "learning-curves", "learning curves of every backend and the learned parameters", figure,
					 620, 300, result, scene_file, error) &&
		write_text(s, "learning-curves.csv", cl_learning_curves_csv(traces, count),
				   "learning curves: backend,iteration,loss (iteration = iterations: the result's loss)", result,
				   scene_file, error) &&
		write_text(s, "learned-parameters.csv",
				   cl_learning_parameters_csv(scene, run->params, run->param_count, traces, count),
				   "learned parameters: backend,parameter,value", result, scene_file, error) &&
		write_text(s, "learning-summary.csv", cl_learning_summary_csv(traces, count),
				   "per backend: status, final loss under its own and under the exact dynamics, contacts made",
				   result, scene_file, error);
	cl_learning_traces_free(traces, count);
	return ok;
}

static gboolean export_convergence(Session *s, ClResult *result, GError **error)
{
	g_autofree char *scene_file = NULL;
	if (!scene_of(s, result, &scene_file, error))
		return FALSE;
	ClConvergenceRun *run = cl_result_payload(result);
	return write_figure(s, "convergence", "one derivative of every backend against the step count N",
						cl_figure_convergence(run, NULL), CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, result, scene_file,
						error) &&
		   write_text(s, "convergence.csv", cl_convergence_csv(run), "convergence: backend,steps,dt,value", result,
					  scene_file, error);
}

/* The table (as `contactlab smooth --format csv` writes it) and, per
 * backend, the histogram of its terms of the first parameter. */
static gboolean export_smoothing(Session *s, ClResult *result, GError **error)
{
	g_autofree char *scene_file = NULL;
	if (!scene_of(s, result, &scene_file, error))
		return FALSE;
	ClSmoothingRun *run = cl_result_payload(result);
	ClSmoothTable table = cl_smoothing_run_table(run);
	if (!write_text(s, "smoothing.csv", cl_smooth_csv(&table),
					"smoothed gradients: backend,estimator,parameter,mean,stderr", result, scene_file, error))
		return FALSE;
	for (int slot = 0; slot < run->backend_count; slot++) {
		g_autofree char *stem = g_strdup_printf("smoothing-terms-%s", cl_backend_info(run->backends[slot])->id);
		if (!write_figure(s, stem, "histogram of one backend's ZoBG and FoBG terms of the first parameter",
						  cl_figure_smoothing_terms(run, slot, 0), CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, result,
						  scene_file, error))
			return FALSE;
	}
	return TRUE;
}

gboolean cl_session_export(ClDocument *doc, const char *folder, gboolean dark, GError **error)
{
	if (g_mkdir_with_parents(folder, 0755) != 0) {
		g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s: %s", folder, g_strerror(errno));
		return FALSE;
	}
	Session s = {doc, folder, dark, g_string_new(NULL), 0};
	const ClScene *scene = cl_document_get_scene(doc);
	g_autofree char *scene_path = path_of(&s, "scene.json");
	gboolean ok = cl_scene_file_save(scene, scene_path, error);
	if (ok)
		list(&s, "scene.json", "scene", "the scene as edited, loadable with Open or by the CLI", NULL, NULL);
	static gboolean (*const exporters[CL_RESULT_KIND_COUNT])(Session *, ClResult *, GError **) = {
		[CL_RESULT_RUN] = export_run,
		[CL_RESULT_HEATMAP] = export_heatmap,
		[CL_RESULT_LEARNING] = export_learning,
		[CL_RESULT_CONVERGENCE] = export_convergence,
		[CL_RESULT_SMOOTHING] = export_smoothing,
	};
	for (int k = 0; ok && k < CL_RESULT_KIND_COUNT; k++) {
		ClResult *result = cl_document_get_result(doc, (ClResultKind)k);
		if (result)
			ok = exporters[k](&s, result, error);
	}
	if (ok) {
		/* the manifest last: its presence means the export is complete */
		GString *manifest = g_string_new("{\n  \"generator\": \"ContactLab " CL_VERSION "\",\n  \"scene\": ");
		cl_json_append_string(manifest, scene->name);
		g_autoptr(GDateTime) now = g_date_time_new_now_utc();
		g_autofree char *created = g_date_time_format_iso8601(now);
		g_string_append(manifest, ",\n  \"created\": ");
		cl_json_append_string(manifest, created);
		g_string_append_printf(manifest, ",\n  \"files\": [%s\n  ]\n}\n", s.files->str);
		g_autofree char *path = path_of(&s, "manifest.json");
		ok = cl_write_output(path, manifest, error);
		g_string_free(manifest, TRUE);
	}
	g_string_free(s.files, TRUE);
	return ok;
}
