/* DiffTaichi direct-impulse backends: the paper's rows (paper-tables.csv),
 * step Jacobians against finite differences, any-scene determinism. */
#include "backend-check.h"
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <string.h>

typedef struct Row {
	const char *backend;
	int task; /* 1, 2, 3 */
	const char *parameter;
	double expected, tolerance;
} Row;

/* iteration-0 gradients, expected ± tolerance as in paper-tables.csv */
static const Row gradient_rows[] = {
	{"impulse-toi", 1, "ball.position.y", -1.0, 1e-4},
	{"impulse-toi", 1, "ball.velocity.y", -1.0000062, 1e-4},
	{"impulse-toi", 1, "ball.control[0].y", -0.0020833, 2e-6},
	{"impulse", 1, "ball.position.y", 1.0, 1e-4},
	{"impulse", 1, "ball.velocity.y", -0.1, 1e-4},
	{"impulse", 1, "ball.control[0].y", -0.00020833, 2e-6},
	{"impulse-toi", 2, "ball.velocity.x", -3.1662645, 1e-4},
	{"impulse-toi", 2, "ball.velocity.y", -0.3110763, 1e-4},
	{"impulse", 2, "ball.velocity.x", 1.5558366, 1e-4},
	{"impulse", 2, "ball.velocity.y", -0.1552111, 1e-4},
	{"impulse-toi", 3, "ball1.position.x", -0.7190788, 1e-4},
	{"impulse-toi", 3, "ball2.position.x", 0.0, 1e-4},
	{"impulse-toi", 3, "ball1.velocity.x", -0.7190804, 1e-4},
	{"impulse-toi", 3, "ball2.velocity.x", 0.0, 1e-4},
	{"impulse-toi", 3, "ball1.control[0].x", -0.00024808, 5e-6},
	{"impulse", 3, "ball1.position.x", 0.0, 1e-4},
	{"impulse", 3, "ball2.position.x", -0.7156515, 1e-4},
	{"impulse", 3, "ball1.velocity.x", -0.22215, 1e-4},
	{"impulse", 3, "ball2.velocity.x", -0.4935026, 1e-4},
	{"impulse", 3, "ball1.control[0].x", 0.00078719, 5e-6},
};

static ClScene *task_scene(int task)
{
	return task == 1 ? cl_test_task1() : task == 2 ? cl_test_task2(0.0) : cl_test_task3();
}

static void test_gradient_rows(void)
{
	for (size_t k = 0; k < G_N_ELEMENTS(gradient_rows); k++) {
		const Row *row = &gradient_rows[k];
		ClScene *scene = task_scene(row->task);
		double value = cl_test_gradient(scene, cl_test_backend(row->backend), row->parameter);
		g_test_message("task %d %-12s d/%-20s ours %.8f expected %.8f", row->task, row->backend, row->parameter,
					   value, row->expected);
		g_assert_cmpfloat_with_epsilon(value, row->expected, row->tolerance);
		cl_scene_free(scene);
	}
}

/* Distance in float32 units in the last place (for same-sign values). */
static long ulps(double a, double b)
{
	float fa = (float)a, fb = (float)b;
	int32_t ia, ib;
	memcpy(&ia, &fa, sizeof ia);
	memcpy(&ib, &fb, sizeof ib);
	return labs((long)ia - (long)ib);
}

/* Task 2: v0 after 1000 gradient-descent updates (lr 0.01). The original
 * runs' float32 endpoints are printed in the notebooks; ours should agree
 * to a few float32 ulps (§7), well inside the CSV tolerance. */
