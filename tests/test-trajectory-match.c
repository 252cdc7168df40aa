/* The trajectory_match loss term: its value by hand, its adjoint (through
 * the states it reads, and physical parameters) against central differences
 * of the backend's own loss, scene-file round trips (inline and CSV), bad
 * inputs with path-named messages, identification of the restitution
 * from noise-free observations made by the exact backend, and design: the
 * angle of a wall found so that the ball ends on a target. */
#include "scene-file.h"
#include "tasks.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* gradient descent on e: L(e) is near c·(e − 0.8)², lr below 1/c */
#define IDENTIFY_LR 0.005
#define IDENTIFY_ITERS 200

/* One ball falling from rest under g = (0, −10), no walls, T = 1, N = 4: the
 * exact backend's states are p_y(t_k) = −5 t_k² at t_k = k/4. */
static ClScene *falling_scene(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0;
	s->steps = 4;
	s->gravity = (ClVec2){0, -10};
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->velocity = (ClVec2){1, 0};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_TRAJECTORY_MATCH);
	t->ball = 0;
	t->weight = 2.0;
	/* t = 0.3 lies in step 1 at α = 0.2: p = 0.8·(0.25, −0.3125) + 0.2·(0.5, −1.25) = (0.3, −0.5);
	 * t = 1 is the end of the last step: p = (1, −5); t = 0 the start: p = (0, 0) */
	const double obs[] = {0.3, 0.3, -0.45, 1.0, 1.1, -5.0, 0.0, 0.0, 0.2};
	g_assert_true(cl_loss_set_observations(t, obs, 3));
	return s;
}

static void test_value_by_hand(void)
{
	ClScene *s = falling_scene();
	g_assert_true(cl_scene_validate(s, NULL, 0));
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	/* 2·(0.05² + 0.1² + 0.2²) = 2·(0.0025 + 0.01 + 0.04) = 0.105 */
	double loss = cl_rollout_loss(r);
	g_test_message("loss %.17g (by hand 0.105)", loss);
	g_assert_cmpfloat(fabs(loss - 0.105), <, 1e-12);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* A bouncing scene (ground and a wall, friction) whose observations are
 * those of another start, so the residuals are not zero. */
static ClScene *bouncing_scene(void)
{
	ClScene *s = cl_test_task2(0.1);
	ClScene *other = cl_scene_copy(s);
	other->balls[0].velocity = (ClVec2){4.6, -5.3};
	other->elasticity = 0.7;
	ClRollout *r = cl_rollout_new(other, cl_test_backend("exact"));
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	const double *states = cl_rollout_states(r);
	int ns = cl_state_size(other);
	double obs[3 * 7];
	for (int j = 0; j < 7; j++) {
		/* times between steps, from the start to the end */
		int k = j * 47;
		obs[3 * j] = (k + 0.37) * s->duration / s->steps;
		obs[3 * j + 1] = states[(size_t)k * (size_t)ns] + 0.01 * j;
		obs[3 * j + 2] = states[(size_t)k * (size_t)ns + 1] - 0.02;
	}
	obs[3 * 6] = s->duration;
	cl_rollout_free(r);
	cl_scene_free(other);
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_TRAJECTORY_MATCH);
	t->ball = 0;
	t->weight = 0.5;
	g_assert_true(cl_loss_set_observations(t, obs, 7));
	g_assert_true(cl_scene_validate(s, NULL, 0));
	return s;
}

/* Each backend's adjoint of the loss with trajectory_match equals its own
 * central difference: initial state always, and the physical parameters
 * the backend differentiates. */
