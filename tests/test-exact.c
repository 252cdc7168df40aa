/* The exact event-driven backend against closed forms, its own finite
 * differences and forward mode, and on degenerate contacts. */
#include "core.h"
#include "tasks.h"

#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Run {
	ClRollout *rollout;
	double loss;
	ClStatusCode status;
	double *ds0; /* state size */
	double *du;  /* control size */
} Run;

static Run run_exact(const ClScene *scene, const double *u)
{
	Run r = {0};
	r.rollout = cl_rollout_new(scene, cl_test_backend("exact"));
	cl_rollout_run(r.rollout, NULL, u, true);
	r.loss = cl_rollout_loss(r.rollout);
	r.status = cl_rollout_status(r.rollout)->code;
	r.ds0 = g_new0(double, cl_state_size(scene));
	r.du = g_new0(double, cl_control_size(scene));
	cl_rollout_gradient(r.rollout, r.ds0, r.du);
	return r;
}

static void run_clear(Run *r)
{
	cl_rollout_free(r->rollout);
	g_free(r->ds0);
	g_free(r->du);
}

static void assert_close(double value, double expected, double tolerance, const char *what)
{
	if (!(fabs(value - expected) <= tolerance))
		g_error("%s: %.12g, expected %.12g ± %g", what, value, expected, tolerance);
	g_test_message("%s: %.12g (expected %.12g)", what, value, expected);
}

/* Task 1: the ball falls 0.9 to the ground (t = 0.45), rises for 0.55 s at
 * speed 2: y_N = 2r − (y0 + v0·T) = 0.2 − (1 − 2) = 1.2, the free flight
 * mirrored about y = r. */
static void test_task1(void)
{
	ClScene *s = cl_test_task1();
	Run r = run_exact(s, NULL);
	double dt = cl_scene_dt(s);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 1.2, 1e-12, "task 1 p_y,N");
	assert_close(r.ds0[1], -1.0, 1e-9, "d/p_y0");
	assert_close(r.ds0[3], -1.0, 1e-9, "d/v_y0");
	assert_close(r.du[1], -(s->duration * dt - 0.5 * dt * dt), 1e-9, "d/u_y[0]");
	assert_close(r.ds0[0], 0.0, 1e-12, "d/p_x0");
	assert_close(r.ds0[2], 0.0, 1e-12, "d/v_x0");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 1);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.45, 1e-12, "task 1 impact time");
	run_clear(&r);
	cl_scene_free(s);
}

static void test_task3_table(void)
{
	ClScene *s = cl_test_task3();
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 2.059144, 1e-6, "task 3 loss");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 1);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.6914513, 1e-7, "task 3 collision time");
	assert_close(r.ds0[0], -0.3986684165, 1e-6, "d/ball1.position.x");
	assert_close(r.ds0[CL_BALL_STATE], -0.3212531155, 1e-6, "d/ball2.position.x");
	assert_close(r.ds0[2], -0.4977906574, 1e-6, "d/ball1.velocity.x");
	assert_close(r.ds0[CL_BALL_STATE + 2], -0.2221308746, 1e-6, "d/ball2.velocity.x");
	assert_close(r.du[0], 0.0002138013, 1e-7, "d/ball1.control[0].x");
	/* the terminal part alone (§6.4): subtract the running cost 2εu·dt */
	assert_close(r.du[0] - 2.0 * 0.1 * 3.0 * cl_scene_dt(s), -0.0010362, 1e-7, "terminal part");
	run_clear(&r);
	cl_scene_free(s);
}

