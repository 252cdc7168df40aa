/* Scene model, named parameters, validation messages and limits, tape
 * sweeps, the memory a rollout predicts, holds and may hold. */
#define _DEFAULT_SOURCE /* setrlimit */

#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_validate_messages(void)
{
	char message[CL_MESSAGE_MAX];
	ClScene *s = cl_test_task3();
	g_assert_true(cl_scene_validate(s, message, sizeof message));
	s->balls[1].radius = -1;
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_cmpstr(message, ==, "balls[1].radius: must be positive and finite");
	s->balls[1].radius = 0.2;
	s->balls[1].position = (ClVec2){-2.1, -2.1};
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "overlaps ball \"ball1\""));
	cl_scene_free(s);

	s = cl_test_task1();
	s->balls[0].position.y = 0.05;
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "overlaps wall \"ground\""));
	cl_scene_free(s);
}

/* Counts, lengths and sizes relative to the scene's extent: absurd scenes
 * are refused with the limit in the message. */
static void test_validate_limits(void)
{
	char message[CL_MESSAGE_MAX];
	ClScene *s = cl_test_task1();
	s->balls[0].position = (ClVec2){-1e308, 1e308};
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_cmpstr(message, ==, "balls[0].position: (-1e+308, 1e+308) is beyond ±1e+06");
	s->balls[0].position = (ClVec2){-1, 1};
	s->balls[0].velocity.x = -3e6;
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "balls[0].velocity: (-3e+06, -2) is beyond ±1e+06"));
	s->balls[0].velocity.x = 2;
	s->walls[0].point.y = -2e6;
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "walls[0].point:"));
	/* a ball of 10 µm in a scene that reaches 1000 km */
	s->walls[0].point.y = -1e6;
	s->balls[0].radius = 1e-5;
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "balls[0].radius: 1e-05 is less than 1e-06 of the scene's extent 1e+06"));
	s->walls[0].point.y = 0;
	g_assert_true(cl_scene_validate(s, message, sizeof message)); /* the same ball in a 1.4 m scene */
	cl_scene_free(s);

	s = cl_scene_new();
	for (int i = 0; i <= CL_MAX_WALLS; i++) {
		char id[16];
		g_snprintf(id, sizeof id, "w%d", i);
		cl_scene_add_wall(s, id)->point.y = -1.0 - i;
	}
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_cmpstr(message, ==, "walls: 1001 walls, more than the limit of 1000");
	cl_scene_free(s);

	s = cl_test_task3();
	g_assert_true(cl_scene_set_steps(s, CL_MAX_STEPS)); /* 2 balls × 10⁷ steps: at the limit */
	g_assert_true(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(cl_scene_add_ball(s, "third"));
	s->balls[2].position = (ClVec2){5, 5};
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_cmpstr(message, ==, "steps: 10000000 steps × 3 balls is more than the limit of 20000000 ball-steps");
	cl_scene_free(s);
}

/* Three balls in free flight, a wall far away: no contact in T = 1. */
static ClScene *free_flight(void)
{
	ClScene *s = cl_scene_new();
	s->steps = 100;
	s->gravity.y = -1;
	for (int i = 0; i < 3; i++) {
		char id[8];
		g_snprintf(id, sizeof id, "b%d", i);
		ClBall *b = cl_scene_add_ball(s, id);
		b->position = (ClVec2){3.0 * i, 10.0};
		b->velocity = (ClVec2){0.5, 0.0};
	}
	s->balls[0].control_kind = CL_CONTROL_CONSTANT;
	s->balls[0].control_constant = (ClVec2){1.0, 0.0};
	cl_scene_add_wall(s, "ground")->point.y = -100.0;
	return s;
}

/* The prediction is exact for a run without contacts, for every backend:
 * a backend that changes what it records must change its tape_blocks_per_ball. */
static void test_memory_prediction(void)
{
	ClScene *s = free_flight();
	for (int b = 0; b < cl_backend_count(); b++) {
		ClRollout *r = cl_rollout_new(s, b);
		g_assert_cmpuint(cl_rollout_memory(r), ==, cl_rollout_bytes(s, b, false));
		g_assert_true(cl_rollout_run(r, NULL, NULL, false));
		g_assert_cmpuint(cl_rollout_memory(r), ==, cl_rollout_bytes(s, b, false));
		g_assert_true(cl_rollout_run(r, NULL, NULL, true));
		g_assert_cmpint(cl_rollout_event_count(r), ==, 0);
		if (cl_rollout_memory(r) != cl_rollout_bytes(s, b, true))
			g_test_fail_printf("%s: a recorded run without contacts holds %zu bytes, %zu predicted",
							   cl_backend_info(b)->id, cl_rollout_memory(r), cl_rollout_bytes(s, b, true));
		cl_rollout_free(r);
	}
	cl_scene_free(s);
}

