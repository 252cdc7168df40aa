/* compliant-brax and pbd-brax against the paper's Brax numbers
 * (shared/reference/paper-tables.csv), run as the paper ran Brax: half the
 * preset's steps, two sub-steps each. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const backends[] = {"compliant-brax", "pbd-brax"};

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
	double g = *cl_param_slot(s, &p, g_s, g_u);
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

/* Every event of a run: which pairs touched when. */
static bool same_events(const ClRollout *a, const ClRollout *b)
{
	int n = cl_rollout_event_count(a);
	if (n != cl_rollout_event_count(b))
		return false;
	const ClContactEvent *ea = cl_rollout_events(a), *eb = cl_rollout_events(b);
	for (int k = 0; k < n; k++)
		if (ea[k].time != eb[k].time || ea[k].ball != eb[k].ball || ea[k].other != eb[k].other)
			return false;
	return true;
}

/* The recorded Jacobian of one control interval (forward sweep of a
 * one-step rollout from s_n with u_n) against central differences of that
 * step, in float64, at every interval of random scenes that has a contact.
 * Friction makes the balls spin inside the step. */
static void test_step_jacobian(gconstpointer data)
{
	const char *backend = data;
	int b = cl_test_backend(backend);
	int plane_steps = 0, ball_steps = 0, skipped = 0;
	double worst = 0.0;
	for (unsigned seed = 1; seed <= 3; seed++) {
		for (int with_friction = 0; with_friction < 2; with_friction++) {
			ClScene *s = cl_test_random_scene(seed, 3, 2);
			s->friction = with_friction ? 0.3 : 0.0;
			cl_test_set_param(s, backend, "precision", CL_PRECISION_FLOAT64);
			cl_test_set_param(s, backend, "substeps", strcmp(backend, "pbd-brax") == 0 ? 2 : 3);
			int ns = cl_state_size(s), nu = 2 * s->ball_count;
			double *u = g_new0(double, cl_control_size(s));
			cl_scene_controls(s, u);
			ClRollout *full = cl_rollout_new(s, b);
			g_assert_true(cl_rollout_run(full, NULL, NULL, false));
			ClScene *one = cl_scene_copy(s);
			one->duration = cl_scene_dt(s);
			cl_scene_set_steps(one, 1);
			ClRollout *base = cl_rollout_new(one, b), *probe = cl_rollout_new(one, b);
			const ClContactEvent *events = cl_rollout_events(full);
			int last = -1;
			for (int e = 0; e < cl_rollout_event_count(full); e++) {
				int n = events[e].step;
				if (n == last)
					continue;
				last = n;
				if (events[e].other < 0)
					plane_steps++;
				else
					ball_steps++;
				const double *sn = cl_rollout_states(full) + (size_t)n * (size_t)ns;
				const double *un = u + (size_t)n * (size_t)nu;
				cl_rollout_run(base, sn, un, true);
				for (int k = 0; k < ns + nu; k++) {
					double ds0[12] = {0}, du[6] = {0}, jvp[12], x[12], w[6], plus[12], minus[12];
					const double h = 1e-6;
					if (k < ns)
						ds0[k] = 1.0;
					else
						du[k - ns] = 1.0;
					cl_rollout_jvp(base, ds0, du, jvp);
					bool switched = false;
					for (int sign = -1; sign <= 1; sign += 2) {
						memcpy(x, sn, sizeof(double) * (size_t)ns);
						memcpy(w, un, sizeof(double) * (size_t)nu);
						if (k < ns)
							x[k] += sign * h;
						else
							w[k - ns] += sign * h;
						cl_rollout_run(probe, x, w, false);
						switched = switched || !same_events(base, probe);
						memcpy(sign > 0 ? plus : minus, cl_rollout_states(probe) + ns, sizeof(double) * (size_t)ns);
					}
					if (switched) {
						skipped++;
						continue;
					}
					for (int i = 0; i < ns; i++) {
						double fd = (plus[i] - minus[i]) / (2 * h);
						double error = fabs(fd - jvp[i]) / (1.0 + fabs(fd));
						worst = fmax(worst, error);
						if (error > 1e-6)
							g_test_fail_printf("%s seed %u μ %g step %d: d s'[%d]/d x[%d] recorded %.9g, FD %.9g", backend,
											   seed, s->friction, n, i, k, jvp[i], fd);
					}
				}
			}
			cl_rollout_free(base);
			cl_rollout_free(probe);
			cl_rollout_free(full);
			cl_scene_free(one);
			cl_scene_free(s);
			g_free(u);
		}
	}
	g_test_message("%s: %d wall-contact and %d ball-contact steps, %d probes across a contact switch skipped, worst "
				   "relative error %.2g",
				   backend, plane_steps, ball_steps, skipped, worst);
	g_assert_cmpint(plane_steps, >=, 4);
	g_assert_cmpint(ball_steps, >=, 2);
	g_assert_cmpint(skipped, ==, 0);
}

