/* The window's logic without a display: undo stack, canvas view and picking,
 * the canvas's handles, canvas edits (which must keep the scene valid), the
 * Run and learning jobs. */
#include "cl-learning-job.h"
#include "cl-run-job.h"
#include "cl-scene-edit.h"
#include "cl-undo-stack.h"
#include "scene-figure.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_PICK ((ClPick){CL_PICK_NONE, -1})

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
	ClPick p = cl_scene_pick(scene, &view, ball.x + 3, ball.y, NO_PICK, NO_PICK);
	g_assert_cmpint(p.kind, ==, CL_PICK_BALL);
	g_assert_cmpint(p.index, ==, 0);
	ClVec2 head = cl_view_to_screen(&view, cl_velocity_handle(scene, &view, 0));
	p = cl_scene_pick(scene, &view, head.x, head.y, NO_PICK, NO_PICK);
	g_assert_cmpint(p.kind, ==, CL_PICK_VELOCITY);
	/* the arrow head is v·CL_ARROW_SECONDS from the ball */
	ClVec2 h = cl_velocity_handle(scene, &view, 0);
	g_assert_cmpfloat_with_epsilon(h.x, -0.5 + 5 * CL_ARROW_SECONDS, 1e-12);
	ClVec2 ground = cl_view_to_screen(&view, (ClVec2){0.3, 0});
	p = cl_scene_pick(scene, &view, ground.x, ground.y + 2, NO_PICK, NO_PICK);
	g_assert_cmpint(p.kind, ==, CL_PICK_WALL);
	g_assert_cmpint(p.index, ==, 0);
	ClVec2 target = cl_view_to_screen(&view, scene->loss[0].target);
	p = cl_scene_pick(scene, &view, target.x, target.y, NO_PICK, NO_PICK);
	g_assert_cmpint(p.kind, ==, CL_PICK_TARGET);
	p = cl_scene_pick(scene, &view, 5, 5, NO_PICK, NO_PICK);
	g_assert_cmpint(p.kind, ==, CL_PICK_NONE);
	cl_scene_free(scene);
}

static cairo_surface_t *render_scene(const ClScene *scene, const ClView *view, gboolean handles)
{
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)view->width, (int)view->height);
	cairo_t *cr = cairo_create(surface);
	gboolean visible[64] = {0};
	ClSceneRenderInput in = {
		.scene = scene,
		.result_scene = scene,
		.view = view,
		.selection = {CL_PICK_NONE, -1},
		.hover = {CL_PICK_NONE, -1},
		.backend_visible = visible,
		.handles = handles,
	};
	cl_scene_render(cr, &in);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	return surface;
}

/* The editing handles are the canvas's only: without them (every export)
 * the picture differs from the canvas's just around the walls' anchors and
 * rotation knobs and a resting ball's velocity knob, each of which is gone. */