static void test_task2(void)
{
	ClScene *s = cl_test_task2(0.0);
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 8.316139, 1e-6, "task 2 loss");
	assert_close(r.ds0[2], -3.166272, 1e-6, "d/v_x0");
	assert_close(r.ds0[3], -0.2122295, 1e-6, "d/v_y0");
	assert_close(r.ds0[0], -5.2771, 1e-4, "d/p_x0");
	assert_close(r.ds0[1], 0.2163, 1e-4, "d/p_y0");
	assert_close(r.du[0], -0.006585, 1e-6, "d/u_x[0]");
	assert_close(r.du[1], -0.000443, 1e-6, "d/u_y[0]");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 2);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.156115, 1e-6, "ground impact");
	assert_close(cl_rollout_events(r.rollout)[1].time, 0.430, 1e-3, "wall impact");
	run_clear(&r);
	cl_scene_free(s);

	s = cl_test_task2(0.1);
	r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 11.484329, 1e-6, "task 2 friction loss");
	assert_close(r.ds0[2], -3.7879283, 1e-6, "friction d/v_x0");
	assert_close(r.ds0[3], -0.7737442, 1e-6, "friction d/v_y0");
	assert_close(r.ds0[0], -6.3132, 1e-4, "friction d/p_x0");
	assert_close(r.ds0[1], -0.2288, 1e-4, "friction d/p_y0");
	assert_close(r.du[0], -0.007878, 1e-6, "friction d/u_x[0]");
	assert_close(r.du[1], -0.001611, 1e-6, "friction d/u_y[0]");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 2);
	assert_close(cl_rollout_events(r.rollout)[1].time, 0.5217, 1e-4, "friction wall impact");
	run_clear(&r);
	cl_scene_free(s);
}

/* Central differences of the backend's own forward map. */
static double fd_of(const ClScene *scene, const char *name, double h, ClStatusCode *status)
{
	ClParam param;
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, name, &param, message, sizeof message))
		g_error("%s", message);
	ClStatus st;
	double d = cl_finite_difference(scene, cl_test_backend("exact"), &param, h, &st);
	*status = st.code;
	return d;
}

/* The adjoint's value for a named initial-state or control parameter. */
static double adjoint_of(const ClScene *scene, const Run *r, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, name, &p, message, sizeof message))
		g_error("%s", message);
	if (!cl_param_has_adjoint(&p))
		g_error("%s has no adjoint", name);
	return *cl_param_slot(scene, &p, r->ds0, r->du);
	return NAN;
}

/* Every initial-state derivative and a few control ones against FD; returns
 * false (without failing) when a perturbed run is degenerate. */
static bool check_against_fd(const ClScene *scene, const Run *r, double h, double relative)
{
	char names[64][CL_NAME_MAX];
	int count = 0;
	static const char *const quantities[] = {"position.x", "position.y", "velocity.x", "velocity.y"};
	g_assert_cmpint(scene->ball_count, <=, 64 / 7);
	for (int i = 0; i < scene->ball_count; i++) {
		for (int q = 0; q < 4; q++)
			snprintf(names[count++], CL_NAME_MAX, "%s.%s", scene->balls[i].id, quantities[q]);
		int steps[3] = {0, scene->steps / 2, scene->steps - 1};
		for (int k = 0; k < 3; k++)
			snprintf(names[count++], CL_NAME_MAX, "%s.control[%d].%c", scene->balls[i].id, steps[k],
					 k == 1 ? 'y' : 'x');
	}
	for (int k = 0; k < count; k++) {
		ClStatusCode status;
		bool control = strstr(names[k], "control") != NULL;
		/* a control moves a state by about u·dt², so it needs a larger step */
		double step = control ? 100.0 * h : h;
		double fd = fd_of(scene, names[k], step, &status);
		if (status != CL_STATUS_OK)
			return false;
		double adjoint = adjoint_of(scene, r, names[k]);
		/* relative, down to the rounding noise of the difference quotient */
		double noise = 20.0 * DBL_EPSILON * fmax(fabs(r->loss), 1.0) / step;
		double tolerance = relative * fabs(fd) + noise;
		if (!(fabs(adjoint - fd) <= tolerance))
			g_error("%s, %s: adjoint %.12g, finite differences %.12g", scene->name, names[k], adjoint, fd);
	}
	return true;
}

