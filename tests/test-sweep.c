/* Sweeps: cells equal single-point gradient runs, thread count does not
 * change a bit, progress and cancellation, derived quantities. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <stdatomic.h>
#include <string.h>

/* The backends that can run Task 2 (placeholders report unsupported). */
static int working_backends(const ClScene *scene, int *backends)
{
	int count = 0;
	for (int b = 0; b < cl_backend_count(); b++) {
		ClRollout *r = cl_rollout_new(scene, b);
		cl_rollout_run(r, NULL, NULL, false);
		if (cl_rollout_status(r)->code != CL_STATUS_UNSUPPORTED)
			backends[count++] = b;
		cl_rollout_free(r);
	}
	return count;
}

static ClSweepAxis axis(const ClScene *scene, const char *name, double min, double max, int count)
{
	ClSweepAxis a = {.min = min, .max = max, .count = count};
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(scene, name, &a.param, message, sizeof message));
	return a;
}

static bool same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

/* The single-point computation a `gradients` run does: a scene with both
 * values set, one recorded rollout, the adjoint. */
static ClSweepCell single_point(const ClScene *base, int backend, const ClSweepAxis *ax, const ClSweepAxis *ay, double x,
								double y)
{
	ClScene *scene = cl_scene_copy(base);
	cl_param_set(scene, &ax->param, x);
	cl_param_set(scene, &ay->param, y);
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, NULL, NULL, true);
	double g_s0[2 * CL_BALL_STATE];
	cl_rollout_gradient(r, g_s0, NULL);
	ClSweepCell cell = {.loss = cl_rollout_loss(r),
						.grad_x = g_s0[2 + ax->param.axis],
						.grad_y = g_s0[2 + ay->param.axis],
						.status = cl_rollout_status(r)->code};
	if (cl_status_is_fatal(cell.status))
		cell.loss = cell.grad_x = cell.grad_y = NAN;
	cl_rollout_free(r);
	cl_scene_free(scene);
	return cell;
}

static void test_cells_match_single_runs(void)
{
	ClScene *scene = cl_test_task2(0.0);
	int backends[32];
	int n = working_backends(scene, backends);
	if (n == 0) {
		g_test_skip("no backend is implemented yet");
		cl_scene_free(scene);
		return;
	}
	ClSweepDef def = {
		.x = axis(scene, "ball.velocity.x", 4, 6, 5),
		.y = axis(scene, "ball.velocity.y", -6, -4, 4),
		.backends = backends,
		.backend_count = n,
		.threads = 2,
	};
	ClSweepCell *cells = g_new(ClSweepCell, cl_sweep_cell_count(&def));
	ClStatus status;
	g_assert_true(cl_sweep(scene, &def, cells, &status));
	g_assert_cmpfloat(cl_sweep_axis_value(&def.x, 4), ==, 6.0);
	g_assert_cmpfloat(cl_sweep_axis_value(&def.y, 0), ==, -6.0);
	int checked = 0;
	for (int b = 0; b < n; b++)
		for (int iy = 0; iy < def.y.count; iy += 3)
			for (int ix = 0; ix < def.x.count; ix += 2) {
				double x = cl_sweep_axis_value(&def.x, ix), y = cl_sweep_axis_value(&def.y, iy);
				ClSweepCell want = single_point(scene, backends[b], &def.x, &def.y, x, y);
				const ClSweepCell *got = &cells[cl_sweep_index(&def, b, ix, iy)];
				if (!same_bits(got->loss, want.loss) || !same_bits(got->grad_x, want.grad_x) ||
					!same_bits(got->grad_y, want.grad_y) || got->status != want.status)
					g_error("%s at (%g, %g): sweep (%.17g, %.17g, %.17g, %s), single run (%.17g, %.17g, %.17g, %s)",
							cl_backend_info(backends[b])->id, x, y, got->loss, got->grad_x, got->grad_y,
							cl_status_name(got->status), want.loss, want.grad_x, want.grad_y,
							cl_status_name(want.status));
				checked++;
			}
	g_test_message("%d cells of %d backends checked against single runs", checked, n);
	g_free(cells);
	cl_scene_free(scene);
}

/* A physical parameter changes the scene at each cell: its derivative is
 * the backend's adjoint from a run with parameter columns where it has one
 * (exact's of e), else central differences (impulse: e is a constant of
 * DiffTaichi); the state column stays the plain adjoint. */
