/* Compliant contact as the paper's Warp scripts ran it
 * (utils/customized_integrator_euler.py, Warp 0.2.0): a spring–damper normal
 * force with Coulomb friction, evaluated at the start-of-step state, then
 * semi-implicit Euler. One general kernel covers the paper's three:
 * Task 1 and Task 3 are the damping = 0, μ = 0 case of Task 2's. */
#include "warp.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_STIFFNESS, PARAM_DAMPING, PARAM_PRECISION, PARAM_COUNT };

/* Seeds of a contact's duals: this ball's x, v, then the other ball's x, v;
 * when the tape records parameter columns, the physical parameters the
 * contact reads after them (plane: the radius, the wall's point.x, point.y
 * and angle, the friction; pair: both radii, the friction). */
enum { SEED_X = 0, SEED_V = 2, SEED_OTHER = 4, SEEDS_PLANE = 4, SEEDS_PAIR = 8 };
enum { PLANE_RADIUS = SEEDS_PLANE, PLANE_WALL, PLANE_FRICTION = PLANE_WALL + 3, PLANE_SLOTS };
enum { PAIR_RADIUS = SEEDS_PAIR, PAIR_OTHER_RADIUS, PAIR_FRICTION, PAIR_SLOTS };
enum { PARAM_SLOTS_MAX = PLANE_SLOTS - SEEDS_PLANE };

typedef struct CompliantWork {
	int balls, walls;
	bool f32;
	/* Task 2's kernel tests err < 0, Tasks 1 and 3's (springs only) err ≤ 0 */
	bool strict;
	double dt, stiffness, damping, friction, slip_threshold, gravity[2];
	WarpBodies bodies;
	unsigned char *touching;       /* balls × (walls + balls): in contact last step */
	int *partner;                  /* per ball: the balls it touches this step */
	double *partner_force;         /* per partner: d f / d (x_j, v_j), 2×4 */
} CompliantWork;

static void compliant_destroy(void *workspace);

static void *compliant_create(const ClScene *scene, const double *params)
{
	(void)params;
	CompliantWork *W = cl_calloc(1, sizeof *W);
	if (!W)
		return NULL;
	int nb = scene->ball_count, nw = scene->wall_count;
	size_t nb1 = (size_t)nb + 1;
	W->balls = nb;
	W->walls = nw;
	bool ok = warp_bodies_create(&W->bodies, scene);
	W->touching = cl_calloc(nb1 * ((size_t)nw + nb1), 1);
	W->partner = cl_calloc(nb1, sizeof(int));
	W->partner_force = cl_calloc(8 * nb1, sizeof(double));
	if (!ok || !W->touching || !W->partner || !W->partner_force) {
		compliant_destroy(W);
		return NULL;
	}
	return W;
}

static void compliant_destroy(void *workspace)
{
	CompliantWork *W = workspace;
	if (!W)
		return;
	warp_bodies_destroy(&W->bodies);
	free(W->touching);
	free(W->partner);
	free(W->partner_force);
	free(W);
}

/* Every constant rounded once to the working precision, as Warp received
 * Python floats as float32 kernel arguments. Redone at the start of each run. */
static void compliant_prepare(CompliantWork *W, const ClStepContext *ctx)
{
	const ClScene *scene = ctx->scene;
	bool f32 = cl_param_value(ctx, PARAM_PRECISION) == CL_PRECISION_FLOAT32;
	W->f32 = f32;
	W->dt = cl_round(f32, ctx->dt);
	W->stiffness = cl_round(f32, cl_param_value(ctx, PARAM_STIFFNESS));
	W->damping = cl_round(f32, cl_param_value(ctx, PARAM_DAMPING));
	W->friction = cl_round(f32, scene->friction);
	W->slip_threshold = cl_round(f32, 1e-6);
	W->gravity[0] = cl_round(f32, scene->gravity.x);
	W->gravity[1] = cl_round(f32, scene->gravity.y);
	W->strict = W->damping > 0.0 || W->friction > 0.0;
	warp_bodies_prepare(&W->bodies, scene, f32);
	memset(W->touching, 0, (size_t)W->balls * (size_t)(W->walls + W->balls));
}