/* Past its budget a run stops with memory-limit: before the first step
 * when the trajectory or the least its recording takes does not fit, at
 * the step whose impacts pass it otherwise; never more than the budget. */
static void test_memory_budget(void)
{
	ClScene *s = free_flight();
	int exact = cl_test_backend("exact"), impulse = cl_test_backend("impulse");
	s->memory_budget = cl_rollout_bytes(s, exact, false) - 1;
	ClRollout *r = cl_rollout_new(s, exact);
	g_assert_false(cl_rollout_run(r, NULL, NULL, false));
	const ClStatus *status = cl_rollout_status(r);
	g_assert_cmpint(status->code, ==, CL_STATUS_MEMORY_LIMIT);
	g_assert_cmpint(status->step, ==, -1);
	g_assert_nonnull(strstr(status->message, "a run of 100 steps × 3 balls needs"));
	g_assert_nonnull(strstr(status->message, "more than the memory budget of"));
	g_assert_cmpint(cl_rollout_steps_done(r), ==, 0);
	g_assert_cmpfloat(cl_rollout_states(r)[4], ==, 3.0); /* the initial state reads */
	g_assert_true(isnan(cl_rollout_loss(r)));
	double g_s0[12], g_u[600];
	cl_rollout_gradient(r, g_s0, g_u);
	g_assert_true(isnan(g_s0[0]) && isnan(g_u[599]));
	cl_rollout_free(r);

	/* a plain run fits, its recording does not */
	s->memory_budget = cl_rollout_bytes(s, impulse, true) - 1;
	r = cl_rollout_new(s, impulse);
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_false(cl_rollout_run(r, NULL, NULL, true));
	g_assert_cmpint(cl_rollout_status(r)->code, ==, CL_STATUS_MEMORY_LIMIT);
	g_assert_nonnull(strstr(cl_rollout_status(r)->message, "recording a run of 100 steps × 3 balls needs"));
	g_assert_cmpuint(cl_rollout_memory(r), <=, s->memory_budget);
	cl_rollout_free(r);
	cl_scene_free(s);

	/* a ball between two walls 0.2 apart at e = 1 whose impacts never end:
	 * the impact budget raised out of reach, the memory budget stops it */
	s = cl_scene_new();
	s->duration = 10;
	s->steps = 1000;
	ClBall *ball = cl_scene_add_ball(s, "ball");
	ball->radius = 0.05;
	ball->velocity.x = 1e4;
	ClWall *wall = cl_scene_add_wall(s, "left");
	*wall = (ClWall){.id = "left", .point = {-0.1, 0}, .normal = {1, 0}};
	wall = cl_scene_add_wall(s, "right");
	*wall = (ClWall){.id = "right", .point = {0.1, 0}, .normal = {-1, 0}};
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_scene_set_backend_param(s, exact, "max_impacts", 1e9, message, sizeof message));
	g_assert_true(cl_scene_set_backend_param(s, exact, "max_events", 1e6, message, sizeof message));
	s->memory_budget = cl_rollout_bytes(s, exact, true) + (4 << 20);
	for (int record = 0; record < 2; record++) {
		r = cl_rollout_new(s, exact);
		g_assert_false(cl_rollout_run(r, NULL, NULL, record));
		status = cl_rollout_status(r);
		g_assert_cmpint(status->code, ==, CL_STATUS_MEMORY_LIMIT);
		g_assert_cmpint(status->step, >=, 0);
		g_assert_nonnull(strstr(status->message, "is used up at t = "));
		g_assert_cmpuint(cl_rollout_memory(r), <=, s->memory_budget);
		/* the contacts filled the budget: the limit, not a fault, stopped it */
		g_assert_cmpuint(cl_rollout_memory(r), >, s->memory_budget / 2);
		g_test_message("%s run stopped at step %d after %d contacts: %s", record ? "recorded" : "plain", status->step,
					   cl_rollout_event_count(r), status->message);
		cl_rollout_free(r);
	}
	cl_scene_free(s);
}

/* The system refusing memory (here an address-space limit) is a status, not
 * an abort. Not under AddressSanitizer, whose shadow memory needs more
 * address space than the limit leaves. */
