/* The Warp backends (compliant-warp, pbd-warp): the paper's numbers, float64
 * variants, step Jacobians against finite differences, general scenes,
 * divergence. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

typedef enum { TASK1, TASK2, TASK2_FRICTION, TASK3 } Task;

static ClScene *task_scene(Task task)
{
	switch (task) {
	case TASK1:
		return cl_test_task1();
	case TASK2:
		return cl_test_task2(0.0);
	case TASK2_FRICTION:
		return cl_test_task2(0.1);
	case TASK3:
		return cl_test_task3();
	}
	g_assert_not_reached();
}

static void set_precision(ClScene *s, const char *backend, int precision)
{
	cl_test_set_param(s, backend, "precision", precision);
}

/* The adjoint's dL/d(name) with the scene's own initial state and controls. */
static double adjoint_gradient(const ClScene *s, int backend, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(s, name, &p, message, sizeof message));
	ClRollout *r = cl_rollout_new(s, backend);
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	double *g_s0 = g_new0(double, cl_state_size(s));
	double *g_u = g_new0(double, cl_control_size(s));
	cl_rollout_gradient(r, g_s0, g_u);
	double value = *cl_param_slot(s, &p, g_s0, g_u);
	g_free(g_s0);
	g_free(g_u);
	cl_rollout_free(r);
	return value;
}

/* ------------------------------------------------------ the paper's rows */

typedef enum {
	ROW_GRADIENT,  /* dL/d(name) at iteration 0 */
	ROW_OPTIMIZED, /* the optimized parameter `name` after the scene's optimization */
	ROW_LOSS_999,  /* the loss at iteration 999, before the last update */
} RowKind;

typedef struct Row {
	const char *path;
	Task task;
	const char *backend;
	int precision;
	RowKind kind;
	const char *name; /* parameter; for ROW_OPTIMIZED: index into the optimized vector ("0", "1") */
	double expected, tolerance;
} Row;

#define F32 CL_PRECISION_FLOAT32
#define F64 CL_PRECISION_FLOAT64

/* paper-tables.csv, every compliant-warp and pbd-warp row with an expected
 * value, then the float64 values backends-paper.md §7 quotes. */
