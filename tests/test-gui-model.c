/* The window's logic without a display: undo stack, canvas view and picking,
 * canvas edits (which must keep the scene valid), the compute and learning jobs. */
#include "cl-compute-job.h"
#include "cl-job-watch.h"
#include "cl-learning-job.h"
#include "learning-report.h"
#include "cl-scene-edit.h"
#include "cl-undo-stack.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static void test_undo_redo(void)
{
	ClScene *scene = cl_test_task3();
	ClUndoStack *stack = cl_undo_stack_new(10);
	g_assert_false(cl_undo_stack_can_undo(stack));
	cl_undo_stack_push(stack, scene, "Move ball", NULL);
	scene->balls[0].position.x = 0.5;
	g_assert_true(cl_undo_stack_can_undo(stack));
	g_assert_cmpstr(cl_undo_stack_undo_label(stack), ==, "Move ball");
	ClScene *undone = cl_undo_stack_undo(stack, scene);
	g_assert_cmpfloat(undone->balls[0].position.x, ==, -2);
	g_assert_true(cl_undo_stack_can_redo(stack));
	ClScene *redone = cl_undo_stack_redo(stack, undone);
	g_assert_cmpfloat(redone->balls[0].position.x, ==, 0.5);
	g_assert_true(cl_scene_equal(redone, scene));
	/* a new edit forgets the redo history */
	ClScene *again = cl_undo_stack_undo(stack, redone);
	cl_undo_stack_push(stack, again, "Other", NULL);
	g_assert_false(cl_undo_stack_can_redo(stack));
	cl_scene_free(again);
	cl_scene_free(redone);
	cl_scene_free(undone);
	cl_scene_free(scene);
	cl_undo_stack_free(stack);
}

static void test_undo_merge_and_limit(void)
{
	ClScene *scene = cl_test_task1();
	ClUndoStack *stack = cl_undo_stack_new(3);
	/* typing "1.25" in one field: four pushes with one key, one undo step */
	const double typed[] = {1, 1.2, 1.25};
	for (int i = 0; i < 3; i++) {
		cl_undo_stack_push(stack, scene, "Set radius", "field:radius");
		scene->balls[0].position.y = typed[i];
	}
	ClScene *undone = cl_undo_stack_undo(stack, scene);
	g_assert_cmpfloat(undone->balls[0].position.y, ==, 1); /* the preset's value */
	g_assert_false(cl_undo_stack_can_undo(stack));
	cl_scene_free(undone);
	/* sealing ends merging */
	cl_undo_stack_clear(stack);
	cl_undo_stack_push(stack, scene, "a", "k");
	cl_undo_stack_seal(stack);
	cl_undo_stack_push(stack, scene, "b", "k");
	g_assert_cmpstr(cl_undo_stack_undo_label(stack), ==, "b");
	/* only the limit's newest steps are kept */
	for (int i = 0; i < 5; i++)
		cl_undo_stack_push(stack, scene, "x", NULL);
	int count = 0;
	ClScene *current = cl_scene_copy(scene);
	for (ClScene *s; (s = cl_undo_stack_undo(stack, current)); count++) {
		cl_scene_free(current);
		current = s;
	}
	g_assert_cmpint(count, ==, 3);
	cl_scene_free(current);
	cl_scene_free(scene);
	cl_undo_stack_free(stack);
}

static void test_view(void)
{
	ClView view = {.center_x = 1, .center_y = 2, .scale = 100, .width = 400, .height = 300};
	ClVec2 s = cl_view_to_screen(&view, (ClVec2){1, 2});
	g_assert_cmpfloat(s.x, ==, 200);
	g_assert_cmpfloat(s.y, ==, 150);
	ClVec2 w = cl_view_to_world(&view, 300, 50); /* right and up */
	g_assert_cmpfloat_with_epsilon(w.x, 2, 1e-12);
	g_assert_cmpfloat_with_epsilon(w.y, 3, 1e-12);
	/* zooming keeps the point under the pointer */
	ClVec2 before = cl_view_to_world(&view, 50, 70);
	cl_view_zoom_at(&view, 50, 70, 2.5);
	ClVec2 after = cl_view_to_world(&view, 50, 70);
	g_assert_cmpfloat_with_epsilon(before.x, after.x, 1e-12);
	g_assert_cmpfloat_with_epsilon(before.y, after.y, 1e-12);
	g_assert_cmpfloat(view.scale, ==, 250);
	cl_view_pan(&view, 25, 0);
	g_assert_cmpfloat_with_epsilon(cl_view_to_world(&view, 75, 70).x, after.x, 1e-12);
	g_assert_cmpfloat(cl_view_grid_step(&view), ==, 0.2); /* 48 px at 250 px/m → 0.192 → 0.2 */
	g_assert_cmpfloat(cl_snap(0.26, 0.1), ==, 0.3);
	g_assert_false(signbit(cl_snap(-0.01, 0.1)));
	cl_view_fit(&view, -1, -1, 3, 1, 0);
	g_assert_cmpfloat(view.scale, ==, 100); /* 400 px for 4 m */
}