static void test_out_of_memory(void)
{
#if defined(__SANITIZE_ADDRESS__)
	g_test_skip("an address-space limit and AddressSanitizer do not mix");
#else
	pid_t pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		ClScene *s = cl_test_task3();
		if (!cl_scene_set_steps(s, 5000000))
			_exit(3);
		s->memory_budget = SIZE_MAX;
		struct rlimit limit = {256 << 20, 256 << 20};
		setrlimit(RLIMIT_AS, &limit);
		ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
		if (!r || cl_rollout_run(r, NULL, NULL, true))
			_exit(4);
		const ClStatus *status = cl_rollout_status(r);
		_exit(status->code == CL_STATUS_MEMORY_LIMIT && strstr(status->message, "out of memory") ? 0 : 5);
	}
	int wait_status;
	g_assert_cmpint(waitpid(pid, &wait_status, 0), ==, pid);
	g_assert_true(WIFEXITED(wait_status));
	g_assert_cmpint(WEXITSTATUS(wait_status), ==, 0);
#endif
}

static void test_params(void)
{
	ClScene *s = cl_test_task3();
	ClParam p;
	char message[CL_MESSAGE_MAX], name[CL_NAME_MAX];
	g_assert_true(cl_param_parse(s, "ball1.control[7].y", &p, message, sizeof message));
	g_assert_cmpint(p.target, ==, CL_PARAM_CONTROL);
	g_assert_cmpint(p.step, ==, 7);
	g_assert_cmpint(p.axis, ==, 1);
	g_assert_cmpfloat(cl_param_get(s, &p), ==, 3.0);
	cl_param_set(s, &p, 5.0);
	g_assert_cmpint(s->balls[0].control_kind, ==, CL_CONTROL_SEQUENCE);
	g_assert_cmpfloat(s->balls[0].control_sequence[6].y, ==, 3.0);
	g_assert_cmpfloat(s->balls[0].control_sequence[7].y, ==, 5.0);
	cl_param_name(s, &p, name, sizeof name);
	g_assert_cmpstr(name, ==, "ball1.control[7].y");
	g_assert_false(cl_param_parse(s, "ball3.position.x", &p, message, sizeof message));
	g_assert_nonnull(strstr(message, "no ball"));
	g_assert_false(cl_param_parse(s, "ball1.control[480].x", &p, message, sizeof message));
	g_assert_true(cl_param_parse(s, "elasticity", &p, message, sizeof message));

	/* a parameter parsed for one scene may not fit another (the heatmap view's
	 * sweep after Open of a smaller scene): fits says so before get or set */
	ClParam velocity, control;
	g_assert_true(cl_param_parse(s, "ball2.velocity.x", &velocity, message, sizeof message));
	g_assert_true(cl_param_parse(s, "ball1.control[400].x", &control, message, sizeof message));
	g_assert_true(cl_param_fits(s, &velocity) && cl_param_fits(s, &control) && cl_param_fits(s, &p));
	ClScene *one_ball = cl_test_task1();
	g_assert_false(cl_param_fits(one_ball, &velocity));
	g_assert_true(cl_param_fits(one_ball, &control)); /* its ball1 has 480 steps too */
	g_assert_true(cl_param_fits(one_ball, &p));
	cl_scene_free(one_ball);
	cl_scene_set_steps(s, 240);
	g_assert_false(cl_param_fits(s, &control));
	g_assert_true(cl_param_fits(s, &velocity));
	cl_scene_free(s);
}

/* A wall's point and angle are parameters like any other: named by the
 * wall's id, enumerated, read and written; the angle turns the normal. */
