/* lcp-nimble: the paper's Nimble rows, the LCP solver, Nimble's Jacobian
 * against its closed forms, and where it differs from finite differences. */
#include "core.h"
#include "lcp.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int nimble(void)
{
	return cl_test_backend("lcp-nimble");
}

/* Runs with recording; returns the rollout and fills dL/ds0, dL/du. */
static ClRollout *run_gradient(const ClScene *s, double *g_s0, double *g_u)
{
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	cl_rollout_gradient(r, g_s0, g_u);
	return r;
}

/* dL/d(named parameter) by the adjoint. */
static double named_gradient(const ClScene *s, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(s, name, &p, message, sizeof message));
	double *g_s0 = g_new0(double, cl_state_size(s));
	double *g_u = g_new0(double, cl_control_size(s));
	cl_rollout_free(run_gradient(s, g_s0, g_u));
	double g = *cl_param_slot(s, &p, g_s0, g_u);
	g_free(g_s0);
	g_free(g_u);
	return g;
}

static void check_row(const char *table, const char *quantity, double computed, double expected, double tolerance)
{
	g_test_message("table %s lcp-nimble %s: computed %.9g expected %.9g (tolerance %g)", table, quantity, computed,
				   expected, tolerance);
	if (!(fabs(computed - expected) <= tolerance))
		g_error("table %s lcp-nimble %s: computed %.9g, expected %.9g ± %g", table, quantity, computed, expected,
				tolerance);
}

/* ------------------------------------------------------ paper-tables.csv */

typedef struct GradientRow {
	const char *table;
	int task; /* 1, 2, 4 (task 2 with μ = 0.1), 3 */
	const char *quantity;
	double expected, tolerance;
} GradientRow;

/* The lcp-nimble gradient rows of shared/reference/paper-tables.csv. */
static const GradientRow gradient_rows[] = {
	{"1", 1, "ball.position.y", -1.0, 0.0001},
	{"1", 1, "ball.velocity.y", -1.0, 0.0001},
	{"1", 1, "ball.control[0].y", -0.0020789931, 1e-06},
	{"2", 2, "ball.velocity.x", -3.2016, 0.0001},
	{"2", 2, "ball.velocity.y", -0.319, 0.0001},
	{"4", 4, "ball.velocity.x", -3.7681, 0.0002},
	{"4", 4, "ball.velocity.y", -0.7900, 0.0002},
	{"3", 3, "ball1.position.x", -0.5476, 0.0001},
	{"3", 3, "ball2.position.x", -0.1825, 0.0001},
	{"3", 3, "ball1.velocity.x", -0.6031, 0.0001},
	{"3", 3, "ball2.velocity.x", -0.127, 0.0001},
	{"3", 3, "ball1.control[0].x", -4e-06, 2e-06},
};

static ClScene *task(int number)
{
	switch (number) {
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
		const GradientRow *row = &gradient_rows[k];
		ClScene *s = task(row->task);
		char quantity[CL_NAME_MAX + 2];
		snprintf(quantity, sizeof quantity, "d/%s", row->quantity);
		check_row(row->table, quantity, named_gradient(s, row->quantity), row->expected, row->tolerance);
		cl_scene_free(s);
	}
}

static void optimize(const ClScene *s, ClOptimizeResult *result)
{
	g_assert_true(cl_optimize(s, nimble(), NULL, NULL, NULL, result));
	g_assert_cmpint(result->iterations_done, ==, s->optimize.iterations);
}

/* Table 2 / 4: v0 after the 1000th update (GD, lr 0.01), default float64. */
static void test_optimized_velocity(gconstpointer data)
{
	int number = GPOINTER_TO_INT(data);
	ClScene *s = task(number);
	ClOptimizeResult result;
	optimize(s, &result);
	double expected[2] = {number == 4 ? 11.338899 : 10.2997, number == 4 ? -6.137768 : -4.1396};
	const char *table = number == 4 ? "4" : "2";
	check_row(table, "optimized ball.velocity.x", result.parameters[0], expected[0], 0.002);
	check_row(table, "optimized ball.velocity.y", result.parameters[1], expected[1], 0.002);
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

/* Task 3 learning: 1000 updates of ball1's 480 controls (lr 10), the loss
 * recorded before each update; the row is the loss at iteration 999. */
static void test_learning_loss(void)
{
	ClScene *s = cl_test_task3();
	ClOptimizeResult result;
	optimize(s, &result);
	check_row("3-learning", "loss at iteration 999 (lr 10)", result.loss[999], 1.4086289, 0.0002);
	cl_optimize_result_clear(&result);
	cl_scene_free(s);
}

/* With precision float32 the optimized values live in float32 like the
 * paper's torch tensors; the saved Nimble runs are then matched to the
 * digits the notebooks store (backend-nimble.md §4, §7.4). */
static void test_saved_runs_float32(void)
{
	struct {
		int task;
		double v[2], digits;
	} runs[] = {
		{2, {10.299694, -4.1396265}, 5e-7},
		{4, {11.338899, -6.137768}, 5e-7},
	};
	for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
		ClScene *s = task(runs[k].task);
		cl_test_set_param(s, "lcp-nimble", "precision", CL_PRECISION_FLOAT32);
		ClOptimizeResult result;
		optimize(s, &result);
		for (int a = 0; a < 2; a++) {
			g_test_message("saved run task %d v0[%d]: computed %.9g saved %.9g", runs[k].task, a, result.parameters[a],
						   runs[k].v[a]);
			g_assert_cmpfloat_with_epsilon(result.parameters[a], runs[k].v[a], runs[k].digits);
		}
		if (runs[k].task == 4) {
			/* the saved friction run's losses at iterations 0 and 999 */
			g_test_message("saved friction run loss[0] %.12g loss[999] %.12g", result.loss[0], result.loss[999]);
			g_assert_cmpfloat_with_epsilon(result.loss[0], 11.66308087525, 5e-11);
			g_assert_cmpfloat_with_epsilon(result.loss[999], 0.002725417022818, 5e-9);
		}
		cl_optimize_result_clear(&result);
		cl_scene_free(s);
	}
}

