/* The document and the job without a display: every way of changing the
 * scene announces itself once through "changed" with the right flags and a
 * new revision, gestures and undo compose, results go stale, the selection
 * follows its object, the recovery file follows the dirty state; jobs share
 * one thread budget, hold the application and always call back. Export All
 * draws and writes what the CLI and the lesson handouts do. */
#include "cl-document.h"
#include "cl-job.h"
#include "cl-runner.h"
#include "cl-session-export.h"
#include "backend-style.h"
#include "figures.h"
#include "lesson-file.h"
#include "perturbation-figure.h"
#include "run-data.h"
#include "cli-run.h"
#include "scene-file.h"
#include "tasks.h"

#include <glib/gstdio.h>
#include <math.h>
#include <json-glib/json-glib.h>
#include <stdatomic.h>

typedef struct {
	int count;
	unsigned what;    /* of the last emission */
	unsigned all;     /* or of every emission */
	guint revision;   /* the document's revision at the last emission */
} Changes;

static void on_changed(ClDocument *doc, guint what, gpointer data)
{
	Changes *c = data;
	c->count++;
	c->what = what;
	c->all |= what;
	c->revision = cl_document_get_revision(doc);
}

static void reset(Changes *c)
{
	*c = (Changes){0};
}

static gboolean move_ball(ClScene *scene, gpointer data, char *message, gsize size)
{
	return cl_edit_move_ball(scene, 0, *(ClVec2 *)data, message, size);
}

static ClDocument *task3_document(Changes *changes)
{
	ClDocument *doc = cl_document_new(cl_test_task3());
	g_signal_connect(doc, "changed", G_CALLBACK(on_changed), changes);
	return doc;
}

static void test_edit(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	guint r0 = cl_document_get_revision(doc);
	ClVec2 to = {-1.5, -2};
	g_assert_true(cl_document_edit(doc, "Move ball", NULL, move_ball, &to, NULL));
	g_assert_cmpint(c.count, ==, 1);
	g_assert_true(c.what & CL_DOCUMENT_SCENE);
	g_assert_true(c.what & CL_DOCUMENT_FILE);
	g_assert_false(c.what & CL_DOCUMENT_REPLACED);
	g_assert_cmpuint(c.revision, >, r0);
	g_assert_true(cl_document_get_dirty(doc));
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, ==, -1.5);
	g_assert_cmpstr(cl_document_undo_label(doc), ==, "Move ball");

	/* a refused edit changes nothing and says why */
	reset(&c);
	ClVec2 onto = cl_document_get_scene(doc)->balls[1].position;
	g_autoptr(GError) error = NULL;
	g_assert_false(cl_document_edit(doc, "Move ball", NULL, move_ball, &onto, &error));
	g_assert_nonnull(error);
	g_assert_cmpint(c.count, ==, 0);
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, ==, -1.5);

	/* merged edits are one undo step; undo and redo announce themselves */
	for (double x = -1.4; x < -1.05; x += 0.1) {
		ClVec2 p = {x, -2};
		g_assert_true(cl_document_edit(doc, "Ball position", "ball1.position", move_ball, &p, NULL));
	}
	reset(&c);
	g_assert_true(cl_document_undo(doc));
	g_assert_cmpint(c.count, ==, 1);
	g_assert_true(c.what & CL_DOCUMENT_SCENE && c.what & CL_DOCUMENT_HISTORY);
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, ==, -1.5);
	g_assert_true(cl_document_redo(doc));
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, >, -1.2);
}