static void test_params_walls(void)
{
	ClScene *s = cl_test_task1(); /* wall "ground": point (0, 0), normal (0, 1) */
	ClParam p, x, y;
	char message[CL_MESSAGE_MAX], name[CL_NAME_MAX];
	g_assert_true(cl_param_parse(s, "ground.angle", &p, message, sizeof message));
	g_assert_cmpint(p.target, ==, CL_PARAM_WALL_ANGLE);
	g_assert_cmpint(p.wall, ==, 0);
	g_assert_cmpint(p.ball, ==, -1);
	g_assert_cmpfloat(cl_param_get(s, &p), ==, 90.0);
	/* the angle read back is set without a change, bit for bit */
	cl_param_set(s, &p, cl_param_get(s, &p));
	g_assert_cmpfloat(s->walls[0].normal.x, ==, 0.0);
	g_assert_cmpfloat(s->walls[0].normal.y, ==, 1.0);
	/* multiples of 90° are exact, others within rounding */
	static const double angles[] = {0.0, 180.0, -90.0, 270.0, 450.0, 30.0, -135.0, 1e-7, 123.456};
	for (size_t k = 0; k < G_N_ELEMENTS(angles); k++) {
		cl_param_set(s, &p, angles[k]);
		double a = angles[k] * (3.14159265358979323846 / 180.0);
		g_assert_cmpfloat_with_epsilon(s->walls[0].normal.x, cos(a), 1e-15);
		g_assert_cmpfloat_with_epsilon(s->walls[0].normal.y, sin(a), 1e-15);
		g_assert_cmpfloat_with_epsilon(hypot(s->walls[0].normal.x, s->walls[0].normal.y), 1.0, 1e-15);
		double back = cl_param_get(s, &p);
		double turns = (back - angles[k]) / 360.0;
		g_assert_cmpfloat_with_epsilon(turns, nearbyint(turns), 1e-14);
		double before = s->walls[0].normal.x;
		cl_param_set(s, &p, back);
		g_assert_cmpfloat(s->walls[0].normal.x, ==, before);
	}
	cl_param_set(s, &p, 180.0);
	g_assert_cmpfloat(s->walls[0].normal.x, ==, -1.0);
	g_assert_cmpfloat(s->walls[0].normal.y, ==, 0.0);
	cl_param_set(s, &p, -90.0);
	g_assert_cmpfloat(s->walls[0].normal.y, ==, -1.0);
	cl_param_name(s, &p, name, sizeof name);
	g_assert_cmpstr(name, ==, "ground.angle");

	g_assert_true(cl_param_parse(s, "ground.point.x", &x, message, sizeof message));
	g_assert_true(cl_param_parse(s, "ground.point.y", &y, message, sizeof message));
	g_assert_cmpint(y.target, ==, CL_PARAM_WALL_POINT);
	g_assert_cmpint(y.axis, ==, 1);
	cl_param_set(s, &y, -0.25);
	g_assert_cmpfloat(s->walls[0].point.y, ==, -0.25);
	g_assert_cmpfloat(cl_param_get(s, &y), ==, -0.25);
	g_assert_cmpfloat(cl_param_get(s, &x), ==, 0.0);
	cl_param_name(s, &y, name, sizeof name);
	g_assert_cmpstr(name, ==, "ground.point.y");
	g_assert_false(cl_param_equal(&x, &y));
	g_assert_true(cl_param_fits(s, &p));

	/* every enumerated name parses back to itself */
	int count;
	ClParam *all = cl_scene_params_new(s, CL_PARAMS_SWEEPABLE, -1, &count);
	int walls = 0;
	for (int k = 0; k < count; k++) {
		ClParam q;
		cl_param_name(s, &all[k], name, sizeof name);
		g_assert_true(cl_param_parse(s, name, &q, message, sizeof message));
		g_assert_true(cl_param_equal(&q, &all[k]));
		walls += all[k].target == CL_PARAM_WALL_POINT || all[k].target == CL_PARAM_WALL_ANGLE;
	}
	g_assert_cmpint(walls, ==, 3);
	g_assert_cmpint(all[count - 1].target, ==, CL_PARAM_WALL_ANGLE);
	free(all);
	g_assert_cmpint(cl_scene_params(s, CL_PARAMS_TABLE, -1, NULL, 0), ==, 6); /* the table is unchanged */

	g_assert_false(cl_param_parse(s, "floor.angle", &p, message, sizeof message));
	g_assert_nonnull(strstr(message, "no wall with this id"));
	g_assert_false(cl_param_parse(s, "ground.point.z", &p, message, sizeof message));
	g_assert_nonnull(strstr(message, "the axis must be x or y"));
	g_assert_false(cl_param_parse(s, "ball.angle", &p, message, sizeof message));
	g_assert_nonnull(strstr(message, "no wall with this id"));

	/* a NaN angle leaves no unit normal: the scene is refused, saying where */
	g_assert_true(cl_param_parse(s, "ground.angle", &p, message, sizeof message));
	cl_param_set(s, &p, NAN);
	g_assert_false(cl_scene_validate(s, message, sizeof message));
	g_assert_nonnull(strstr(message, "walls[0].normal: must be finite"));
	ClScene *t = cl_test_task1();
	g_assert_true(cl_param_parse(t, "ground.point.x", &x, message, sizeof message));
	cl_param_set(t, &x, NAN);
	g_assert_false(cl_scene_validate(t, message, sizeof message));
	g_assert_nonnull(strstr(message, "walls[0].point"));
	cl_scene_free(t);
	cl_scene_free(s);
}

