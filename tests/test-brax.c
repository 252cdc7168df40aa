/* compliant-brax and pbd-brax against the paper's Brax numbers
 * (shared/reference/paper-tables.csv), run as the paper ran Brax: half the
 * preset's steps, two sub-steps each. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum Task { TASK1, TASK2, TASK2_FRICTION, TASK3 } Task;

static ClScene *paper_scene(Task task)
{
	ClScene *s = task == TASK1 ? cl_test_task1() : task == TASK3 ? cl_test_task3() : cl_test_task2(task == TASK2 ? 0.0 : 0.1);
	cl_scene_set_steps(s, s->steps / 2);
	cl_test_set_param(s, "compliant-brax", "substeps", 2);
	cl_test_set_param(s, "pbd-brax", "substeps", 2);
	return s;
}

/* dL/d(name) by the adjoint of one recorded rollout. */
static double adjoint(const ClScene *s, const char *backend, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(s, name, &p, message, sizeof message));
	ClRollout *r = cl_rollout_new(s, cl_test_backend(backend));
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	double *g_s = g_new0(double, cl_state_size(s));
	double *g_u = g_new0(double, cl_control_size(s));
	cl_rollout_gradient(r, g_s, g_u);
	double g = p.target == CL_PARAM_POSITION   ? g_s[4 * p.ball + p.axis]
			   : p.target == CL_PARAM_VELOCITY ? g_s[4 * p.ball + 2 + p.axis]
											   : g_u[2 * (p.step * s->ball_count + p.ball) + p.axis];
	g_free(g_s);
	g_free(g_u);
	cl_rollout_free(r);
	return g;
}

static void check(const char *what, double computed, double expected, double tolerance)
{
	g_test_message("%s: computed %.8g, expected %.8g ± %g", what, computed, expected, tolerance);
	if (!(fabs(computed - expected) <= tolerance))
		g_test_fail_printf("%s: computed %.8g, expected %.8g ± %g", what, computed, expected, tolerance);
}

typedef struct GradientRow {
	Task task;
	const char *backend, *quantity;
	double expected, tolerance;
	int precision;
} GradientRow;

/* paper-tables.csv, iteration-0 gradients of the Brax rows */
static const GradientRow gradient_rows[] = {
	{TASK1, "compliant-brax", "ball.position.y", 1.0, 1e-4, CL_PRECISION_FLOAT32},
	{TASK1, "compliant-brax", "ball.velocity.y", -0.095833, 1e-4, CL_PRECISION_FLOAT32},
	{TASK1, "compliant-brax", "ball.control[0].y", -0.000412, 2e-6, CL_PRECISION_FLOAT32},
	{TASK1, "pbd-brax", "ball.position.y", -0.002045, 5e-4, CL_PRECISION_FLOAT32},
	{TASK1, "pbd-brax", "ball.velocity.y", -0.546753, 2e-4, CL_PRECISION_FLOAT32},
	{TASK1, "pbd-brax", "ball.control[0].y", -0.002278, 5e-6, CL_PRECISION_FLOAT32},
	{TASK2, "compliant-brax", "ball.velocity.x", 1.697119, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2, "compliant-brax", "ball.velocity.y", -0.036618, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2, "pbd-brax", "ball.velocity.x", -0.831131, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2, "pbd-brax", "ball.velocity.y", -0.066309, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "compliant-brax", "ball.velocity.x", 1.78894, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "compliant-brax", "ball.velocity.y", -0.014718, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "pbd-brax", "ball.velocity.x", -0.862198, 1e-4, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "pbd-brax", "ball.velocity.y", -0.382492, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", "ball1.position.x", 8e-6, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", "ball2.position.x", -0.725244, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", "ball1.velocity.x", -0.222097, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", "ball2.velocity.x", -0.503137, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", "ball1.control[0].x", 0.001575, 5e-6, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", "ball1.position.x", -0.361313, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", "ball2.position.x", -0.360641, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", "ball1.velocity.x", -0.472511, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", "ball2.velocity.x", -0.249448, 1e-4, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", "ball1.control[0].x", 0.000533, 5e-6, CL_PRECISION_FLOAT32},
	/* the CSV's float64 note: the contact moves one sub-step earlier */
	{TASK1, "compliant-brax", "ball.velocity.y", -0.1, 1e-4, CL_PRECISION_FLOAT64},
};

/* backend-brax.md §10.1, the float64 column of the spec's re-implementation
 * (6 decimals): the same formulas without float32 rounding. */