/* --------------------------------------------------------------- solver */

static double uniform(GRand *rng, double lo, double hi)
{
	return g_rand_double_range(rng, lo, hi);
}

/* Random positive (semi)definite LCPs, A = B Bᵀ: x ≥ 0, w = Ax − b ≥ 0, x·w = 0. */
static void test_lcp_random_psd(void)
{
	GRand *rng = g_rand_new_with_seed(7);
	ClLcpWorkspace ws = {0};
	for (int trial = 0; trial < 500; trial++) {
		int n = g_rand_int_range(rng, 1, 9);
		double A[64], B[64], b[8], lo[8], hi[8], x[8], w[8], lo_out[8], hi_out[8];
		for (int i = 0; i < n * n; i++)
			B[i] = uniform(rng, -1, 1);
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < n; j++) {
				double s = 0.0;
				for (int k = 0; k < n; k++)
					s += B[i * n + k] * B[j * n + k];
				A[i * n + j] = s;
			}
			b[i] = uniform(rng, -1, 1);
			lo[i] = 0.0;
			hi[i] = INFINITY;
		}
		ClLcp lcp = {.n = n, .A = A, .b = b, .lo = lo, .hi = hi};
		ClLcpResult result = cl_lcp_solve(&lcp, 1e-7, &ws, x, w, lo_out, hi_out);
		g_assert_cmpint(result, ==, CL_LCP_OK);
		for (int i = 0; i < n; i++) {
			double wi = -b[i];
			for (int j = 0; j < n; j++)
				wi += A[i * n + j] * x[j];
			g_assert_cmpfloat(x[i], >=, 0.0);
			g_assert_cmpfloat(wi, >=, -1e-9);
			g_assert_cmpfloat(fabs(x[i] * wi), <=, 1e-9);
		}
	}
	cl_lcp_workspace_release(&ws);
	g_rand_free(rng);
}

/* Random contact LCPs with friction rows, A = Jᵀ M⁻¹ J of random planar
 * columns: the boxed conditions hold for the boxes the solver set, ±μ x_n
 * with x_n as solved when the first friction row is reached. */
static void test_lcp_random_friction(void)
{
	GRand *rng = g_rand_new_with_seed(11);
	ClLcpWorkspace ws = {0};
	int solved = 0;
	for (int trial = 0; trial < 500; trial++) {
		int contacts = g_rand_int_range(rng, 1, 4), n = 2 * contacts, dofs = 2 * contacts + 2;
		double J[8 * 8] = {0}, A[64], b[8], lo[8], hi[8], x[8], w[8], lo_out[8], hi_out[8];
		int findex[8];
		for (int c = 0; c < contacts; c++) {
			double angle = uniform(rng, 0, 2 * G_PI);
			int body = g_rand_int_range(rng, 0, dofs / 2);
			/* normal column c, tangent column contacts + c on one body */
			J[(2 * body) * n + c] = cos(angle);
			J[(2 * body + 1) * n + c] = sin(angle);
			J[(2 * body) * n + contacts + c] = -sin(angle);
			J[(2 * body + 1) * n + contacts + c] = cos(angle);
			b[c] = uniform(rng, -1, 2);
			b[contacts + c] = uniform(rng, -2, 2);
			lo[c] = 0.0;
			hi[c] = INFINITY;
			findex[c] = -1;
			double mu = uniform(rng, 0.05, 1.0);
			lo[contacts + c] = -mu;
			hi[contacts + c] = mu;
			findex[contacts + c] = c;
		}
		for (int r = 0; r < n; r++)
			for (int c = 0; c < n; c++) {
				double s = 0.0;
				for (int d = 0; d < dofs; d++)
					s += J[d * n + r] * J[d * n + c];
				A[r * n + c] = s;
			}
		ClLcp lcp = {.n = n, .A = A, .b = b, .lo = lo, .hi = hi, .findex = findex};
		ClLcpResult result = cl_lcp_solve(&lcp, 1e-7, &ws, x, w, lo_out, hi_out);
		if (result != CL_LCP_OK) {
			/* two contacts on one body with near-parallel normals: redundant */
			g_assert_true(result == CL_LCP_SINGULAR || result == CL_LCP_UNBOUNDED);
			continue;
		}
		solved++;
		for (int i = 0; i < n; i++) {
			g_assert_cmpfloat(x[i], >=, lo_out[i] - 1e-9);
			g_assert_cmpfloat(x[i], <=, hi_out[i] + 1e-9);
			bool at_lo = x[i] <= lo_out[i] + 1e-9, at_hi = x[i] >= hi_out[i] - 1e-9;
			g_assert_true(fabs(w[i]) <= 1e-9 || (at_lo && w[i] >= 0) || (at_hi && w[i] <= 0));
			/* boxes from the normal impulses known when friction rows start (ODE) */
			if (i >= contacts) {
				g_assert_cmpfloat(hi_out[i], >=, 0.0);
				g_assert_cmpfloat(lo_out[i], ==, -hi_out[i]);
			}
		}
	}
	g_test_message("%d of 500 random friction LCPs solvable", solved);
	g_assert_cmpint(solved, >, 400);
	cl_lcp_workspace_release(&ws);
	g_rand_free(rng);
}