static void test_gesture(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	cl_document_begin(doc, "Move ball");
	for (int i = 1; i <= 3; i++) {
		ClVec2 p = {-2 + 0.1 * i, -2};
		g_assert_true(cl_document_preview(doc, move_ball, &p, NULL));
		g_assert_true(c.what & CL_DOCUMENT_PREVIEW);
	}
	g_assert_cmpint(c.count, ==, 3);
	g_assert_false(cl_document_can_undo(doc));
	reset(&c);
	cl_document_commit(doc);
	/* the commit announces the final scene once more, not as a preview */
	g_assert_cmpint(c.count, ==, 1);
	g_assert_true(c.what & CL_DOCUMENT_SCENE);
	g_assert_false(c.what & CL_DOCUMENT_PREVIEW);
	g_assert_true(cl_document_can_undo(doc));
	g_assert_true(cl_document_undo(doc));
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, ==, -2);

	/* a cancelled gesture restores its start and leaves no undo step */
	g_assert_true(cl_document_redo(doc));
	gboolean could_redo = cl_document_can_redo(doc);
	cl_document_begin(doc, "Move ball");
	ClVec2 p = {0, 0};
	g_assert_true(cl_document_preview(doc, move_ball, &p, NULL));
	cl_document_cancel(doc);
	g_assert_cmpfloat(cl_document_get_scene(doc)->balls[0].position.x, ==, -2 + 0.3);
	g_assert_cmpint(cl_document_can_redo(doc), ==, could_redo);
}

static void test_replace_and_results(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	g_autoptr(ClResult) result = cl_result_new(CL_RESULT_HEATMAP, cl_document_get_scene(doc),
											   cl_document_get_revision(doc), NULL, NULL);
	cl_document_set_result(doc, result);
	g_assert_true(c.what == CL_DOCUMENT_RESULTS);
	g_assert_true(cl_document_get_result(doc, CL_RESULT_HEATMAP) == result);
	g_assert_false(cl_document_is_stale(doc, result));
	g_autoptr(GError) error = NULL;
	g_assert_true(cl_document_load_preset(doc, "task2-ground-wall", &error));
	g_assert_no_error(error);
	g_assert_true(c.all & CL_DOCUMENT_REPLACED);
	g_assert_true(cl_document_is_stale(doc, result));
	g_assert_false(cl_document_get_dirty(doc));
	/* the result keeps the scene it was computed for */
	g_assert_cmpint(cl_result_scene(result)->ball_count, ==, 2);
	g_assert_cmpint(cl_document_get_scene(doc)->ball_count, ==, 1);
	g_assert_true(cl_document_undo(doc));
	g_assert_cmpint(cl_document_get_scene(doc)->ball_count, ==, 2);
}

static gboolean delete_first_ball(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)data, (void)message, (void)size;
	return cl_edit_delete(scene, (ClPick){CL_PICK_BALL, 0});
}

static void test_selection(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	cl_document_select(doc, (ClPick){CL_PICK_BALL, 1});
	g_assert_true(c.what == CL_DOCUMENT_SELECTION);
	g_assert_true(cl_document_edit(doc, "Delete", NULL, delete_first_ball, NULL, NULL));
	ClPick p = cl_document_get_selection(doc);
	g_assert_cmpint(p.kind, ==, CL_PICK_BALL);
	g_assert_cmpint(p.index, ==, 0);
	g_assert_cmpstr(cl_document_get_scene(doc)->balls[0].id, ==, "ball2");
	/* deleting the selected ball empties the selection, and says so */
	reset(&c);
	g_assert_true(cl_document_edit(doc, "Delete", NULL, delete_first_ball, NULL, NULL));
	g_assert_cmpint(cl_document_get_selection(doc).kind, ==, CL_PICK_NONE);
	g_assert_true(c.what & CL_DOCUMENT_SELECTION);
}

static void test_recovery(void)
{
	g_autofree char *dir = g_dir_make_tmp("cl-doc-XXXXXX", NULL);
	g_autofree char *recovery = g_build_filename(dir, "recovery.json", NULL);
	g_autofree char *saved = g_build_filename(dir, "saved.json", NULL);
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	cl_document_set_recovery_path(doc, recovery);
	ClVec2 to = {-1.5, -2};
	g_assert_true(cl_document_edit(doc, "Move ball", NULL, move_ball, &to, NULL));
	/* the autosave comes about a second after the edit */
	gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
	while (!g_file_test(recovery, G_FILE_TEST_EXISTS) && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, FALSE);
	g_assert_true(g_file_test(recovery, G_FILE_TEST_EXISTS));
	g_autoptr(ClScene) restored = cl_scene_file_load(recovery, NULL);
	g_assert_true(cl_scene_equal(restored, cl_document_get_scene(doc)));
	/* saving makes the document clean: the recovery file goes */
	g_assert_true(cl_document_save(doc, saved, NULL));
	g_assert_false(cl_document_get_dirty(doc));
	g_assert_cmpstr(cl_document_get_path(doc), ==, saved);
	g_assert_false(g_file_test(recovery, G_FILE_TEST_EXISTS));
	g_unlink(saved);
	g_rmdir(dir);
}