static const Row rows[] = {
	{"/warp/table1/compliant/dpy", TASK1, "compliant-warp", F32, ROW_GRADIENT, "ball.position.y", -1.5680103, 1e-4},
	{"/warp/table1/compliant/dvy", TASK1, "compliant-warp", F32, ROW_GRADIENT, "ball.velocity.y", -1.2248076, 1e-4},
	{"/warp/table1/compliant/duy", TASK1, "compliant-warp", F32, ROW_GRADIENT, "ball.control[0].y", -0.0025517, 2e-6},
	{"/warp/table1/pbd/dpy", TASK1, "pbd-warp", F32, ROW_GRADIENT, "ball.position.y", 0.0, 1e-4},
	{"/warp/table1/pbd/dvy", TASK1, "pbd-warp", F32, ROW_GRADIENT, "ball.velocity.y", -0.5479162, 1e-4},
	{"/warp/table1/pbd/duy", TASK1, "pbd-warp", F32, ROW_GRADIENT, "ball.control[0].y", -0.0011415, 2e-6},
	{"/warp/table2/compliant/dvx", TASK2, "compliant-warp", F32, ROW_GRADIENT, "ball.velocity.x", -4.9727597, 1e-4},
	{"/warp/table2/compliant/dvy", TASK2, "compliant-warp", F32, ROW_GRADIENT, "ball.velocity.y", -0.398443, 1e-4},
	{"/warp/table2/compliant/vx", TASK2, "compliant-warp", F32, ROW_OPTIMIZED, "0", 10.638576, 2e-3},
	{"/warp/table2/compliant/vy", TASK2, "compliant-warp", F32, ROW_OPTIMIZED, "1", -4.282096, 2e-3},
	{"/warp/table2/pbd/dvx", TASK2, "pbd-warp", F32, ROW_GRADIENT, "ball.velocity.x", -16.714911, 2e-4},
	{"/warp/table2/pbd/dvy", TASK2, "pbd-warp", F32, ROW_GRADIENT, "ball.velocity.y", -2.0866249, 2e-4},
	{"/warp/table2/pbd/vx", TASK2, "pbd-warp", F32, ROW_OPTIMIZED, "0", 9.729905, 2e-3},
	{"/warp/table2/pbd/vy", TASK2, "pbd-warp", F32, ROW_OPTIMIZED, "1", -4.070603, 2e-3},
	{"/warp/table4/compliant/dvx", TASK2_FRICTION, "compliant-warp", F32, ROW_GRADIENT, "ball.velocity.x", -4.5908871,
	 1e-4},
	{"/warp/table4/compliant/dvy", TASK2_FRICTION, "compliant-warp", F32, ROW_GRADIENT, "ball.velocity.y", -1.418013,
	 1e-4},
	{"/warp/table4/compliant/vx", TASK2_FRICTION, "compliant-warp", F32, ROW_OPTIMIZED, "0", 11.816755, 2e-3},
	{"/warp/table4/compliant/vy", TASK2_FRICTION, "compliant-warp", F32, ROW_OPTIMIZED, "1", -6.431888, 2e-3},
	{"/warp/table4/pbd/dvx", TASK2_FRICTION, "pbd-warp", F32, ROW_GRADIENT, "ball.velocity.x", -12.915957, 3e-4},
	{"/warp/table4/pbd/dvy", TASK2_FRICTION, "pbd-warp", F32, ROW_GRADIENT, "ball.velocity.y", 126.91611, 2e-3},
	{"/warp/table3/compliant/dpx1", TASK3, "compliant-warp", F32, ROW_GRADIENT, "ball1.position.x", 0.9509015, 1e-4},
	{"/warp/table3/compliant/dpx2", TASK3, "compliant-warp", F32, ROW_GRADIENT, "ball2.position.x", -1.6968923, 1e-4},
	{"/warp/table3/compliant/dvx1", TASK3, "compliant-warp", F32, ROW_GRADIENT, "ball1.velocity.x", 0.4348443, 1e-4},
	{"/warp/table3/compliant/dvx2", TASK3, "compliant-warp", F32, ROW_GRADIENT, "ball2.velocity.x", -1.1808341, 1e-4},
	{"/warp/table3/compliant/dux1", TASK3, "compliant-warp", F32, ROW_GRADIENT, "ball1.control[0].x", 0.00215593,
	 5e-6},
	{"/warp/table3/pbd/dpx1", TASK3, "pbd-warp", F32, ROW_GRADIENT, "ball1.position.x", -0.3609619, 1e-4},
	{"/warp/table3/pbd/dpx2", TASK3, "pbd-warp", F32, ROW_GRADIENT, "ball2.position.x", -0.3609619, 1e-4},
	{"/warp/table3/pbd/dvx1", TASK3, "pbd-warp", F32, ROW_GRADIENT, "ball1.velocity.x", -0.4722643, 1e-4},
	{"/warp/table3/pbd/dvx2", TASK3, "pbd-warp", F32, ROW_GRADIENT, "ball2.velocity.x", -0.2496681, 1e-4},
	{"/warp/table3/pbd/dux1", TASK3, "pbd-warp", F32, ROW_GRADIENT, "ball1.control[0].x", 0.00026612, 5e-6},
	{"/warp/learning/compliant", TASK3, "compliant-warp", F32, ROW_LOSS_999, NULL, 1.662276, 2e-4},
	{"/warp/learning/pbd", TASK3, "pbd-warp", F32, ROW_LOSS_999, NULL, 1.430243, 2e-4},
	/* float64, as quoted to their printed digits */
	{"/warp/float64/table2/pbd/dvx", TASK2, "pbd-warp", F64, ROW_GRADIENT, "ball.velocity.x", -16.7148, 1e-4},
	{"/warp/float64/table2/pbd/dvy", TASK2, "pbd-warp", F64, ROW_GRADIENT, "ball.velocity.y", -2.0828, 1e-4},
	{"/warp/float64/table2/pbd/vx", TASK2, "pbd-warp", F64, ROW_OPTIMIZED, "0", 9.72991, 1e-5},
	{"/warp/float64/table2/pbd/vy", TASK2, "pbd-warp", F64, ROW_OPTIMIZED, "1", -4.07092, 1e-5},
	{"/warp/float64/table3/pbd/dpx1", TASK3, "pbd-warp", F64, ROW_GRADIENT, "ball1.position.x", -0.3589, 1e-4},
	{"/warp/float64/table3/pbd/dpx2", TASK3, "pbd-warp", F64, ROW_GRADIENT, "ball2.position.x", -0.3589, 1e-4},
	{"/warp/float64/table3/pbd/dvx1", TASK3, "pbd-warp", F64, ROW_GRADIENT, "ball1.velocity.x", -0.4696, 1e-4},
	{"/warp/float64/table3/pbd/dvx2", TASK3, "pbd-warp", F64, ROW_GRADIENT, "ball2.velocity.x", -0.2482, 1e-4},
	{"/warp/float64/learning/compliant", TASK3, "compliant-warp", F64, ROW_LOSS_999, NULL, 1.662280, 2e-6},
	{"/warp/float64/learning/pbd", TASK3, "pbd-warp", F64, ROW_LOSS_999, NULL, 1.430222, 2e-6},
};