/* One contact: the closed form is what the pivoting solver computes, to the bit. */
static void test_lcp_single_contact(void)
{
	GRand *rng = g_rand_new_with_seed(3);
	ClLcpWorkspace ws = {0};
	for (int trial = 0; trial < 2000; trial++) {
		double a_nn = uniform(rng, 0.2, 3), a_tt = uniform(rng, 0.2, 3), mu = uniform(rng, 0.0, 1.0);
		double b_n = uniform(rng, -1, 3), b_t = uniform(rng, -3, 3);
		if (trial % 10 == 0)
			b_t = 0.0;
		double A[4] = {a_nn, 0, 0, a_tt}, b[2] = {b_n, b_t}, lo[2] = {0, -mu}, hi[2] = {INFINITY, mu};
		int findex[2] = {-1, 0};
		double x[2], w[2], lo_out[2], hi_out[2], x_n, x_t;
		ClLcp lcp = {.n = 2, .A = A, .b = b, .lo = lo, .hi = hi, .findex = findex};
		g_assert_cmpint(cl_lcp_solve(&lcp, 1e-9, &ws, x, w, lo_out, hi_out), ==, CL_LCP_OK);
		cl_lcp_single_contact(a_nn, b_n, a_tt, b_t, mu, &x_n, &x_t);
		g_assert_cmpfloat(x[0], ==, x_n);
		g_assert_cmpfloat(x[1], ==, x_t);
		/* frictionless: x = max(0, b/(aᵀM⁻¹a)) */
		ClLcp normal = {.n = 1, .A = A, .b = b, .lo = lo, .hi = hi};
		g_assert_cmpint(cl_lcp_solve(&normal, 1e-9, &ws, x, w, lo_out, hi_out), ==, CL_LCP_OK);
		g_assert_cmpfloat(x[0], ==, fmax(0.0, b_n / a_nn));
	}
	cl_lcp_workspace_release(&ws);
	g_rand_free(rng);
}

/* ---------------------------------------------- Nimble's Jacobian, closed forms */

/* The first step at which ball `ball` took an impulse from `other`. */
static int impact_step(const ClRollout *r, int ball, int other)
{
	for (int k = 0; k < cl_rollout_event_count(r); k++) {
		const ClContactEvent *e = &cl_rollout_events(r)[k];
		if (e->ball == ball && e->other == other)
			return e->step;
	}
	g_error("no impact of ball %d with %d", ball, other);
	return -1;
}

/* Task 1: one bounce on the ground, PP = VP/dt = VV = diag(1, −1) on the
 * bounce step: dh/dy0 = −1, dh/dvy0 = −T, dh/du_j = ∓(T − (j+1)dt)dt. */
