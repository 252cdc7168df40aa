/* Smoothed gradients: the statistical checks of smoothing.md §8 (sample
 * means within 3 SE of the quadrature values, never digit by digit), the α
 * rule on hand-made batches, reproducibility across thread counts, common
 * random numbers and antithetic pairs, parameters without an adjoint,
 * degenerate samples, the random streams, optimization along ZoBG, and the
 * smoothed quantities of sweeps. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <stdatomic.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

typedef struct Run {
	int count;
	int backends[16];
	ClParam params[3];
	double sigma[3];
	ClSmoothResult results[16];
	ClSmoothQuadrature quad[16];
} Run;

static ClSmoothDef run_def(Run *run, const ClScene *scene, const char *const *names, int d, double sigma,
						   const char *const *ids, int n)
{
	for (int k = 0; k < d; k++) {
		char message[CL_MESSAGE_MAX];
		g_assert_true(cl_param_parse(scene, names[k], &run->params[k], message, sizeof message));
		run->sigma[k] = sigma;
	}
	for (int b = 0; b < n; b++)
		run->backends[b] = cl_test_backend(ids[b]);
	run->count = n;
	ClSmoothDef def = cl_smooth_default_def();
	def.params = run->params;
	def.sigma = run->sigma;
	def.param_count = d;
	def.backends = run->backends;
	def.backend_count = n;
	def.threads = 2;
	return def;
}

static void run_clear(Run *run)
{
	for (int b = 0; b < run->count; b++)
		cl_smooth_result_clear(&run->results[b]);
}

/* |mean − reference| ≤ sigmas·se + slack, with the numbers in the log. */
static void assert_within(const char *what, ClSmoothEstimate e, double reference, double sigmas, double slack)
{
	double z = (e.mean - reference) / e.se;
	g_test_message("%s: %.6g ± %.3g against %.6g (z = %+.2f)", what, e.mean, e.se, reference, z);
	g_assert_true(isfinite(e.mean) && isfinite(reference));
	g_assert_cmpfloat(fabs(e.mean - reference), <=, sigmas * e.se + slack);
}

/* Every backend: ZoBG within 3 SE of the quadrature ∇F_σ of its own loss,
 * FoBG within 3 SE (+ 1e-6) of the quadrature E ∇f. */
static void check_against_quadrature(const char *scene_name, Run *run, int d, const char *const *names)
{
	for (int b = 0; b < run->count; b++)
		for (int k = 0; k < d; k++) {
			const ClSmoothGradient *g = &run->results[b].gradient[k];
			const char *id = cl_backend_info(run->backends[b])->id;
			char *zobg = g_strdup_printf("%s %s ZoBG d/d%s", scene_name, id, names[k]);
			char *fobg = g_strdup_printf("%s %s FoBG d/d%s", scene_name, id, names[k]);
			assert_within(zobg, g->zobg, run->quad[b].grad[k], 3.0, 0.0);
			assert_within(fobg, g->fobg, run->quad[b].expected_grad[k], 3.0, 1e-6);
			g_free(zobg);
			g_free(fobg);
		}
}

static void smooth_and_quadrature(const ClScene *scene, ClSmoothDef *def, Run *run, int points)
{
	ClStatus status;
	g_assert_true(cl_smooth(scene, def, run->results, &status));
	g_assert_true(cl_smooth_quadrature(scene, def, points, run->quad, &status));
	for (int b = 0; b < run->count; b++) {
		g_assert_cmpint(run->results[b].status.code, ==, CL_STATUS_OK);
		g_assert_cmpint(run->quad[b].failed, ==, 0);
	}
}

/* ------------------------------------------------------------ §8 */