static void test_row(gconstpointer data)
{
	const Row *row = data;
	ClScene *s = task_scene(row->task);
	set_precision(s, row->backend, row->precision);
	int backend = cl_test_backend(row->backend);
	double computed;
	if (row->kind == ROW_GRADIENT) {
		computed = adjoint_gradient(s, backend, row->name);
	} else {
		ClOptimizeResult result;
		g_assert_true(cl_optimize(s, backend, NULL, NULL, NULL, &result));
		g_assert_cmpint(result.iterations_done, ==, 1000);
		computed = row->kind == ROW_LOSS_999 ? result.loss[999] : result.parameters[atoi(row->name)];
		cl_optimize_result_clear(&result);
	}
	g_test_message("%s: computed %.9g, expected %.9g ± %g (diff %.3g)", row->path, computed, row->expected,
				   row->tolerance, computed - row->expected);
	if (!(fabs(computed - row->expected) <= row->tolerance))
		g_test_fail_printf("%s %s: computed %.9g, expected %.9g ± %g", row->backend, row->path, computed,
						   row->expected, row->tolerance);
	cl_scene_free(s);
}

/* The chaotic row has no expected value; it must still run and stay finite. */
static void test_pbd_friction_endpoint(void)
{
	ClScene *s = cl_test_task2(0.1);
	ClOptimizeResult result;
	g_assert_true(cl_optimize(s, cl_test_backend("pbd-warp"), NULL, NULL, NULL, &result));
	g_test_message("Table 4 PBD endpoint (chaotic, paper 10.3663, -3.9202): %.7g, %.7g, loss %.6g; "
				   "initial loss %.8g (notebook 10.776179)",
				   result.parameters[0], result.parameters[1], result.loss[999], result.loss[0]);
	g_assert_true(isfinite(result.parameters[0]) && isfinite(result.parameters[1]));
	g_assert_cmpfloat_with_epsilon(result.loss[0], 10.776179, 1e-5);
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

/* ------------------------------------------- the two velocity-pass variants */

/* Tasks 1 and 3 give the same trajectory bits with Task 2's swapped velocity
 * roles and with their own as-named ones (in every contact both normal
 * velocities approach, where the two formulas coincide), and the same
 * gradient up to double rounding in the recorded Jacobians. */
static void test_pbd_variants_agree(void)
{
	int backend = cl_test_backend("pbd-warp");
	for (Task task = TASK1; task <= TASK3; task += 3) {
		double *states[2], gradient[2][2 * CL_BALL_STATE];
		int ns = 0, steps = 0;
		for (int variant = 0; variant < 2; variant++) {
			ClScene *s = task_scene(task);
			ns = cl_state_size(s);
			steps = s->steps;
			cl_test_set_param(s, "pbd-warp", "velocity_inputs", variant);
			ClRollout *r = cl_rollout_new(s, backend);
			g_assert_true(cl_rollout_run(r, NULL, NULL, true));
			states[variant] = g_memdup2(cl_rollout_states(r), sizeof(double) * (size_t)((steps + 1) * ns));
			cl_rollout_gradient(r, gradient[variant], NULL);
			cl_rollout_free(r);
			cl_scene_free(s);
		}
		g_assert_true(memcmp(states[0], states[1], sizeof(double) * (size_t)((steps + 1) * ns)) == 0);
		for (int k = 0; k < ns; k++)
			g_assert_cmpfloat_with_epsilon(gradient[0][k], gradient[1][k], 1e-13);
		g_free(states[0]);
		g_free(states[1]);
	}
	/* but they differ for a ball that starts below the surface and approaches */
	ClScene *s = cl_test_task1();
	s->balls[0].position = (ClVec2){0, 0.099};
	s->balls[0].velocity = (ClVec2){0, -1};
	double y[2];
	for (int variant = 0; variant < 2; variant++) {
		cl_test_set_param(s, "pbd-warp", "velocity_inputs", variant);
		ClRollout *r = cl_rollout_new(s, backend);
		cl_rollout_run(r, NULL, NULL, false);
		y[variant] = cl_rollout_states(r)[4 + 3];
		cl_rollout_free(r);
	}
	g_test_message("outgoing v_y from below the surface: swapped %.6g, as-named %.6g", y[0], y[1]);
	g_assert_true(y[0] != y[1]);
	cl_scene_free(s);
}

/* The wall-friction bug: a ball touching only the wall gets no wall friction;
 * without the bug it does. */
static void test_pbd_wall_tangent_bug(void)
{
	int backend = cl_test_backend("pbd-warp");
	ClScene *s = cl_test_task2(0.1);
	s->steps = 1;
	s->duration = 1.0 / 480;
	s->balls[0].position = (ClVec2){1.645, 1.0};
	s->balls[0].velocity = (ClVec2){5, 3};
	double vy[2];
	for (int bug = 0; bug < 2; bug++) {
		cl_test_set_param(s, "pbd-warp", "wall_tangent_bug", bug);
		ClRollout *r = cl_rollout_new(s, backend);
		g_assert_true(cl_rollout_run(r, NULL, NULL, false));
		g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
		vy[bug] = cl_rollout_states(r)[4 + 3];
		cl_rollout_free(r);
	}
	double vy_free = 3 - 9.8f * (float)(1.0 / 480);
	g_test_message("wall contact v_y: bug %.7g, fixed %.7g, no friction %.7g", vy[1], vy[0], vy_free);
	g_assert_cmpfloat(fabs(vy[1] - vy_free), <, 1e-5);
	g_assert_cmpfloat(vy[0], <, vy_free - 0.1);
	cl_scene_free(s);
}

/* ------------------------------------------------ step Jacobian against FD */

/* One step from s0 with controls u0 (float64): the recorded Jacobian's
 * columns (by forward mode) against central differences of the step. */
static void check_step_jacobian(ClScene *s, const char *backend_id, const double *s0, const double *u0)
{
	int backend = cl_test_backend(backend_id);
	set_precision(s, backend_id, F64);
	int ns = cl_state_size(s), nu = 2 * s->ball_count;
	ClRollout *r = cl_rollout_new(s, backend);
	cl_rollout_run(r, s0, u0, true);
	g_assert_cmpint(cl_rollout_status(r)->code, ==, CL_STATUS_OK);
	g_assert_cmpint(cl_rollout_event_count(r), >, 0);
	double *ds = g_new0(double, ns), *du = g_new0(double, nu), *column = g_new0(double, ns);
	double *plus = g_new0(double, ns), *minus = g_new0(double, ns), *si = g_new0(double, ns), *ui = g_new0(double, nu);
	const double h = 1e-7;
	double worst = 0.0;
	for (int k = 0; k < ns + nu; k++) {
		memset(ds, 0, sizeof(double) * (size_t)ns);
		memset(du, 0, sizeof(double) * (size_t)nu);
		if (k < ns)
			ds[k] = 1.0;
		else
			du[k - ns] = 1.0;
		cl_rollout_jvp(r, ds, du, column);
		for (int sign = -1; sign <= 1; sign += 2) {
			memcpy(si, s0, sizeof(double) * (size_t)ns);
			memcpy(ui, u0, sizeof(double) * (size_t)nu);
			if (k < ns)
				si[k] += sign * h;
			else
				ui[k - ns] += sign * h;
			ClRollout *p = cl_rollout_new(s, backend);
			cl_rollout_run(p, si, ui, false);
			memcpy(sign > 0 ? plus : minus, cl_rollout_states(p) + ns, sizeof(double) * (size_t)ns);
			cl_rollout_free(p);
		}
		for (int i = 0; i < ns; i++) {
			double fd = (plus[i] - minus[i]) / (2 * h);
			double error = fabs(fd - column[i]) / (1.0 + fabs(fd));
			worst = fmax(worst, error);
			if (error > 1e-5)
				g_test_fail_printf("%s: d s'[%d] / d in[%d]: tape %.9g, FD %.9g", backend_id, i, k, column[i], fd);
		}
	}
	g_test_message("%s: worst relative step-Jacobian error %.2g", backend_id, worst);
	g_free(ds);
	g_free(du);
	g_free(column);
	g_free(plus);
	g_free(minus);
	g_free(si);
	g_free(ui);
	cl_rollout_free(r);
}

/* Three balls, a tilted wall and the ground, friction, damping, masses: one
 * step in which ball 0 penetrates both walls and ball 1, and ball 1 touches
 * ball 2, so the velocity pass reaches two contacts away. */
static ClScene *step_scene(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0 / 100;
	s->steps = 1;
	s->gravity = (ClVec2){0.3, -9.8};
	s->elasticity = 0.8;
	s->friction = 0.3;
	ClWall *ground = cl_scene_add_wall(s, "ground");
	ground->normal = (ClVec2){0, 1};
	ClWall *tilted = cl_scene_add_wall(s, "tilted");
	tilted->normal = (ClVec2){-0.6, 0.8};
	tilted->point = (ClVec2){1.0, 0.0};
	const double masses[3] = {1.0, 2.0, 0.5};
	for (int i = 0; i < 3; i++) {
		char id[8];
		g_snprintf(id, sizeof id, "b%d", i);
		ClBall *b = cl_scene_add_ball(s, id);
		b->radius = 0.2;
		b->mass = masses[i];
	}
	return s;
}

static void test_step_jacobian_compliant(void)
{
	ClScene *s = step_scene();
	cl_test_set_param(s, "compliant-warp", "damping", 5);
	/* ball 0 in the corner, 1 overlapping 0 and 2 (start-of-step contacts) */
	const double s0[12] = {0.25, 0.17, 1.3, -0.7, 0.55, 0.35, -0.4, 0.2, 0.85, 0.55, 0.3, -0.9};
	const double u0[6] = {0.5, -0.25, 1.0, 0.3, -0.2, 0.1};
	check_step_jacobian(s, "compliant-warp", s0, u0);
	cl_scene_free(s);
}

static void test_step_jacobian_pbd(void)
{
	ClScene *s = step_scene();
	/* predicted positions penetrate: ball 0 the ground and ball 1, ball 1 ball 2 */
	const double s0[12] = {0.0, 0.205, 2.0, -3.0, 0.4, 0.21, -3.5, 0.5, 0.79, 0.24, 0.5, 0.2};
	const double u0[6] = {0.5, -0.25, 1.0, 0.3, -0.2, 0.1};
	for (int variant = 0; variant < 2; variant++) {
		for (int bug = 0; bug < 2; bug++) {
			cl_test_set_param(s, "pbd-warp", "velocity_inputs", variant);
			cl_test_set_param(s, "pbd-warp", "wall_tangent_bug", bug);
			check_step_jacobian(s, "pbd-warp", s0, u0);
		}
	}
	cl_scene_free(s);
}

/* ---------------------------------------------------- general scenes */

/* A scene with three balls, two walls, gravity and a control, with contacts
 * against walls and between balls. */
static ClScene *general_scene(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0;
	s->steps = 400;
	s->gravity = (ClVec2){0.0, -9.8};
	s->elasticity = 0.9;
	ClWall *ground = cl_scene_add_wall(s, "ground");
	ground->normal = (ClVec2){0, 1};
	ClWall *slope = cl_scene_add_wall(s, "slope");
	slope->normal = (ClVec2){-0.8, 0.6};
	slope->point = (ClVec2){2.0, 0.0};
	const double data[3][7] = {
		/* radius, mass, px, py, vx, vy */
		{0.2, 1.0, -0.5, 0.6, 2.5, 0.5, 0},
		{0.15, 0.7, 0.6, 0.4, -0.5, 1.0, 0},
		{0.25, 1.6, 1.2, 1.2, 0.3, -1.0, 0},
	};
	for (int i = 0; i < 3; i++) {
		char id[8];
		g_snprintf(id, sizeof id, "b%d", i);
		ClBall *b = cl_scene_add_ball(s, id);
		b->radius = data[i][0];
		b->mass = data[i][1];
		b->position = (ClVec2){data[i][2], data[i][3]};
		b->velocity = (ClVec2){data[i][4], data[i][5]};
	}
	s->balls[0].control_kind = CL_CONTROL_CONSTANT;
	s->balls[0].control_constant = (ClVec2){1.0, 2.0};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){1.0, 1.0};
	ClLossTerm *c = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	c->ball = 2;
	c->axis = 0;
	ClLossTerm *e = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	e->ball = 0;
	e->weight = 0.01;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_scene_validate(s, message, sizeof message));
	return s;
}