static void test_backends(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	g_autoptr(GArray) all = cl_document_enabled_backends(doc);
	g_assert_cmpuint(all->len, ==, (guint)cl_backend_count());
	cl_document_set_backend_enabled(doc, 1, FALSE);
	g_assert_true(c.what == CL_DOCUMENT_BACKENDS);
	g_assert_cmpint(c.count, ==, 1);
	cl_document_set_backend_enabled(doc, 1, FALSE); /* no change, no signal */
	g_assert_cmpint(c.count, ==, 1);
	g_autoptr(GArray) some = cl_document_enabled_backends(doc);
	g_assert_cmpuint(some->len, ==, all->len - 1);
}

/* The colour at data (0.5, y) of a 1×1 figure drawn at 320 × 240. */
static guint32 colour_at(ClPlotFigure *f, double y)
{
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 320, 240);
	cairo_t *cr = cairo_create(surface);
	cl_plot_figure_draw(f, cr, 320, 240);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	double px, py;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5, y, &px, &py));
	guint32 pixel = *(guint32 *)(cairo_image_surface_get_data(surface) +
								 (int)py * cairo_image_surface_get_stride(surface) + 4 * (int)px);
	cairo_surface_destroy(surface);
	return pixel & 0xFFFFFF;
}

/* A legend click toggles a backend's hidden state; every figure then hides
 * that backend's curves (the series styled for it) and only those. */
static void test_backends_hidden_in_figures(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	int hidden = cl_backend_find("lcp-nimble"), kept = cl_backend_find("impulse");
	g_assert_cmpint(hidden, >=, 0);
	g_assert_cmpint(kept, >=, 0);
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_x_range(p, 0, 1);
	cl_plot_panel_set_y_range(p, 0, 1);
	cl_plot_panel_set_grid(p, false);
	const int backends[2] = {hidden, kept};
	const double heights[2] = {0.5, 0.25};
	for (int i = 0; i < 2; i++) {
		ClPlotSeries *s = cl_plot_panel_add_line(p, i ? NULL : cl_backend_info(backends[i])->id, (double[]){0, 1},
												 (double[]){heights[i], heights[i]}, 2);
		cl_backend_style_series(s, backends[i], false);
		cl_plot_series_set_width(s, 4);
	}
	const guint32 white = 0xFFFFFF;
	g_assert_cmpuint(colour_at(f, 0.5), !=, white);

	cl_document_toggle_backend_hidden(doc, hidden);
	g_assert_true(c.what == CL_DOCUMENT_BACKENDS);
	g_assert_false(cl_document_backend_shown(doc, hidden));
	cl_document_hide_in_figure(doc, f);
	g_assert_cmpuint(colour_at(f, 0.5), ==, white);
	g_assert_cmpuint(colour_at(f, 0.25), !=, white); /* the unlabelled curve of a shown backend stays */

	cl_document_toggle_backend_hidden(doc, hidden);
	g_assert_true(cl_document_backend_shown(doc, hidden));
	cl_document_hide_in_figure(doc, f);
	g_assert_cmpuint(colour_at(f, 0.5), !=, white);

	/* the unlabelled curve hides with its backend too */
	cl_document_toggle_backend_hidden(doc, kept);
	cl_document_hide_in_figure(doc, f);
	g_assert_cmpuint(colour_at(f, 0.25), ==, white);
	cl_plot_figure_free(f);
}

/* ------------------------------------------------------------------ jobs */

static gboolean count_threads(ClJob *job, gpointer data, GError **error)
{
	(void)error;
	*(int *)data = cl_job_threads(job);
	return TRUE;
}

static gboolean wait_for_cancel(ClJob *job, gpointer data, GError **error)
{
	_Atomic int *started = data;
	atomic_store(started, cl_job_threads(job));
	while (!cl_job_is_cancelled(job))
		g_usleep(1000);
	g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
	return FALSE;
}