static void test_adjoint_equals_fd(void)
{
	ClScene *s = bouncing_scene();
	/* in float64, where its own map's differences keep their digits */
	g_assert_true(cl_scene_apply_setting(s, "impulse-toi.precision=float64", NULL));
	const char *names[] = {"ball.position.x", "ball.position.y", "ball.velocity.x", "ball.velocity.y",
						   "elasticity",	  "friction",		 "ball.radius",		"ball.mass",
						   "wall.angle",	  "wall.point.x",	 "gravity.y",		"duration"};
	ClParam params[G_N_ELEMENTS(names)];
	for (size_t k = 0; k < G_N_ELEMENTS(names); k++)
		g_assert_true(cl_param_parse(s, names[k], &params[k], NULL, 0));
	const char *backends[] = {"exact", "impulse-toi"};
	for (size_t b = 0; b < G_N_ELEMENTS(backends); b++) {
		int backend = cl_test_backend(backends[b]);
		ClGradientRow row;
		cl_gradient_row_compute(&row, s, backend, params, (int)G_N_ELEMENTS(names), CL_FD_ALL);
		g_assert_true(row.complete);
		int checked = 0;
		for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
			const ClGradientCell *c = &row.cells[k];
			if (!cl_backend_has_param_adjoint(backend, &params[k])) {
				g_assert_true(isnan(c->adjoint));
				continue;
			}
			double tol = 1e-5 * fmax(1.0, fabs(c->fd));
			g_test_message("%s d/d%s: adjoint %.12g fd %.12g", backends[b], names[k], c->adjoint, c->fd);
			if (!(fabs(c->adjoint - c->fd) <= tol))
				g_test_fail_printf("%s dL/d%s: adjoint %.12g, FD %.12g", backends[b], names[k], c->adjoint, c->fd);
			checked++;
		}
		g_assert_cmpint(checked, >=, 10);
		cl_gradient_row_clear(&row);
	}
	cl_scene_free(s);
}

/* The forward mode (jvp) agrees with the reverse sweep through the observations. */
static void test_jvp_equals_adjoint(void)
{
	ClScene *s = bouncing_scene();
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	int ns = cl_state_size(s);
	double g[4], ds0[4] = {0.3, -0.2, 0.5, 0.7};
	cl_rollout_gradient(r, g, NULL);
	double dot = 0;
	for (int i = 0; i < ns; i++)
		dot += g[i] * ds0[i];
	double jvp = cl_rollout_jvp(r, ds0, NULL, NULL);
	g_test_message("jvp %.15g, adjoint·ds0 %.15g", jvp, dot);
	g_assert_cmpfloat(fabs(jvp - dot), <, 1e-9 * fmax(1.0, fabs(dot)));
	cl_rollout_free(r);
	cl_scene_free(s);
}

static void test_round_trip(void)
{
	ClScene *s = bouncing_scene();
	char *json = cl_scene_file_to_json(s);
	g_assert_nonnull(strstr(json, "\"trajectory_match\""));
	GError *error = NULL;
	ClScene *back = cl_scene_file_parse(json, -1, "round.json", &error);
	g_assert_no_error(error);
	g_assert_true(cl_scene_equal(s, back));
	g_assert_cmpint(back->loss[1].observation_count, ==, 7);
	/* a copy owns its observations: freeing one leaves the other whole */
	ClScene *copy = cl_scene_copy(back);
	cl_scene_free(back);
	g_assert_true(cl_scene_equal(s, copy));
	cl_scene_free(copy);
	g_free(json);
	cl_scene_free(s);
}

static const char *const scene_head =
	"{ \"contactlab\": 1, \"duration\": 1, \"steps\": 10, \"gravity\": [0, -10],"
	" \"balls\": [ { \"id\": \"ball\", \"position\": [0, 1], \"velocity\": [1, 0], \"radius\": 0.1, \"mass\": 1 } ],"
	" \"loss\": [ { \"type\": \"trajectory_match\", \"ball\": ";

static char *scene_text(const char *ball, const char *observations)
{
	return g_strdup_printf("%s\"%s\", \"observations\": %s, \"weight\": 1 } ] }", scene_head, ball, observations);
}

