/* cl_convergence: one derivative against the step count, per backend. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

static ClParam parse(const ClScene *scene, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, name, &p, message, sizeof message))
		g_error("%s: %s", name, message);
	return p;
}

/* The same derivative from one rollout of the scene resampled to N steps. */
static double single_run(const ClScene *base, int backend, const char *name, int steps)
{
	ClScene *scene = cl_scene_copy(base);
	cl_scene_set_steps(scene, steps);
	ClParam p = parse(scene, name);
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, NULL, NULL, true);
	double *g_s0 = g_new0(double, cl_state_size(scene));
	double *g_u = g_new0(double, cl_control_size(scene));
	cl_rollout_gradient(r, g_s0, g_u);
	double value = *cl_param_slot(scene, &p, g_s0, g_u);
	g_free(g_s0);
	g_free(g_u);
	cl_rollout_free(r);
	cl_scene_free(scene);
	return value;
}

/* Task 1 has no force: the exact ∂p_y/∂u_y0 is −(T·dt − dt²/2) at every N
 * (Table 1's −0.0020812 at N = 480), and ∂p_y/∂p_y0 is −1 at every N. */
static void test_exact_task1_closed_form(void)
{
	ClScene *scene = cl_test_task1();
	int exact = cl_test_backend("exact");
	static const int steps[] = {60, 480, 1920};
	ClConvergenceDef def = {
		.param = parse(scene, "ball.control[0].y"),
		.steps = steps,
		.step_count = 3,
		.backends = &exact,
		.backend_count = 1,
		.threads = 2,
	};
	ClConvergencePoint points[3];
	ClStatus status;
	g_assert_true(cl_convergence(scene, &def, points, &status));
	for (int k = 0; k < 3; k++) {
		double dt = scene->duration / steps[k];
		g_assert_cmpint(points[k].status, ==, CL_STATUS_OK);
		g_assert_cmpfloat_with_epsilon(points[k].value, -(scene->duration * dt - dt * dt / 2), 1e-12);
		g_assert_cmpfloat_with_epsilon(points[k].loss, 1.2, 1e-12);
	}
	g_assert_cmpfloat_with_epsilon(points[1].value, -0.0020812, 5e-8);

	def.param = parse(scene, "ball.position.y");
	g_assert_true(cl_convergence(scene, &def, points, &status));
	for (int k = 0; k < 3; k++)
		g_assert_cmpfloat_with_epsilon(points[k].value, -1.0, 1e-12);
	cl_scene_free(scene);
}

/* A physical parameter: the impact is at t = 0.45, after it
 * p_y = r + 2e·(T − 0.45), so ∂p_y/∂e = 1.1 — exact's adjoint from its
 * parameter columns; impulse has no adjoint of e and goes through central
 * differences, the same as a single cl_finite_difference at that N. */
static void test_physical_parameter(void)
{
	ClScene *scene = cl_test_task1();
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse")};
	static const int steps[] = {100, 1000};
	ClConvergenceDef def = {
		.param = parse(scene, "elasticity"),
		.steps = steps,
		.step_count = 2,
		.backends = backends,
		.backend_count = 2,
		.threads = 1,
	};
	ClConvergencePoint points[4];
	g_assert_true(cl_convergence(scene, &def, points, NULL));
	for (int k = 0; k < 2; k++) {
		g_assert_cmpfloat_with_epsilon(points[k].value, 1.1, 1e-12);
		ClScene *s = cl_scene_copy(scene);
		g_assert_true(cl_scene_set_steps(s, steps[k]));
		ClStatus st;
		double fd = cl_finite_difference(s, backends[1], &def.param, cl_fd_step(s, backends[1], &def.param), &st);
		g_assert_cmpfloat(points[2 + k].value, ==, fd);
		cl_scene_free(s);
	}
	cl_scene_free(scene);
}

/* Every point is the single rollout at that N; the thread count changes nothing. */
static void test_matches_single_runs_any_threads(void)
{
	ClScene *scene = cl_test_task3();
	int backends[] = {cl_test_backend("exact"), cl_test_backend("pbd-warp"), cl_test_backend("compliant-warp")};
	static const int steps[] = {240, 480, 960, 120};
	ClConvergenceDef def = {
		.param = parse(scene, "ball1.position.x"),
		.steps = steps,
		.step_count = 4,
		.backends = backends,
		.backend_count = 3,
		.threads = 1,
	};
	ClConvergencePoint one[12], two[12];
	g_assert_true(cl_convergence(scene, &def, one, NULL));
	def.threads = 2;
	g_assert_true(cl_convergence(scene, &def, two, NULL));
	for (int i = 0; i < 12; i++) {
		g_assert_cmpfloat(one[i].value, ==, two[i].value);
		g_assert_cmpfloat(one[i].loss, ==, two[i].loss);
		g_assert_cmpint(one[i].status, ==, two[i].status);
	}
	for (int b = 0; b < 3; b++)
		for (int k = 0; k < 4; k++) {
			const ClConvergencePoint *p = &one[cl_convergence_index(&def, b, k)];
			g_assert_cmpfloat(p->value, ==, single_run(scene, backends[b], "ball1.position.x", steps[k]));
		}
	/* Table 3's analytic row, at every N, and PBD (Warp)'s −0.3610 at the task's N */
	for (int k = 0; k < 4; k++)
		g_assert_cmpfloat_with_epsilon(one[cl_convergence_index(&def, 0, k)].value, -0.39867, 5e-6);
	g_assert_cmpfloat_with_epsilon(one[cl_convergence_index(&def, 1, 1)].value, -0.3610, 5e-5);
	cl_scene_free(scene);
}