/* Three balls of different masses, two walls, gravity, a control: finite,
 * and the same bits from a second run and from a fresh rollout. */
static void test_random_scene(gconstpointer data)
{
	const char *backend = data;
	int b = cl_test_backend(backend);
	for (int substeps = 1; substeps <= 2; substeps++) {
		ClScene *s = cl_test_random_scene(3, 3, 2);
		g_assert_cmpint(s->ball_count, ==, 3);
		g_assert_cmpint(s->wall_count, ==, 2);
		cl_test_set_param(s, backend, "substeps", substeps);
		int ns = cl_state_size(s), nu = cl_control_size(s);
		size_t states = (size_t)(s->steps + 1) * (size_t)ns;
		double *first = NULL, *g_first = g_new0(double, ns + nu);
		for (int run = 0; run < 3; run++) {
			ClRollout *r = cl_rollout_new(s, b);
			for (int again = 0; again < (run == 0 ? 2 : 1); again++) {
				g_assert_true(cl_rollout_run(r, NULL, NULL, true));
				g_assert_cmpint(cl_rollout_event_count(r), >, 0);
				double *g = g_new0(double, ns + nu);
				cl_rollout_gradient(r, g, g + ns);
				const double *x = cl_rollout_states(r);
				for (size_t i = 0; i < states; i++)
					g_assert_true(isfinite(x[i]));
				for (int i = 0; i < ns + nu; i++)
					g_assert_true(isfinite(g[i]));
				if (!first) {
					first = g_memdup2(x, sizeof(double) * states);
					memcpy(g_first, g, sizeof(double) * (size_t)(ns + nu));
				} else {
					g_assert_true(memcmp(first, x, sizeof(double) * states) == 0);
					g_assert_true(memcmp(g_first, g, sizeof(double) * (size_t)(ns + nu)) == 0);
				}
				g_free(g);
			}
			cl_rollout_free(r);
		}
		g_free(first);
		g_free(g_first);
		cl_scene_free(s);
	}
}

/* Spin is carried between contact passes without its derivative. On the
 * paper's friction task that path is below 1e-7: the float64 adjoint equals
 * central differences of the whole run. */
static void test_friction_spin(gconstpointer data)
{
	const char *backend = data;
	int b = cl_test_backend(backend);
	ClScene *s = paper_scene(TASK2_FRICTION);
	cl_test_set_param(s, backend, "precision", CL_PRECISION_FLOAT64);
	const char *names[] = {"ball.velocity.x", "ball.velocity.y"};
	for (int k = 0; k < 2; k++) {
		ClParam p;
		g_assert_true(cl_param_parse(s, names[k], &p, NULL, 0));
		ClStatus status;
		double fd = cl_finite_difference(s, b, &p, 1e-6, &status);
		g_assert_cmpint(status.code, ==, CL_STATUS_OK);
		char what[128];
		snprintf(what, sizeof what, "%s task2-friction float64 d/%s vs FD", backend, names[k]);
		check(what, adjoint(s, backend, names[k]), fd, 1e-7);
	}
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
	for (size_t i = 0; i < G_N_ELEMENTS(backends); i++) {
		char path[128];
		snprintf(path, sizeof path, "/brax/%s/step-jacobian", backends[i]);
		g_test_add_data_func(path, backends[i], test_step_jacobian);
		snprintf(path, sizeof path, "/brax/%s/random-scene", backends[i]);
		g_test_add_data_func(path, backends[i], test_random_scene);
		snprintf(path, sizeof path, "/brax/%s/friction-spin", backends[i]);
		g_test_add_data_func(path, backends[i], test_friction_spin);
	}
	return g_test_run();
}