static void test_pick(void)
{
	ClScene *scene = cl_test_task2(0);
	ClView view = {.center_x = 0, .center_y = 0.5, .scale = 100, .width = 600, .height = 400};
	ClVec2 ball = cl_view_to_screen(&view, scene->balls[0].position);
	ClPick p = cl_scene_pick(scene, &view, ball.x + 3, ball.y);
	g_assert_cmpint(p.kind, ==, CL_PICK_BALL);
	g_assert_cmpint(p.index, ==, 0);
	ClVec2 head = cl_view_to_screen(&view, cl_velocity_handle(scene, &view, 0));
	p = cl_scene_pick(scene, &view, head.x, head.y);
	g_assert_cmpint(p.kind, ==, CL_PICK_VELOCITY);
	/* the arrow head is v·CL_ARROW_SECONDS from the ball */
	ClVec2 h = cl_velocity_handle(scene, &view, 0);
	g_assert_cmpfloat_with_epsilon(h.x, -0.5 + 5 * CL_ARROW_SECONDS, 1e-12);
	ClVec2 ground = cl_view_to_screen(&view, (ClVec2){0.3, 0});
	p = cl_scene_pick(scene, &view, ground.x, ground.y + 2);
	g_assert_cmpint(p.kind, ==, CL_PICK_WALL);
	g_assert_cmpint(p.index, ==, 0);
	ClVec2 target = cl_view_to_screen(&view, scene->loss[0].target);
	p = cl_scene_pick(scene, &view, target.x, target.y);
	g_assert_cmpint(p.kind, ==, CL_PICK_TARGET);
	p = cl_scene_pick(scene, &view, 5, 5);
	g_assert_cmpint(p.kind, ==, CL_PICK_NONE);
	cl_scene_free(scene);
}