static bool in_contact(const CompliantWork *W, double err)
{
	return W->strict ? err < 0.0 : err <= 0.0;
}

/* The contact force for unit normal n (pointing to this ball), penetration
 * err < 0 and relative velocity v: f_n = err·k_n + min(v_n, 0)·k_d (negative),
 * friction −t̂·μ|f_n| when |v_t| > 1e-6, normal force −n·f_n. μ's tangent
 * goes to friction_slot; with own (not NULL) the force's derivatives along
 * k_n and k_d go to own[0..1] and own[2..3], outside the dual's slots (a
 * pair contact has no two left): ∂f_n/∂k_n = err, ∂f_n/∂k_d = min(v_n, 0),
 * through −n and −t̂·μ·sign(f_n), the rules of Warp's adjoints. */
static void spring_damper(const ClArith *A, const CompliantWork *W, ClDual2 n, ClDual err, ClDual2 v, int friction_slot,
						  ClDual2 *friction, bool *slips, ClDual2 *normal, double own[4])
{
	ClDual zero = cl_dual_const(A, 0.0);
	ClDual vn = cl_dual2_dot(A, n, v);
	ClDual fn = cl_dual_add(A, cl_dual_mul(A, err, cl_dual_const(A, W->stiffness)),
							cl_dual_mul(A, cl_dual_min_second(vn, zero), cl_dual_const(A, W->damping)));
	ClDual2 vt = cl_dual2_sub(A, v, cl_dual2_mul(A, n, vn));
	ClDual vs = cl_dual2_length(A, vt);
	*slips = vs.v > W->slip_threshold;
	if (*slips) {
		ClDual2 tangent = cl_dual2_div(A, vt, vs);
		ClDual ft = cl_dual_mul(A, cl_dual_input(A, W->friction, friction_slot), cl_dual_abs(A, fn));
		*friction = cl_dual2_mul(A, cl_dual2_neg(A, tangent), ft);
	}
	*normal = cl_dual2_mul(A, cl_dual2_neg(A, n), fn);
	if (!own)
		return;
	double along[2] = {err.v, fmin(vn.v, 0.0)}, sign = fn.v > 0.0 ? 1.0 : fn.v < 0.0 ? -1.0 : 0.0;
	double t[2] = {0.0, 0.0};
	if (*slips)
		t[0] = vt.x.v / vs.v, t[1] = vt.y.v / vs.v;
	for (int k = 0; k < 2; k++) {
		own[2 * k] += -(n.x.v + t[0] * W->friction * sign) * along[k];
		own[2 * k + 1] += -(n.y.v + t[1] * W->friction * sign) * along[k];
	}
}

/* Ball's columns of k_n and k_d through the force's derivatives along them. */
static void record_own_params(ClTape *tape, const ClScene *scene, int ball, const double own[4], double dt, double w)
{
	static const int params[2] = {PARAM_STIFFNESS, PARAM_DAMPING};
	for (int k = 0; k < 2; k++) {
		if (own[2 * k] == 0.0 && own[2 * k + 1] == 0.0)
			continue;
		double *c = cl_tape_c(tape, ball, cl_phys_backend(scene, params[k]));
		for (int r = 0; r < 2; r++) {
			c[2 + r] = dt * w * own[2 * k + r];
			c[r] = dt * c[2 + r];
		}
	}
}

/* Explicit integration of a contact spring k with one-sided damper k_d over
 * the relative coordinate (inverse mass w) is stable only while
 * k·dt²·w + 2·k_d·dt·w < 4 (Jury's test on semi-implicit Euler). */