static void test_physical_parameter(void)
{
	ClScene *scene = cl_test_task2(0.0);
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse")};
	ClSweepDef def = {
		.x = axis(scene, "elasticity", 0.8, 0.95, 3),
		.y = axis(scene, "ball.velocity.y", -5.5, -4.5, 2),
		.backends = backends,
		.backend_count = 2,
		.threads = 2,
	};
	g_assert_true(cl_backend_has_param_adjoint(backends[0], &def.x.param));
	g_assert_false(cl_backend_has_param_adjoint(backends[1], &def.x.param));
	ClSweepCell cells[12];
	g_assert_true(cl_sweep(scene, &def, cells, NULL));
	for (int b = 0; b < 2; b++)
		for (int ix = 0; ix < 3; ix++) {
			double e = cl_sweep_axis_value(&def.x, ix), vy = cl_sweep_axis_value(&def.y, 1);
			ClScene *s = cl_scene_copy(scene);
			s->elasticity = e;
			s->balls[0].velocity.y = vy;
			ClRollout *r = cl_rollout_new(s, backends[b]);
			cl_rollout_record_params(r, b == 0);
			cl_rollout_run(r, NULL, NULL, true);
			double g_s0[CL_BALL_STATE], expected;
			cl_rollout_gradient(r, g_s0, NULL);
			ClStatus st;
			if (b == 0)
				cl_rollout_param_gradient(r, &def.x.param, 1, &expected);
			else
				expected = cl_finite_difference(s, backends[b], &def.x.param, cl_fd_step(s, backends[b], &def.x.param),
												&st);
			const ClSweepCell *c = &cells[cl_sweep_index(&def, b, ix, 1)];
			g_assert_false(cl_status_is_fatal(c->status));
			g_assert_true(isfinite(expected));
			g_assert_true(same_bits(c->grad_x, expected));
			g_assert_true(same_bits(c->grad_y, g_s0[3]));
			g_assert_true(same_bits(c->loss, cl_rollout_loss(r)));
			cl_rollout_free(r);
			cl_scene_free(s);
		}
	cl_scene_free(scene);
}

static void test_threads_identical(void)
{
	ClScene *scene = cl_test_task2(0.1);
	int backends[32];
	int n = working_backends(scene, backends);
	if (n == 0) {
		g_test_skip("no backend is implemented yet");
		cl_scene_free(scene);
		return;
	}
	ClSweepDef def = {
		.x = axis(scene, "ball.velocity.x", 3, 7, 6),
		.y = axis(scene, "ball.position.y", 0.6, 1.4, 5),
		.backends = backends,
		.backend_count = n,
		.threads = 1,
	};
	size_t count = cl_sweep_cell_count(&def);
	ClSweepCell *one = g_new(ClSweepCell, count), *two = g_new(ClSweepCell, count);
	g_assert_true(cl_sweep(scene, &def, one, NULL));
	def.threads = 2;
	g_assert_true(cl_sweep(scene, &def, two, NULL));
	for (size_t i = 0; i < count; i++) {
		g_assert_true(same_bits(one[i].loss, two[i].loss));
		g_assert_true(same_bits(one[i].grad_x, two[i].grad_x));
		g_assert_true(same_bits(one[i].grad_y, two[i].grad_y));
		g_assert_cmpint(one[i].status, ==, two[i].status);
		g_assert_cmpint(one[i].status, !=, CL_STATUS_CANCELLED);
	}
	g_free(one);
	g_free(two);
	cl_scene_free(scene);
}

typedef struct Progress {
	int calls, last_done, cancel_after;
	bool increasing;
	atomic_int cancel;
} Progress;

static void on_progress(int done, int total, int slot, int ix, int iy, void *user)
{
	Progress *p = user;
	(void)total;
	(void)slot;
	(void)ix;
	(void)iy;
	p->increasing = p->increasing && done == p->last_done + 1;
	p->last_done = done;
	p->calls++;
	if (p->cancel_after > 0 && done >= p->cancel_after)
		atomic_store(&p->cancel, 1);
}

static void test_progress_and_cancel(void)
{
	/* the sweep machinery runs even on a backend that fails every cell */
	ClScene *scene = cl_test_task2(0.0);
	int backends[32];
	int n = working_backends(scene, backends);
	if (n == 0)
		backends[n++] = 0;
	Progress progress = {.increasing = true};
	atomic_init(&progress.cancel, 0);
	ClSweepDef def = {
		.x = axis(scene, "ball.velocity.x", 4, 6, 8),
		.y = axis(scene, "ball.velocity.y", -6, -4, 8),
		.backends = backends,
		.backend_count = 1,
		.threads = 2,
		.progress = on_progress,
		.user = &progress,
		.cancel = &progress.cancel,
	};
	ClSweepCell cells[64];
	ClStatus status;
	g_assert_true(cl_sweep(scene, &def, cells, &status));
	g_assert_cmpint(progress.calls, ==, 64);
	g_assert_true(progress.increasing);

	progress = (Progress){.increasing = true, .cancel_after = 5};
	atomic_init(&progress.cancel, 0);
	g_assert_false(cl_sweep(scene, &def, cells, &status));
	g_assert_cmpint(status.code, ==, CL_STATUS_CANCELLED);
	/* each worker may finish the cell it was computing */
	g_assert_cmpint(progress.calls, >=, 5);
	g_assert_cmpint(progress.calls, <=, 5 + def.threads);
	int pending = 0;
	for (int i = 0; i < 64; i++)
		if (cells[i].status == CL_STATUS_CANCELLED) {
			g_assert_true(isnan(cells[i].loss));
			pending++;
		}
	g_assert_cmpint(pending, ==, 64 - progress.calls);

	/* a sweep cancelled before it starts computes nothing */
	progress = (Progress){.increasing = true};
	atomic_init(&progress.cancel, 1);
	g_assert_false(cl_sweep(scene, &def, cells, &status));
	g_assert_cmpint(progress.calls, ==, 0);
	cl_scene_free(scene);
}