static void test_task1(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y"};
	const char *ids[] = {"exact", "impulse", "impulse-toi", "compliant-warp", "convex"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.05, ids, 5);
	def.samples = 1000;
	def.seed = 1;
	def.keep_terms = true;
	smooth_and_quadrature(scene, &def, &run, 0);
	/* the grid itself: its mass over ±6σ, and the exact smoothed gradient of a loss that is linear there */
	g_assert_cmpfloat(fabs(run.quad[0].mass - 1.0), <, 1e-6);
	g_assert_cmpfloat(fabs(run.quad[0].grad[0] + 1.0), <, 1e-5);
	check_against_quadrature("Task 1", &run, 1, names);
	/* impulse without TOI: its adjoint is +1 at every sample, ZoBG of its own loss slopes down */
	const ClSmoothResult *impulse = &run.results[1];
	for (int t = 0; t < impulse->terms; t++)
		g_assert_cmpfloat(impulse->fobg_values[t], ==, 1.0);
	g_assert_cmpfloat(impulse->gradient[0].zobg.mean, <, 0.0);
	g_assert_cmpfloat(impulse->gradient[0].zobg.mean + 3 * impulse->gradient[0].zobg.se, <, 0.0);
	/* a linear loss: no baseline costs f(θ)²/σ² per sample (Task 1: SD 23.8 against 1.44) */
	const ClSmoothGradient *g = &run.results[0].gradient[0];
	g_assert_cmpfloat(g->zobg_nobaseline.se, >, 5 * g->zobg.se);
	run_clear(&run);
	cl_scene_free(scene);
}

static void test_task2(void)
{
	ClScene *scene = cl_test_task2(0.0);
	const char *names[] = {"ball.velocity.x", "ball.velocity.y"};
	const char *ids[] = {"exact", "impulse", "impulse-toi"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 2, 0.25, ids, 3);
	def.samples = 1000;
	def.seed = 2;
	/* 128 × 128 instead of 256 × 256: a tenth of the quadrature error of the
	 * smooth losses here is far below the sampling error (3 SE ≈ 0.3) */
	smooth_and_quadrature(scene, &def, &run, 128);
	check_against_quadrature("Task 2", &run, 2, names);
	/* impulse's adjoint sends vx the wrong way; its own smoothed landscape does not */
	g_assert_cmpfloat(run.results[1].gradient[0].fobg.mean, >, 1.0);
	g_assert_cmpfloat(run.results[1].gradient[0].zobg.mean, <, -2.0);
	run_clear(&run);
	cl_scene_free(scene);
}

static void test_wedge(void)
{
	ClScene *scene = cl_test_wedge();
	const char *names[] = {"ball.position.x"};
	const char *ids[] = {"exact", "impulse", "impulse-toi", "compliant-warp"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.05, ids, 4);
	def.samples = 1000;
	def.seed = 3;
	smooth_and_quadrature(scene, &def, &run, 0);
	check_against_quadrature("wedge", &run, 1, names);
	/* the jump: FoBG with the exact gradient converges to −2.6, ∇F_σ is −10 */
	const ClSmoothGradient *g = &run.results[0].gradient[0];
	double bias = g->fobg.mean - run.quad[0].grad[0];
	g_test_message("wedge: exact FoBG %.4g ± %.3g, quadrature ∇F_σ %.4g: bias %.4g", g->fobg.mean, g->fobg.se,
				   run.quad[0].grad[0], bias);
	g_assert_cmpfloat(bias, >, 5.0);
	g_assert_cmpfloat(bias, >, 20 * g->fobg.se);
	/* the jump formula: E ∇f + [f] φ_σ(c − θ), [f] ≈ −1.33 at c = 0.5423 */
	double phi = exp(-0.5 * pow(0.0423 / 0.05, 2)) / (0.05 * sqrt(2 * G_PI));
	g_assert_cmpfloat(fabs(run.quad[0].expected_grad[0] - 1.33 * phi - run.quad[0].grad[0]), <, 0.2);
	run_clear(&run);
	cl_scene_free(scene);
}

static void test_graze(void)
{
	ClScene *scene = cl_test_task3_graze();
	const char *names[] = {"ball1.velocity.x", "ball1.velocity.y"};
	const char *ids[] = {"exact"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 2, 0.1, ids, 1);
	def.samples = 1000;
	def.seed = 4;
	smooth_and_quadrature(scene, &def, &run, 128);
	for (int k = 0; k < 2; k++)
		assert_within("graze exact ZoBG", run.results[0].gradient[k].zobg, run.quad[0].grad[k], 3.0, 0.0);
	/* the point gradient sits on the square-root onset: far from the smoothed one */
	g_assert_cmpfloat(fabs(run.results[0].gradient[0].point), >, 10 * fabs(run.quad[0].grad[0]));
	run_clear(&run);
	cl_scene_free(scene);
}

/* ------------------------------------------------------------ the α rule */

/* ε restated from smoothing.md §2 */
static double epsilon_of(double var0, double bound, int n, int d, double delta)
{
	double l = log((d + 1.0) / delta);
	return sqrt(2 * var0 * l / n) + 2 * bound * l / (3.0 * n);
}