/* A CSV file beside the scene file reads as the same observations inline. */
static void test_csv(void)
{
	char *dir = g_dir_make_tmp("trajectory-XXXXXX", NULL);
	g_assert_nonnull(dir);
	char *csv = g_build_filename(dir, "obs.csv", NULL);
	g_assert_true(g_file_set_contents(csv, "t,x,y\n0.1,0.1,0.95\n0.55, 0.5 ,-0.5\r\n1,1,-4\n", -1, NULL));
	char *scene_path = g_build_filename(dir, "scene.json", NULL);
	char *text = scene_text("ball", "\"obs.csv\"");
	g_assert_true(g_file_set_contents(scene_path, text, -1, NULL));
	GError *error = NULL;
	ClScene *from_csv = cl_scene_file_load(scene_path, &error);
	g_assert_no_error(error);
	char *inline_text = scene_text("ball", "[[0.1, 0.1, 0.95], [0.55, 0.5, -0.5], [1, 1, -4]]");
	ClScene *inline_scene = cl_scene_file_parse(inline_text, -1, "inline.json", &error);
	g_assert_no_error(error);
	g_assert_true(cl_scene_equal(from_csv, inline_scene));

	/* bad CSV files: the message names the term, the file and the line */
	struct {
		const char *content, *expect;
	} bad[] = {
		{"t,x,y\n0.1,0.1\n", "loss[0].observations: \"obs.csv\" line 2: must be three finite numbers"},
		{"0.1,0.1,zero\n", "line 1: must be three finite numbers"},
		{"0.1,0.1,nan\n", "line 1: must be three finite numbers"},
		{"t,x,y\n0.5,0,0\n1.5,0,0\n", "\"obs.csv\" line 3: t = 1.5 is outside [0, 1]"},
		{"t,x,y\n", "\"obs.csv\" has no observations"},
		/* a line is quoted short and without control characters */
		{"0.1,\x1b[31mred,0\n", "(got \"0.1,?[31mred,0\")"},
		{"0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1\n", "(got \"0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,…\")"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_assert_true(g_file_set_contents(csv, bad[i].content, -1, NULL));
		ClScene *s = cl_scene_file_load(scene_path, &error);
		g_assert_null(s);
		g_assert_nonnull(error);
		g_test_message("%s", error->message);
		if (!strstr(error->message, bad[i].expect))
			g_test_fail_printf("CSV %zu: \"%s\" lacks \"%s\"", i, error->message, bad[i].expect);
		g_clear_error(&error);
	}
	g_remove(csv);
	ClScene *missing = cl_scene_file_load(scene_path, &error);
	g_assert_null(missing);
	g_assert_nonnull(strstr(error->message, "loss[0].observations: cannot read \"obs.csv\""));
	g_clear_error(&error);
	g_remove(scene_path);
	g_rmdir(dir);
	cl_scene_free(from_csv);
	cl_scene_free(inline_scene);
	g_free(inline_text);
	g_free(text);
	g_free(scene_path);
	g_free(csv);
	g_free(dir);
}

static void test_bad_inline(void)
{
	struct {
		const char *ball, *observations, *expect;
	} bad[] = {
		{"ball", "[[1.5, 0, 0]]", "loss[0].observations[0]: t = 1.5 is outside [0, 1]"},
		{"ball", "[[0.5, 0, 0], [-0.1, 0, 0]]", "loss[0].observations[1]: t = -0.1 is outside [0, 1]"},
		{"ball", "[[0.5, 0]]", "loss[0].observations[0]: must be [t, x, y] (got 2 numbers)"},
		{"ball", "[[0.5, 0, \"y\"]]", "loss[0].observations[0][2]"},
		{"ball", "[[0.5, 0, 1e999]]", "loss[0].observations[0][2]"},
		{"ball", "[]", "loss[0].observations: must hold at least one"},
		{"ball", "3", "loss[0].observations"},
		{"ghost", "[[0.5, 0, 0]]", "loss[0].ball: no ball has the id \"ghost\""},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *text = scene_text(bad[i].ball, bad[i].observations);
		GError *error = NULL;
		ClScene *s = cl_scene_file_parse(text, -1, "bad.json", &error);
		g_assert_null(s);
		g_assert_nonnull(error);
		g_test_message("%s", error->message);
		if (!strstr(error->message, bad[i].expect))
			g_test_fail_printf("case %zu: \"%s\" lacks \"%s\"", i, error->message, bad[i].expect);
		g_clear_error(&error);
		g_free(text);
	}
	/* without observations */
	char *text = g_strdup_printf("%s\"ball\", \"weight\": 1 } ] }", scene_head);
	GError *error = NULL;
	g_assert_null(cl_scene_file_parse(text, -1, "bad.json", &error));
	g_assert_nonnull(strstr(error->message, "loss[0]"));
	g_assert_nonnull(strstr(error->message, "observations"));
	g_clear_error(&error);
	g_free(text);
}

/* Task 2 (ground, then wall) with its final-position loss replaced by a
 * trajectory_match of observations the exact backend makes at e = 0.8:
 * the ball's position at every 12th step's time, without noise. */
static ClScene *identification_scene(double e_true, double e_start, double radius_true)
{
	ClScene *s = cl_test_task2(0.0);
	double radius = s->balls[0].radius;
	s->elasticity = e_true;
	s->balls[0].radius = radius_true;
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpint(cl_rollout_event_count(r), >=, 2); /* the ground and the wall */
	const double *states = cl_rollout_states(r);
	int ns = cl_state_size(s);
	GArray *obs = g_array_new(FALSE, FALSE, sizeof(double));
	for (int k = 12; k <= s->steps; k += 12) {
		double row[3] = {k * s->duration / s->steps, states[(size_t)k * (size_t)ns],
						 states[(size_t)k * (size_t)ns + 1]};
		g_array_append_vals(obs, row, 3);
	}
	cl_rollout_free(r);
	cl_scene_remove_loss(s, 0);
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_TRAJECTORY_MATCH);
	t->ball = 0;
	t->weight = 1.0;
	g_assert_true(cl_loss_set_observations(t, (const double *)(void *)obs->data, (int)(obs->len / 3)));
	g_array_free(obs, TRUE);
	s->elasticity = e_start;
	s->balls[0].radius = radius;
	s->optimize.parameter_count = 1;
	g_strlcpy(s->optimize.parameters[0], "elasticity", sizeof s->optimize.parameters[0]);
	s->optimize.optimizer = CL_OPTIMIZER_GD;
	s->optimize.learning_rate = IDENTIFY_LR;
	s->optimize.iterations = IDENTIFY_ITERS;
	g_assert_true(cl_scene_validate(s, NULL, 0));
	return s;
}