static void check_task2_training(const char *backend, double vx, double vy)
{
	ClScene *scene = cl_test_task2(0.0);
	ClOptimizeResult result;
	g_assert_true(cl_optimize(scene, cl_test_backend(backend), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	g_assert_cmpint(result.parameter_count, ==, 2);
	double ox = result.parameters[0], oy = result.parameters[1];
	g_test_message("task 2 %-12s v after 1000 updates: ours (%.9g, %.9g) expected (%.9g, %.9g), %ld and %ld ulps",
				   backend, ox, oy, vx, vy, ulps(ox, vx), ulps(oy, vy));
	g_assert_cmpfloat_with_epsilon(ox, vx, 2e-3);
	g_assert_cmpfloat_with_epsilon(oy, vy, 2e-3);
	g_assert_cmpint(ulps(ox, vx), <=, 4);
	g_assert_cmpint(ulps(oy, vy), <=, 4);
	cl_optimize_result_clear(&result);
	cl_scene_free(scene);
}

static void test_task2_training_toi(void)
{
	check_task2_training("impulse-toi", 10.1841459, -4.1605549);
}

static void test_task2_training_plain(void)
{
	check_task2_training("impulse", -2.4933372, -4.2984018);
}

/* Task 3: loss at iteration 999 (before the last of 1000 updates, lr 10). */
static void check_task3_learning(const char *backend, double expected)
{
	ClScene *scene = cl_test_task3();
	ClOptimizeResult result;
	g_assert_true(cl_optimize(scene, cl_test_backend(backend), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	double loss = result.loss[999];
	g_test_message("task 3 %-12s loss at iteration 999: ours %.9g expected %.9g (iteration 0: %.9g)", backend, loss,
				   expected, result.loss[0]);
	g_assert_cmpfloat_with_epsilon(loss, expected, 2e-4);
	cl_optimize_result_clear(&result);
	cl_scene_free(scene);
}

static void test_task3_learning_toi(void)
{
	check_task3_learning("impulse-toi", 1.395813);
}

static void test_task3_learning_plain(void)
{
	check_task3_learning("impulse", 2.001444);
}

/* Every one-step case (walls of any normal, unequal masses, corners, a ball
 * between two balls, gravity and controls): the step Jacobian equals FD of
 * the step in float64, the ball–ball normal being differentiable here. */
static void test_step_jacobian(void)
{
	const char *backends[] = {"impulse-toi", "impulse"};
	for (size_t b = 0; b < G_N_ELEMENTS(backends); b++) {
		for (int k = 0; k < cl_test_step_case_count; k++) {
			const ClTestStepCase *c = &cl_test_step_cases[k];
			ClScene *scene = cl_test_step_scene(c, backends[b]);
			double s0[12], u[6];
			cl_test_step_inputs(c, s0, u);
			int contacts;
			double error = cl_test_step_jacobian_error(scene, cl_test_backend(backends[b]), s0, u, 1e-6, &contacts);
			g_test_message("%-11s %-44s %d contacts, max |J - J_fd| = %.3g", backends[b], c->name, contacts, error);
			g_assert_cmpint(contacts, ==, c->contacts);
			g_assert_cmpfloat(error, <, 1e-7);
			cl_scene_free(scene);
		}
	}
}

/* Any scene: 3 balls, 2 walls, gravity; finite and bit-reproducible. */
static void test_random_scene(void)
{
	const char *backends[] = {"impulse-toi", "impulse"};
	for (size_t k = 0; k < G_N_ELEMENTS(backends); k++) {
		for (unsigned seed = 1; seed <= 4; seed++) {
			ClScene *scene = cl_test_random_scene(seed, 3, 2);
			int contacts;
			g_assert_true(cl_test_deterministic(scene, cl_test_backend(backends[k]), &contacts));
			g_test_message("%s random scene %u: %d contacts, finite and deterministic", backends[k], seed, contacts);
			cl_scene_free(scene);
		}
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/impulse/paper-gradients", test_gradient_rows);
	g_test_add_func("/impulse/task2-training-toi", test_task2_training_toi);
	g_test_add_func("/impulse/task2-training", test_task2_training_plain);
	g_test_add_func("/impulse/task3-learning-toi", test_task3_learning_toi);
	g_test_add_func("/impulse/task3-learning", test_task3_learning_plain);
	g_test_add_func("/impulse/step-jacobian", test_step_jacobian);
	g_test_add_func("/impulse/random-scene", test_random_scene);
	return g_test_run();
}