static bool check_stable(ClStepContext *ctx, const CompliantWork *W, double w, int ball, int other)
{
	double dt = W->dt;
	double a = W->stiffness * dt * dt * w, b = W->damping * dt * w;
	if (a + 2.0 * b < 4.0)
		return true;
	const ClScene *scene = ctx->scene;
	double dt_max = W->stiffness > 0.0 ? (-W->damping * w + sqrt(W->damping * W->damping * w * w +
																				   4.0 * W->stiffness * w)) /
											 (W->stiffness * w)
										 : 2.0 / (W->damping * w);
	cl_step_fail(ctx, CL_STATUS_DIVERGED,
				 "step %d (t = %g s): ball \"%s\" touching %s \"%s\": stiffness*dt^2/m + 2*damping*dt/m = %.3g "
				 "exceeds 4, so semi-implicit Euler is unstable for this contact (use dt < %.3g s or a lower "
				 "stiffness)",
				 ctx->step, ctx->step * ctx->dt, scene->balls[ball].id, other < 0 ? "wall" : "ball",
				 other < 0 ? scene->walls[-1 - other].id : scene->balls[other].id, a + 2.0 * b, dt_max);
	return false;
}

static void note_contact(ClStepContext *ctx, CompliantWork *W, int ball, int slot, bool active)
{
	unsigned char *flag = &W->touching[(size_t)ball * (size_t)(W->walls + W->balls) + (size_t)slot];
	bool report = active && !*flag && (slot < W->walls || slot - W->walls > ball);
	if (report)
		cl_step_contact(ctx, ctx->step * ctx->dt, ball, slot < W->walls ? -1 - slot : slot - W->walls);
	*flag = active;
}

/* f += contact force; the Jacobian of f w.r.t. this ball's (x, v) goes to own,
 * w.r.t. the other ball's to other (NULL for a wall), w.r.t. the parameters
 * (the slots from seeds on) to param, 2 × PARAM_SLOTS_MAX. Friction is added
 * before the normal force, as Warp's kernel did. */
static void accumulate(const ClArith *A, int seeds, double f[2], double own[8], double *other, double *param,
					   const ClDual2 *friction, bool slips, const ClDual2 *normal)
{
	for (int pass = slips ? 0 : 1; pass < 2; pass++) {
		const ClDual2 *term = pass == 0 ? friction : normal;
		const ClDual *c[2] = {&term->x, &term->y};
		for (int r = 0; r < 2; r++) {
			f[r] = cl_round(A->f32, f[r] + c[r]->v);
			for (int k = 0; k < A->slots && k < SEEDS_PLANE; k++)
				own[4 * r + k] += c[r]->d[k];
			for (int k = SEEDS_PLANE; k < A->slots && k < seeds; k++)
				other[4 * r + k - SEEDS_PLANE] += c[r]->d[k];
			for (int k = seeds; k < A->slots; k++)
				param[PARAM_SLOTS_MAX * r + k - seeds] += c[r]->d[k];
		}
	}
}

/* Ball's parameter column through its force's derivative df (2 rows, stride
 * PARAM_SLOTS_MAX): dv' = dt·w·df, dx' = dt·dv', as the state's. */
static void record_param(ClTape *tape, int ball, int param, const double *df, double dt, double w)
{
	double *c = cl_tape_c(tape, ball, param);
	for (int r = 0; r < 2; r++) {
		c[2 + r] = dt * w * df[PARAM_SLOTS_MAX * r];
		c[r] = dt * c[2 + r];
	}
}