static void count_contacts(const ClRollout *r, int *walls, int *pairs)
{
	*walls = *pairs = 0;
	for (int k = 0; k < cl_rollout_event_count(r); k++)
		(cl_rollout_events(r)[k].other < 0 ? walls : pairs)[0]++;
}

static void test_general_scene(gconstpointer data)
{
	const char *backend_id = data;
	int backend = cl_test_backend(backend_id);
	for (double friction = 0; friction <= 0.2; friction += 0.2) {
		for (int precision = F32; precision <= F64; precision++) {
			ClScene *s = general_scene();
			s->friction = friction;
			set_precision(s, backend_id, precision);
			double loss[2], gradient[2][12];
			int ns = cl_state_size(s);
			for (int run = 0; run < 2; run++) {
				ClRollout *r = cl_rollout_new(s, backend);
				g_assert_true(cl_rollout_run(r, NULL, NULL, true));
				const double *states = cl_rollout_states(r);
				for (int i = 0; i < (s->steps + 1) * ns; i++)
					g_assert_true(isfinite(states[i]));
				int walls, pairs;
				count_contacts(r, &walls, &pairs);
				g_assert_cmpint(walls, >, 0);
				g_assert_cmpint(pairs, >, 0);
				loss[run] = cl_rollout_loss(r);
				cl_rollout_gradient(r, gradient[run], NULL);
				for (int i = 0; i < ns; i++)
					g_assert_true(isfinite(gradient[run][i]));
				cl_rollout_free(r);
			}
			g_assert_true(memcmp(loss, loss + 1, sizeof loss[0]) == 0);
			g_assert_true(memcmp(gradient[0], gradient[1], sizeof(double) * (size_t)ns) == 0);
			cl_scene_free(s);
		}
	}
}