static void test_edits_keep_scene_valid(void)
{
	ClScene *scene = cl_test_task3();
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_edit_move_ball(scene, 0, (ClVec2){-1.5, -2}, message, sizeof message));
	g_assert_cmpfloat(scene->balls[0].position.x, ==, -1.5);
	/* onto ball2: refused with the validator's message, scene unchanged */
	g_assert_false(cl_edit_move_ball(scene, 0, (ClVec2){-1.1, -1}, message, sizeof message));
	g_assert_cmpfloat(scene->balls[0].position.x, ==, -1.5);
	g_assert_nonnull(strstr(message, "balls["));
	g_test_message("refused: %s", message);
	g_assert_true(cl_edit_set_velocity(scene, 1, (ClVec2){-1 + 0.5, -1}, message, sizeof message));
	g_assert_cmpfloat_with_epsilon(scene->balls[1].velocity.x, 0.5 / CL_ARROW_SECONDS, 1e-12);
	int b = cl_edit_add_ball(scene, (ClVec2){1, 1}, 0.1, message, sizeof message);
	g_assert_cmpint(b, ==, 2);
	g_assert_cmpint(cl_scene_find_ball(scene, scene->balls[b].id), ==, 2);
	g_assert_cmpint(cl_edit_add_ball(scene, (ClVec2){1.05, 1}, 0.1, message, sizeof message), ==, -1);
	g_assert_cmpint(scene->ball_count, ==, 3);
	int w = cl_edit_add_wall(scene, (ClVec2){0, -3}, (ClVec2){0, 2}, message, sizeof message);
	g_assert_cmpint(w, ==, 0);
	g_assert_cmpfloat(scene->walls[0].normal.y, ==, 1);
	/* a wall through a ball is refused */
	g_assert_false(cl_edit_move_wall(scene, 0, (ClVec2){0, -2}, message, sizeof message));
	g_assert_cmpfloat(scene->walls[0].point.y, ==, -3);
	/* rotating: the line points towards the handle, the normal is to its left */
	g_assert_true(cl_edit_rotate_wall(scene, 0, (ClVec2){3, -3}, (ClVec2){3, -4}, message, sizeof message));
	g_assert_cmpfloat_with_epsilon(scene->walls[0].normal.x, -1, 1e-12);
	g_assert_cmpfloat_with_epsilon(scene->walls[0].normal.y, 0, 1e-12);
	g_assert_true(cl_scene_validate(scene, message, sizeof message));
	/* turned the other way every ball would be inside the wall: refused */
	g_assert_false(cl_edit_rotate_wall(scene, 0, (ClVec2){3, -3}, (ClVec2){3, -2}, message, sizeof message));
	g_assert_cmpfloat_with_epsilon(scene->walls[0].normal.x, -1, 1e-12);
	/* target: ball2 has a final_position term; a new ball gets one */
	g_assert_cmpint(cl_edit_set_target(scene, 1, (ClVec2){0.5, 0.25}), ==, 0);
	g_assert_cmpfloat(scene->loss[0].target.x, ==, 0.5);
	int loss = cl_edit_set_target(scene, 2, (ClVec2){2, 2});
	g_assert_cmpint(loss, ==, scene->loss_count - 1);
	g_assert_cmpint(scene->loss[loss].ball, ==, 2);
	g_assert_true(cl_edit_delete(scene, (ClPick){CL_PICK_BALL, 2}));
	g_assert_cmpint(scene->ball_count, ==, 2);
	g_assert_true(cl_edit_delete(scene, (ClPick){CL_PICK_WALL, 0}));
	g_assert_cmpint(scene->wall_count, ==, 0);
	g_assert_false(cl_edit_delete(scene, (ClPick){CL_PICK_NONE, -1}));
	g_assert_true(cl_scene_validate(scene, message, sizeof message));
	cl_scene_free(scene);
}

static int column_of(const ClComputeResult *r, const char *name)
{
	for (int k = 0; k < r->column_count; k++)
		if (g_str_equal(r->column_names[k], name))
			return k;
	return -1;
}