static void test_closed_form_task1(void)
{
	ClScene *s = cl_test_task1();
	double g_s0[CL_BALL_STATE], *g_u = g_new0(double, cl_control_size(s));
	ClRollout *r = run_gradient(s, g_s0, g_u);
	double T = s->duration, dt = cl_scene_dt(s);
	int K = impact_step(r, 0, -1);
	g_assert_cmpint(K, ==, 217);
	g_assert_cmpfloat_with_epsilon(g_s0[1], -1.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(g_s0[3], -T, 1e-12);
	g_assert_cmpfloat_with_epsilon(g_s0[0], 0.0, 1e-15);
	int steps[] = {0, 100, K - 1, K, K + 1, 400, s->steps - 1};
	for (size_t k = 0; k < G_N_ELEMENTS(steps); k++) {
		int j = steps[k];
		double expected = (j <= K ? -1.0 : 1.0) * (T - (j + 1) * dt) * dt;
		g_assert_cmpfloat_with_epsilon(g_u[2 * j + 1], expected, 1e-14);
		g_assert_cmpfloat_with_epsilon(g_u[2 * j], 0.0, 1e-15);
	}
	/* the forward pass is the explicit-update one: 1.18333, not 1.2 */
	g_assert_cmpfloat_with_epsilon(cl_rollout_states(r)[CL_BALL_STATE * s->steps + 1], 1.18333, 1e-5);
	cl_rollout_free(r);
	g_free(g_u);
	cl_scene_free(s);
}

/* Task 2: one wall and one ground bounce, so d p_N / d v0 = −e T per axis. */
static void test_closed_form_task2(void)
{
	ClScene *s = cl_test_task2(0.0);
	double g_s0[CL_BALL_STATE];
	ClRollout *r = run_gradient(s, g_s0, NULL);
	const double *p = cl_rollout_states(r) + CL_BALL_STATE * s->steps;
	double e = s->elasticity, T = s->duration;
	g_assert_cmpint(impact_step(r, 0, -1), ==, 76);
	g_assert_cmpint(impact_step(r, 0, -2), ==, 207);
	g_assert_cmpfloat_with_epsilon(p[0], 0.9, 1e-12);
	g_assert_cmpfloat_with_epsilon(g_s0[2], 2 * (p[0] + 2) * (-e * T), 1e-12);
	g_assert_cmpfloat_with_epsilon(g_s0[3], 2 * (p[1] - 1.5) * (-e * T), 1e-12);
	g_assert_cmpfloat_with_epsilon(g_s0[0], 2 * (p[0] + 2) * (-e), 1e-12);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Task 2 with μ = 0.1: at each bounce VV = FV/dt carries the cross term
 * μ(1+e), PP = VP/dt = diag(−e) on the normal only (§7.3); forward values of §7.2. */
static void test_closed_form_friction(void)
{
	ClScene *s = cl_test_task2(0.1);
	double g_s0[CL_BALL_STATE];
	ClRollout *r = run_gradient(s, g_s0, NULL);
	const double *p = cl_rollout_states(r) + CL_BALL_STATE * s->steps;
	int ground = impact_step(r, 0, -1), wall = impact_step(r, 0, -2);
	g_assert_cmpint(ground, ==, 76);
	g_assert_cmpint(wall, ==, 251);
	g_assert_cmpfloat_with_epsilon(p[0], 1.407021, 1e-6);
	g_assert_cmpfloat_with_epsilon(p[1], 1.735134, 1e-6);
	g_assert_cmpfloat_with_epsilon(cl_rollout_loss(r), 11.66308087525, 1e-11);
	/* ground step: v_f = (5, −6.572083), x_t = 1.26184 so vx 5 → 3.73816 */
	const double *after_ground = cl_rollout_states(r) + CL_BALL_STATE * (ground + 1);
	g_assert_cmpfloat_with_epsilon(after_ground[2], 3.73816, 1e-5);
	/* the adjoint through the two bounces, with free flight in between:
	 * I_k = (dp_k + (T − t_k) dv_k) per axis and the two step matrices */
	double T = s->duration, dt = cl_scene_dt(s), e = s->elasticity, mu = s->friction;
	double lp[2] = {2 * (p[0] + 2), 2 * (p[1] - 1.5)}, lv[2];
	/* after the wall step: λ_v = λ_p (T − t_{K+1}) */
	double tw = (wall + 1) * dt, tg = (ground + 1) * dt;
	for (int a = 0; a < 2; a++)
		lv[a] = lp[a] * (T - tw);
	/* wall step (n = x): PP = diag(−e, 1), VV = [[−e, 0], [−μ(1+e), 1]] (sign: friction opposes vy > 0) */
	double lp_w[2] = {-e * lp[0], lp[1]};
	double lv_w[2] = {-e * lv[0] - mu * (1 + e) * lv[1], lv[1]};
	for (int a = 0; a < 2; a++)
		lv_w[a] += dt * lp_w[a];
	/* free flight back to the ground step's output */
	for (int a = 0; a < 2; a++)
		lv_w[a] += lp_w[a] * (tw - dt - tg);
	/* ground step (n = y): PP = diag(1, −e), VV = [[1, μ(1+e)], [0, −e]] */
	double lp_g[2] = {lp_w[0], -e * lp_w[1]};
	double lv_g[2] = {lv_w[0], mu * (1 + e) * lv_w[0] - e * lv_w[1]};
	for (int a = 0; a < 2; a++)
		lv_g[a] += dt * lp_g[a] + lp_g[a] * (tg - dt);
	g_test_message("friction gradient: adjoint (%.6f, %.6f), closed form (%.6f, %.6f)", g_s0[2], g_s0[3], lv_g[0],
				   lv_g[1]);
	g_assert_cmpfloat_with_epsilon(g_s0[2], lv_g[0], 1e-10);
	g_assert_cmpfloat_with_epsilon(g_s0[3], lv_g[1], 1e-10);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Task 3: X = I − (3/4) a aᵀ gives the 0.75/0.25 split (§3). */
static void test_closed_form_task3(void)
{
	ClScene *s = cl_test_task3();
	double g_s0[2 * CL_BALL_STATE], *g_u = g_new0(double, cl_control_size(s));
	ClRollout *r = run_gradient(s, g_s0, g_u);
	double T = s->duration, dt = cl_scene_dt(s);
	int k = impact_step(r, 0, 1);
	g_assert_cmpint(k, ==, 333);
	double tb = (k + 1) * dt, G = 2 * cl_rollout_states(r)[CL_BALL_STATE * (2 * s->steps + 1)];
	g_assert_cmpfloat_with_epsilon(G, -0.730104, 1e-6);
	for (int a = 0; a < 2; a++) {
		g_assert_cmpfloat_with_epsilon(g_s0[a], 0.75 * G, 1e-12);
		g_assert_cmpfloat_with_epsilon(g_s0[CL_BALL_STATE + a], 0.25 * G, 1e-12);
		g_assert_cmpfloat_with_epsilon(g_s0[2 + a], G * (T - tb / 4), 1e-12);
		g_assert_cmpfloat_with_epsilon(g_s0[CL_BALL_STATE + 2 + a], G * tb / 4, 1e-12);
		int steps[] = {0, 100, k - 1};
		for (size_t j = 0; j < G_N_ELEMENTS(steps); j++) {
			int n = steps[j];
			double running = 2 * 0.1 * 3.0 * dt;
			double expected = dt * G * (0.75 * (tb - (n + 1) * dt) + T - tb) + running;
			g_assert_cmpfloat_with_epsilon(g_u[4 * n + a], expected, 1e-12);
		}
		/* after the impact ball1's controls no longer reach ball2 */
		g_assert_cmpfloat_with_epsilon(g_u[4 * (k + 5) + a], 2 * 0.1 * 3.0 * dt, 1e-15);
	}
	cl_rollout_free(r);
	g_free(g_u);
	cl_scene_free(s);
}

/* Two balls 0.02 into each other (a one-step probe, so not a valid scene)
 * approaching obliquely, masses 1 and 3, e = 0.6, gravity and controls. */
static ClScene *oblique_pair(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 0.01;
	s->steps = 1;
	s->gravity = (ClVec2){0, -9.8};
	s->elasticity = 0.6;
	ClBall *b1 = cl_scene_add_ball(s, "b1");
	b1->radius = 0.26;
	b1->mass = 1.0;
	b1->velocity = (ClVec2){2, 1};
	b1->control_kind = CL_CONTROL_CONSTANT;
	b1->control_constant = (ClVec2){1, 2};
	ClBall *b2 = cl_scene_add_ball(s, "b2");
	b2->radius = 0.26;
	b2->mass = 3.0;
	b2->position = (ClVec2){0.3, 0.4};
	b2->velocity = (ClVec2){-1, 0.5};
	b2->control_kind = CL_CONTROL_CONSTANT;
	b2->control_constant = (ClVec2){0, -1};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 1;
	return s;
}

/* Central FD of the one-step forward map against the recorded Jacobian:
 * equal on the velocity rows; on the position rows FD is the explicit
 * update [I dt I] while Nimble records X (dt X), at least position_gap away. */
static void check_step_against_fd(const ClScene *s, const ClRollout *r, double position_gap)
{
	enum { MAX_STATE = 16 };
	const double h = 1e-7, dt = s->duration;
	int ns = cl_state_size(s);
	g_assert_cmpint(ns, <=, MAX_STATE);
	ClRollout *probe = cl_rollout_new(s, nimble());
	double s0[MAX_STATE], sp[MAX_STATE], sm[MAX_STATE];
	cl_scene_initial_state(s, s0);
	double worst_velocity = 0, worst_position = 0, worst_explicit = 0;
	for (int col = 0; col < ns; col++) {
		double ds0[MAX_STATE] = {0}, ds[MAX_STATE];
		ds0[col] = 1.0;
		cl_rollout_jvp(r, ds0, NULL, ds);
		for (int sign = 0; sign < 2; sign++) {
			double x[MAX_STATE];
			memcpy(x, s0, sizeof(double) * (size_t)ns);
			x[col] += sign ? -h : h;
			g_assert_true(cl_rollout_run(probe, x, NULL, false));
			memcpy(sign ? sm : sp, cl_rollout_states(probe) + ns, sizeof(double) * (size_t)ns);
		}
		for (int row = 0; row < ns; row++) {
			double fd = (sp[row] - sm[row]) / (2 * h);
			int r = row % CL_BALL_STATE, c = col % CL_BALL_STATE;
			if (r < 2) {
				double update = row / CL_BALL_STATE != col / CL_BALL_STATE ? 0.0 : r == c ? 1.0 : r + 2 == c ? dt : 0.0;
				worst_explicit = fmax(worst_explicit, fabs(fd - update));
				worst_position = fmax(worst_position, fabs(fd - ds[row]));
			} else {
				worst_velocity = fmax(worst_velocity, fabs(fd - ds[row]));
			}
		}
	}
	g_test_message("step Jacobian vs FD: velocity rows %.2e, position rows %.2e (FD vs explicit update %.2e)",
				   worst_velocity, worst_position, worst_explicit);
	g_assert_cmpfloat(worst_velocity, <, 1e-6);
	g_assert_cmpfloat(worst_explicit, <, 1e-6);
	g_assert_cmpfloat(worst_position, >, position_gap);
	cl_rollout_free(probe);
}

/* One ball-ball step with unequal masses, e = 0.6, an oblique approach:
 * every block of Nimble's step Jacobian against its closed form,
 *   PP = I − ((e+|a|²)/|a|⁴) a aᵀ (mass-free), VP = dt PP,
 *   VV = I − (1+e) M⁻¹ a aᵀ / Q, FV = VV dt M⁻¹,
 *   PV = M⁻¹ (f D − ((1+e)/Q) a (D v_f)ᵀ),  Q = aᵀM⁻¹a, D = da/dp;
 * and against finite differences of the step, which agree on the velocity
 * rows (the frozen-active-set derivative) and not on the position rows
 * (the explicit update p' = p + dt v has d p'/d p = I, not X). */
static void test_step_jacobian_pair(void)
{
	ClScene *s = oblique_pair();
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
	double dt = s->duration, e = s->elasticity, m[2] = {1.0, 3.0};
	double p1[2] = {0, 0}, p2[2] = {0.3, 0.4}, d = hypot(0.3, 0.4);
	double nrm[2] = {(p1[0] - p2[0]) / d, (p1[1] - p2[1]) / d};
	double a[4] = {nrm[0], nrm[1], -nrm[0], -nrm[1]}, minv[4] = {1, 1, 1 / m[1], 1 / m[1]};
	double vf[4] = {2 + dt * 1, 1 + dt * (2 - 9.8), -1 + dt * 0, 0.5 + dt * (-1 / 3.0 - 9.8)};
	double Q = 1 / m[0] + 1 / m[1], b = -(a[0] * vf[0] + a[1] * vf[1] + a[2] * vf[2] + a[3] * vf[3]);
	g_assert_cmpfloat(e * b, >, 0.1);
	double f = (1 + e) * b / Q;
	double P[2][2] = {{1 - nrm[0] * nrm[0], -nrm[0] * nrm[1]}, {-nrm[1] * nrm[0], 1 - nrm[1] * nrm[1]}};
	double D[4][4], Dv[4] = {0};
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			D[i][j] = ((i < 2) == (j < 2) ? 1 : -1) * P[i % 2][j % 2] / d;
			Dv[j] += D[i][j] * vf[i]; /* D is symmetric */
		}
	/* the state is [p1 v1 (spin) p2 v2 (spin)]; dof q of ball q/2; Nimble's
	 * translational joints do not rotate, so spin passes through */
	enum { N = CL_BALL_STATE };
	for (int col = 0; col < 2 * N; col++) {
		double ds0[2 * N] = {0}, ds[2 * N];
		ds0[col] = 1.0;
		cl_rollout_jvp(r, ds0, NULL, ds);
		int cb = col / N, cq = 2 * cb + col % 2;
		bool col_is_velocity = col % N >= 2;
		for (int row = 0; row < 2 * N; row++) {
			int rb = row / N, rq = 2 * rb + row % 2;
			double pp = (rq == cq) - ((e + 2) / 4) * a[rq] * a[cq];
			double vv = (rq == cq) - (1 + e) * minv[rq] * a[rq] * a[cq] / Q;
			double pv = minv[rq] * (f * D[rq][cq] - ((1 + e) / Q) * a[rq] * Dv[cq]);
			double expected = row % N >= 4 || col % N >= 4 ? (row == col)
							  : row % N < 2				? (col_is_velocity ? dt * pp : pp)
														: (col_is_velocity ? vv : pv);
			g_assert_cmpfloat_with_epsilon(ds[row], expected, 1e-12);
		}
	}
	/* controls: FV = VV dt M⁻¹ on the velocity rows, nothing on the positions */
	for (int col = 0; col < 4; col++) {
		double du[4] = {0}, ds[2 * N];
		du[col] = 1.0;
		cl_rollout_jvp(r, NULL, du, ds);
		for (int row = 0; row < 2 * N; row++) {
			int rq = 2 * (row / N) + row % 2;
			double vv = (rq == col) - (1 + e) * minv[rq] * a[rq] * a[col] / Q;
			g_assert_cmpfloat_with_epsilon(ds[row], row % N < 2 || row % N >= 4 ? 0.0 : vv * dt * minv[col], 1e-12);
		}
	}
	check_step_against_fd(s, r, 0.4); /* ((e+2)/4)·0.8² = 0.416 */
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* The same pair sliding with μ = 0.2: the friction row sits at its bound
 * (an upper-bound row, with the tangent's position gradient in PV); the
 * velocity rows still equal FD of the step, the position rows are still X. */
static void test_step_jacobian_pair_friction(void)
{
	ClScene *s = oblique_pair();
	s->friction = 0.2;
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	const double *v = cl_rollout_states(r) + 2 * CL_BALL_STATE, *w = v + CL_BALL_STATE;
	/* sliding: the tangential relative velocity keeps its sign */
	double t[2] = {0.8, -0.6};
	g_assert_cmpfloat(t[0] * (v[2] - w[2]) + t[1] * (v[3] - w[3]), >, 0.1);
	check_step_against_fd(s, r, 0.4);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* A ball landing with a small tangential speed and μ = 0.5 sticks: its
 * friction row is interior (clamping, not upper-bound). Velocity rows = FD,
 * position rows X = diag(1, −e). */
static void test_step_jacobian_sticking(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 0.01;
	s->steps = 1;
	s->gravity = (ClVec2){0, -9.8};
	s->elasticity = 0.5;
	s->friction = 0.5;
	ClWall *g = cl_scene_add_wall(s, "ground");
	g->normal = (ClVec2){0, 1};
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->position = (ClVec2){0, 0.09};
	b->velocity = (ClVec2){0.1, -2};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	const double *v = cl_rollout_states(r) + CL_BALL_STATE;
	g_assert_cmpfloat_with_epsilon(v[2], 0.0, 1e-15); /* stuck */
	g_assert_cmpfloat(v[3], >, 0.9);
	check_step_against_fd(s, r, 1.4);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Two simultaneous bouncing contacts (ground and an oblique wall): X from
 * both columns satisfies aᵢᵀ X aᵢ = −e for each, and with both clamping and
 * independent, VV = −e I. */
static void test_two_bouncing_contacts(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 0.01;
	s->steps = 1;
	s->elasticity = 0.5;
	ClWall *g = cl_scene_add_wall(s, "ground");
	g->normal = (ClVec2){0, 1};
	ClWall *w = cl_scene_add_wall(s, "slope");
	double n2[2] = {-0.8, 0.6};
	w->normal = (ClVec2){n2[0], n2[1]};
	w->point = (ClVec2){0 - 0.1 * n2[0], 0.1 - 0.1 * n2[1]};
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->position = (ClVec2){0, 0.1};
	b->velocity = (ClVec2){1, -1};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 2);
	double X[2][2], VV[2][2];
	for (int col = 0; col < 2; col++) {
		double ds0[CL_BALL_STATE] = {0}, ds[CL_BALL_STATE];
		ds0[col] = 1.0;
		cl_rollout_jvp(r, ds0, NULL, ds);
		X[0][col] = ds[0];
		X[1][col] = ds[1];
		ds0[col] = 0.0;
		ds0[col + 2] = 1.0;
		cl_rollout_jvp(r, ds0, NULL, ds);
		VV[0][col] = ds[2];
		VV[1][col] = ds[3];
	}
	const double normals[2][2] = {{0, 1}, {n2[0], n2[1]}};
	for (int k = 0; k < 2; k++) {
		const double *a = normals[k];
		double aXa = 0;
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				aXa += a[i] * X[i][j] * a[j];
		g_assert_cmpfloat_with_epsilon(aXa, -s->elasticity, 1e-12);
	}
	g_assert_cmpfloat_with_epsilon(X[0][1], X[1][0], 1e-12);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			g_assert_cmpfloat_with_epsilon(VV[i][j], i == j ? -s->elasticity : 0.0, 1e-12);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Task 2: FD of Nimble's own forward map sees the impact step frozen,
 * d x_N/d vx0 = dt((K+1) − e(N−K−1)) = +0.28, while Nimble's gradient uses
 * the bounce approximation, −e T = −0.552 (§2: no TOI anywhere else). */
static void test_fd_differs(void)
{
	ClScene *s = cl_test_task2(0.0);
	double g_s0[CL_BALL_STATE];
	ClRollout *r = run_gradient(s, g_s0, NULL);
	int K = impact_step(r, 0, -2), N = s->steps;
	double x_N = cl_rollout_states(r)[CL_BALL_STATE * N], dt = cl_scene_dt(s), e = s->elasticity;
	ClParam p;
	g_assert_true(cl_param_parse(s, "ball.velocity.x", &p, NULL, 0));
	ClStatus status;
	double fd = cl_finite_difference(s, nimble(), &p, 1e-6, &status);
	g_assert_cmpint(status.code, ==, CL_STATUS_OK);
	double frozen = 2 * (x_N + 2) * dt * ((K + 1) - e * (N - K - 1));
	g_test_message("dL/dvx0: Nimble %.6f, FD %.6f, frozen-step closed form %.6f", g_s0[2], fd, frozen);
	g_assert_cmpfloat_with_epsilon(fd, frozen, 1e-5);
	g_assert_cmpfloat(fabs(fd - g_s0[2]), >, 4.0);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* ------------------------------------------------------- general scenes */

/* Three balls, two walls, gravity, friction, unequal masses: a pile in the
 * corner with simultaneous contacts (Dantzig with friction rows) and balls
 * flying in. Finite, deterministic to the bit, contacts coupled in groups. */
static ClScene *corner_pile(void)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0;
	s->steps = 400;
	s->gravity = (ClVec2){0, -9.8};
	s->elasticity = 0.5;
	s->friction = 0.3;
	ClWall *g = cl_scene_add_wall(s, "ground");
	g->normal = (ClVec2){0, 1};
	ClWall *w = cl_scene_add_wall(s, "left");
	w->point = (ClVec2){-1, 0};
	w->normal = (ClVec2){1, 0};
	ClBall *a = cl_scene_add_ball(s, "a");
	a->position = (ClVec2){-0.8999, 0.1};
	a->mass = 2.0;
	ClBall *b = cl_scene_add_ball(s, "b");
	b->position = (ClVec2){-0.6998, 0.1};
	b->velocity = (ClVec2){-1, 0};
	b->control_kind = CL_CONTROL_CONSTANT;
	b->control_constant = (ClVec2){-0.5, 0};
	ClBall *c = cl_scene_add_ball(s, "c");
	c->position = (ClVec2){-0.45, 0.6};
	c->velocity = (ClVec2){-1.5, 0};
	c->radius = 0.15;
	c->mass = 0.5;
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 2;
	t->target = (ClVec2){0.5, 0.5};
	ClLossTerm *e = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	e->ball = 1;
	e->weight = 0.1;
	return s;
}

static void run_twice_identical(ClScene *s, int *coupled_events)
{
	int ns = cl_state_size(s), nu = cl_control_size(s);
	double *states[2], *g_s0[2], *g_u[2];
	for (int k = 0; k < 2; k++) {
		ClRollout *r = cl_rollout_new(s, nimble());
		if (!cl_rollout_run(r, NULL, NULL, true))
			g_error("%s: %s", s->name, cl_rollout_status(r)->message);
		states[k] = g_memdup2(cl_rollout_states(r), sizeof(double) * (size_t)(ns * (s->steps + 1)));
		g_s0[k] = g_new0(double, ns);
		g_u[k] = g_new0(double, nu);
		cl_rollout_gradient(r, g_s0[k], g_u[k]);
		if (k == 0) {
			*coupled_events = 0;
			for (int i = 0; i < cl_rollout_event_count(r); i++)
				*coupled_events += cl_rollout_events(r)[i].other >= 0;
		}
		cl_rollout_free(r);
	}
	for (int i = 0; i < ns * (s->steps + 1); i++)
		g_assert_true(isfinite(states[0][i]));
	for (int i = 0; i < ns; i++)
		g_assert_true(isfinite(g_s0[0][i]));
	for (int i = 0; i < nu; i++)
		g_assert_true(isfinite(g_u[0][i]));
	g_assert_cmpmem(states[0], sizeof(double) * (size_t)(ns * (s->steps + 1)), states[1],
					sizeof(double) * (size_t)(ns * (s->steps + 1)));
	g_assert_cmpmem(g_s0[0], sizeof(double) * (size_t)ns, g_s0[1], sizeof(double) * (size_t)ns);
	g_assert_cmpmem(g_u[0], sizeof(double) * (size_t)nu, g_u[1], sizeof(double) * (size_t)nu);
	for (int k = 0; k < 2; k++) {
		g_free(states[k]);
		g_free(g_s0[k]);
		g_free(g_u[k]);
	}
}

static void test_three_balls_two_walls(void)
{
	ClScene *s = corner_pile();
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(s, message, sizeof message))
		g_error("%s", message);
	int coupled;
	run_twice_identical(s, &coupled);
	g_test_message("corner pile: %d ball-ball impulses", coupled);
	g_assert_cmpint(coupled, >, 10);
	/* the resting ball stays on the ground: no sinking, no drift into the wall */
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	const double *final = cl_rollout_states(r) + 12 * s->steps;
	g_assert_cmpfloat(final[1], >, 0.1 - 0.03);
	g_assert_cmpfloat(final[0], >, -0.9 - 0.03);
	cl_rollout_free(r);
	cl_scene_free(s);
	for (unsigned seed = 1; seed <= 5; seed++) {
		s = cl_test_random_scene(seed, 3, 2);
		s->friction = 0.2;
		run_twice_identical(s, &coupled);
		cl_scene_free(s);
	}
}

/* A ball in a slot exactly its diameter, falling with e = 0.5: the floor's
 * restitution target pushes it into the ceiling, and the LCP has no solution. */
static void test_solver_failure_reported(void)
{
	ClScene *s = cl_scene_new();
	s->elasticity = 0.5;
	ClWall *floor = cl_scene_add_wall(s, "floor");
	floor->normal = (ClVec2){0, 1};
	ClWall *ceiling = cl_scene_add_wall(s, "ceiling");
	ceiling->point = (ClVec2){0, 0.2};
	ceiling->normal = (ClVec2){0, -1};
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->position = (ClVec2){0, 0.1};
	b->velocity = (ClVec2){0, -1};
	g_assert_true(cl_scene_validate(s, NULL, 0));
	ClRollout *r = cl_rollout_new(s, nimble());
	g_assert_false(cl_rollout_run(r, NULL, NULL, true));
	const ClStatus *status = cl_rollout_status(r);
	g_test_message("%s: %s", cl_status_name(status->code), status->message);
	g_assert_cmpint(status->code, ==, CL_STATUS_SOLVER_FAILED);
	g_assert_cmpint(status->step, ==, 0);
	cl_rollout_free(r);
	cl_scene_free(s);
}

static void test_registry(void)
{
	const ClBackendInfo *info = cl_backend_info(nimble());
	g_assert_false(info->gradient_is_derivative);
	g_assert_nonnull(strstr(info->summary, "not the derivative"));
	const char *names[] = {"precision", "contact_clipping_depth", "bouncing_velocity_threshold",
						   "max_bouncing_velocity"};
	g_assert_cmpint(info->param_count, ==, G_N_ELEMENTS(names));
	for (int i = 0; i < info->param_count; i++) {
		const ClParamDesc *d = &info->params[i];
		g_assert_cmpstr(d->name, ==, names[i]);
		g_assert_true(d->default_value >= d->min && d->default_value <= d->max);
		g_assert_true(d->help && *d->help);
	}
	ClScene *s = cl_scene_new();
	g_assert_cmpfloat(cl_scene_backend_param(s, nimble(), "precision"), ==, CL_PRECISION_FLOAT64);
	g_assert_cmpfloat(cl_scene_backend_param(s, nimble(), "contact_clipping_depth"), ==, 0.03);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/nimble/tables/gradients", test_gradient_rows);
	g_test_add_data_func("/nimble/tables/optimized-task2", GINT_TO_POINTER(2), test_optimized_velocity);
	g_test_add_data_func("/nimble/tables/optimized-friction", GINT_TO_POINTER(4), test_optimized_velocity);
	g_test_add_func("/nimble/tables/learning-task3", test_learning_loss);
	g_test_add_func("/nimble/saved-runs-float32", test_saved_runs_float32);
	g_test_add_func("/nimble/lcp/random-psd", test_lcp_random_psd);
	g_test_add_func("/nimble/lcp/random-friction", test_lcp_random_friction);
	g_test_add_func("/nimble/lcp/single-contact", test_lcp_single_contact);
	g_test_add_func("/nimble/closed-form/task1", test_closed_form_task1);
	g_test_add_func("/nimble/closed-form/task2", test_closed_form_task2);
	g_test_add_func("/nimble/closed-form/friction", test_closed_form_friction);
	g_test_add_func("/nimble/closed-form/task3", test_closed_form_task3);
	g_test_add_func("/nimble/step-jacobian-pair", test_step_jacobian_pair);
	g_test_add_func("/nimble/step-jacobian-pair-friction", test_step_jacobian_pair_friction);
	g_test_add_func("/nimble/step-jacobian-sticking", test_step_jacobian_sticking);
	g_test_add_func("/nimble/two-bouncing-contacts", test_two_bouncing_contacts);
	g_test_add_func("/nimble/fd-differs", test_fd_differs);
	g_test_add_func("/nimble/three-balls-two-walls", test_three_balls_two_walls);
	g_test_add_func("/nimble/solver-failure", test_solver_failure_reported);
	g_test_add_func("/nimble/registry", test_registry);
	return g_test_run();
}