static void job_done(GObject *source, GAsyncResult *result, gpointer data)
{
	GError **error = data;
	g_assert_false(cl_job_finish(CL_JOB(source), result, error));
}

static void test_job_budget(void)
{
	cl_job_set_thread_limit(3);
	_Atomic int first = 0;
	g_autoptr(ClJob) busy = cl_job_new(2, wait_for_cancel, (gpointer)&first, NULL);
	g_autoptr(GError) error = NULL;
	cl_job_run_async(busy, job_done, &error);
	while (!atomic_load(&first))
		g_usleep(1000);
	g_assert_cmpint(atomic_load(&first), ==, 2);
	g_assert_cmpint(cl_job_threads_in_use(), ==, 2);
	/* a second job gets what is left, and at least one */
	int second = 0, third = 0;
	g_autoptr(ClJob) a = cl_job_new(4, count_threads, &second, NULL);
	g_assert_true(cl_job_run(a, NULL));
	g_assert_cmpint(second, ==, 1);
	cl_job_set_thread_limit(2);
	g_autoptr(ClJob) b = cl_job_new(4, count_threads, &third, NULL);
	g_assert_true(cl_job_run(b, NULL));
	g_assert_cmpint(third, ==, 1);
	g_assert_true(cl_job_is_running(busy));
	cl_job_cancel(busy);
	while (cl_job_is_running(busy))
		g_main_context_iteration(NULL, TRUE);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpint(cl_job_threads_in_use(), ==, 0);
	cl_job_set_thread_limit(0);
}

/* g_application_run returns once nothing holds the app: with the job's
 * hold, only after the job has been cancelled and has called back. */
typedef struct {
	ClJob *job;
	_Atomic int started;
	gboolean called_back;
} HoldCheck;

static void hold_job_done(GObject *source, GAsyncResult *result, gpointer data)
{
	HoldCheck *h = data;
	g_assert_false(cl_job_finish(CL_JOB(source), result, NULL));
	h->called_back = TRUE;
}

static gboolean cancel_later(gpointer data)
{
	cl_job_cancel(data);
	return G_SOURCE_REMOVE;
}

static void start_held_job(GApplication *app, HoldCheck *h)
{
	(void)app;
	cl_job_run_async(h->job, hold_job_done, h);
	g_timeout_add(200, cancel_later, h->job);
}

static void test_job_holds_app(void)
{
	g_autoptr(GApplication) app = g_application_new("io.github.contactlab.JobTest", G_APPLICATION_NON_UNIQUE);
	g_application_set_default(app);
	HoldCheck h = {0};
	h.job = cl_job_new(1, wait_for_cancel, (gpointer)&h.started, NULL);
	g_signal_connect(app, "activate", G_CALLBACK(start_held_job), &h);
	g_assert_cmpint(g_application_run(app, 0, NULL), ==, 0);
	g_assert_true(h.called_back);
	g_assert_false(cl_job_is_running(h.job));
	g_object_unref(h.job);
	g_application_set_default(NULL);
}

/* ------------------------------------------------------------ runner */

static void wait_for_result(ClDocument *doc, ClRunner *runner)
{
	gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
	for (;;) {
		ClResult *r = cl_document_get_result(doc, CL_RESULT_RUN);
		if (r && !cl_document_is_stale(doc, r) && !cl_runner_is_running(runner))
			return;
		g_assert_cmpint(g_get_monotonic_time(), <, end);
		g_main_context_iteration(NULL, TRUE);
	}
}

/* Until the stored Run has count columns, is current and is finished. */
static ClRunData *wait_for_columns(ClDocument *doc, ClRunner *runner, int count)
{
	gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
	for (;;) {
		ClResult *r = cl_document_get_result(doc, CL_RESULT_RUN);
		ClRunData *data = r ? cl_result_payload(r) : NULL;
		if (data && data->column_count == count && !cl_document_is_stale(doc, r) && !cl_runner_is_running(runner))
			return data;
		g_assert_cmpint(g_get_monotonic_time(), <, end);
		g_main_context_iteration(NULL, TRUE);
	}
}

