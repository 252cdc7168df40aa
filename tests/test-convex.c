/* DiffCoSim convex-QP backends: the paper's rows (paper-tables.csv), the QP
 * against its optimality conditions, step Jacobians against finite
 * differences (single, decoupled and coupled contacts), any-scene runs. */
#include "backend-check.h"
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

typedef struct Row {
	const char *backend;
	int task; /* 1, 2 (friction 0), 4 (task 2 with friction 0.1), 3 */
	const char *parameter;
	double expected, tolerance;
} Row;

/* iteration-0 gradients, expected ± tolerance as in paper-tables.csv */
static const Row gradient_rows[] = {
	{"convex-toi", 1, "ball.position.y", -1.0, 1e-4},
	{"convex-toi", 1, "ball.velocity.y", -0.9958333, 1e-4},
	{"convex-toi", 1, "ball.control[0].y", -0.0020703, 2e-6},
	{"convex", 1, "ball.position.y", 1.0, 1e-4},
	{"convex", 1, "ball.velocity.y", -0.0958333, 1e-4},
	{"convex", 1, "ball.control[0].y", -0.000204, 2e-6},
	{"convex-toi", 2, "ball.velocity.x", -3.1652498, 2e-4},
	{"convex-toi", 2, "ball.velocity.y", -0.3060565, 2e-4},
	{"convex", 2, "ball.velocity.x", 1.5897565, 2e-4},
	{"convex", 2, "ball.velocity.y", -0.1391892, 2e-4},
	{"convex-toi", 4, "ball.velocity.x", -4.2344556, 3e-4},
	{"convex-toi", 4, "ball.velocity.y", -1.4272081, 3e-4},
	{"convex", 4, "ball.velocity.x", 3.1662886, 3e-4},
	{"convex", 4, "ball.velocity.y", 0.1903351, 3e-4},
	{"convex-toi", 3, "ball1.position.x", -0.7324822, 1e-4},
	{"convex-toi", 3, "ball2.position.x", 0.0, 1e-4},
	{"convex-toi", 3, "ball1.velocity.x", -0.7309537, 1e-4},
	{"convex-toi", 3, "ball2.velocity.x", -0.001526, 1e-4},
	{"convex-toi", 3, "ball1.control[0].x", -0.00026964, 5e-6},
	{"convex", 3, "ball1.position.x", 0.0, 1e-4},
	{"convex", 3, "ball2.position.x", -0.7290558, 1e-4},
	{"convex", 3, "ball1.velocity.x", -0.2232731, 1e-4},
	{"convex", 3, "ball2.velocity.x", -0.5057835, 1e-4},
	{"convex", 3, "ball1.control[0].x", 0.00078485, 5e-6},
};

static ClScene *task_scene(int task)
{
	switch (task) {
	case 1:
		return cl_test_task1();
	case 2:
		return cl_test_task2(0.0);
	case 4:
		return cl_test_task2(0.1);
	default:
		return cl_test_task3();
	}
}

static void test_gradient_rows(void)
{
	for (size_t k = 0; k < G_N_ELEMENTS(gradient_rows); k++) {
		const Row *row = &gradient_rows[k];
		ClScene *scene = task_scene(row->task);
		double value = cl_test_gradient(scene, cl_test_backend(row->backend), row->parameter);
		g_test_message("table %d %-11s d/%-20s ours %.8f expected %.8f", row->task, row->backend, row->parameter,
					   value, row->expected);
		g_assert_cmpfloat_with_epsilon(value, row->expected, row->tolerance);
		cl_scene_free(scene);
	}
}

/* Task 2: v0 after 1000 gradient-descent updates (lr 0.01). The expected
 * values are the exact-QP ones; the original's inexact SCS solve moved them
 * by up to 2e-3 (backends-paper.md §8.2). */