static void test_alpha_rule(void)
{
	/* z: mean 2, sample variance 4/3, largest |z| 3; y: mean 2, variance 1/3 */
	const double z[] = {1, 3, 1, 3};
	const double y[] = {1.5, 2.5, 1.5, 2.5};
	const double shifted[] = {11.5, 12.5, 11.5, 12.5}; /* gap 10 */
	const double none[] = {NAN, NAN, NAN, NAN};
	double eps = epsilon_of(4.0 / 3.0, 3.0, 4, 1, 0.05);
	g_assert_cmpfloat(eps, >, 3.0);
	g_assert_cmpfloat(eps, <, 5.0);

	ClSmoothAlpha a = cl_smooth_alpha_batch(1, 4, z, y, 5.0, 0.05);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_OPTIMUM);
	g_assert_cmpfloat_with_epsilon(a.epsilon, eps, 1e-12);
	g_assert_cmpfloat_with_epsilon(a.zobg_variance, 4.0 / 3.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(a.fobg_variance, 1.0 / 3.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(a.alpha, 0.8, 1e-12);

	a = cl_smooth_alpha_batch(1, 4, z, shifted, 5.0, 0.05);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_CONSTRAINT);
	g_assert_cmpfloat_with_epsilon(a.gap, 10.0, 1e-12);
	g_assert_cmpfloat_with_epsilon(a.alpha, (5.0 - eps) / 10.0, 1e-12);

	a = cl_smooth_alpha_batch(1, 4, z, y, 3.0, 0.05);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_ZOBG);
	g_assert_cmpfloat(a.alpha, ==, 0.0);

	a = cl_smooth_alpha_batch(1, 4, z, none, 5.0, 0.05);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_NO_FOBG);
	g_assert_cmpfloat(a.alpha, ==, 0.0);

	/* an exact FoBG (no variance) is taken whole once the bound allows it */
	const double constant[] = {2, 2, 2, 2};
	a = cl_smooth_alpha_batch(1, 4, z, constant, 5.0, 0.05);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_OPTIMUM);
	g_assert_cmpfloat(a.alpha, ==, 1.0);

	/* the default γ is 10 % of ‖ZoBG‖ */
	a = cl_smooth_alpha_batch(1, 4, z, y, NAN, 0.05);
	g_assert_cmpfloat_with_epsilon(a.gamma, 0.2, 1e-12);
	g_assert_cmpint(a.rule, ==, CL_SMOOTH_ALPHA_ZOBG);
	g_assert_cmpstr(cl_smooth_alpha_rule_name(CL_SMOOTH_ALPHA_CONSTRAINT), ==, "constraint");
}

/* The engine's α is the rule applied to its own terms. */
static void test_alpha_of_engine(void)
{
	ClScene *scene = cl_test_task2(0.0);
	const char *names[] = {"ball.velocity.x", "ball.velocity.y"};
	const char *ids[] = {"exact", "compliant-warp"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 2, 0.25, ids, 2);
	def.samples = 400;
	def.keep_terms = true;
	def.gamma = 2.0;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &def, run.results, &status));
	for (int b = 0; b < 2; b++) {
		const ClSmoothResult *r = &run.results[b];
		ClSmoothAlpha a = cl_smooth_alpha_batch(2, r->terms, r->zobg_values, r->fobg_values, 2.0, 0.05);
		g_assert_cmpint(a.rule, ==, r->alpha.rule);
		g_assert_cmpfloat(a.alpha, ==, r->alpha.alpha);
		for (int k = 0; k < 2; k++) {
			double expected = a.alpha * r->gradient[k].fobg.mean + (1 - a.alpha) * r->gradient[k].zobg.mean;
			g_assert_cmpfloat_with_epsilon(r->gradient[k].aobg.mean, expected, 1e-12 * fmax(1, fabs(expected)));
		}
	}
	run_clear(&run);
	cl_scene_free(scene);
}

/* ------------------------------------------------------------ samples */

static bool same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same_estimate(ClSmoothEstimate a, ClSmoothEstimate b)
{
	g_assert_true(same_bits(a.mean, b.mean));
	g_assert_true(same_bits(a.se, b.se));
}