/* The window's extra columns (Add parameter) are the CLI's --param ones,
 * kept across an edit's rerun; a name the scene lost is left out. */
static void test_runner_extra_columns(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	g_autoptr(ClRunner) runner = cl_runner_new(doc);
	cl_runner_set_fd(runner, CL_FD_ALL);
	int defaults;
	g_free(cl_scene_params_new(cl_document_get_scene(doc), CL_PARAMS_TABLE, -1, &defaults));
	const char *const extra[] = {"elasticity", "ball2.radius", "gravity.y", NULL};
	cl_runner_set_extra_columns(runner, extra);
	ClRunData *data = wait_for_columns(doc, runner, defaults + 3);
	ClResult *result = cl_document_get_result(doc, CL_RESULT_RUN);
	g_autoptr(GString) csv = cl_run_data_gradient_csv(data, cl_result_scene(result));
	const char *args[] = {"gradients", "task3-two-balls", "--fd", "all", "--param", "elasticity", "--param",
						  "ball2.radius", "--param", "gravity.y", "--format", "csv", NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(cl_test_run_cli(NULL, args, &out, &err), ==, 0);
	g_assert_cmpstr(csv->str, ==, out);
	/* exact's elasticity adjoint is a number, not the NAN of a run without parameter columns */
	g_assert_true(isfinite(cl_run_data_cell(data, cl_run_data_reference_slot(data), defaults).adjoint));

	/* an edit's rerun keeps them */
	ClVec2 to = {-1.5, -2};
	g_assert_true(cl_document_edit(doc, "Move ball", NULL, move_ball, &to, NULL));
	wait_for_result(doc, runner);
	data = wait_for_columns(doc, runner, defaults + 3);
	g_assert_cmpfloat(cl_result_scene(cl_document_get_result(doc, CL_RESULT_RUN))->balls[0].position.x, ==, -1.5);

	/* a name the scene does not have: not a column, the others stay */
	const char *const lost[] = {"elasticity", "ball9.radius", NULL};
	int count;
	cl_runner_set_extra_columns(runner, lost);
	g_free(cl_runner_columns(runner, cl_document_get_scene(doc), &count));
	g_assert_cmpint(count, ==, defaults + 1);
	g_assert_cmpstr(cl_runner_get_extra_columns(runner)[1], ==, "ball9.radius");
	wait_for_columns(doc, runner, defaults + 1);
}

/* A live runner follows every change: the stored Run is always of the
 * current revision once it has finished, and its table is the CLI's. */
static void test_runner_follows_edits(void)
{
	Changes c = {0};
	g_autoptr(ClDocument) doc = task3_document(&c);
	g_autoptr(ClRunner) runner = cl_runner_new(doc);
	cl_runner_set_fd(runner, CL_FD_ALL);
	cl_runner_run(runner);
	wait_for_result(doc, runner);
	ClVec2 to = {-1.5, -2};
	g_assert_true(cl_document_edit(doc, "Move ball", NULL, move_ball, &to, NULL));
	g_assert_true(cl_document_is_stale(doc, cl_document_get_result(doc, CL_RESULT_RUN)));
	wait_for_result(doc, runner);
	ClResult *result = cl_document_get_result(doc, CL_RESULT_RUN);
	g_assert_cmpfloat(cl_result_scene(result)->balls[0].position.x, ==, -1.5);
	g_assert_cmpint(cl_runner_get_completed(runner), ==, 2);

	/* the window's table says what `contactlab gradients --fd all --format csv` says */
	g_autoptr(GString) csv = cl_run_data_gradient_csv(cl_result_payload(result), cl_result_scene(result));
	const char *args[] = {"gradients", "task3-two-balls", "--set", "ball1.position.x=-1.5", "--fd", "all", "--format",
						  "csv", NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(cl_test_run_cli(NULL, args, &out, &err), ==, 0);
	g_assert_cmpstr(csv->str, ==, out);

	/* each cell's FD step (its tooltip's h) is the CLI's for that cell */
	args[7] = "json";
	g_autofree char *json = NULL, *json_err = NULL;
	g_assert_cmpint(cl_test_run_cli(NULL, args, &json, &json_err), ==, 0);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_assert_true(json_parser_load_from_data(parser, json, -1, NULL));
	JsonArray *rows = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "backends");
	ClRunData *data = cl_result_payload(result);
	g_assert_cmpuint(json_array_get_length(rows), ==, (guint)data->backend_count);
	for (int b = 0; b < data->backend_count; b++) {
		JsonObject *gradient = json_object_get_object_member(json_array_get_object_element(rows, (guint)b), "gradient");
		for (int k = 0; k < data->column_count; k++) {
			char name[CL_NAME_MAX];
			cl_param_name(cl_result_scene(result), &data->columns[k], name, sizeof name);
			double cli = json_object_get_double_member(json_object_get_object_member(gradient, name), "fd_step");
			g_assert_cmpfloat(cl_run_data_cell(data, b, k).fd_step, ==, cli);
		}
	}

	/* not live: a change leaves the result stale until Run */
	cl_runner_set_live(runner, FALSE);
	to.x = -1.4;
	g_assert_true(cl_document_edit(doc, "Move ball", NULL, move_ball, &to, NULL));
	for (int i = 0; i < 50; i++)
		g_main_context_iteration(NULL, FALSE);
	g_assert_false(cl_runner_is_running(runner));
	g_assert_true(cl_document_is_stale(doc, cl_document_get_result(doc, CL_RESULT_RUN)));
	cl_runner_run(runner);
	wait_for_result(doc, runner);
}

/* ------------------------------------------------------------ Export All */

static void remove_tree(const char *path)
{
	if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
		g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
		for (const char *name; dir && (name = g_dir_read_name(dir));) {
			g_autofree char *child = g_build_filename(path, name, NULL);
			remove_tree(child);
		}
		g_rmdir(path);
	} else {
		g_unlink(path);
	}
}

