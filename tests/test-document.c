/* The document and the job without a display: every way of changing the
 * scene announces itself once through "changed" with the right flags and a
 * new revision, gestures and undo compose, results go stale, the selection
 * follows its object, the recovery file follows the dirty state; jobs share
 * one thread budget, hold the application and always call back. */
#include "cl-document.h"
#include "cl-job.h"
#include "cl-runner.h"
#include "run-data.h"
#include "cli-run.h"
#include "scene-file.h"
#include "tasks.h"

#include <glib/gstdio.h>
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

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/document/edit", test_edit);
	g_test_add_func("/document/gesture", test_gesture);
	g_test_add_func("/document/replace-results", test_replace_and_results);
	g_test_add_func("/document/selection", test_selection);
	g_test_add_func("/document/recovery", test_recovery);
	g_test_add_func("/document/backends", test_backends);
	g_test_add_func("/runner/follows-edits", test_runner_follows_edits);
	g_test_add_func("/job/budget", test_job_budget);
	g_test_add_func("/job/holds-app", test_job_holds_app);
	return g_test_run();
}