/* Smooth case (no damping, whose onset jumps; float64): every initial-state
 * gradient and a control gradient equal central differences of the loss. */
static void test_general_compliant_fd(void)
{
	ClScene *s = general_scene();
	s->friction = 0.1;
	set_precision(s, "compliant-warp", F64);
	int backend = cl_test_backend("compliant-warp");
	const char *names[] = {"b0.position.x", "b0.position.y", "b0.velocity.x", "b0.velocity.y", "b1.position.x",
						   "b1.position.y", "b1.velocity.x", "b1.velocity.y", "b2.position.x", "b2.position.y",
						   "b2.velocity.x", "b2.velocity.y", "b0.control[30].x", "b1.control[100].y"};
	for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
		ClParam p;
		g_assert_true(cl_param_parse(s, names[k], &p, NULL, 0));
		double adjoint = adjoint_gradient(s, backend, names[k]);
		ClStatus status;
		double fd = cl_finite_difference(s, backend, &p, 1e-5, &status);
		g_assert_cmpint(status.code, ==, CL_STATUS_OK);
		double error = fabs(adjoint - fd) / fmax(fabs(fd), 1e-3);
		g_test_message("%s: adjoint %.10g, FD %.10g, relative %.2g", names[k], adjoint, fd, error);
		if (error > 1e-5)
			g_test_fail_printf("%s: adjoint %.10g, FD %.10g", names[k], adjoint, fd);
	}
	cl_scene_free(s);
}