static void assert_same_result(const ClSmoothResult *a, const ClSmoothResult *b, int d)
{
	assert_same_estimate(a->smoothed_loss, b->smoothed_loss);
	g_assert_true(same_bits(a->alpha.alpha, b->alpha.alpha));
	g_assert_true(same_bits(a->alpha.epsilon, b->alpha.epsilon));
	for (int k = 0; k < d; k++) {
		const ClSmoothGradient *x = &a->gradient[k], *y = &b->gradient[k];
		g_assert_true(same_bits(x->point, y->point));
		assert_same_estimate(x->zobg, y->zobg);
		assert_same_estimate(x->zobg_nobaseline, y->zobg_nobaseline);
		assert_same_estimate(x->fobg, y->fobg);
		assert_same_estimate(x->aobg, y->aobg);
	}
}

/* Same seed: the same bits on 1, 2 and 3 threads; with other backends beside it a backend's
 * numbers do not change (its samples depend only on the seed). */
static void test_threads_and_common_numbers(void)
{
	ClScene *scene = cl_test_task2(0.0);
	const char *names[] = {"ball.velocity.x", "ball.velocity.y"};
	const char *ids[] = {"exact", "impulse", "lcp-nimble"};
	Run one, two, three, alone;
	ClSmoothDef d1 = run_def(&one, scene, names, 2, 0.25, ids, 3), d2 = run_def(&two, scene, names, 2, 0.25, ids, 3);
	ClSmoothDef d3 = run_def(&three, scene, names, 2, 0.25, ids, 3);
	ClSmoothDef da = run_def(&alone, scene, names, 2, 0.25, ids + 1, 1);
	d1.threads = 1;
	d3.threads = 3;
	d1.samples = d2.samples = d3.samples = da.samples = 200;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &d1, one.results, &status));
	g_assert_true(cl_smooth(scene, &d2, two.results, &status));
	g_assert_true(cl_smooth(scene, &d3, three.results, &status));
	g_assert_true(cl_smooth(scene, &da, alone.results, &status));
	for (int b = 0; b < 3; b++) {
		assert_same_result(&one.results[b], &two.results[b], 2);
		assert_same_result(&one.results[b], &three.results[b], 2);
	}
	assert_same_result(&one.results[1], &alone.results[0], 2);
	/* another seed, other numbers */
	d2.seed = 7;
	run_clear(&two);
	g_assert_true(cl_smooth(scene, &d2, two.results, &status));
	g_assert_false(same_bits(one.results[0].gradient[0].zobg.mean, two.results[0].gradient[0].zobg.mean));
	run_clear(&one);
	run_clear(&two);
	run_clear(&three);
	run_clear(&alone);
	cl_scene_free(scene);
}

/* Common random numbers: two backends' ZoBG terms move together, so their
 * difference is far less noisy than either (Task 1: they differ by 0.007
 * while each has SE 0.046). Sample i depends only on (seed, i): a longer run
 * starts with a shorter one's terms. */
static void test_common_numbers_and_prefix(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y"};
	const char *ids[] = {"exact", "impulse"};
	Run run, shorter;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.05, ids, 2);
	ClSmoothDef half = run_def(&shorter, scene, names, 1, 0.05, ids, 2);
	def.samples = 400;
	half.samples = 200;
	def.keep_terms = half.keep_terms = true;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &def, run.results, &status));
	g_assert_true(cl_smooth(scene, &half, shorter.results, &status));
	double sum = 0, sq = 0;
	int n = run.results[0].terms;
	for (int t = 0; t < n; t++) {
		double diff = run.results[1].zobg_values[t] - run.results[0].zobg_values[t];
		sum += diff;
		sq += diff * diff;
	}
	double sd_diff = sqrt((sq - sum * sum / n) / (n - 1));
	double sd_exact = run.results[0].gradient[0].zobg.se * sqrt(n);
	g_test_message("Task 1 ZoBG terms: SD %.4g, SD of impulse − exact %.4g", sd_exact, sd_diff);
	g_assert_cmpfloat(sd_diff, <, 0.2 * sd_exact);
	for (int b = 0; b < 2; b++)
		for (int t = 0; t < 200; t++)
			g_assert_true(same_bits(run.results[b].zobg_values[t], shorter.results[b].zobg_values[t]));
	run_clear(&run);
	run_clear(&shorter);
	cl_scene_free(scene);
}

/* Antithetic pair j is ±ε_j, ε_j the non-antithetic run's sample j: on
 * Task 1's exact loss, linear in y0 near 1 with slope −1, both forms give
 * the term −ε_j² exactly (up to rounding). */