static void test_random_fd(void)
{
	int usable = 0, tried = 0, impacts = 0;
	for (unsigned seed = 1; seed <= 24; seed++) {
		ClScene *s = cl_test_random_scene(seed, 3, 2);
		tried++;
		Run r = run_exact(s, NULL);
		if (r.status == CL_STATUS_OK && check_against_fd(s, &r, 1e-6, 1e-6)) {
			usable++;
			impacts += cl_rollout_event_count(r.rollout);
		} else {
			g_test_message("seed %u skipped: %s", seed, cl_status_name(r.status));
		}
		run_clear(&r);
		cl_scene_free(s);
	}
	g_test_message("%d of %d random scenes usable, %d impacts in them", usable, tried, impacts);
	g_assert_cmpint(usable, >=, tried * 3 / 4);
	g_assert_cmpint(impacts, >=, usable); /* the check must go through impacts */
}

/* Forward mode and the adjoint are transposes of the same recorded Jacobian. */
static void test_adjoint_vs_forward(void)
{
	for (unsigned seed = 1; seed <= 8; seed++) {
		ClScene *s = cl_test_random_scene(seed, 3, 2);
		s->friction = seed % 2 ? 0.3 : 0.0;
		Run r = run_exact(s, NULL);
		int ns = cl_state_size(s), nu = cl_control_size(s);
		double *ds0 = g_new(double, ns), *du = g_new(double, nu);
		for (int i = 0; i < ns; i++)
			ds0[i] = sin(1.3 * i + seed);
		for (int i = 0; i < nu; i++)
			du[i] = cos(0.7 * i + seed);
		double jvp = cl_rollout_jvp(r.rollout, ds0, du, NULL);
		double dot = 0.0, magnitude = 0.0;
		for (int i = 0; i < ns; i++) {
			dot += r.ds0[i] * ds0[i];
			magnitude += fabs(r.ds0[i] * ds0[i]);
		}
		for (int i = 0; i < nu; i++) {
			dot += r.du[i] * du[i];
			magnitude += fabs(r.du[i] * du[i]);
		}
		if (!(fabs(jvp - dot) <= 1e-10 * magnitude))
			g_error("seed %u: forward %.15g, adjoint %.15g", seed, jvp, dot);
		g_free(ds0);
		g_free(du);
		run_clear(&r);
		cl_scene_free(s);
	}
}

/* Friction: the Newton–Coulomb saltation (sliding and sticking, walls and
 * pairs) against FD of random scenes. */
static void test_random_fd_friction(void)
{
	int usable = 0, tried = 0;
	for (unsigned seed = 1; seed <= 16; seed++) {
		ClScene *s = cl_test_random_scene(seed, 3, 2);
		s->friction = seed % 2 ? 0.2 : 0.8; /* mostly sliding / mostly sticking */
		tried++;
		Run r = run_exact(s, NULL);
		if (r.status == CL_STATUS_OK && check_against_fd(s, &r, 1e-6, 1e-6))
			usable++;
		run_clear(&r);
		cl_scene_free(s);
	}
	g_test_message("%d of %d random friction scenes usable", usable, tried);
	g_assert_cmpint(usable, >=, tried * 3 / 4);
}