/* ---------------------------------------------------------- divergence */

static void test_compliant_divergence(void)
{
	ClScene *s = cl_test_task1();
	cl_test_set_param(s, "compliant-warp", "stiffness", 1e9);
	cl_scene_set_steps(s, 48);
	ClRollout *r = cl_rollout_new(s, cl_test_backend("compliant-warp"));
	g_assert_false(cl_rollout_run(r, NULL, NULL, true));
	const ClStatus *status = cl_rollout_status(r);
	g_test_message("%s at step %d: %s", cl_status_name(status->code), status->step, status->message);
	g_assert_cmpint(status->code, ==, CL_STATUS_DIVERGED);
	/* y_n − r = 0.9 − 2·n/48 first ≤ 0 at n = 22 */
	g_assert_cmpint(status->step, ==, 22);
	g_assert_nonnull(strstr(status->message, "step 22"));
	g_assert_nonnull(strstr(status->message, "unstable"));
	g_assert_true(isnan(cl_rollout_loss(r)));
	for (int i = 0; i <= cl_rollout_steps_done(r) * 4 + 3; i++)
		g_assert_true(isfinite(cl_rollout_states(r)[i]));
	cl_rollout_free(r);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (size_t k = 0; k < G_N_ELEMENTS(rows); k++)
		g_test_add_data_func(rows[k].path, &rows[k], test_row);
	g_test_add_func("/warp/table4/pbd/endpoint-chaotic", test_pbd_friction_endpoint);
	g_test_add_func("/warp/pbd/variants-agree-on-tasks", test_pbd_variants_agree);
	g_test_add_func("/warp/pbd/wall-tangent-bug", test_pbd_wall_tangent_bug);
	g_test_add_func("/warp/step-jacobian/compliant", test_step_jacobian_compliant);
	g_test_add_func("/warp/step-jacobian/pbd", test_step_jacobian_pbd);
	g_test_add_data_func("/warp/general/compliant", "compliant-warp", test_general_scene);
	g_test_add_data_func("/warp/general/pbd", "pbd-warp", test_general_scene);
	g_test_add_func("/warp/general/compliant-fd", test_general_compliant_fd);
	g_test_add_func("/warp/divergence", test_compliant_divergence);
	return g_test_run();
}