static void compliant_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	CompliantWork *W = ctx->workspace;
	if (ctx->step == 0)
		compliant_prepare(W, ctx);
	bool f32 = W->f32;
	double dt = W->dt;
	ClTape *tape = ctx->tape;
	bool params = tape && tape->record_params;
	if (tape)
		cl_tape_factor(tape);
	for (int i = 0; i < W->balls; i++) {
		const double *si = s + CL_BALL_STATE * i;
		double x[2] = {cl_round(f32, si[0]), cl_round(f32, si[1])};
		double v[2] = {cl_round(f32, si[2]), cl_round(f32, si[3])};
		double f[2] = {cl_round(f32, u[2 * i]), cl_round(f32, u[2 * i + 1])};
		double w = W->bodies.inverse_mass[i];
		double own[8] = {0}; /* d f / d (x_i, v_i), 2×4 */
		double springs[4] = {0}; /* d f / d k_n, d f / d k_d */
		int partners = 0;

		ClArith plane = {f32, params ? PLANE_SLOTS : tape ? SEEDS_PLANE : 0};
		for (int k = 0; k < W->walls; k++) {
			bool active = in_contact(
				W, warp_plane_gap(f32, W->bodies.offset[k], W->bodies.normal + 2 * k, x[0], x[1], W->bodies.radius[i]));
			note_contact(ctx, W, i, k, active);
			if (!active)
				continue;
			const ClWall *wall = &ctx->scene->walls[k];
			ClDual2 xi = cl_dual2_input(&plane, x[0], x[1], SEED_X), vi = cl_dual2_input(&plane, v[0], v[1], SEED_V);
			ClDual2 n = warp_wall_normal(&plane, &W->bodies, wall, k, PLANE_WALL + 2);
			ClDual err = cl_dual_sub(
				&plane,
				cl_dual_add(&plane, warp_wall_offset(&plane, &W->bodies, wall, k, PLANE_WALL), cl_dual2_dot(&plane, xi, n)),
				cl_dual_input(&plane, W->bodies.radius[i], PLANE_RADIUS));
			check_stable(ctx, W, w, i, -1 - k);
			ClDual2 friction, normal;
			bool slips;
			double df[2 * PARAM_SLOTS_MAX] = {0};
			spring_damper(&plane, W, n, err, vi, PLANE_FRICTION, &friction, &slips, &normal, params ? springs : NULL);
			accumulate(&plane, SEEDS_PLANE, f, own, NULL, df, &friction, slips, &normal);
			if (!params)
				continue;
			record_param(tape, i, cl_phys_radius(i), df + PLANE_RADIUS - SEEDS_PLANE, dt, w);
			for (int m = 0; m < 3; m++)
				record_param(tape, i, cl_phys_wall(ctx->scene, k, m), df + PLANE_WALL + m - SEEDS_PLANE, dt, w);
			record_param(tape, i, CL_PHYS_FRICTION, df + PLANE_FRICTION - SEEDS_PLANE, dt, w);
		}

		ClArith pair = {f32, params ? PAIR_SLOTS : tape ? SEEDS_PAIR : 0};
		for (int j = 0; j < W->balls; j++) {
			if (j == i)
				continue;
			const double *sj = s + CL_BALL_STATE * j;
			double radii = cl_round(f32, W->bodies.radius[i] + W->bodies.radius[j]);
			double xj[2] = {cl_round(f32, sj[0]), cl_round(f32, sj[1])};
			bool active = in_contact(W, warp_pair_gap(f32, x[0], x[1], xj[0], xj[1], radii));
			note_contact(ctx, W, i, W->walls + j, active);
			if (!active)
				continue;
			ClDual2 xs = cl_dual2_input(&pair, x[0], x[1], SEED_X), vs = cl_dual2_input(&pair, v[0], v[1], SEED_V);
			ClDual2 xo = cl_dual2_input(&pair, xj[0], xj[1], SEED_OTHER);
			ClDual2 delta = cl_dual2_sub(&pair, xs, xo);
			ClDual d = cl_dual2_length(&pair, delta);
			/* r_i + r_j, one rounded sum: a unit tangent along each radius */
			ClDual reach = cl_dual_input(&pair, radii, PAIR_RADIUS);
			if (PAIR_OTHER_RADIUS < pair.slots)
				reach.d[PAIR_OTHER_RADIUS] = 1.0;
			ClDual err = cl_dual_sub(&pair, d, reach);
			check_stable(ctx, W, w + W->bodies.inverse_mass[j], i, j);
			ClDual2 vo = cl_dual2_input(&pair, cl_round(f32, sj[2]), cl_round(f32, sj[3]), SEED_OTHER + 2);
			ClDual2 n = cl_dual2_div(&pair, delta, d);
			ClDual2 friction, normal;
			bool slips;
			double *other = W->partner_force + 8 * partners;
			memset(other, 0, 8 * sizeof(double));
			W->partner[partners++] = j;
			double df[2 * PARAM_SLOTS_MAX] = {0};
			spring_damper(&pair, W, n, err, cl_dual2_sub(&pair, vs, vo), PAIR_FRICTION, &friction, &slips, &normal,
						  params ? springs : NULL);
			accumulate(&pair, SEEDS_PAIR, f, own, other, df, &friction, slips, &normal);
			if (!params)
				continue;
			record_param(tape, i, cl_phys_radius(i), df + PAIR_RADIUS - SEEDS_PAIR, dt, w);
			record_param(tape, i, cl_phys_radius(j), df + PAIR_OTHER_RADIUS - SEEDS_PAIR, dt, w);
			record_param(tape, i, CL_PHYS_FRICTION, df + PAIR_FRICTION - SEEDS_PAIR, dt, w);
		}

		/* Warp: v1 = v0 + (f·w + g·step(−w))·dt, x1 = x0 + v1·dt */
		double *out = s_next + CL_BALL_STATE * i, a[2];
		for (int r = 0; r < 2; r++) {
			a[r] = cl_round(f32, cl_round(f32, f[r] * w) + W->gravity[r]);
			out[2 + r] = cl_round(f32, v[r] + cl_round(f32, a[r] * dt));
			out[r] = cl_round(f32, x[r] + cl_round(f32, out[2 + r] * dt));
		}
		if (!tape)
			continue;
		if (params) {
			/* the mass through w = 1/m: the contact forces' part (the
			 * control's is accel_form's), dw/dm = −w² */
			double contact[2 * PARAM_SLOTS_MAX] = {0};
			for (int r = 0; r < 2; r++)
				contact[PARAM_SLOTS_MAX * r] = -w * (f[r] - cl_round(f32, u[2 * i + r]));
			if (contact[0] != 0.0 || contact[PARAM_SLOTS_MAX] != 0.0)
				record_param(tape, i, cl_phys_mass(i), contact, dt, w);
			record_own_params(tape, ctx->scene, i, springs, dt, w);
			/* dt = T/N: v' gains a per unit dt, x' = x + dt·v' gains v' + dt·a */
			double *c = cl_tape_c(tape, i, CL_PHYS_DURATION);
			for (int r = 0; r < 2; r++) {
				c[2 + r] = a[r] / ctx->scene->steps;
				c[r] = (out[2 + r] + dt * a[r]) / ctx->scene->steps;
			}
		}
		/* dv' = dv + dt·w·df, dx' = dx + dt·dv' */
		double *A = cl_tape_a_identity(tape, i);
		double *B = cl_tape_b(tape, i, i);
		for (int r = 0; r < 2; r++) {
			for (int c = 0; c < 4; c++) {
				double dv = (c == 2 + r ? 1.0 : 0.0) + dt * w * own[4 * r + c];
				A[CL_A(2 + r, c)] = dv;
				A[CL_A(r, c)] = (c == r ? 1.0 : 0.0) + dt * dv;
			}
			B[2 * (2 + r) + r] = dt * w;
			B[2 * r + r] = dt * dt * w;
		}
		for (int p = 0; p < partners; p++) {
			double *Ap = cl_tape_a(tape, i, W->partner[p]);
			const double *F = W->partner_force + 8 * p;
			for (int r = 0; r < 2; r++)
				for (int c = 0; c < 4; c++) {
					double dv = dt * w * F[4 * r + c];
					Ap[CL_A(2 + r, c)] = dv;
					Ap[CL_A(r, c)] = dt * dv;
				}
		}
	}
}