/* One step's recorded Jacobian against FD of that step, in a step with an impact. */
static void test_step_jacobian(void)
{
	const ClBackend *exact = cl_backend_get(cl_test_backend("exact"));
	int checked = 0;
	for (unsigned seed = 1; seed <= 12 && checked < 4; seed++) {
		ClScene *s = cl_test_random_scene(seed, 3, 2);
		s->friction = seed % 3 == 0 ? 0.25 : 0.0;
		Run r = run_exact(s, NULL);
		if (r.status != CL_STATUS_OK || cl_rollout_event_count(r.rollout) == 0) {
			run_clear(&r);
			cl_scene_free(s);
			continue;
		}
		int n = cl_rollout_events(r.rollout)[0].step;
		int ns = cl_state_size(s), nb = s->ball_count;
		const double *state = cl_rollout_states(r.rollout) + (size_t)n * (size_t)ns;
		double *u = g_new(double, cl_control_size(s));
		cl_scene_controls(s, u);
		const double *un = u + 2 * nb * n;
		void *workspace = exact->create(s, s->backend_params[cl_test_backend("exact")].values);
		double inverse_mass[16];
		for (int i = 0; i < nb; i++)
			inverse_mass[i] = 1.0 / s->balls[i].mass;
		ClTape tape;
		ClMemoryAccount memory = {.limit = SIZE_MAX};
		cl_tape_init(&tape, nb, inverse_mass, 1, &memory);
		ClStatus status = {.code = CL_STATUS_OK, .step = -1};
		ClStepContext ctx = {.scene = s,
							 .params = s->backend_params[cl_test_backend("exact")].values,
							 .step = n,
							 .dt = cl_scene_dt(s),
							 .tape = &tape,
							 .workspace = workspace,
							 .status = &status,
							 .rollout = r.rollout};
		double next[64], plus[64], minus[64], column[64], scratch[64], sp[64], up[32];
		cl_tape_begin_step(&tape, 0);
		exact->step(&ctx, state, un, next);
		cl_tape_end_step(&tape, 0);
		ctx.tape = NULL;
		const double h = 1e-6;
		for (int j = 0; j < ns + 2 * nb; j++) {
			memcpy(sp, state, sizeof(double) * (size_t)ns);
			memcpy(up, un, sizeof(double) * 2 * (size_t)nb);
			double *x = j < ns ? &sp[j] : &up[j - ns];
			double step = j < ns ? h : 1e-4;
			double x0 = *x;
			*x = x0 + step;
			exact->step(&ctx, sp, up, plus);
			*x = x0 - step;
			exact->step(&ctx, sp, up, minus);
			double dsv[64] = {0}, duv[32] = {0};
			if (j < ns)
				dsv[j] = 1.0;
			else
				duv[j - ns] = 1.0;
			memcpy(column, dsv, sizeof(double) * (size_t)ns);
			cl_tape_forward_step(&tape, 0, column, duv, scratch);
			for (int i = 0; i < ns; i++) {
				double fd = (plus[i] - minus[i]) / (2.0 * step);
				if (!(fabs(fd - column[i]) <= 1e-6 * fmax(1.0, fabs(fd))))
					g_error("seed %u step %d: d s'[%d]/d %s[%d]: tape %.12g, FD %.12g", seed, n, i,
							j < ns ? "s" : "u", j < ns ? j : j - ns, column[i], fd);
			}
		}
		g_assert_cmpint(status.code, ==, CL_STATUS_OK);
		checked++;
		cl_tape_release(&tape);
		exact->destroy(workspace);
		g_free(u);
		run_clear(&r);
		cl_scene_free(s);
	}
	g_assert_cmpint(checked, ==, 4);
}

/* An oblique collision of unequal balls under gravity and control. */
static ClScene *oblique_pair(double friction)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "oblique pair, friction %g", friction);
	s->duration = 1.0;
	s->steps = 100;
	s->gravity = (ClVec2){0.3, -1.0};
	s->elasticity = 0.7;
	s->friction = friction;
	ClBall *a = cl_scene_add_ball(s, "a");
	a->radius = 0.2;
	a->mass = 1.5;
	a->position = (ClVec2){-1.0, 0.05};
	a->velocity = (ClVec2){2.0, 0.3};
	a->control_kind = CL_CONTROL_CONSTANT;
	a->control_constant = (ClVec2){0.5, -0.3};
	ClBall *b = cl_scene_add_ball(s, "b");
	b->radius = 0.15;
	b->mass = 0.7;
	b->position = (ClVec2){0.2, -0.1};
	b->velocity = (ClVec2){-0.5, 0.2};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 1;
	t->target = (ClVec2){1.0, 1.0};
	ClLossTerm *c = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	c->ball = 0;
	c->axis = 1;
	return s;
}

/* The ball–ball Newton–Coulomb saltation in its three regimes. */
static void test_pair_friction(void)
{
	static const double frictions[] = {0.0, 0.05, 2.0}; /* frictionless, sliding, sticking */
	double final_b_vx[3];
	for (int k = 0; k < 3; k++) {
		ClScene *s = oblique_pair(frictions[k]);
		Run r = run_exact(s, NULL);
		g_assert_cmpint(r.status, ==, CL_STATUS_OK);
		g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 1);
		g_assert_true(check_against_fd(s, &r, 1e-6, 1e-6));
		final_b_vx[k] = cl_rollout_states(r.rollout)[CL_BALL_STATE * (s->steps * 2 + 1) + 2];
		run_clear(&r);
		cl_scene_free(s);
	}
	/* the three laws really differ */
	g_assert_cmpfloat(fabs(final_b_vx[0] - final_b_vx[1]), >, 1e-3);
	g_assert_cmpfloat(fabs(final_b_vx[1] - final_b_vx[2]), >, 1e-3);
}