static bool trace(int iteration, double loss, const double *values, void *user)
{
	(void)user;
	if (iteration < 10 || iteration % 20 == 0)
		g_test_message("it %d loss %.6g e %.12g", iteration, loss, values[0]);
	return true;
}

static bool in_range(int iteration, double loss, const double *values, void *user)
{
	(void)iteration;
	(void)loss;
	int *outside = user;
	if (!(values[0] >= 0.0 && values[0] <= 1.0))
		(*outside)++;
	return true;
}

/* Noise-free observations at e = 0.8, gradient descent from e = 0.5 along
 * the exact backend's adjoint of dL/de: e is recovered to 1e-6. */
static void test_identify_elasticity(void)
{
	ClScene *s = identification_scene(0.8, 0.5, 0.1);
	int exact = cl_test_backend("exact");
	ClOptimizeResult result;
	g_assert_true(cl_optimize(s, exact, NULL, trace, NULL, &result));
	g_test_message("exact status %d: %s", result.status.code, result.status.message);
	g_assert_cmpint(result.status.code, ==, CL_STATUS_OK);
	g_assert_cmpint(result.parameter_count, ==, 1);
	double e = result.parameters[0];
	g_test_message("exact: e %.12g after %d iterations (loss %.3g → %.3g)", e, result.iterations_done, result.loss[0],
				   result.loss[result.iterations_done - 1]);
	g_assert_cmpfloat(fabs(e - 0.8), <, 1e-6);
	g_assert_cmpfloat(result.loss[0], >, 1e-3); /* the start is far from the observations */
	cl_optimize_result_clear(&result);

	/* the direct-impulse backends have no adjoint of e: a clear refusal,
	 * no silent differences */
	const char *impulses[] = {"impulse", "impulse-toi"};
	for (size_t i = 0; i < G_N_ELEMENTS(impulses); i++) {
		int backend = cl_test_backend(impulses[i]);
		g_assert_false(cl_optimize(s, backend, NULL, NULL, NULL, &result));
		g_assert_cmpint(result.status.code, ==, CL_STATUS_UNSUPPORTED);
		g_test_message("%s: %s", impulses[i], result.status.message);
		g_assert_nonnull(strstr(result.status.message, "has no adjoint of dL/delasticity"));
		g_assert_nonnull(strstr(result.status.message, "\"fd\""));
		cl_optimize_result_clear(&result);
		/* asked for central differences, they descend along those: printed, not judged */
		ClOptimizeDef def = s->optimize;
		def.gradient = CL_GRADIENT_FD;
		bool ran = cl_optimize(s, backend, &def, NULL, NULL, &result);
		g_test_message("%s with central differences: e %.9g after %d iterations (loss %.6g → %.6g)%s%s", impulses[i],
					   result.parameter_count ? result.parameters[0] : NAN, result.iterations_done,
					   result.iterations_done ? result.loss[0] : NAN,
					   result.iterations_done ? result.loss[result.iterations_done - 1] : NAN,
					   ran ? "" : ", stopped: ", ran ? "" : result.status.message);
		g_assert_true(ran);
		g_assert_true(isfinite(result.parameters[0]));
		cl_optimize_result_clear(&result);
	}
	cl_scene_free(s);
}