static void test_antithetic(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y"};
	const char *ids[] = {"exact"};
	Run plain, pairs;
	ClSmoothDef dp = run_def(&plain, scene, names, 1, 0.05, ids, 1);
	ClSmoothDef da = run_def(&pairs, scene, names, 1, 0.05, ids, 1);
	dp.samples = 100;
	da.samples = 200;
	da.antithetic = true;
	dp.keep_terms = da.keep_terms = true;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &dp, plain.results, &status));
	g_assert_true(cl_smooth(scene, &da, pairs.results, &status));
	g_assert_cmpint(pairs.results[0].terms, ==, 100);
	for (int t = 0; t < 100; t++) {
		g_assert_cmpfloat(pairs.results[0].zobg_values[t], <=, 0.0);
		g_assert_cmpfloat_with_epsilon(pairs.results[0].zobg_values[t], plain.results[0].zobg_values[t], 1e-9);
	}
	/* the baseline cancels within a pair */
	assert_same_estimate(pairs.results[0].gradient[0].zobg, pairs.results[0].gradient[0].zobg_nobaseline);
	/* odd N cannot be paired */
	da.samples = 201;
	g_assert_false(cl_smooth(scene, &da, pairs.results + 1, &status));
	g_assert_nonnull(strstr(status.message, "even"));
	run_clear(&plain);
	pairs.count = 1;
	run_clear(&pairs);
	cl_scene_free(scene);
}

/* ------------------------------------------------------------ availability */

/* A physical parameter: exact differentiates e (parameter columns at each
 * sample), impulse-toi does not (e is a constant of DiffTaichi): ZoBG only,
 * its point derivative the central difference. */
static void test_physical_parameter(void)
{
	ClScene *scene = cl_test_task2(0.0);
	const char *names[] = {"elasticity", "ball.velocity.x"};
	const char *ids[] = {"exact", "impulse-toi"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 2, 0.02, ids, 2);
	def.sigma = (double[]){0.02, 0.25};
	def.samples = 100;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &def, run.results, &status));

	const ClSmoothResult *exact = &run.results[0];
	g_assert_true(exact->gradient[0].has_adjoint);
	g_assert_true(isfinite(exact->gradient[0].fobg.mean));
	g_assert_cmpint(exact->alpha.rule, !=, CL_SMOOTH_ALPHA_NO_FOBG);
	/* the point derivative is the adjoint of one run recorded with parameter columns */
	ClRollout *r = cl_rollout_new(scene, run.backends[0]);
	cl_rollout_record_params(r, true);
	cl_rollout_run(r, NULL, NULL, true);
	double adjoint;
	cl_rollout_param_gradient(r, &run.params[0], 1, &adjoint);
	cl_rollout_free(r);
	g_assert_true(same_bits(exact->gradient[0].point, adjoint));
	/* the exact flow is smooth in e here: FoBG and ZoBG estimate the same number */
	const ClSmoothEstimate *f = &exact->gradient[0].fobg, *z = &exact->gradient[0].zobg;
	g_test_message("exact d/de: FoBG %.6g ± %.2g, ZoBG %.6g ± %.2g", f->mean, f->se, z->mean, z->se);
	g_assert_cmpfloat(fabs(f->mean - z->mean), <, 3.0 * sqrt(f->se * f->se + z->se * z->se));

	const ClSmoothResult *toi = &run.results[1];
	g_assert_false(toi->gradient[0].has_adjoint);
	g_assert_true(isnan(toi->gradient[0].fobg.mean));
	g_assert_true(isfinite(toi->gradient[0].zobg.mean));
	/* the point derivative is the central difference, as `gradients` and sweeps give it */
	double fd = cl_finite_difference(scene, run.backends[1], &run.params[0],
									 cl_fd_step(scene, run.backends[1], &run.params[0]), NULL);
	g_assert_true(same_bits(toi->gradient[0].point, fd));
	/* a coordinate with an adjoint keeps its FoBG; AoBG falls back to ZoBG and says so */
	g_assert_true(toi->gradient[1].has_adjoint);
	g_assert_true(isfinite(toi->gradient[1].fobg.mean));
	g_assert_cmpint(toi->alpha.rule, ==, CL_SMOOTH_ALPHA_NO_FOBG);
	for (int k = 0; k < 2; k++)
		assert_same_estimate(toi->gradient[k].aobg, toi->gradient[k].zobg);
	run_clear(&run);
	cl_scene_free(scene);
}