static void test_set_steps_resamples(void)
{
	ClScene *s = cl_test_task3();
	double *u = g_new0(double, 2 * s->steps);
	for (int n = 0; n < s->steps; n++)
		u[2 * n] = n;
	cl_scene_set_control_sequence(s, 0, u);
	cl_scene_set_steps(s, 240);
	g_assert_cmpint(s->steps, ==, 240);
	/* new interval n covers old intervals 2n, 2n+1: midpoint falls in 2n+1 */
	g_assert_cmpfloat(s->balls[0].control_sequence[10].x, ==, 21.0);
	ClScene *c = cl_scene_copy(s);
	g_assert_true(cl_scene_equal(s, c));
	c->balls[0].control_sequence[3].y = 1;
	g_assert_false(cl_scene_equal(s, c));
	cl_scene_free(c);
	cl_scene_free(s);
	g_free(u);
}

/* A hand-built tape: two balls, one drift and one coupling block. The adjoint
 * must be the transpose of the forward sweep: <λ, F δ> = <Fᵀλ, δ>. */
static void test_tape_transpose(void)
{
	double inverse_mass[2] = {1.0, 0.5};
	ClTape tape;
	ClMemoryAccount memory = {.limit = 1 << 20};
	g_assert_true(cl_tape_init(&tape, 2, inverse_mass, 1, &memory));
	cl_tape_begin_step(&tape, 0);
	cl_tape_drift(&tape, 0.3);
	cl_tape_factor(&tape);
	double *a = cl_tape_a(&tape, 1, 0);
	double *d = cl_tape_a(&tape, 1, 1);
	double *b = cl_tape_b(&tape, 1, 0);
	enum { N = CL_BALL_STATE };
	for (int i = 0; i < N * N; i++) {
		a[i] = 0.1 * i - 0.4;
		d[i] = (i % (N + 1) == 0) ? 1.0 : 0.05 * i;
	}
	for (int i = 0; i < 2 * N; i++)
		b[i] = 0.3 - 0.07 * i;
	cl_tape_end_step(&tape, 0);
	double ds[2 * N], lambda[2 * N], du[4] = {0.7, -0.2, 1.1, 0.4}, g_u[4] = {0};
	for (int i = 0; i < 2 * N; i++) {
		ds[i] = 1.0 - 0.6 * i + 0.1 * i * i;
		lambda[i] = 0.3 - 0.2 * i + 0.05 * i * i;
	}
	double fwd[2 * N], adj[2 * N], scratch[2 * N];
	memcpy(fwd, ds, sizeof fwd);
	cl_tape_forward_step(&tape, 0, fwd, du, scratch);
	memcpy(adj, lambda, sizeof adj);
	cl_tape_adjoint_step(&tape, 0, adj, g_u, scratch);
	double lhs = 0, rhs = 0;
	for (int i = 0; i < 2 * N; i++) {
		lhs += lambda[i] * fwd[i];
		rhs += adj[i] * ds[i];
	}
	for (int i = 0; i < 4; i++)
		rhs += g_u[i] * du[i];
	g_assert_cmpfloat_with_epsilon(lhs, rhs, 1e-12);
	cl_tape_release(&tape);
}

static void test_registry(void)
{
	g_assert_cmpint(cl_backend_count(), ==, 12);
	const char *ids[] = {"exact", "lcp-nimble", "convex-toi", "convex", "impulse-toi", "impulse",
						 "impulse-tds", "compliant-warp", "compliant-brax", "pbd-warp", "pbd-brax", "ncp-dojo"};
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++)
		g_assert_cmpint(cl_backend_find(ids[i]), >=, 0);
	g_assert_cmpint(cl_backend_find("nope"), ==, -1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/core/validate-messages", test_validate_messages);
	g_test_add_func("/core/validate-limits", test_validate_limits);
	g_test_add_func("/core/memory/prediction", test_memory_prediction);
	g_test_add_func("/core/memory/budget", test_memory_budget);
	g_test_add_func("/core/memory/out-of-memory", test_out_of_memory);
	g_test_add_func("/core/params", test_params);
	g_test_add_func("/core/params-walls", test_params_walls);
	g_test_add_func("/core/set-steps", test_set_steps_resamples);
	g_test_add_func("/core/tape-transpose", test_tape_transpose);
	g_test_add_func("/core/registry", test_registry);
	return g_test_run();
}