static void test_invalid(void)
{
	ClScene *scene = cl_test_task2(0.0);
	int backend = 0;
	ClSweepDef def = {
		.x = axis(scene, "ball.velocity.x", 4, 6, 4),
		.y = axis(scene, "ball.velocity.x", 4, 6, 4),
		.backends = &backend,
		.backend_count = 1,
		.threads = 1,
	};
	ClSweepCell cells[16];
	ClStatus status;
	g_assert_false(cl_sweep(scene, &def, cells, &status));
	g_assert_nonnull(strstr(status.message, "same parameter"));
	def.y = axis(scene, "ball.velocity.y", -6, -4, 0);
	g_assert_false(cl_sweep(scene, &def, cells, &status));
	g_assert_nonnull(strstr(status.message, "0 points"));
	def.y.count = 4;
	backend = 999;
	g_assert_false(cl_sweep(scene, &def, cells, &status));
	g_assert_nonnull(strstr(status.message, "unknown backend"));
	cl_scene_free(scene);
}

static ClSweepCell point_cell(double loss, double grad_x, double grad_y, ClStatusCode status)
{
	ClSweepCell cell = cl_sweep_cell_pending();
	cell.loss = loss;
	cell.grad_x = grad_x;
	cell.grad_y = grad_y;
	cell.status = status;
	return cell;
}

static void test_quantities(void)
{
	ClSweepCell exact = point_cell(1.0, 1.0, 0.0, CL_STATUS_OK);
	ClSweepCell same = point_cell(2.0, 3.0, 0.0, CL_STATUS_OK), opposite = point_cell(2.0, -1.0, 0.0, CL_STATUS_OK);
	ClSweepCell perpendicular = point_cell(2.0, 0.0, -2.0, CL_STATUS_OK);
	ClSweepCell diagonal = point_cell(2.0, 1.0, 1.0, CL_STATUS_OK);
	ClSweepCell failed = point_cell(NAN, NAN, NAN, CL_STATUS_DIVERGED);
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_ANGLE_ERROR, &same, &exact), ==, 0.0);
	g_assert_cmpfloat_with_epsilon(cl_sweep_quantity(CL_SWEEP_ANGLE_ERROR, &opposite, &exact), 180.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(cl_sweep_quantity(CL_SWEEP_ANGLE_ERROR, &perpendicular, &exact), 90.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(cl_sweep_quantity(CL_SWEEP_ANGLE_ERROR, &diagonal, &exact), 45.0, 1e-12);
	g_assert_true(isnan(cl_sweep_quantity(CL_SWEEP_ANGLE_ERROR, &failed, &exact)));
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_SIGN_AGREEMENT, &same, &exact), ==, 1.0);
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_SIGN_AGREEMENT, &opposite, &exact), ==, 0.5);
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_SIGN_AGREEMENT, &perpendicular, &exact), ==, 0.0);
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_LOSS, &diagonal, NULL), ==, 2.0);
	g_assert_cmpfloat(cl_sweep_quantity(CL_SWEEP_GRAD_Y, &perpendicular, NULL), ==, -2.0);
	g_assert_cmpint(cl_sweep_quantity_find("angle-error"), ==, CL_SWEEP_ANGLE_ERROR);
	g_assert_cmpint(cl_sweep_quantity_find("nope"), ==, -1);
	g_assert_cmpstr(cl_sweep_quantity_name(CL_SWEEP_GRAD_X), ==, "grad-x");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sweep/cells-match-single-runs", test_cells_match_single_runs);
	g_test_add_func("/sweep/physical-parameter", test_physical_parameter);
	g_test_add_func("/sweep/threads-identical", test_threads_identical);
	g_test_add_func("/sweep/progress-and-cancel", test_progress_and_cancel);
	g_test_add_func("/sweep/invalid", test_invalid);
	g_test_add_func("/sweep/quantities", test_quantities);
	return g_test_run();
}