static void check_task2_training(const char *backend, double friction, double vx, double vy)
{
	ClScene *scene = cl_test_task2(friction);
	ClOptimizeResult result;
	g_assert_true(cl_optimize(scene, cl_test_backend(backend), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	g_assert_cmpint(result.parameter_count, ==, 2);
	double ox = result.parameters[0], oy = result.parameters[1];
	g_test_message("task 2 (mu %.1f) %-11s v after 1000 updates: ours (%.7f, %.7f) expected (%.7f, %.7f)", friction,
				   backend, ox, oy, vx, vy);
	g_assert_cmpfloat_with_epsilon(ox, vx, 2e-3);
	g_assert_cmpfloat_with_epsilon(oy, vy, 2e-3);
	cl_optimize_result_clear(&result);
	cl_scene_free(scene);
}

static void test_task2_training(void)
{
	check_task2_training("convex-toi", 0.0, 10.25732, -4.20349);
	check_task2_training("convex", 0.0, -2.49338, -4.33759);
}

static void test_task2_friction_training(void)
{
	check_task2_training("convex-toi", 0.1, 10.34549, -3.99225);
	check_task2_training("convex", 0.1, 0.62655, -4.72641);
}

/* Task 3: loss at iteration 999 (before the last of 1000 updates, lr 10). */
static void check_task3_learning(const char *backend, double expected, double tolerance)
{
	ClScene *scene = cl_test_task3();
	ClOptimizeResult result;
	g_assert_true(cl_optimize(scene, cl_test_backend(backend), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	double loss = result.loss[999];
	g_test_message("task 3 %-11s loss at iteration 999: ours %.9g expected %.9g", backend, loss, expected);
	g_assert_cmpfloat_with_epsilon(loss, expected, tolerance);
	cl_optimize_result_clear(&result);
	cl_scene_free(scene);
}

static void test_task3_learning(void)
{
	check_task3_learning("convex-toi", 1.408318, 1e-3);
	check_task3_learning("convex", 2.001379, 2e-4);
}

/* ------------------------------------------------------ one-step scenes */

/* Wall contacts: the full step Jacobian equals FD of the step. A ball–ball
 * contact's J is built from the detached normal, so the peer's gradient
 * misses the normal's rotation: it equals FD only along directions that do
 * not rotate it to first order, i.e. moving a ball (position or velocity)
 * along the normal of its one contact, and along every control. */
static void test_step_jacobian(void)
{
	const char *backends[] = {"convex-toi", "convex"};
	for (size_t b = 0; b < G_N_ELEMENTS(backends); b++) {
		int backend = cl_test_backend(backends[b]);
		for (size_t k = 0; k < (size_t)cl_test_step_case_count; k++) {
			const ClTestStepCase *c = &cl_test_step_cases[k];
			ClScene *scene = cl_test_step_scene(c, backends[b]);
			double s0[3 * CL_BALL_STATE], u[6];
			cl_test_step_inputs(c, s0, u);
			int pairs[8][2], contacts;
			double normals[8][2];
			int count = cl_test_step_normals(c, scene->duration, pairs, normals);
			double error = cl_test_step_jacobian_error(scene, backend, s0, u, 1e-6, &contacts);
			g_assert_cmpint(contacts, ==, c->contacts);
			if (pairs[count - 1][1] >= 0) {
				int nu = 2 * c->ball_count, directions = 0;
				error = 0.0;
				for (int i = 0; i < c->ball_count; i++) {
					int contact = -1, in = 0;
					for (int q = 0; q < count; q++)
						if (pairs[q][0] == i || pairs[q][1] == i) {
							contact = q;
							in++;
						}
					for (int part = 0; part < 2 && in == 1; part++) {
						double ds[3 * CL_BALL_STATE] = {0}, du[6] = {0};
						ds[CL_BALL_STATE * i + 2 * part] = normals[contact][0];
						ds[CL_BALL_STATE * i + 2 * part + 1] = normals[contact][1];
						error = fmax(error, cl_test_step_jvp_error(scene, backend, s0, u, ds, du, 1e-6));
						directions++;
					}
				}
				for (int j = 0; j < nu; j++) {
					double ds[3 * CL_BALL_STATE] = {0}, du[6] = {0};
					du[j] = 1.0;
					error = fmax(error, cl_test_step_jvp_error(scene, backend, s0, u, ds, du, 1e-6));
					directions++;
				}
				g_test_message("%-10s %-44s %d contacts, %d directions, max |J - J_fd| = %.3g", backends[b], c->name,
							   contacts, directions, error);
			} else {
				g_test_message("%-10s %-44s %d contacts, max |J - J_fd| = %.3g", backends[b], c->name, contacts,
							   error);
			}
			g_assert_cmpfloat(error, <, 1e-7);
			cl_scene_free(scene);
		}
	}
}

/* The detached normal is what the peer differentiates: rotating the pair
 * (moving ball 1 sideways) changes the forward map's impulse direction, and
 * the recorded Jacobian must not see it. */
static void test_detached_normal(void)
{
	const ClTestStepCase *c = &cl_test_step_cases[1];
	ClScene *scene = cl_test_step_scene(c, "convex");
	double s0[2 * CL_BALL_STATE], u[4], ds[2 * CL_BALL_STATE] = {0}, du[4] = {0};
	cl_test_step_inputs(c, s0, u);
	int pairs[8][2];
	double normals[8][2];
	cl_test_step_normals(c, scene->duration, pairs, normals);
	ds[CL_BALL_STATE] = -normals[0][1];
	ds[CL_BALL_STATE + 1] = normals[0][0];
	double error = cl_test_step_jvp_error(scene, cl_test_backend("convex"), s0, u, ds, du, 1e-6);
	g_test_message("sideways move of ball 1: |J - J_fd| = %.3g (the normal's rotation, detached)", error);
	g_assert_cmpfloat(error, >, 1e-2);
	cl_scene_free(scene);
}

/* The QP's optimality conditions on the post-impact velocity v⁺ = v +
 * Δv/(1+e): every contact's J·v⁺_rel lies in the dual cone (n·v⁺ ≥ μ|t·v⁺|)
 * and the impulse does no work on v⁺ (complementarity). Without gravity or
 * controls, Δv is read off one step. */
static void test_qp_optimality(void)
{
	for (size_t k = 0; k < (size_t)cl_test_step_case_count; k++) {
		const ClTestStepCase *c = &cl_test_step_cases[k];
		ClScene *scene = cl_test_step_scene(c, "convex");
		scene->gravity = (ClVec2){0, 0};
		double s0[3 * CL_BALL_STATE], u[6] = {0};
		cl_test_step_inputs(c, s0, u);
		memset(u, 0, sizeof u);
		ClRollout *r = cl_rollout_new(scene, cl_test_backend("convex"));
		g_assert_true(cl_rollout_run(r, s0, u, false));
		const double *s1 = cl_rollout_states(r) + CL_BALL_STATE * c->ball_count;
		double v_plus[3][2], work = 0.0, scale = 0.0;
		for (int i = 0; i < c->ball_count; i++)
			for (int a = 0; a < 2; a++) {
				double dv = s1[CL_BALL_STATE * i + 2 + a] - s0[CL_BALL_STATE * i + 2 + a];
				v_plus[i][a] = s0[CL_BALL_STATE * i + 2 + a] + dv / (1.0 + c->elasticity);
				work += c->balls[i].mass * dv / (1.0 + c->elasticity) * v_plus[i][a];
				scale = fmax(scale, fabs(dv));
			}
		g_assert_cmpfloat(scale, >, 0.1);
		g_assert_cmpfloat(fabs(work), <, 1e-12);
		int pairs[8][2];
		double normals[8][2];
		int count = cl_test_step_normals(c, scene->duration, pairs, normals);
		for (int q = 0; q < count; q++) {
			const double *va = v_plus[pairs[q][0]];
			double rel[2] = {va[0], va[1]};
			if (pairs[q][1] >= 0) {
				rel[0] -= v_plus[pairs[q][1]][0];
				rel[1] -= v_plus[pairs[q][1]][1];
			}
			double normal = normals[q][0] * rel[0] + normals[q][1] * rel[1];
			double tangent = -normals[q][1] * rel[0] + normals[q][0] * rel[1];
			g_assert_cmpfloat(normal - c->friction * fabs(tangent), >, -1e-12);
		}
		g_test_message("%-44s impulse work on v+ %.2g, v+ of ball 0 (%.4f, %.4f)", c->name, work, v_plus[0][0],
					   v_plus[0][1]);
		cl_rollout_free(r);
		cl_scene_free(scene);
	}
}

/* The active-set solve against the closed form: a corner whose wall is
 * tilted by 1e-9 couples the two contacts (n_k·n_l ≠ 0) and must give what
 * the separated closed forms give for the orthogonal corner, to 1e-8. */
static void test_coupled_matches_closed_form(void)
{
	ClTestStepCase c = cl_test_step_cases[3];
	ClScene *square = cl_test_step_scene(&c, "convex");
	c.wall_normal[1] = (ClVec2){-cos(1e-9), sin(1e-9)};
	ClScene *tilted = cl_test_step_scene(&c, "convex");
	double s0[CL_BALL_STATE], u[2];
	cl_test_step_inputs(&c, s0, u);
	ClRollout *a = cl_rollout_new(square, cl_test_backend("convex"));
	ClRollout *b = cl_rollout_new(tilted, cl_test_backend("convex"));
	g_assert_true(cl_rollout_run(a, s0, u, true));
	g_assert_true(cl_rollout_run(b, s0, u, true));
	for (int i = 0; i < CL_BALL_STATE; i++)
		g_assert_cmpfloat_with_epsilon(cl_rollout_states(a)[CL_BALL_STATE + i], cl_rollout_states(b)[CL_BALL_STATE + i],
									   1e-8);
	for (int j = 0; j < CL_BALL_STATE; j++) {
		double ds[CL_BALL_STATE] = {0}, da[CL_BALL_STATE], db[CL_BALL_STATE];
		ds[j] = 1.0;
		cl_rollout_jvp(a, ds, NULL, da);
		cl_rollout_jvp(b, ds, NULL, db);
		for (int i = 0; i < CL_BALL_STATE; i++)
			g_assert_cmpfloat_with_epsilon(da[i], db[i], 1e-8);
	}
	cl_rollout_free(a);
	cl_rollout_free(b);
	cl_scene_free(square);
	cl_scene_free(tilted);
}

/* Any scene: 3 balls, 2 walls, gravity, with and without friction; finite
 * and bit-reproducible. */
static void test_random_scene(void)
{
	const char *backends[] = {"convex-toi", "convex"};
	for (size_t k = 0; k < G_N_ELEMENTS(backends); k++) {
		for (unsigned seed = 1; seed <= 4; seed++) {
			ClScene *scene = cl_test_random_scene(seed, 3, 2);
			scene->friction = seed % 2 ? 0.0 : 0.3;
			int contacts;
			g_assert_true(cl_test_deterministic(scene, cl_test_backend(backends[k]), &contacts));
			g_test_message("%s random scene %u (mu %.1f): %d contacts, finite and deterministic", backends[k], seed,
						   scene->friction, contacts);
			cl_scene_free(scene);
		}
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/convex/paper-gradients", test_gradient_rows);
	g_test_add_func("/convex/task2-training", test_task2_training);
	g_test_add_func("/convex/task2-friction-training", test_task2_friction_training);
	g_test_add_func("/convex/task3-learning", test_task3_learning);
	g_test_add_func("/convex/step-jacobian", test_step_jacobian);
	g_test_add_func("/convex/detached-normal", test_detached_normal);
	g_test_add_func("/convex/qp-optimality", test_qp_optimality);
	g_test_add_func("/convex/coupled-matches-closed-form", test_coupled_matches_closed_form);
	g_test_add_func("/convex/random-scene", test_random_scene);
	return g_test_run();
}