/* The perturbation study of a wall's angle: the ± δ runs for every backend,
 * the first-order prediction from the forward-mode tangent of the backends
 * that differentiate the angle (exact, impulse), none (NAN) for one that
 * does not (lcp-nimble, so far); exact's final tangent is its central
 * difference. */
static void test_perturbation_wall_angle(void)
{
	ClScene *scene = cl_test_task1();
	ClParam angle;
	g_assert_true(cl_param_parse(scene, "ground.angle", &angle, NULL, 0));
	cl_param_set(scene, &angle, 80.0);
	int backends[] = {cl_backend_find("exact"), cl_backend_find("impulse"), cl_backend_find("lcp-nimble")};
	g_autoptr(ClRunData) data = cl_run_data_new(scene, backends, 3, NULL, 0);
	g_autoptr(GError) error = NULL;
	const double delta = 1e-3;
	g_assert_true(cl_run_data_set_perturbation(data, scene, "ground.angle", delta, &error));
	int ns = cl_state_size(scene);
	for (int b = 0; b < 3; b++) {
		cl_run_data_compute_perturbation(data, scene, b, NULL);
		const ClRunBackend *r = &data->backends[b];
		int last = r->tangent_count - 1;
		g_assert_cmpint(r->tangent_steps[last], ==, scene->steps);
		const double *t = r->tangents + (gsize)last * (gsize)ns;
		const double *plus = r->plus_states + (gsize)scene->steps * (gsize)ns;
		const double *minus = r->minus_states + (gsize)scene->steps * (gsize)ns;
		g_assert_true(isfinite(plus[1]) && isfinite(minus[1]));
		if (b == 2) {
			g_assert_true(isnan(t[0]) && isnan(t[1]));
			continue;
		}
		g_assert_true(isfinite(t[0]) && isfinite(t[1]));
		g_assert_cmpfloat(fabs(t[1]), >, 1e-3); /* the turned floor moves the bounce */
		if (b == 0)
			for (int k = 0; k < 4; k++)
				g_assert_cmpfloat_with_epsilon(t[k], (plus[k] - minus[k]) / (2 * delta), 1e-6 * fmax(1.0, fabs(t[k])));
	}
	cl_scene_free(scene);
}