static void test_two_ball_optimum(void)
{
	ClScene *s = cl_test_task3();
	double collision_time;
	double optimum = cl_two_ball_optimum(s, &collision_time);
	assert_close(optimum, 1.3965422, 1e-7, "continuous optimum");
	assert_close(collision_time, 0.683220, 1e-6, "optimal collision time");
	double *u = g_new(double, 2 * s->steps);
	g_assert_true(cl_two_ball_optimal_control(s, u));
	/* affine before the impact, zero after, equal on both axes */
	g_assert_cmpfloat(u[0], ==, u[1]);
	g_assert_cmpfloat(u[2 * (s->steps - 1)], ==, 0.0);
	cl_scene_set_control_sequence(s, 0, u);
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 1.3965844, 1e-6, "exact loss of the sampled optimal control");
	g_assert_cmpfloat(r.loss, >, optimum);
	run_clear(&r);
	g_free(u);
	cl_scene_free(s);

	/* scenes it does not describe */
	s = cl_test_task1();
	double dummy[2 * 480];
	g_assert_true(isnan(cl_two_ball_optimum(s, NULL)));
	g_assert_false(cl_two_ball_optimal_control(s, dummy));
	cl_scene_free(s);
	s = cl_test_task3();
	s->loss[0].target = (ClVec2){0.5, 0.0}; /* off the line of centres */
	g_assert_true(isnan(cl_two_ball_optimum(s, NULL)));
	cl_scene_free(s);
}

static void test_deterministic(void)
{
	ClScene *s = cl_test_random_scene(7, 3, 2);
	s->friction = 0.3;
	Run a = run_exact(s, NULL), b = run_exact(s, NULL);
	size_t states = (size_t)(s->steps + 1) * (size_t)cl_state_size(s);
	g_assert_true(memcmp(cl_rollout_states(a.rollout), cl_rollout_states(b.rollout), states * sizeof(double)) == 0);
	g_assert_true(memcmp(a.ds0, b.ds0, (size_t)cl_state_size(s) * sizeof(double)) == 0);
	g_assert_true(memcmp(a.du, b.du, (size_t)cl_control_size(s) * sizeof(double)) == 0);
	g_assert_true(memcmp(&a.loss, &b.loss, sizeof a.loss) == 0);
	run_clear(&a);
	run_clear(&b);
	cl_scene_free(s);
}

/* ------------------------------------------------------------ degenerate */

static ClScene *empty_scene(const char *name, double duration, int steps)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "%s", name);
	s->duration = duration;
	s->steps = steps;
	return s;
}

static ClBall *add_ball(ClScene *s, const char *id, double x, double y, double vx, double vy, double radius)
{
	ClBall *b = cl_scene_add_ball(s, id);
	b->position = (ClVec2){x, y};
	b->velocity = (ClVec2){vx, vy};
	b->radius = radius;
	return b;
}

static void add_wall(ClScene *s, const char *id, double px, double py, double nx, double ny)
{
	ClWall *w = cl_scene_add_wall(s, id);
	w->point = (ClVec2){px, py};
	w->normal = (ClVec2){nx, ny};
}

static void add_final_position(ClScene *s, int ball, double x, double y)
{
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = ball;
	t->target = (ClVec2){x, y};
}

/* The run reports the named status with a message naming the objects, and
 * still finishes with a finite state. */
static void assert_reported(const ClScene *s, ClStatusCode code, const char *const *names)
{
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	g_assert_false(cl_rollout_run(r, NULL, NULL, true));
	const ClStatus *status = cl_rollout_status(r);
	g_test_message("%s: %s: %s", s->name, cl_status_name(status->code), status->message);
	g_assert_cmpint(status->code, ==, code);
	for (int k = 0; names[k]; k++)
		g_assert_nonnull(strstr(status->message, names[k]));
	g_assert_nonnull(strstr(status->message, "t = "));
	g_assert_cmpint(cl_rollout_steps_done(r), ==, s->steps);
	g_assert_true(isfinite(cl_rollout_loss(r)));
	cl_rollout_free(r);
}