static void test_handles(void)
{
	ClScene *scene = cl_test_task2(0);
	scene->balls[0].velocity = (ClVec2){0, 0}; /* a resting ball shows a knob to pull its velocity out */
	ClView view = {.center_x = 0, .center_y = 0.8, .scale = 120, .width = 600, .height = 400};
	enum { HANDLES_MAX = 8 };
	ClVec2 handles[HANDLES_MAX];
	int count = 0;
	for (int w = 0; w < scene->wall_count; w++) {
		handles[count++] = cl_view_to_screen(&view, cl_wall_anchor(scene, &view, w));
		handles[count++] = cl_view_to_screen(&view, cl_wall_rotate_handle(scene, &view, w));
	}
	handles[count++] = cl_view_to_screen(&view, cl_velocity_handle(scene, &view, 0));
	cairo_surface_t *canvas = render_scene(scene, &view, TRUE), *export = render_scene(scene, &view, FALSE);
	int stride = cairo_image_surface_get_stride(canvas);
	const guint8 *a = cairo_image_surface_get_data(canvas), *b = cairo_image_surface_get_data(export);
	int near[HANDLES_MAX] = {0}, elsewhere = 0;
	for (int y = 0; y < (int)view.height; y++)
		for (int x = 0; x < (int)view.width; x++) {
			if (memcmp(a + y * stride + 4 * x, b + y * stride + 4 * x, 4) == 0)
				continue;
			int nearest = -1;
			for (int h = 0; h < count; h++)
				if (hypot(x + 0.5 - handles[h].x, y + 0.5 - handles[h].y) <= 9)
					nearest = h;
			if (nearest < 0)
				elsewhere++;
			else
				near[nearest]++;
		}
	g_assert_cmpint(elsewhere, ==, 0);
	for (int h = 0; h < count; h++)
		if (near[h] < 10)
			g_error("handle %d at (%.0f, %.0f): only %d pixels differ", h, handles[h].x, handles[h].y, near[h]);
	cairo_surface_destroy(canvas);
	cairo_surface_destroy(export);
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


/* A Run of backends × the table's columns of scene, in the calling thread. */
static ClJob *run_job(const ClScene *scene, const int *backends, int count, ClFdChoice fd, const char *perturb,
					  double delta, GError **error)
{
	int columns;
	ClParam *params = cl_scene_params_new(scene, CL_PARAMS_TABLE, -1, &columns);
	ClRunRequest request = {.scene = scene, .revision = 1, .backends = backends, .backend_count = count,
							.columns = params, .column_count = columns, .fd = fd, .perturb = perturb,
							.perturb_delta = delta};
	ClJob *job = cl_run_job_new(&request, error);
	free(params);
	return job;
}

static int column_of(const ClScene *scene, const ClRunData *data, const char *name)
{
	char column[CL_NAME_MAX];
	for (int k = 0; k < data->column_count; k++) {
		cl_param_name(scene, &data->columns[k], column, sizeof column);
		if (g_str_equal(column, name))
			return k;
	}
	return -1;
}

static void test_run_job(void)
{
	ClScene *scene = cl_test_task1();
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse")};
	GError *error = NULL;
	ClJob *job = run_job(scene, backends, 2, CL_FD_ALL, "ball.position.y", 0.01, &error);
	g_assert_no_error(error);
	g_assert_true(cl_job_run(job, &error));
	g_assert_no_error(error);
	g_assert_cmpfloat(cl_job_get_progress(job), ==, 1.0);
	ClRunData *data = cl_result_payload(cl_study_job_result(job));
	g_assert_true(cl_run_data_ready(data));
	g_assert_cmpint(data->column_count, ==, 6);
	g_assert_cmpint(cl_run_data_fd_done(data), ==, 12);
	int py = column_of(scene, data, "ball.position.y");
	g_assert_cmpint(py, >=, 0);
	/* the job's numbers are the engine's: compare with a direct adjoint */
	for (int i = 0; i < 2; i++) {
		const ClRunBackend *r = &data->backends[i];
		ClRollout *rollout = cl_rollout_new(scene, backends[i]);
		cl_rollout_run(rollout, NULL, NULL, true);
		double g[CL_BALL_STATE];
		cl_rollout_gradient(rollout, g, NULL);
		g_assert_cmpfloat(r->row.cells[py].adjoint, ==, g[1]);
		g_assert_cmpfloat(r->row.loss, ==, cl_rollout_loss(rollout));
		/* every cell's own FD step (a control's is the one over dt) */
		for (int k = 0; k < data->column_count; k++)
			g_assert_cmpfloat(r->row.cells[k].fd_step, ==, cl_fd_step(scene, backends[i], &data->columns[k]));
		cl_rollout_free(rollout);
		/* the perturbation's last tangent is d p_N / d y0, whose y is the loss gradient here */
		int ns = cl_state_size(scene);
		g_assert_cmpint(r->tangent_steps[r->tangent_count - 1], ==, scene->steps);
		g_assert_cmpfloat_with_epsilon(r->tangents[(r->tangent_count - 1) * ns + 1], g[1], 1e-9);
		g_assert_nonnull(r->plus_states);
	}
	/* Task 1's exact ∂h/∂y0 is −1 (one bounce reverses it) */
	g_assert_cmpfloat_with_epsilon(data->backends[0].row.cells[py].adjoint, -1, 1e-9);
	GString *csv = cl_run_data_gradient_csv(data, scene);
	g_assert_true(g_str_has_prefix(csv->str, "backend,parameter,value\nexact,status,ok\nexact,loss,"));
	g_string_free(csv, TRUE);
	g_object_unref(job);

	/* a run that stops (a fatal status) has no gradient and no differences
	 * (only asked for: NAN), and the job still ends at full progress */
	ClScene *rack = cl_test_billiards(10);
	rack->elasticity = 0.004;
	int exact = cl_test_backend("exact");
	g_assert_true(cl_scene_set_backend_param(rack, exact, "max_impacts", 200, NULL, 0));
	job = run_job(rack, &exact, 1, CL_FD_ALL, NULL, 0, &error);
	g_assert_true(cl_job_run(job, &error));
	g_assert_no_error(error);
	g_assert_cmpfloat(cl_job_get_progress(job), ==, 1.0);
	data = cl_result_payload(cl_study_job_result(job));
	g_assert_cmpint(data->backends[0].row.status.code, ==, CL_STATUS_IMPACT_LIMIT);
	for (int k = 0; k < data->column_count; k++)
		g_assert_true(isnan(data->backends[0].row.cells[k].adjoint) && isnan(data->backends[0].row.cells[k].fd));
	g_object_unref(job);
	cl_scene_free(rack);

	/* FD none: adjoints only */
	job = run_job(scene, backends, 2, CL_FD_NONE, NULL, 0, &error);
	g_assert_true(cl_job_run(job, &error));
	data = cl_result_payload(cl_study_job_result(job));
	g_assert_cmpint(data->fd_total, ==, 0);
	g_assert_cmpfloat(data->backends[1].row.cells[0].fd_step, ==, 0);
	g_object_unref(job);

	/* a cancelled job says so */
	job = run_job(scene, backends, 2, CL_FD_ALL, NULL, 0, &error);
	cl_job_cancel(job);
	g_assert_false(cl_job_run(job, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&error);
	g_object_unref(job);
	cl_scene_free(scene);
}

typedef struct {
	ClJob *job;
	gint done;
} LearningRun;

static gpointer run_learning(gpointer data)
{
	LearningRun *run = data;
	GError *error = NULL;
	g_assert_true(cl_job_run(run->job, &error));
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

static ClPlotFigure *learning_figure(ClResult *result, const ClLearningTrace *traces, int count,
									 ClLearningCurves *curves)
{
	ClLearningRun *run = cl_result_payload(result);
	return cl_learning_figure(cl_result_scene(result), run->params, run->param_count, run->tracked, traces, count,
							  TRUE, 0.05, "reference", curves);
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
		g_assert_cmpstr(a[i].contacts, ==, b[i].contacts);
	}
}

/* The Learning view's live copy, brought up to date piece by piece while the
 * job runs in another thread, ends equal to a whole copy of the result, and
 * the figure grown with it draws as the one built from the result. */
static void test_learning_updates(void)
{
	for (int task = 2; task <= 3; task++) {
		ClScene *scene = task == 2 ? cl_test_task2(0) : cl_test_task3();
		scene->optimize.iterations = 60;
		int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse"), cl_test_backend("compliant-warp")};
		GError *error = NULL;
		ClJob *job = cl_learning_job_new(scene, 1, backends, 3, &error);
		g_assert_no_error(error);
		ClResult *result = cl_study_job_result(job);
		ClLearningRun *learning = cl_result_payload(result);
		/* Task 2 tracks its velocity; Task 3's parameters are all controls */
		g_assert_cmpint(learning->tracked >= 0, ==, task == 2);
		int count;
		ClLearningTrace *live = cl_learning_run_copy_traces(learning, &count);
		g_assert_cmpint(count, ==, 3);
		ClLearningCurves curves[3];
		ClPlotFigure *grown = learning_figure(result, live, count, curves);
		LearningRun run = {job, 0};
		GThread *thread = g_thread_new("learning", run_learning, &run);
		int updates = 0, rebuilds = 0;
		for (gboolean last = FALSE; !last;) {
			last = g_atomic_int_get(&run.done);
			cl_learning_run_update_traces(learning, live, count);
			for (int i = 0; i < count; i++)
				g_assert_cmpint(live[i].iterations, <=, scene->optimize.iterations);
			if (!cl_learning_figure_grow(cl_result_scene(result), learning->params, learning->param_count,
										 learning->tracked, live, count, curves)) {
				cl_plot_figure_free(grown);
				grown = learning_figure(result, live, count, curves);
				rebuilds++;
			}
			updates++;
			g_usleep(200);
		}
		g_thread_join(thread);
		ClLearningTrace *whole = cl_learning_run_copy_traces(learning, &count);
		assert_same_traces(live, whole, count);
		/* every backend got its line once: at most one rebuild each */
		g_assert_cmpint(rebuilds, <=, count);
		ClPlotFigure *built = learning_figure(result, whole, count, NULL);
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
	GError *error = NULL;
	ClJob *job = run_job(scene, &exact, 1, CL_FD_NONE, "ball2.control[0].x", 0.5, &error);
	g_assert_no_error(error);
	g_assert_true(cl_job_run(job, &error));
	ClRunData *data = cl_result_payload(cl_study_job_result(job));
	const ClRunBackend *r = &data->backends[0];
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
	g_object_unref(job);
	/* a physical parameter has exact's forward-mode tangent too (issue 17) */
	job = run_job(scene, &exact, 1, CL_FD_NONE, "elasticity", 0.1, &error);
	g_assert_no_error(error);
	g_assert_true(cl_job_run(job, &error));
	data = cl_result_payload(cl_study_job_result(job));
	last = data->backends[0].tangents + (gsize)(data->backends[0].tangent_count - 1) * (gsize)ns;
	for (int i = 0; i < ns; i++)
		g_assert_true(isfinite(last[i]));
	g_object_unref(job);
	/* a parameter the scene does not have is refused with its name */
	g_assert_null(run_job(scene, &exact, 1, CL_FD_NONE, "ball9.radius", 0.1, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "ball9.radius"));
	g_clear_error(&error);
	cl_scene_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/gui-model/undo-redo", test_undo_redo);
	g_test_add_func("/gui-model/undo-merge-limit", test_undo_merge_and_limit);
	g_test_add_func("/gui-model/view", test_view);
	g_test_add_func("/gui-model/pick", test_pick);
	g_test_add_func("/gui-model/handles", test_handles);
	g_test_add_func("/gui-model/edits", test_edits_keep_scene_valid);
	g_test_add_func("/gui-model/run-job", test_run_job);
	g_test_add_func("/gui-model/learning-updates", test_learning_updates);
	g_test_add_func("/gui-model/perturb-control", test_perturb_control);
	return g_test_run();
}