/* Samples starting inside the ground are counted; their losses stay in
 * ZoBG, their gradients leave FoBG. */
static void test_degenerate_samples(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y"};
	const char *ids[] = {"exact"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.5, ids, 1);
	def.samples = 200;
	def.keep_terms = true;
	ClStatus status;
	g_assert_true(cl_smooth(scene, &def, run.results, &status));
	const ClSmoothResult *r = &run.results[0];
	g_test_message("%d of %d samples not ok: %s", r->not_ok, r->terms, r->first_problem.message);
	g_assert_cmpint(r->not_ok, >, 0);
	g_assert_cmpint(r->first_problem.code, !=, CL_STATUS_OK);
	g_assert_cmpint(r->zobg_terms, ==, r->terms);
	g_assert_cmpint(r->fobg_terms, ==, r->terms - r->not_ok);
	int dropped = 0;
	for (int t = 0; t < r->terms; t++)
		dropped += isnan(r->fobg_values[t]);
	g_assert_cmpint(dropped, ==, r->not_ok);
	run_clear(&run);
	cl_scene_free(scene);
}

static void test_invalid(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y", "ball.position.y"};
	const char *ids[] = {"exact"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.05, ids, 1);
	ClStatus status;
	def.samples = 1;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_nonnull(strstr(status.message, "samples"));
	def.samples = 10;
	run.sigma[0] = -1;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_nonnull(strstr(status.message, "sigma of ball.position.y"));
	run.sigma[0] = run.sigma[1] = run.sigma[2] = 0.05;
	run.params[1] = run.params[2] = run.params[0];
	def.param_count = 2;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_nonnull(strstr(status.message, "given twice"));
	def.param_count = 1;
	def.delta = 1.5;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_nonnull(strstr(status.message, "delta"));
	def.delta = 0.05;
	int unknown = 999;
	def.backends = &unknown;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_nonnull(strstr(status.message, "unknown backend"));
	def.backends = run.backends;
	g_assert_true(cl_param_parse(scene, "ball.position.x", &run.params[1], NULL, 0));
	g_assert_true(cl_param_parse(scene, "ball.velocity.x", &run.params[2], NULL, 0));
	g_assert_false(cl_smooth_quadrature(scene, &(ClSmoothDef){.params = run.params, .sigma = run.sigma,
															  .param_count = 3, .backends = run.backends,
															  .backend_count = 1},
										0, run.quad, &status));
	g_assert_nonnull(strstr(status.message, "quadrature: 3 parameters"));
	cl_scene_free(scene);
}

typedef struct {
	_Atomic int cancel;
	int calls;
} Cancel;

static void cancel_after_first(int done, int total, void *user)
{
	(void)done, (void)total;
	Cancel *c = user;
	c->calls++;
	atomic_store(&c->cancel, 1);
}

static void test_cancel(void)
{
	ClScene *scene = cl_test_task1();
	const char *names[] = {"ball.position.y"};
	const char *ids[] = {"exact"};
	Run run;
	ClSmoothDef def = run_def(&run, scene, names, 1, 0.05, ids, 1);
	Cancel c = {0};
	def.samples = 1000;
	def.threads = 1;
	def.progress = cancel_after_first;
	def.user = &c;
	def.cancel = &c.cancel;
	ClStatus status;
	g_assert_false(cl_smooth(scene, &def, run.results, &status));
	g_assert_cmpint(status.code, ==, CL_STATUS_CANCELLED);
	g_assert_cmpint(c.calls, ==, 1);
	cl_scene_free(scene);
}

/* ------------------------------------------------------------ random */