/* Too long a step lands outside [0, 1]: every iterate is projected back. */
static void test_projection(void)
{
	ClScene *s = identification_scene(0.8, 0.5, 0.1);
	ClOptimizeDef def = s->optimize;
	def.learning_rate = 100 * IDENTIFY_LR;
	def.iterations = 20;
	int outside = 0;
	ClOptimizeResult result;
	g_assert_true(cl_optimize(s, cl_test_backend("exact"), &def, in_range, &outside, &result));
	g_assert_cmpint(outside, ==, 0);
	g_test_message("e after 20 long steps: %.9g", result.parameters[0]);
	cl_optimize_result_clear(&result);
	/* and a radius a long step would make negative stays positive: observed
	 * with radius 0.05, started at 0.1, dL/dr > 0 */
	ClScene *r = identification_scene(0.8, 0.8, 0.05);
	ClParam radius;
	g_assert_true(cl_param_parse(r, "ball.radius", &radius, NULL, 0));
	ClGradientRow row;
	cl_gradient_row_compute(&row, r, cl_test_backend("exact"), &radius, 1, CL_FD_NONE);
	double g = row.cells[0].adjoint;
	cl_gradient_row_clear(&row);
	g_test_message("dL/dradius %.9g", g);
	g_assert_cmpfloat(g, >, 0.0);
	def = r->optimize;
	g_strlcpy(def.parameters[0], "ball.radius", sizeof def.parameters[0]);
	def.learning_rate = 10.0 * r->balls[0].radius / g;
	def.iterations = 1;
	ClOptimizeResult rr;
	g_assert_true(cl_optimize(r, cl_test_backend("exact"), &def, NULL, NULL, &rr));
	g_test_message("radius after one long step: %.9g", rr.parameters[0]);
	g_assert_cmpfloat(rr.parameters[0], ==, CL_OPTIMIZE_POSITIVE_MIN);
	cl_optimize_result_clear(&rr);
	cl_scene_free(r);
	cl_scene_free(s);
}

/* Design: a ball shot at a mirror (the preset aim-the-wall), the target put
 * where exact's ball ends with the mirror's normal at 165°; descent along
 * exact's adjoint of dL/dangle from 180° finds 165° again. */
static void test_design_wall_angle(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0;
	s->steps = 480;
	s->elasticity = 1.0;
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->position = (ClVec2){-1, 0.5};
	b->velocity = (ClVec2){3, 0};
	ClWall *w = cl_scene_add_wall(s, "mirror");
	w->point = (ClVec2){1, 0.5};
	w->normal = (ClVec2){-1, 0};
	ClParam angle;
	g_assert_true(cl_param_parse(s, "mirror.angle", &angle, NULL, 0));
	cl_param_set(s, &angle, 165.0);
	ClRollout *r = cl_rollout_new(s, cl_test_backend("exact"));
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
	const double *end = cl_rollout_states(r) + (size_t)s->steps * (size_t)cl_state_size(s);
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->weight = 1.0;
	t->target = (ClVec2){end[0], end[1]};
	cl_rollout_free(r);
	cl_param_set(s, &angle, 180.0);
	s->optimize.parameter_count = 1;
	g_strlcpy(s->optimize.parameters[0], "mirror.angle", sizeof s->optimize.parameters[0]);
	s->optimize.optimizer = CL_OPTIMIZER_GD;
	s->optimize.learning_rate = 100;
	s->optimize.iterations = 200;
	g_assert_true(cl_scene_validate(s, NULL, 0));
	ClOptimizeResult result;
	g_assert_true(cl_optimize(s, cl_test_backend("exact"), NULL, NULL, NULL, &result));
	g_assert_cmpint(result.status.code, ==, CL_STATUS_OK);
	g_test_message("mirror.angle %.12g after %d iterations (loss %.3g → %.3g)", result.parameters[0],
				   result.iterations_done, result.loss[0], result.loss[result.iterations_done - 1]);
	g_assert_cmpfloat(result.loss[0], >, 0.1);
	g_assert_cmpfloat(fabs(result.parameters[0] - 165.0), <, 1e-6);
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/trajectory-match/value-by-hand", test_value_by_hand);
	g_test_add_func("/trajectory-match/adjoint-equals-fd", test_adjoint_equals_fd);
	g_test_add_func("/trajectory-match/jvp-equals-adjoint", test_jvp_equals_adjoint);
	g_test_add_func("/trajectory-match/round-trip", test_round_trip);
	g_test_add_func("/trajectory-match/csv", test_csv);
	g_test_add_func("/trajectory-match/bad-inline", test_bad_inline);
	g_test_add_func("/trajectory-match/identify-elasticity", test_identify_elasticity);
	g_test_add_func("/trajectory-match/design-wall-angle", test_design_wall_angle);
	g_test_add_func("/trajectory-match/projection", test_projection);
	return g_test_run();
}
