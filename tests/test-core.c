/* Scene model, named parameters, validation messages, tape sweeps. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <string.h>

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
	cl_tape_init(&tape, 2, inverse_mass, 1);
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
	g_assert_cmpint(cl_backend_count(), ==, 10);
	const char *ids[] = {"exact", "lcp-nimble", "convex-toi", "convex", "impulse-toi", "impulse",
						 "compliant-warp", "compliant-brax", "pbd-warp", "pbd-brax"};
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++)
		g_assert_cmpint(cl_backend_find(ids[i]), >=, 0);
	g_assert_cmpint(cl_backend_find("nope"), ==, -1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/core/validate-messages", test_validate_messages);
	g_test_add_func("/core/params", test_params);
	g_test_add_func("/core/set-steps", test_set_steps_resamples);
	g_test_add_func("/core/tape-transpose", test_tape_transpose);
	g_test_add_func("/core/registry", test_registry);
	return g_test_run();
}