static void test_compute_job(void)
{
	ClScene *scene = cl_test_task1();
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse")};
	ClComputeJob *job = cl_compute_job_new(scene, backends, 2, "ball.position.y", 0.01);
	GError *error = NULL;
	ClComputeResult *result = cl_compute_job_run(job, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpfloat(cl_compute_job_progress(job), ==, 1.0);
	g_assert_cmpint(result->column_count, ==, 7);
	int py = column_of(result, "ball.position.y");
	g_assert_cmpint(py, >, 0);
	/* the job's numbers are the engine's: compare with a direct adjoint */
	for (int i = 0; i < 2; i++) {
		const ClBackendResult *r = &result->backends[i];
		ClRollout *rollout = cl_rollout_new(scene, backends[i]);
		cl_rollout_run(rollout, NULL, NULL, true);
		double g[CL_BALL_STATE];
		cl_rollout_gradient(rollout, g, NULL);
		g_assert_cmpfloat(r->gradient[py], ==, g[1]);
		g_assert_cmpfloat(r->gradient[0], ==, cl_rollout_loss(rollout));
		cl_rollout_free(rollout);
		/* the perturbation's last tangent is d p_N / d y0, whose y is the loss gradient here */
		int ns = cl_state_size(scene);
		g_assert_cmpint(r->tangent_steps[r->tangent_count - 1], ==, scene->steps);
		g_assert_cmpfloat_with_epsilon(r->tangents[(r->tangent_count - 1) * ns + 1], g[1], 1e-9);
		g_assert_nonnull(r->plus_states);
	}
	/* Task 1's exact ∂h/∂y0 is −1 (one bounce reverses it) */
	g_assert_cmpfloat_with_epsilon(result->backends[0].gradient[py], -1, 1e-9);
	char *csv = cl_compute_result_to_csv(result);
	g_assert_true(g_str_has_prefix(csv, "backend,parameter,value,fd,status\nexact,loss,"));
	g_free(csv);
	cl_compute_result_unref(result);
	g_object_unref(job);

	/* a run that stops (a fatal status) has neither a gradient nor finite
	 * differences, and the job still ends at full progress */
	ClScene *rack = cl_test_billiards(10);
	rack->elasticity = 0.004;
	int exact = cl_test_backend("exact");
	g_assert_true(cl_scene_set_backend_param(rack, exact, "max_impacts", 200, NULL, 0));
	job = cl_compute_job_new(rack, &exact, 1, NULL, 0);
	result = cl_compute_job_run(job, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpfloat(cl_compute_job_progress(job), ==, 1.0);
	g_assert_cmpint(result->backends[0].status.code, ==, CL_STATUS_IMPACT_LIMIT);
	for (int k = 0; k < result->column_count; k++)
		g_assert_true(isnan(result->backends[0].gradient[k]) && isnan(result->backends[0].fd[k]));
	g_assert_cmpfloat(result->backends[0].fd_step, ==, 0.0); /* no difference was taken */
	cl_compute_result_unref(result);
	g_object_unref(job);
	cl_scene_free(rack);

	/* a cancelled job returns no result */
	GCancellable *cancel = g_cancellable_new();
	g_cancellable_cancel(cancel);
	job = cl_compute_job_new(scene, backends, 2, NULL, 0);
	g_assert_null(cl_compute_job_run(job, cancel, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&error);
	g_object_unref(job);
	g_object_unref(cancel);
	cl_scene_free(scene);
}

typedef struct {
	ClLearningJob *job;
	gint done;
} LearningRun;

static gpointer run_learning(gpointer data)
{
	LearningRun *run = data;
	GError *error = NULL;
	g_assert_true(cl_learning_job_run(run->job, NULL, &error));
	g_assert_no_error(error);
	g_atomic_int_set(&run->done, 1);
	return NULL;
}

static cairo_surface_t *draw_figure(ClPlotFigure *figure)
{
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 620, 300);
	cairo_t *cr = cairo_create(surface);
	cl_plot_figure_draw(figure, cr, 620, 300);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	return surface;
}

static void assert_same_pixels(cairo_surface_t *a, cairo_surface_t *b)
{
	g_assert_cmpint(cairo_image_surface_get_stride(a), ==, cairo_image_surface_get_stride(b));
	g_assert_cmpmem(cairo_image_surface_get_data(a), cairo_image_surface_get_stride(a) * 300,
					cairo_image_surface_get_data(b), cairo_image_surface_get_stride(b) * 300);
}

static ClPlotFigure *learning_figure(ClLearningJob *job, const ClLearningTrace *traces, int count,
									 ClLearningCurves *curves)
{
	int params;
	const ClParam *p = cl_learning_job_params(job, &params);
	return cl_learning_figure(cl_learning_job_scene(job), p, params, cl_learning_job_tracked(job), traces, count, TRUE,
							  0.05, "reference", curves);
}

static void assert_same_traces(const ClLearningTrace *a, const ClLearningTrace *b, int count)
{
	for (int i = 0; i < count; i++) {
		g_assert_cmpint(a[i].backend, ==, b[i].backend);
		g_assert_true(a[i].finished && b[i].finished);
		g_assert_cmpint(a[i].iterations, ==, b[i].iterations);
		g_assert_cmpmem(a[i].loss, sizeof(double) * a[i].iterations, b[i].loss, sizeof(double) * b[i].iterations);
		g_assert_true(!a[i].tracked == !b[i].tracked);
		if (a[i].tracked)
			g_assert_cmpmem(a[i].tracked, sizeof(double) * (a[i].iterations + 1), b[i].tracked,
							sizeof(double) * (b[i].iterations + 1));
		g_assert_cmpmem(a[i].values, sizeof(double) * a[i].value_count, b[i].values, sizeof(double) * b[i].value_count);
		g_assert_cmpint(a[i].status.code, ==, b[i].status.code);
		g_assert_cmpfloat(a[i].final_loss, ==, b[i].final_loss);
		g_assert_true(a[i].exact_loss == b[i].exact_loss || (isnan(a[i].exact_loss) && isnan(b[i].exact_loss)));
		g_assert_cmpint(a[i].walls_touched, ==, b[i].walls_touched);
	}
}

/* The Learning view's live copy, brought up to date piece by piece while the
 * job runs in another thread, ends equal to a whole copy of the result, and
 * the figure grown with it draws as the one built from the result. */
static void test_learning_updates(void)
{
	for (int task = 2; task <= 3; task++) {
		ClScene *scene = task == 2 ? cl_test_task2(0) : cl_test_task3();
		ClOptimizeDef def = scene->optimize;
		def.iterations = 60;
		int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse"), cl_test_backend("compliant-warp")};
		GError *error = NULL;
		ClLearningJob *job = cl_learning_job_new(scene, &def, backends, 3, 2, &error);
		g_assert_no_error(error);
		/* Task 2 tracks its velocity; Task 3's parameters are all controls */
		g_assert_cmpint(cl_learning_job_tracked(job) >= 0, ==, task == 2);
		int count;
		ClLearningTrace *live = cl_learning_job_copy_traces(job, &count);
		g_assert_cmpint(count, ==, 3);
		ClLearningCurves curves[3];
		ClPlotFigure *grown = learning_figure(job, live, count, curves);
		LearningRun run = {job, 0};
		GThread *thread = g_thread_new("learning", run_learning, &run);
		int updates = 0, rebuilds = 0;
		for (gboolean last = FALSE; !last;) {
			last = g_atomic_int_get(&run.done);
			cl_learning_job_update_traces(job, live, count);
			for (int i = 0; i < count; i++)
				g_assert_cmpint(live[i].iterations, <=, def.iterations);
			int params;
			const ClParam *p = cl_learning_job_params(job, &params);
			if (!cl_learning_figure_grow(cl_learning_job_scene(job), p, params, cl_learning_job_tracked(job), live,
										 count, curves)) {
				cl_plot_figure_free(grown);
				grown = learning_figure(job, live, count, curves);
				rebuilds++;
			}
			updates++;
			g_usleep(200);
		}
		g_thread_join(thread);
		ClLearningTrace *whole = cl_learning_job_copy_traces(job, &count);
		assert_same_traces(live, whole, count);
		/* every backend got its line once: at most one rebuild each */
		g_assert_cmpint(rebuilds, <=, count);
		ClPlotFigure *built = learning_figure(job, whole, count, NULL);
		cairo_surface_t *a = draw_figure(grown), *b = draw_figure(built);
		assert_same_pixels(a, b);
		cairo_surface_destroy(a);
		cairo_surface_destroy(b);
		cl_plot_figure_free(grown);
		cl_plot_figure_free(built);
		g_test_message("task %d: %d updates while running, %d rebuilds", task, updates, rebuilds);
		cl_learning_traces_free(live, count);
		cl_learning_traces_free(whole, count);
		g_object_unref(job);
		cl_scene_free(scene);
	}
}

/* A first control of a ball that has none: the tangent starts at zero and
 * ends at the engine's own directional derivative. */
static void test_perturb_control(void)
{
	ClScene *scene = cl_test_task3();
	int exact = cl_test_backend("exact");
	ClComputeJob *job = cl_compute_job_new(scene, &exact, 1, "ball2.control[0].x", 0.5);
	GError *error = NULL;
	ClComputeResult *result = cl_compute_job_run(job, NULL, &error);
	g_assert_no_error(error);
	const ClBackendResult *r = &result->backends[0];
	int ns = cl_state_size(scene);
	for (int i = 0; i < ns; i++)
		g_assert_cmpfloat(r->tangents[i], ==, 0);
	ClRollout *rollout = cl_rollout_new(scene, exact);
	cl_rollout_run(rollout, NULL, NULL, true);
	double *du = g_new0(double, (gsize)cl_control_size(scene)), ds[2 * CL_BALL_STATE];
	du[2 * 1] = 1; /* step 0, ball 1, x */
	cl_rollout_jvp(rollout, NULL, du, ds);
	const double *last = r->tangents + (gsize)(r->tangent_count - 1) * (gsize)ns;
	for (int i = 0; i < ns; i++)
		g_assert_cmpfloat_with_epsilon(last[i], ds[i], 1e-12);
	g_assert_true(isfinite(r->plus_states[(gsize)scene->steps * (gsize)ns + CL_BALL_STATE]));
	g_free(du);
	cl_rollout_free(rollout);
	cl_compute_result_unref(result);
	g_object_unref(job);
	/* a parameter without a tangent is refused with its name */
	job = cl_compute_job_new(scene, &exact, 1, "elasticity", 0.1);
	g_assert_null(cl_compute_job_run(job, NULL, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "elasticity"));
	g_clear_error(&error);
	g_object_unref(job);
	cl_scene_free(scene);
}

static gboolean count_tick(gpointer data)
{
	(*(int *)data)++;
	return G_SOURCE_CONTINUE;
}

/* Starting a job while one runs stops the old one: cancelled, its
 * cancellable released, its timer removed (a superseded sweep used to keep
 * ticking forever). Finishing drops the current one's. */
static void test_job_watch(void)
{
	ClJobWatch watch = {0};
	int ticks = 0;
	GCancellable *first = cl_job_watch_start(&watch, 10, count_tick, &ticks);
	guint first_tick = watch.tick_source;
	g_object_ref(first); /* as the job's task holds it */
	g_object_add_weak_pointer(G_OBJECT(first), (gpointer *)&first);
	g_assert_nonnull(g_main_context_find_source_by_id(NULL, first_tick));
	GCancellable *second = cl_job_watch_start(&watch, 10, count_tick, &ticks);
	g_assert_true(second != first && g_cancellable_is_cancelled(first));
	g_assert_false(g_cancellable_is_cancelled(second));
	g_assert_null(g_main_context_find_source_by_id(NULL, first_tick));
	g_assert_nonnull(g_main_context_find_source_by_id(NULL, watch.tick_source));
	g_object_unref(first); /* the superseded job ends: nothing keeps its cancellable */
	g_assert_null(first);
	cl_job_watch_cancel(&watch);
	g_assert_true(g_cancellable_is_cancelled(second));
	g_assert_true(watch.cancellable == second && watch.tick_source != 0);
	guint second_tick = watch.tick_source;
	cl_job_watch_finish(&watch);
	g_assert_null(watch.cancellable);
	g_assert_cmpuint(watch.tick_source, ==, 0);
	g_assert_null(g_main_context_find_source_by_id(NULL, second_tick));
	cl_job_watch_clear(&watch); /* nothing to stop */
	g_assert_cmpint(ticks, ==, 0);
}

/* A running job holds the application (closing the last window then waits
 * for it to stop); finishing, superseding or clearing releases the hold. */
static gboolean force_quit(gpointer data)
{
	g_object_set_data(data, "forced", GINT_TO_POINTER(1));
	g_application_quit(data);
	return G_SOURCE_REMOVE;
}

static void arm_force_quit(GApplication *app, guint *source)
{
	*source = g_timeout_add_seconds(5, force_quit, app);
}

static void test_job_watch_holds_app(void)
{
	GApplication *app = g_application_new("io.github.contactlab.JobWatchTest", G_APPLICATION_NON_UNIQUE);
	g_application_set_default(app);
	ClJobWatch watch = {0};
	int ticks = 0;
	cl_job_watch_start(&watch, 10, count_tick, &ticks);
	g_assert_true(watch.held == app);
	cl_job_watch_start(&watch, 10, count_tick, &ticks); /* supersedes: still one hold */
	cl_job_watch_cancel(&watch);
	g_assert_true(watch.held == app);
	cl_job_watch_finish(&watch);
	g_assert_null(watch.held);
	cl_job_watch_start(&watch, 10, count_tick, &ticks);
	cl_job_watch_clear(&watch);
	g_assert_null(watch.held);
	/* no hold left: run() returns after activate instead of waiting for
	 * the 5 s quit (a leaked hold would keep it running until then) */
	guint quit_source = 0;
	g_signal_connect(app, "activate", G_CALLBACK(arm_force_quit), &quit_source);
	g_assert_cmpint(g_application_run(app, 0, NULL), ==, 0);
	g_assert_null(g_object_get_data(G_OBJECT(app), "forced"));
	g_source_remove(quit_source);
	g_application_set_default(NULL);
	g_object_unref(app);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/gui-model/undo-redo", test_undo_redo);
	g_test_add_func("/gui-model/undo-merge-limit", test_undo_merge_and_limit);
	g_test_add_func("/gui-model/view", test_view);
	g_test_add_func("/gui-model/pick", test_pick);
	g_test_add_func("/gui-model/edits", test_edits_keep_scene_valid);
	g_test_add_func("/gui-model/compute-job", test_compute_job);
	g_test_add_func("/gui-model/job-watch", test_job_watch);
	g_test_add_func("/gui-model/job-watch-holds-app", test_job_watch_holds_app);
	g_test_add_func("/gui-model/learning-updates", test_learning_updates);
	g_test_add_func("/gui-model/perturb-control", test_perturb_control);
	return g_test_run();
}