static const GradientRow float64_rows[] = {
	{TASK1, "compliant-brax", "ball.position.y", 1.0, 1e-6, CL_PRECISION_FLOAT64},
	{TASK1, "compliant-brax", "ball.velocity.y", -0.1, 1e-6, CL_PRECISION_FLOAT64},
	{TASK1, "compliant-brax", "ball.control[0].y", -0.000430, 1e-6, CL_PRECISION_FLOAT64},
	{TASK1, "pbd-brax", "ball.position.y", -0.000526, 1e-6, CL_PRECISION_FLOAT64},
	{TASK1, "pbd-brax", "ball.velocity.y", -0.550235, 1e-6, CL_PRECISION_FLOAT64},
	{TASK1, "pbd-brax", "ball.control[0].y", -0.002293, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2, "compliant-brax", "ball.velocity.x", 1.697121, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2, "compliant-brax", "ball.velocity.y", -0.036619, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2, "pbd-brax", "ball.velocity.x", -0.831188, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2, "pbd-brax", "ball.velocity.y", -0.066429, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2_FRICTION, "compliant-brax", "ball.velocity.x", 1.788940, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2_FRICTION, "compliant-brax", "ball.velocity.y", -0.014718, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2_FRICTION, "pbd-brax", "ball.velocity.x", -0.862287, 1e-6, CL_PRECISION_FLOAT64},
	{TASK2_FRICTION, "pbd-brax", "ball.velocity.y", -0.382627, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "compliant-brax", "ball1.position.x", 0.000008, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "compliant-brax", "ball2.position.x", -0.725249, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "compliant-brax", "ball1.velocity.x", -0.222098, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "compliant-brax", "ball2.velocity.x", -0.503143, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "compliant-brax", "ball1.control[0].x", 0.001575, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", "ball1.position.x", -0.359248, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", "ball2.position.x", -0.358567, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", "ball1.velocity.x", -0.469804, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", "ball2.velocity.x", -0.248010, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", "ball1.control[0].x", 0.000544, 1e-6, CL_PRECISION_FLOAT64},
};

static const char *const task_names[] = {"task1", "task2", "task2-friction", "task3"};

static void test_gradient_row(gconstpointer data)
{
	const GradientRow *row = data;
	ClScene *s = paper_scene(row->task);
	cl_test_set_param(s, row->backend, "precision", row->precision);
	char what[256];
	snprintf(what, sizeof what, "%s %s %s d/%s", task_names[row->task], row->backend,
			 row->precision == CL_PRECISION_FLOAT64 ? "float64" : "float32", row->quantity);
	check(what, adjoint(s, row->backend, row->quantity), row->expected, row->tolerance);
	cl_scene_free(s);
}

typedef struct OptimizeRow {
	Task task;
	const char *backend;
	double expected[2], tolerance; /* Task 2: optimized v0 (x, y); Task 3: loss at iteration 999 */
	int precision;
} OptimizeRow;

/* paper-tables.csv, Tables 2–4 and the Task 3 learning rows */
static const OptimizeRow optimize_rows[] = {
	{TASK2, "compliant-brax", {-2.4935, -4.7927}, 2e-3, CL_PRECISION_FLOAT32},
	{TASK2, "pbd-brax", {10.4865, -4.7518}, 2e-3, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "compliant-brax", {-2.5777, -4.798}, 2e-3, CL_PRECISION_FLOAT32},
	{TASK2_FRICTION, "pbd-brax", {10.18783, -3.9497}, 2e-3, CL_PRECISION_FLOAT32},
	{TASK3, "compliant-brax", {2.0000002, 0}, 2e-4, CL_PRECISION_FLOAT32},
	{TASK3, "pbd-brax", {1.429734, 0}, 1e-4, CL_PRECISION_FLOAT32},
	/* backend-brax.md §12.1, float64 */
	{TASK3, "compliant-brax", {2.0000003, 0}, 1e-6, CL_PRECISION_FLOAT64},
	{TASK3, "pbd-brax", {1.4300571, 0}, 1e-6, CL_PRECISION_FLOAT64},
};

/* The scene's own problem: Task 2 v0 with lr 0.01, Task 3 the 240 controls
 * with lr 10, 1000 updates each, parameters kept in float32. */
static void test_optimize_row(gconstpointer data)
{
	const OptimizeRow *row = data;
	ClScene *s = paper_scene(row->task);
	cl_test_set_param(s, row->backend, "precision", row->precision);
	ClOptimizeResult result;
	g_assert_true(cl_optimize(s, cl_test_backend(row->backend), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	char what[256];
	if (row->task == TASK3) {
		snprintf(what, sizeof what, "task3 %s %s loss at iteration 999", row->backend,
				 row->precision == CL_PRECISION_FLOAT64 ? "float64" : "float32");
		check(what, result.loss[999], row->expected[0], row->tolerance);
	} else {
		for (int axis = 0; axis < 2; axis++) {
			snprintf(what, sizeof what, "%s %s optimized ball.velocity.%c", task_names[row->task], row->backend,
					 "xy"[axis]);
			check(what, result.parameters[axis], row->expected[axis], row->tolerance);
		}
	}
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(gradient_rows); i++) {
		const GradientRow *row = &gradient_rows[i];
		char path[256];
		snprintf(path, sizeof path, "/brax/paper/%s/%s/d-%s%s", task_names[row->task], row->backend, row->quantity,
				 row->precision == CL_PRECISION_FLOAT64 ? "/float64" : "");
		g_test_add_data_func(path, row, test_gradient_row);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(float64_rows); i++) {
		const GradientRow *row = &float64_rows[i];
		char path[256];
		snprintf(path, sizeof path, "/brax/spec-float64/%s/%s/d-%s", task_names[row->task], row->backend,
				 row->quantity);
		g_test_add_data_func(path, row, test_gradient_row);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(optimize_rows); i++) {
		const OptimizeRow *row = &optimize_rows[i];
		char path[256];
		snprintf(path, sizeof path, "/brax/%s/%s/%s/optimize", row->precision == CL_PRECISION_FLOAT64 ? "spec-float64" : "paper",
				 task_names[row->task], row->backend);
		g_test_add_data_func(path, row, test_optimize_row);
	}
	return g_test_run();
}