/* PBD places the ball on the surface whatever its height: ∂h/∂y0 = 0 at every N. */
static void test_pbd_position_gradient_zero(void)
{
	ClScene *scene = cl_test_task1();
	int pbd = cl_test_backend("pbd-warp");
	static const int steps[] = {120, 480, 1920};
	ClConvergenceDef def = {
		.param = parse(scene, "ball.position.y"),
		.steps = steps,
		.step_count = 3,
		.backends = &pbd,
		.backend_count = 1,
		.threads = 2,
	};
	ClConvergencePoint points[3];
	g_assert_true(cl_convergence(scene, &def, points, NULL));
	for (int k = 0; k < 3; k++) {
		g_assert_cmpint(points[k].status, ==, CL_STATUS_OK);
		g_assert_cmpfloat(fabs(points[k].value), <, 1e-6);
	}
	cl_scene_free(scene);
}

/* backends-paper.md §6.4: with TOI the direct impulse converges to the
 * saltation result without its acceleration term (−0.7199), not to exact's
 * −0.3987: −0.7191, −0.7194, −0.7200 at N = 480, 1920, 7680. */
static void test_toi_converges_to_the_wrong_value(void)
{
	ClScene *scene = cl_test_task3();
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse-toi")};
	static const int steps[] = {480, 1920, 7680};
	static const double paper[] = {-0.7191, -0.7194, -0.7200};
	ClConvergenceDef def = {
		.param = parse(scene, "ball1.position.x"),
		.steps = steps,
		.step_count = 3,
		.backends = backends,
		.backend_count = 2,
		.threads = 2,
	};
	ClConvergencePoint points[6];
	g_assert_true(cl_convergence(scene, &def, points, NULL));
	for (int k = 0; k < 3; k++) {
		g_assert_cmpfloat_with_epsilon(points[cl_convergence_index(&def, 0, k)].value, -0.39867, 5e-6);
		g_assert_cmpfloat_with_epsilon(points[cl_convergence_index(&def, 1, k)].value, paper[k], 5e-5);
	}
	cl_scene_free(scene);
}

typedef struct {
	atomic_int cancel;
	int calls;
	int last_done;
} ProgressProbe;

static void cancel_after_two(int done, int total, int slot, int k, void *user)
{
	(void)slot;
	(void)k;
	ProgressProbe *probe = user;
	g_assert_cmpint(done, <=, total);
	g_assert_cmpint(done, ==, probe->last_done + 1);
	probe->last_done = done;
	if (++probe->calls == 2)
		atomic_store(&probe->cancel, 1);
}

static void test_progress_and_cancel(void)
{
	ClScene *scene = cl_test_task1();
	int exact = cl_test_backend("exact");
	static const int steps[] = {60, 120, 240, 480, 960};
	ProgressProbe probe = {0};
	ClConvergenceDef def = {
		.param = parse(scene, "ball.velocity.y"),
		.steps = steps,
		.step_count = 5,
		.backends = &exact,
		.backend_count = 1,
		.threads = 1,
		.progress = cancel_after_two,
		.user = &probe,
		.cancel = &probe.cancel,
	};
	ClConvergencePoint points[5];
	ClStatus status;
	g_assert_false(cl_convergence(scene, &def, points, &status));
	g_assert_cmpint(status.code, ==, CL_STATUS_CANCELLED);
	g_assert_cmpint(probe.calls, ==, 2);
	/* the largest N go first; the rest are still marked cancelled */
	g_assert_cmpint(points[4].status, ==, CL_STATUS_OK);
	g_assert_cmpint(points[3].status, ==, CL_STATUS_OK);
	g_assert_cmpint(points[0].status, ==, CL_STATUS_CANCELLED);
	g_assert_true(isnan(points[0].value));
	cl_scene_free(scene);
}

static void test_invalid_definitions(void)
{
	ClScene *scene = cl_test_task1();
	int exact = cl_test_backend("exact");
	int steps[] = {60, 0};
	ClConvergenceDef def = {
		.param = parse(scene, "ball.position.y"),
		.steps = steps,
		.step_count = 2,
		.backends = &exact,
		.backend_count = 1,
		.threads = 1,
	};
	ClConvergencePoint points[2];
	ClStatus status;
	g_assert_false(cl_convergence(scene, &def, points, &status));
	g_assert_nonnull(strstr(status.message, "step count 0"));
	steps[1] = 10;
	def.param = parse(scene, "ball.control[20].y");
	g_assert_false(cl_convergence(scene, &def, points, &status));
	g_assert_nonnull(strstr(status.message, "control interval 20"));
	def.param = parse(scene, "ball.position.y");
	def.backend_count = 0;
	g_assert_false(cl_convergence(scene, &def, points, &status));
	g_assert_nonnull(strstr(status.message, "no backend"));
	cl_scene_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/convergence/exact-task1-closed-form", test_exact_task1_closed_form);
	g_test_add_func("/convergence/physical-parameter", test_physical_parameter);
	g_test_add_func("/convergence/matches-single-runs-any-threads", test_matches_single_runs_any_threads);
	g_test_add_func("/convergence/pbd-position-gradient-zero", test_pbd_position_gradient_zero);
	g_test_add_func("/convergence/toi-converges-to-the-wrong-value", test_toi_converges_to_the_wrong_value);
	g_test_add_func("/convergence/progress-and-cancel", test_progress_and_cancel);
	g_test_add_func("/convergence/invalid-definitions", test_invalid_definitions);
	return g_test_run();
}