/* A document of scene with exactly these backends enabled, its Run computed. */
static ClDocument *computed_document(ClScene *scene, const int *backends, int count, const char *perturb, double delta,
									 ClRunner **runner)
{
	ClDocument *doc = cl_document_new(scene);
	for (int b = 0; b < cl_backend_count(); b++) {
		gboolean wanted = FALSE;
		for (int k = 0; k < count; k++)
			wanted = wanted || backends[k] == b;
		cl_document_set_backend_enabled(doc, b, wanted);
	}
	*runner = cl_runner_new(doc);
	cl_runner_set_perturbation(*runner, perturb, delta);
	cl_runner_run(*runner);
	wait_for_result(doc, *runner);
	return doc;
}

/* Pixels of two PNGs; FALSE when the sizes differ. */
static gboolean same_png(const char *a_path, const char *b_path)
{
	cairo_surface_t *a = cairo_image_surface_create_from_png(a_path), *b = cairo_image_surface_create_from_png(b_path);
	g_assert_cmpint(cairo_surface_status(a), ==, CAIRO_STATUS_SUCCESS);
	g_assert_cmpint(cairo_surface_status(b), ==, CAIRO_STATUS_SUCCESS);
	int h = cairo_image_surface_get_height(a), stride = cairo_image_surface_get_stride(a);
	gboolean same = cairo_image_surface_get_width(a) == cairo_image_surface_get_width(b) &&
					h == cairo_image_surface_get_height(b) && stride == cairo_image_surface_get_stride(b) &&
					memcmp(cairo_image_surface_get_data(a), cairo_image_surface_get_data(b), (size_t)stride * h) == 0;
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);
	return same;
}

/* Export All's canvas is the figure `contactlab simulate --png` draws, in
 * both themes: one renderer, from the same trajectories. */