static void test_random(void)
{
	/* SplitMix64's published first output for the state 1234567 */
	ClRandom r = {.state = 1234567};
	g_assert_cmpuint(cl_random_next(&r), ==, 6457827717110365317u);
	g_assert_cmpuint(cl_random_next(&r), ==, 3203168211198807973u);
	/* standard normals: mean and variance within 4 SE over 200 000 draws */
	ClRandom g = cl_random_stream(1, 0);
	const int n = 200000;
	double sum = 0, sq = 0;
	for (int i = 0; i < n; i++) {
		double x = cl_random_gaussian(&g);
		sum += x;
		sq += x * x;
	}
	double mean = sum / n, var = sq / n - mean * mean;
	g_assert_cmpfloat(fabs(mean), <, 4 / sqrt(n));
	g_assert_cmpfloat(fabs(var - 1), <, 4 * sqrt(2.0 / n));
	/* neighbouring streams (indices, and seeds) are uncorrelated */
	const int m = 20000;
	double c_index = 0, c_seed = 0;
	for (int i = 0; i < m; i++) {
		ClRandom a = cl_random_stream(5, (uint64_t)i), b = cl_random_stream(5, (uint64_t)i + 1);
		ClRandom s = cl_random_stream(6, (uint64_t)i);
		double x = cl_random_gaussian(&a);
		c_index += x * cl_random_gaussian(&b);
		c_seed += x * cl_random_gaussian(&s);
	}
	g_assert_cmpfloat(fabs(c_index / m), <, 4 / sqrt(m));
	g_assert_cmpfloat(fabs(c_seed / m), <, 4 / sqrt(m));
}

/* ------------------------------------------------------------ optimization */

/* Task 1 with y0 to learn: the loss 2.2 − y0 falls until y0 = 2.1. The
 * impulse backend's own gradient says +1 and descends the wrong way; ZoBG
 * of the same backend's loss learns. */
static void test_optimize_task1_with_zobg(void)
{
	ClScene *scene = cl_test_task1();
	ClOptimizeDef def = scene->optimize;
	def.parameter_count = 1;
	g_strlcpy(def.parameters[0], "ball.position.y", CL_NAME_MAX);
	def.learning_rate = 0.05;
	def.iterations = 16;
	def.sigma = 0.05;
	int impulse = cl_test_backend("impulse");
	ClOptimizeResult own, zobg, fobg;
	g_assert_true(cl_optimize(scene, impulse, &def, NULL, NULL, &own));
	def.gradient = CL_GRADIENT_ZOBG;
	g_assert_true(cl_optimize(scene, impulse, &def, NULL, NULL, &zobg));
	def.gradient = CL_GRADIENT_FOBG;
	g_assert_true(cl_optimize(scene, impulse, &def, NULL, NULL, &fobg));
	g_test_message("impulse on Task 1: own gradient loss %.4g → %.4g (y0 %.4g); ZoBG %.4g → %.4g (y0 %.4g)",
				   own.loss[0], own.loss[15], own.parameters[0], zobg.loss[0], zobg.loss[15], zobg.parameters[0]);
	g_assert_cmpfloat(own.loss[15], >, own.loss[0] + 0.5);
	g_assert_cmpfloat(own.parameters[0], <, 0.5);
	g_assert_cmpfloat(zobg.loss[15], <, 0.5 * zobg.loss[0]);
	g_assert_cmpfloat(zobg.parameters[0], >, 1.5);
	/* FoBG averages the same wrong adjoint: it fails too */
	g_assert_cmpfloat(fobg.loss[15], >, fobg.loss[0]);
	cl_optimize_result_clear(&own);
	cl_optimize_result_clear(&zobg);
	cl_optimize_result_clear(&fobg);
	/* a smoothing estimator needs a noise scale */
	def.sigma = 0;
	g_assert_false(cl_optimize(scene, impulse, &def, NULL, NULL, &own));
	g_assert_nonnull(strstr(own.status.message, "sigma"));
	cl_optimize_result_clear(&own);
	cl_scene_free(scene);
}

/* ------------------------------------------------------------ sweeps */

/* A smoothed sweep's cells are cl_smooth at those points, and its point
 * quantities are the bits of a sweep without smoothing. */