static const ClParamDesc compliant_warp_params[] = {
	[PARAM_STIFFNESS] = {"stiffness", CL_PARAM_KIND_REAL, 1e4, 0, 1e12, "N/m",
						 "normal spring constant k_n of every contact (the paper: 1e4)", NULL},
	[PARAM_DAMPING] = {"damping", CL_PARAM_KIND_REAL, 0, 0, 1e6, "N·s/m",
					   "normal damper k_d, acting only while approaching (the paper's Task 2: 10)", NULL},
	[PARAM_PRECISION] = {"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
						 "arithmetic of the forward pass (Warp 0.2.0 ran float32)", cl_precision_choices},
};

const ClBackend cl_backend_compliant_warp = {
	.info = {
		.id = "compliant-warp",
		.label = "Compliant (Warp)",
		.family = "compliant",
		.mirrors = "Warp",
		.toi = false,
		.gradient_is_derivative = true,
		.intro = "Treats contact as a stiff spring that pushes the ball out (like Warp): smooth, but the answer depends on the stiffness and the step size.",
		.summary =
			"Spring–damper contact with Coulomb friction and semi-implicit Euler, as the paper's Warp 0.2.0 "
			"scripts ran it. Forces use the start-of-step state: per contact with gap err = distance − radii, "
			"f_n = err·k_n + min(v_n, 0)·k_d (the damper acts only while approaching), friction −t̂·μ|f_n| when "
			"|v_t| > 1e-6, accumulated as control, then for every wall in order friction and normal force, then "
			"the other balls; v' = v + (f/m + g)·dt, x' = x + v'·dt. Generalisations: any wall normal "
			"(gap n·x − n·p − r), any number of balls with pairwise contacts (normal from the other ball's "
			"centre, damping and friction on the relative velocity), masses through the inverse mass. Tasks 1 "
			"and 3 are the k_d = 0, μ = 0 case of Task 2's kernel; their kernels test err ≤ 0 where Task 2's "
			"tests err < 0, so contact means err ≤ 0 when damping and friction are both zero and err < 0 "
			"otherwise, which is each kernel exactly. Elasticity is not used: restitution emerges from k_n, k_d "
			"and dt. Float32 by default, every constant rounded once. The gradient is the exact derivative of "
			"this forward map (Warp's autodiff: branches constant, min ties to its second argument), but not of "
			"the physics: contact lasts a few steps whose count jumps with the initial state, the spring stores "
			"and returns energy with an error of order k_n·dt², and the friction direction carries no gradient, "
			"so e.g. Task 1's ∂y_N/∂y_0 is −1.568 instead of −1. If k_n·dt²/m + 2·k_d·dt/m ≥ 4 at a contact "
			"the explicit scheme is unstable and the run stops as diverged. Degenerate contacts pass silently "
			"(status ok; Warp reports nothing): a tangential (grazing) pass compresses no spring, so it is a "
			"miss; simultaneous contacts (a corner, three balls at once) are springs acting together, so no order "
			"enters, but the outcome is set by k_n, k_d and dt, not e (three balls in a row at e = 1 leave with "
			"22% more speed, k_n = 1e4, dt = 0.0115); there is no Zeno limit: with damping 0 a dropped ball "
			"bounces forever whatever e, with damping it settles compressed by m|g|/k_n; a ball starting in "
			"contact (at t = 0) is an ordinary spring contact. Parameter columns are the same autodiff of the "
			"step w.r.t. the scene's numbers as inputs of the kernels (Warp's adjoint kernels form them for every "
			"argument; branches constant): friction through μ|f_n|, gravity, duration (dt = T/N), radii, masses "
			"(through 1/m), wall points and angles, and its own stiffness and damping (compliant-warp.stiffness, "
			"compliant-warp.damping: f_n's err and min(v_n, 0)); elasticity is not in the model, its derivative "
			"is 0.",
		.params = compliant_warp_params,
		.param_count = PARAM_COUNT,
	},
	.create = compliant_create,
	.destroy = compliant_destroy,
	.step = compliant_step,
	.tape_blocks_per_ball = true,
	/* elasticity: not in the model, the derivative is 0 */
	.param_adjoints = 1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY |
					  1u << CL_PARAM_DURATION | 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS |
					  1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE,
	.own_param_adjoints = 1u << PARAM_STIFFNESS | 1u << PARAM_DAMPING,
	.accel_form = true,
};