static void test_export_canvas_is_simulate(void)
{
	g_autofree char *dir = g_dir_make_tmp("cl-export-XXXXXX", NULL);
	int backends[] = {cl_backend_find("exact"), cl_backend_find("impulse"), cl_backend_find("compliant-warp")};
	g_autoptr(ClRunner) runner = NULL;
	g_autoptr(ClDocument) doc = computed_document(cl_preset_load("task2-ground-wall", NULL), backends, 3, NULL, 0,
												  &runner);
	for (int dark = 0; dark < 2; dark++) {
		g_autofree char *folder = g_build_filename(dir, dark ? "dark" : "light", NULL);
		g_assert_true(cl_session_export(doc, folder, dark, NULL));
		g_autofree char *canvas = g_build_filename(folder, "canvas.png", NULL);
		g_autofree char *cli = g_build_filename(dir, dark ? "cli-dark.png" : "cli.png", NULL);
		const char *args[] = {"simulate", "task2-ground-wall", "--backend", "exact,impulse,compliant-warp", "--png",
							  cli, dark ? "--dark" : NULL, NULL};
		g_autofree char *out = NULL, *err = NULL;
		g_assert_cmpint(cl_test_run_cli(NULL, args, &out, &err), ==, 0);
		g_assert_true(same_png(canvas, cli));
	}
	/* other runs are another picture: the comparison can fail */
	g_autofree char *fewer = g_build_filename(dir, "fewer.png", NULL);
	const char *args[] = {"simulate", "task2-ground-wall", "--backend", "exact,impulse", "--png", fewer, NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(cl_test_run_cli(NULL, args, &out, &err), ==, 0);
	g_autofree char *canvas = g_build_filename(dir, "light", "canvas.png", NULL);
	g_assert_false(same_png(canvas, fewer));
	remove_tree(dir);
}

/* A lesson's perturbation step is the window's study: the handout's CSV is
 * Export All's perturbation.csv and its figure the window's drawing of its
 * own Run, for the same scene, parameter and δ. */
static void test_export_perturbation_is_handout(void)
{
	g_autofree char *dir = g_dir_make_tmp("cl-export-XXXXXX", NULL);
	g_autoptr(GError) error = NULL;
	ClLesson *lesson = cl_lesson_load("projection", &error);
	g_assert_no_error(error);
	const ClLessonStep *step = g_ptr_array_index(lesson->steps, 1);
	g_assert_cmpint(step->view.kind, ==, CL_LESSON_VIEW_PERTURBATION);
	g_autoptr(ClRunner) runner = NULL;
	g_autoptr(ClDocument) doc =
		computed_document(cl_scene_copy(step->scene), (const int *)step->backends->data, (int)step->backends->len,
						  step->view.parameter, step->view.delta, &runner);
	g_autofree char *folder = g_build_filename(dir, "session", NULL);
	g_assert_true(cl_session_export(doc, folder, FALSE, &error));
	g_assert_no_error(error);
	g_autofree char *pdf = g_build_filename(dir, "handout.pdf", NULL);
	g_autofree char *handout = g_build_filename(dir, "handout", NULL);
	const char *args[] = {"lesson", "export", "projection", "--pdf", pdf, "--dir", handout, NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(cl_test_run_cli(NULL, args, &out, &err), ==, 0);

	g_autofree char *session_csv_path = g_build_filename(folder, "perturbation.csv", NULL);
	g_autofree char *handout_csv_path = g_build_filename(handout, "step-02.csv", NULL);
	g_autofree char *session_csv = NULL, *handout_csv = NULL, *manifest = NULL;
	g_assert_true(g_file_get_contents(session_csv_path, &session_csv, NULL, NULL));
	g_assert_true(g_file_get_contents(handout_csv_path, &handout_csv, NULL, NULL));
	g_assert_true(g_str_has_prefix(session_csv, "backend,offset,step,time,ball,x,y\nexact,-1,0,"));
	if (strcmp(session_csv, handout_csv) != 0) {
		gsize at = 0;
		while (session_csv[at] == handout_csv[at])
			at++;
		g_error("perturbation.csv and the handout's step-02.csv differ from byte %zu on", at);
	}
	g_autofree char *manifest_path = g_build_filename(folder, "manifest.json", NULL);
	g_assert_true(g_file_get_contents(manifest_path, &manifest, NULL, NULL));
	g_assert_nonnull(strstr(manifest, "\"file\": \"perturbation.csv\""));

	/* the handout's figure: the window's Run drawn by the perturbation view's code */
	g_autofree char *handout_png = g_build_filename(handout, "step-02.png", NULL);
	cairo_surface_t *png = cairo_image_surface_create_from_png(handout_png);
	g_assert_cmpint(cairo_surface_status(png), ==, CAIRO_STATUS_SUCCESS);
	double width = cairo_image_surface_get_width(png) * 72.0 / CL_FIGURE_DPI;
	double height = cairo_image_surface_get_height(png) * 72.0 / CL_FIGURE_DPI;
	cairo_surface_destroy(png);
	ClResult *run = cl_document_get_result(doc, CL_RESULT_RUN);
	ClPlotFigure *figure = cl_perturbation_figure_new(cl_result_scene(run), cl_result_payload(run));
	g_autofree char *mine = g_build_filename(dir, "mine.png", NULL);
	g_assert_true(cl_plot_figure_export(figure, mine, CL_PLOT_FORMAT_PNG, width, height, CL_FIGURE_DPI, NULL));
	cl_plot_figure_free(figure);
	g_assert_true(same_png(handout_png, mine));
	cl_lesson_free(lesson);
	remove_tree(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/document/edit", test_edit);
	g_test_add_func("/document/gesture", test_gesture);
	g_test_add_func("/document/replace-results", test_replace_and_results);
	g_test_add_func("/document/selection", test_selection);
	g_test_add_func("/document/recovery", test_recovery);
	g_test_add_func("/document/backends", test_backends);
	g_test_add_func("/document/backends-hidden-in-figures", test_backends_hidden_in_figures);
	g_test_add_func("/runner/follows-edits", test_runner_follows_edits);
	g_test_add_func("/runner/extra-columns", test_runner_extra_columns);
	g_test_add_func("/export/canvas-is-simulate", test_export_canvas_is_simulate);
	g_test_add_func("/export/perturbation-is-handout", test_export_perturbation_is_handout);
	g_test_add_func("/run-data/perturbation-wall-angle", test_perturbation_wall_angle);
	g_test_add_func("/job/budget", test_job_budget);
	g_test_add_func("/job/holds-app", test_job_holds_app);
	return g_test_run();
}