/* A non-degenerate neighbour: status ok and adjoint = FD. */
static void assert_neighbour_exact(const ClScene *s)
{
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	g_assert_true(check_against_fd(s, &r, 1e-6, 1e-6));
	run_clear(&r);
}

static void test_grazing(void)
{
	/* ball "a" passes ball "b" exactly tangentially at t = 1 */
	ClScene *s = cl_test_degenerate(CL_TEST_GRAZING_PAIR);
	assert_reported(s, CL_STATUS_GRAZING, (const char *const[]){"\"a\"", "\"b\"", NULL});
	/* neighbours: a clear miss and a clear (oblique) hit */
	s->balls[0].position.y = 0.21;
	assert_neighbour_exact(s);
	s->balls[0].position.y = 0.15;
	assert_neighbour_exact(s);
	cl_scene_free(s);

	/* a parabola tangent to a wall: x(t) = √1.8·t − t²/2 peaks at 0.9 = 1 − r */
	s = cl_test_degenerate(CL_TEST_GRAZING_WALL);
	assert_reported(s, CL_STATUS_GRAZING, (const char *const[]){"\"ball\"", "\"wall\"", NULL});
	s->balls[0].velocity.x = sqrt(1.8) + 0.05;
	assert_neighbour_exact(s);
	cl_scene_free(s);
}

static void test_corner(void)
{
	/* straight into the corner of the ground and a wall at x = 0 */
	ClScene *s = cl_test_degenerate(CL_TEST_CORNER);
	assert_reported(s, CL_STATUS_SIMULTANEOUS, (const char *const[]){"\"ground\"", "\"side\"", NULL});
	/* both impacts were resolved: the ball comes back out of the corner */
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	cl_rollout_run(r, NULL, NULL, false);
	const double *end = cl_rollout_states(r) + CL_BALL_STATE * s->steps;
	assert_close(end[2], 0.8, 1e-12, "corner: v_x after");
	assert_close(end[3], 0.8, 1e-12, "corner: v_y after");
	g_assert_cmpint(cl_rollout_event_count(r), ==, 2);
	cl_rollout_free(r);
	s->balls[0].position.x = 1.01;
	assert_neighbour_exact(s);
	cl_scene_free(s);
}

static void test_three_balls(void)
{
	/* "left" and "right" reach "middle" at the same instant */
	ClScene *s = cl_test_degenerate(CL_TEST_THREE_BALLS);
	assert_reported(s, CL_STATUS_SIMULTANEOUS, (const char *const[]){"\"middle\"", NULL});
	s->balls[2].position = (ClVec2){1.05, 0.02};
	assert_neighbour_exact(s);
	cl_scene_free(s);
}

static void test_zeno(void)
{
	/* dropped from 5 cm with e = 0.5: infinitely many bounces by t ≈ 0.30 s */
	ClScene *s = cl_test_degenerate(CL_TEST_ZENO);
	assert_reported(s, CL_STATUS_ZENO, (const char *const[]){"\"ball\"", "\"ground\"", NULL});
	/* it ends resting on the ground, having slid on at its horizontal speed */
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	cl_rollout_run(r, NULL, NULL, false);
	const double *end = cl_rollout_states(r) + CL_BALL_STATE * s->steps;
	assert_close(end[1], 0.1, 1e-9, "rests at y = r");
	assert_close(end[3], 0.0, 1e-9, "no normal speed");
	assert_close(end[0], 0.5, 1e-12, "slid at 0.5 m/s");
	cl_rollout_free(r);
	/* neighbour: the same drop over a shorter time, before the Zeno point */
	s->duration = 0.2;
	s->steps = 20;
	assert_neighbour_exact(s);
	cl_scene_free(s);
}