static void test_sweep_smoothing(void)
{
	ClScene *scene = cl_test_task2(0.0);
	int backends[] = {cl_test_backend("exact"), cl_test_backend("impulse")};
	ClSweepDef def = {.backends = backends, .backend_count = 2, .threads = 2};
	g_assert_true(cl_param_parse(scene, "ball.velocity.x", &def.x.param, NULL, 0));
	g_assert_true(cl_param_parse(scene, "ball.velocity.y", &def.y.param, NULL, 0));
	def.x.min = 4, def.x.max = 6, def.x.count = 3;
	def.y.min = -6, def.y.max = -4, def.y.count = 2;
	ClSweepCell *plain = g_new(ClSweepCell, cl_sweep_cell_count(&def));
	ClSweepCell *smoothed = g_new(ClSweepCell, cl_sweep_cell_count(&def));
	ClStatus status;
	g_assert_true(cl_sweep(scene, &def, plain, &status));
	def.smoothing = (ClSweepSmoothing){.samples = 30, .sigma_x = 0.25, .sigma_y = 0.2, .seed = 9, .first_order = true};
	g_assert_true(cl_sweep(scene, &def, smoothed, &status));
	for (size_t i = 0; i < cl_sweep_cell_count(&def); i++) {
		g_assert_true(same_bits(plain[i].loss, smoothed[i].loss));
		g_assert_true(same_bits(plain[i].grad_x, smoothed[i].grad_x));
		g_assert_true(same_bits(plain[i].grad_y, smoothed[i].grad_y));
		g_assert_true(isnan(plain[i].smoothed_loss));
	}
	ClScene *at = cl_scene_copy(scene);
	cl_param_set(at, &def.x.param, cl_sweep_axis_value(&def.x, 2));
	cl_param_set(at, &def.y.param, cl_sweep_axis_value(&def.y, 1));
	ClParam params[2] = {def.x.param, def.y.param};
	ClSmoothDef sd = cl_smooth_default_def();
	sd.params = params;
	sd.sigma = (double[]){0.25, 0.2};
	sd.param_count = 2;
	sd.samples = 30;
	sd.seed = 9;
	sd.backends = backends;
	sd.backend_count = 2;
	ClSmoothResult r[2];
	g_assert_true(cl_smooth(at, &sd, r, &status));
	for (int b = 0; b < 2; b++) {
		const ClSweepCell *cell = &smoothed[cl_sweep_index(&def, b, 2, 1)];
		g_assert_true(same_bits(cell->smoothed_loss, r[b].smoothed_loss.mean));
		g_assert_true(same_bits(cell->zobg_x, r[b].gradient[0].zobg.mean));
		g_assert_true(same_bits(cell->fobg_y, r[b].gradient[1].fobg.mean));
		g_assert_true(same_bits(cl_sweep_quantity(CL_SWEEP_FOBG_BIAS_X, cell, &smoothed[cl_sweep_index(&def, 0, 2, 1)]),
								r[b].gradient[0].fobg.mean - r[0].gradient[0].zobg.mean));
	}
	for (int b = 0; b < 2; b++)
		cl_smooth_result_clear(&r[b]);
	g_assert_cmpint(cl_sweep_quantity_find("fobg-bias-y"), ==, CL_SWEEP_FOBG_BIAS_Y);
	g_assert_cmpuint(cl_sweep_quantity_needs(CL_SWEEP_FOBG_BIAS_X), ==,
					 CL_SWEEP_NEEDS_EXACT | CL_SWEEP_NEEDS_SMOOTHING | CL_SWEEP_NEEDS_FOBG);
	g_assert_cmpuint(cl_sweep_quantity_needs(CL_SWEEP_LOSS), ==, 0);
	/* smoothing without a noise scale is refused */
	def.smoothing.sigma_y = 0;
	g_assert_false(cl_sweep(scene, &def, smoothed, &status));
	g_assert_nonnull(strstr(status.message, "sigma"));
	cl_scene_free(at);
	g_free(plain);
	g_free(smoothed);
	cl_scene_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/smooth/task1", test_task1);
	g_test_add_func("/smooth/task2", test_task2);
	g_test_add_func("/smooth/wedge", test_wedge);
	g_test_add_func("/smooth/graze", test_graze);
	g_test_add_func("/smooth/alpha-rule", test_alpha_rule);
	g_test_add_func("/smooth/alpha-of-engine", test_alpha_of_engine);
	g_test_add_func("/smooth/threads-and-common-numbers", test_threads_and_common_numbers);
	g_test_add_func("/smooth/common-numbers-and-prefix", test_common_numbers_and_prefix);
	g_test_add_func("/smooth/antithetic", test_antithetic);
	g_test_add_func("/smooth/physical-parameter", test_physical_parameter);
	g_test_add_func("/smooth/degenerate-samples", test_degenerate_samples);
	g_test_add_func("/smooth/invalid", test_invalid);
	g_test_add_func("/smooth/cancel", test_cancel);
	g_test_add_func("/smooth/random", test_random);
	g_test_add_func("/smooth/optimize-task1-with-zobg", test_optimize_task1_with_zobg);
	g_test_add_func("/smooth/sweep-smoothing", test_sweep_smoothing);
	return g_test_run();
}