static void test_starts_in_contact(void)
{
	/* touching the ground at t = 0 and moving into it */
	ClScene *s = cl_test_degenerate(CL_TEST_STARTS_IN_CONTACT);
	assert_reported(s, CL_STATUS_IN_CONTACT, (const char *const[]){"\"ball\"", "\"ground\"", NULL});
	s->balls[0].position.y = 0.2;
	assert_neighbour_exact(s);
	cl_scene_free(s);

	/* resting on the ground from the start */
	s = cl_test_degenerate(CL_TEST_STARTS_RESTING);
	assert_reported(s, CL_STATUS_IN_CONTACT, (const char *const[]){"\"ball\"", "\"ground\"", NULL});
	cl_scene_free(s);

	/* two balls touching at t = 0 and pushed together */
	s = cl_test_degenerate(CL_TEST_BALLS_START_TOUCHING);
	assert_reported(s, CL_STATUS_IN_CONTACT, (const char *const[]){"\"a\"", "\"b\"", NULL});
	cl_scene_free(s);
}

/* Gradient descent on v0 with exact gradients (§6.4): lr 0.01, 1000 updates. */
static void test_task2_descent(void)
{
	static const double frictions[] = {0.0, 0.1};
	static const double expected[2][2] = {{10.1841, -4.2036}, {11.1584, -5.9021}};
	for (int k = 0; k < 2; k++) {
		ClScene *s = cl_test_task2(frictions[k]);
		ClOptimizeResult result = {0};
		g_assert_true(cl_optimize(s, cl_test_backend("exact"), NULL, NULL, NULL, &result));
		g_assert_cmpint(result.iterations_done, ==, 1000);
		g_assert_cmpint(result.parameter_count, ==, 2);
		assert_close(result.parameters[0], expected[k][0], 1e-4, "optimized v_x0");
		assert_close(result.parameters[1], expected[k][1], 1e-4, "optimized v_y0");
		g_test_message("final loss %.6g", result.loss[result.iterations_done - 1]);
		cl_optimize_result_clear(&result);
		cl_scene_free(s);
	}
}

/* Task 3 from the paper's start (u = 3, lr 10) with exact gradients: §6.4's
 * 1.399115 at iteration 999, short of the optimum because of the kinks. */
static void test_task3_descent(void)
{
	ClScene *s = cl_test_task3();
	ClOptimizeResult result = {0};
	g_assert_true(cl_optimize(s, cl_test_backend("exact"), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.iterations_done, ==, 1000);
	assert_close(result.loss[999], 1.399115, 1e-6, "task 3 loss at iteration 999");
	g_assert_cmpfloat(result.loss[999], >, cl_two_ball_optimum(s, NULL));
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

/* The first impact of one long interval (quartic ball–ball, quadratic
 * ball–wall, curved relative paths that may approach, recede and come back)
 * against dense sampling of the exact trajectory: never missed, never
 * spurious, never a later root instead of the first. */
static void test_first_impact_vs_sampling(void)
{
	GRand *rng = g_rand_new_with_seed(12345);
	int hits = 0, misses = 0;
	for (int trial = 0; trial < 300; trial++) {
		ClScene *s = empty_scene("sampled", 2.0, trial % 2 ? 1 : 40); /* quartic over a long window, or quick rejects */
		ClBall *a = add_ball(s, "a", g_rand_double_range(rng, -1.5, -0.5), g_rand_double_range(rng, -1, 1),
							 g_rand_double_range(rng, -1, 3), g_rand_double_range(rng, -2, 2), 0.2);
		a->control_kind = CL_CONTROL_CONSTANT;
		a->control_constant = (ClVec2){g_rand_double_range(rng, -3, 1), g_rand_double_range(rng, -3, 3)};
		add_ball(s, "b", 0.0, 0.0, g_rand_double_range(rng, -1, 1), g_rand_double_range(rng, -1, 1), 0.25);
		add_wall(s, "floor", 0.0, -2.0, 0.0, 1.0);
		add_final_position(s, 1, 0.0, 0.0);
		ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
		cl_rollout_run(r, NULL, NULL, false);
		double first = cl_rollout_event_count(r) ? cl_rollout_events(r)[0].time : INFINITY;
		/* sample the collision-free motion of both balls */
		const ClBall *A = &s->balls[0], *B = &s->balls[1];
		double sampled = INFINITY, closest = INFINITY;
		const int samples = 200000;
		for (int k = 1; k <= samples && sampled == INFINITY; k++) {
			double t = s->duration * k / samples;
			double ax = A->position.x + A->velocity.x * t + 0.5 * A->control_constant.x * t * t;
			double ay = A->position.y + A->velocity.y * t + 0.5 * A->control_constant.y * t * t;
			double bx = B->position.x + B->velocity.x * t, by = B->position.y + B->velocity.y * t;
			double pair_gap = hypot(ax - bx, ay - by) - 0.45;
			double wall_gap = fmin(ay + 2.0 - 0.2, by + 2.0 - 0.25);
			double gap = fmin(pair_gap, wall_gap);
			closest = fmin(closest, gap);
			if (gap <= 0.0)
				sampled = t;
		}
		if (sampled == INFINITY) {
			if (closest > 1e-6) { /* a clear miss must not produce an impact */
				g_assert_true(first == INFINITY);
				misses++;
			}
		} else {
			/* the impact lies in the last sampling cell before the overlap */
			if (!(first <= sampled + 1e-12 && first > sampled - s->duration / samples - 1e-12))
				g_error("trial %d: first impact at %.12g, sampling finds overlap at %.12g", trial, first, sampled);
			hits++;
		}
		cl_rollout_free(r);
		cl_scene_free(s);
	}
	g_rand_free(rng);
	g_test_message("%d hits, %d clear misses", hits, misses);
	g_assert_cmpint(hits, >=, 50);
	g_assert_cmpint(misses, >=, 50);
}

/* Task 1's impact falls exactly on a control switch (t = 216·dt), where the
 * ball arrives with a gap inside the touching tolerance. A perturbation
 * smaller than that tolerance must still move the impact continuously, so
 * finite differences with a tiny step agree with the adjoint. */
static void test_impact_on_switch_is_continuous(void)
{
	ClScene *s = cl_test_task1();
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	cl_rollout_run(r, NULL, NULL, true);
	double *g_u = g_new0(double, cl_control_size(s));
	cl_rollout_gradient(r, NULL, g_u);
	ClParam p;
	g_assert_true(cl_param_parse(s, "ball.control[0].y", &p, NULL, 0));
	for (double h = 1e-7; h <= 1e-4; h *= 10) {
		double fd = cl_finite_difference(s, cl_test_backend("exact"), &p, h, NULL);
		/* rounding noise of a loss of order 1 is ~1e-16 / h */
		g_assert_cmpfloat_with_epsilon(fd, g_u[1], 1e-5 * fabs(g_u[1]) + 1e-13 / h);
	}
	g_free(g_u);
	cl_rollout_free(r);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/exact/task1", test_task1);
	g_test_add_func("/exact/impact-on-switch", test_impact_on_switch_is_continuous);
	g_test_add_func("/exact/task3-table", test_task3_table);
	g_test_add_func("/exact/task2", test_task2);
	g_test_add_func("/exact/task2-descent", test_task2_descent);
	g_test_add_func("/exact/task3-descent", test_task3_descent);
	g_test_add_func("/exact/first-impact-vs-sampling", test_first_impact_vs_sampling);
	g_test_add_func("/exact/random-fd", test_random_fd);
	g_test_add_func("/exact/random-fd-friction", test_random_fd_friction);
	g_test_add_func("/exact/pair-friction", test_pair_friction);
	g_test_add_func("/exact/adjoint-vs-forward", test_adjoint_vs_forward);
	g_test_add_func("/exact/step-jacobian", test_step_jacobian);
	g_test_add_func("/exact/two-ball-optimum", test_two_ball_optimum);
	g_test_add_func("/exact/deterministic", test_deterministic);
	g_test_add_func("/exact/degenerate/grazing", test_grazing);
	g_test_add_func("/exact/degenerate/corner", test_corner);
	g_test_add_func("/exact/degenerate/three-balls", test_three_balls);
	g_test_add_func("/exact/degenerate/zeno", test_zeno);
	g_test_add_func("/exact/degenerate/starts-in-contact", test_starts_in_contact);
	return g_test_run();
}
