/* Position-based dynamics as the paper's Warp scripts ran it
 * (utils/customized_integrator_xpbd.py, Warp 0.2.0): one Jacobi projection
 * with no compliance, velocity from positions, then a restitution and
 * friction velocity pass. One general kernel covers the paper's three
 * (…ForBounceOnce, …ForGroundWall, …ForTwoBalls), quirks included.
 *
 * The Jacobian is Warp's autodiff of this program: each contact is evaluated
 * with dual numbers over its local inputs (q, x in the projection; q, ṽ, v̄ in
 * the velocity pass) and chained into derivative rows w.r.t. every ball's
 * (x, v, u). A ball's velocity pass reads its partners' v̄, which depend on
 * their other contacts, so a row may reach two contacts away. */
#include "warp.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_PRECISION, PARAM_INPUTS, PARAM_TANGENT_BUG, PARAM_COUNT };
enum { INPUTS_SWAPPED, INPUTS_AS_NAMED };

/* The per-ball quantities a contact reads, each with a derivative row (2 rows
 * of 6·balls: d/d(x, v, u) of every ball). */
enum { QTY_X, QTY_Q, QTY_VPRED, QTY_DELTA, QTY_VBAR, QTY_DVEL, QTY_COUNT };

typedef struct PbdWork {
	int balls, walls;
	bool f32;
	/* Task 2's kernel (swapped velocity roles, c < 0) or Tasks 1 and 3's (c ≤ 0) */
	bool swapped;
	bool tangent_bug;
	double dt, elasticity, one_plus_e, friction, eps, gravity[2];
	WarpBodies bodies;
	/* per step, 2 per ball: x, q, ṽ, Δ, x_new, v̄, Δv */
	double *value[QTY_COUNT];
	double *x_new;
	int *contact_plane; /* (ball, wall) pairs in ball-then-wall order */
	int plane_count;
	int *contact_pair; /* (i, j), i < j, lexicographic */
	int pair_count;
	int *slot;    /* per ball: its derivative rows, −1 when it touches nothing */
	double *rows; /* per touching ball: QTY_COUNT × 2 rows of 6·balls */
	int width;
	unsigned char *touching; /* balls × (walls + balls): in contact last step */
} PbdWork;

/* The derivative rows: QTY_COUNT × 2 rows of 6·balls per ball, balls² in all. */
static size_t rows_count(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count + 1;
	return nb * QTY_COUNT * 2 * (6 * (size_t)scene->ball_count + 1);
}

static size_t pbd_workspace_bytes(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count + 1, nw = (size_t)scene->wall_count + 1;
	return rows_count(scene) * sizeof(double) + nb * nb * sizeof(int) + nb * (nw + nb);
}

static void pbd_destroy(void *workspace);

static void *pbd_create(const ClScene *scene, const double *params)
{
	(void)params;
	PbdWork *W = cl_calloc(1, sizeof *W);
	if (!W)
		return NULL;
	size_t nb = (size_t)scene->ball_count + 1, nw = (size_t)scene->wall_count + 1;
	W->balls = scene->ball_count;
	W->walls = scene->wall_count;
	W->width = 6 * W->balls;
	bool ok = warp_bodies_create(&W->bodies, scene);
	for (int k = 0; k < QTY_COUNT; k++)
		ok = (W->value[k] = cl_calloc(2 * nb, sizeof(double))) && ok;
	W->x_new = cl_calloc(2 * nb, sizeof(double));
	W->contact_plane = cl_calloc(2 * nb * nw, sizeof(int));
	W->contact_pair = cl_calloc(nb * nb, sizeof(int));
	W->slot = cl_calloc(nb, sizeof(int));
	W->rows = cl_calloc(rows_count(scene), sizeof(double));
	W->touching = cl_calloc(nb * (nw + nb), 1);
	if (!ok || !W->x_new || !W->contact_plane || !W->contact_pair || !W->slot || !W->rows || !W->touching) {
		pbd_destroy(W);
		return NULL;
	}
	return W;
}

static void pbd_destroy(void *workspace)
{
	PbdWork *W = workspace;
	if (!W)
		return;
	warp_bodies_destroy(&W->bodies);
	for (int k = 0; k < QTY_COUNT; k++)
		free(W->value[k]);
	free(W->x_new);
	free(W->contact_plane);
	free(W->contact_pair);
	free(W->slot);
	free(W->rows);
	free(W->touching);
	free(W);
}

/* Every constant rounded once, as Warp received Python floats as float32
 * kernel arguments; (1 + e) is formed inside the kernel. */
static void pbd_prepare(PbdWork *W, const ClStepContext *ctx)
{
	const ClScene *scene = ctx->scene;
	bool f32 = cl_param_value(ctx, PARAM_PRECISION) == CL_PRECISION_FLOAT32;
	W->f32 = f32;
	W->swapped = cl_param_value(ctx, PARAM_INPUTS) == INPUTS_SWAPPED;
	W->tangent_bug = cl_param_value(ctx, PARAM_TANGENT_BUG) != 0.0;
	W->dt = cl_round(f32, ctx->dt);
	W->elasticity = cl_round(f32, scene->elasticity);
	W->one_plus_e = cl_round(f32, 1.0 + W->elasticity);
	W->friction = cl_round(f32, scene->friction);
	W->eps = cl_round(f32, 1e-6);
	W->gravity[0] = cl_round(f32, scene->gravity.x);
	W->gravity[1] = cl_round(f32, scene->gravity.y);
	warp_bodies_prepare(&W->bodies, scene, f32);
	memset(W->touching, 0, (size_t)W->balls * (size_t)(W->walls + W->balls));
}

static bool in_contact(const PbdWork *W, double c)
{
	return W->swapped ? c < 0.0 : c <= 0.0;
}

static ClDual2 load(const ClArith *A, const PbdWork *W, int qty, int ball, int seed)
{
	const double *p = W->value[qty] + 2 * ball;
	return cl_dual2_input(A, p[0], p[1], seed);
}

static double *row(PbdWork *W, int ball, int qty, int component)
{
	return W->rows + ((size_t)(W->slot[ball] * QTY_COUNT + qty) * 2 + (size_t)component) * (size_t)W->width;
}

/* What the seeds of a contact's duals are: seed 2m + c is component c of
 * quantity qty[m] of ball[m]. */
typedef struct Seeds {
	int count;
	int ball[6], qty[6];
} Seeds;

/* target (a 2-row quantity of a ball) += sign · d(value)/d(seeds) · rows(seeds). */
static void chain(PbdWork *W, const Seeds *seeds, const ClDual2 *value, double sign, int ball, int qty)
{
	const ClDual *c[2] = {&value->x, &value->y};
	for (int r = 0; r < 2; r++) {
		double *target = row(W, ball, qty, r);
		for (int m = 0; m < seeds->count; m++)
			for (int k = 0; k < 2; k++) {
				double coefficient = sign * c[r]->d[2 * m + k];
				if (coefficient == 0.0)
					continue;
				const double *source = row(W, seeds->ball[m], seeds->qty[m], k);
				for (int col = 0; col < W->width; col++)
					target[col] += coefficient * source[col];
			}
	}
}

static void add_value(const PbdWork *W, int qty, int ball, const ClDual2 *term, double sign)
{
	double *p = W->value[qty] + 2 * ball;
	p[0] = cl_round(W->f32, p[0] + sign * term->x.v);
	p[1] = cl_round(W->f32, p[1] + sign * term->y.v);
}

static ClDual plane_gap(const ClArith *A, const PbdWork *W, int wall, int ball, ClDual2 q, ClDual2 *n)
{
	*n = cl_dual2_const(A, W->bodies.normal[2 * wall], W->bodies.normal[2 * wall + 1]);
	return cl_dual_sub(A, cl_dual_add(A, cl_dual_const(A, W->bodies.offset[wall]), cl_dual2_dot(A, q, *n)),
					   cl_dual_const(A, W->bodies.radius[ball]));
}

static ClDual pair_gap(const ClArith *A, const PbdWork *W, int i, int j, ClDual2 qi, ClDual2 qj, ClDual2 *n)
{
	ClDual2 xij = cl_dual2_sub(A, qi, qj);
	ClDual l = cl_dual2_length(A, xij);
	*n = cl_dual2_mul(A, xij, cl_dual_div(A, cl_dual_const(A, 1.0), l));
	return cl_dual_sub(A, l, cl_dual_const(A, cl_arith_round(A, W->bodies.radius[i] + W->bodies.radius[j])));
}

/* Static friction of the projection (Task 2): the tangential part t of the
 * step's displacement is undone when |t| < μ·|c|. S is a branch constant. */
static ClDual2 static_friction(const ClArith *A, const PbdWork *W, ClDual2 displacement, ClDual2 n, ClDual c,
							   bool *sticks)
{
	ClDual2 t = cl_dual2_sub(A, displacement, cl_dual2_mul(A, n, cl_dual2_dot(A, displacement, n)));
	ClDual length = cl_dual2_length(A, t);
	ClDual2 direction = cl_dual2_div(A, t, cl_dual_add(A, length, cl_dual_const(A, W->eps)));
	ClDual dlambda_t = cl_dual_neg(A, length);
	ClDual dlambda_n = cl_dual_neg(A, c);
	*sticks = cl_dual_abs(A, dlambda_t).v < cl_dual_abs(A, cl_dual_mul(A, cl_dual_const(A, W->friction), dlambda_n)).v;
	return cl_dual2_mul(A, direction, cl_dual_mul(A, cl_dual_const(A, *sticks ? 1.0 : 0.0), dlambda_t));
}

static void project_plane(PbdWork *W, bool tape, int i, int k)
{
	ClArith A = {W->f32, tape ? 4 : 0};
	Seeds seeds = {2, {i, i}, {QTY_Q, QTY_X}};
	ClDual2 q = load(&A, W, QTY_Q, i, 0), x = load(&A, W, QTY_X, i, 2), n;
	ClDual c = plane_gap(&A, W, k, i, q, &n);
	bool sticks;
	ClDual2 tangential = static_friction(&A, W, cl_dual2_sub(&A, q, x), n, c, &sticks);
	ClDual2 delta = cl_dual2_add(&A, cl_dual2_mul(&A, n, cl_dual_neg(&A, c)), tangential);
	add_value(W, QTY_DELTA, i, &delta, 1.0);
	if (tape)
		chain(W, &seeds, &delta, 1.0, i, QTY_DELTA);
}

static void project_pair(PbdWork *W, bool tape, int i, int j)
{
	ClArith A = {W->f32, tape ? 8 : 0};
	Seeds seeds = {4, {i, j, i, j}, {QTY_Q, QTY_Q, QTY_X, QTY_X}};
	ClDual2 qi = load(&A, W, QTY_Q, i, 0), qj = load(&A, W, QTY_Q, j, 2);
	ClDual2 n;
	ClDual c = pair_gap(&A, W, i, j, qi, qj, &n);
	ClDual wi = cl_dual_const(&A, W->bodies.inverse_mass[i]), wj = cl_dual_const(&A, W->bodies.inverse_mass[j]);
	ClDual denominator = cl_dual_add(&A, wi, wj);
	ClDual2 xd = cl_dual2_mul(&A, n, cl_dual_div(&A, c, denominator));
	ClDual2 di = cl_dual2_mul(&A, xd, wi), dj = cl_dual2_mul(&A, xd, wj);
	add_value(W, QTY_DELTA, i, &di, -1.0);
	add_value(W, QTY_DELTA, j, &dj, 1.0);
	if (tape) {
		chain(W, &seeds, &di, -1.0, i, QTY_DELTA);
		chain(W, &seeds, &dj, 1.0, j, QTY_DELTA);
	}
	if (W->friction == 0.0)
		return;
	/* Task 2's static friction on the relative displacement, split by inverse mass */
	ClDual2 xi = load(&A, W, QTY_X, i, 4), xj = load(&A, W, QTY_X, j, 6);
	ClDual2 displacement = cl_dual2_sub(&A, cl_dual2_sub(&A, qi, xi), cl_dual2_sub(&A, qj, xj));
	bool sticks;
	ClDual2 tangential = static_friction(&A, W, displacement, n, c, &sticks);
	if (!sticks)
		return;
	ClDual2 share = cl_dual2_div(&A, tangential, denominator);
	ClDual2 ti = cl_dual2_mul(&A, share, wi), tj = cl_dual2_mul(&A, share, wj);
	add_value(W, QTY_DELTA, i, &ti, 1.0);
	add_value(W, QTY_DELTA, j, &tj, -1.0);
	if (tape) {
		chain(W, &seeds, &ti, 1.0, i, QTY_DELTA);
		chain(W, &seeds, &tj, -1.0, j, QTY_DELTA);
	}
}

/* The restitution and friction pass's normal and tangential change for the
 * relative velocities "rel" (the kernel's rel_v / v_n) and "old" (rel_v_old /
 * v_n_old): Δ_n = −v_n − min(e·v_n_old, 0); the slip v_t = rel − n·v_n, when
 * |v_t| ≥ 1e-6, loses min(μ|(1+e)·v_n_old|, |v_t|) along *direction (the own
 * tangent, or the shared one of Warp's wall branch). */
static ClDual restitution(const ClArith *A, const PbdWork *W, ClDual v_n, ClDual v_n_old)
{
	return cl_dual_sub(
		A, cl_dual_neg(A, v_n),
		cl_dual_min_second(cl_dual_mul(A, cl_dual_const(A, W->elasticity), v_n_old), cl_dual_const(A, 0.0)));
}

static bool slip(const ClArith *A, const PbdWork *W, ClDual2 rel, ClDual2 n, ClDual v_n, ClDual v_n_old,
				 ClDual2 *direction, ClDual *amount)
{
	ClDual2 v_t = cl_dual2_sub(A, rel, cl_dual2_mul(A, n, v_n));
	ClDual norm = cl_dual2_length(A, v_t);
	if (norm.v < W->eps)
		return false;
	*direction = cl_dual2_div(A, v_t, norm);
	ClDual bound = cl_dual_mul(A, cl_dual_const(A, W->friction),
							   cl_dual_abs(A, cl_dual_mul(A, cl_dual_const(A, W->one_plus_e), v_n_old)));
	*amount = cl_dual_min_second(bound, norm);
	return true;
}

/* One plane contact of the velocity pass; *shared is the kernel's ground
 * tangent v_t_dir: written by the first wall, read by the others. */
static void bounce_plane(PbdWork *W, bool tape, int i, int k, ClDual2 *shared)
{
	ClArith A = {W->f32, tape ? 4 : 0};
	int rel_qty = W->swapped ? QTY_VPRED : QTY_VBAR, old_qty = W->swapped ? QTY_VBAR : QTY_VPRED;
	Seeds seeds = {2, {i, i}, {rel_qty, old_qty}};
	ClDual2 rel = load(&A, W, rel_qty, i, 0), old = load(&A, W, old_qty, i, 2);
	ClDual2 n = cl_dual2_const(&A, W->bodies.normal[2 * k], W->bodies.normal[2 * k + 1]);
	ClDual v_n = cl_dual2_dot(&A, rel, n), v_n_old = cl_dual2_dot(&A, old, n);
	ClDual dv_rest = restitution(&A, W, v_n, v_n_old);
	ClDual2 change = cl_dual2_mul(&A, n, dv_rest);
	ClDual2 direction, amount_dir;
	ClDual amount;
	if (slip(&A, W, rel, n, v_n, v_n_old, &direction, &amount)) {
		if (k == 0)
			*shared = direction;
		amount_dir = cl_dual2_mul(&A, cl_dual2_neg(&A, W->tangent_bug && k > 0 ? *shared : direction), amount);
	} else {
		amount_dir = cl_dual2_const(&A, 0.0, 0.0);
	}
	change = cl_dual2_add(&A, change, amount_dir);
	add_value(W, QTY_DVEL, i, &change, 1.0);
	if (tape)
		chain(W, &seeds, &change, 1.0, i, QTY_DVEL);
}

static void bounce_pair(PbdWork *W, bool tape, int i, int j)
{
	ClArith A = {W->f32, tape ? 12 : 0};
	int rel_qty = W->swapped ? QTY_VPRED : QTY_VBAR, old_qty = W->swapped ? QTY_VBAR : QTY_VPRED;
	Seeds seeds = {6, {i, j, i, j, i, j}, {QTY_Q, QTY_Q, rel_qty, rel_qty, old_qty, old_qty}};
	ClDual2 qi = load(&A, W, QTY_Q, i, 0), qj = load(&A, W, QTY_Q, j, 2);
	ClDual2 rel = cl_dual2_sub(&A, load(&A, W, rel_qty, i, 4), load(&A, W, rel_qty, j, 6));
	ClDual2 old = cl_dual2_sub(&A, load(&A, W, old_qty, i, 8), load(&A, W, old_qty, j, 10));
	ClDual2 n;
	pair_gap(&A, W, i, j, qi, qj, &n);
	ClDual v_n = cl_dual2_dot(&A, rel, n), v_n_old = cl_dual2_dot(&A, old, n);
	ClDual dv_rest = restitution(&A, W, v_n, v_n_old);
	ClDual wi = cl_dual_const(&A, W->bodies.inverse_mass[i]), wj = cl_dual_const(&A, W->bodies.inverse_mass[j]);
	ClDual denominator = cl_dual_add(&A, wi, wj);
	ClDual2 vd = cl_dual2_mul(&A, n, cl_dual_div(&A, dv_rest, denominator));
	ClDual2 direction;
	ClDual amount;
	if (W->friction > 0.0 && slip(&A, W, rel, n, v_n, v_n_old, &direction, &amount))
		vd = cl_dual2_add(&A, vd, cl_dual2_div(&A, cl_dual2_mul(&A, cl_dual2_neg(&A, direction), amount), denominator));
	ClDual2 ci = cl_dual2_mul(&A, vd, wi), cj = cl_dual2_mul(&A, vd, wj);
	add_value(W, QTY_DVEL, i, &ci, 1.0);
	add_value(W, QTY_DVEL, j, &cj, -1.0);
	if (tape) {
		chain(W, &seeds, &ci, 1.0, i, QTY_DVEL);
		chain(W, &seeds, &cj, -1.0, j, QTY_DVEL);
	}
}

static void note_contact(ClStepContext *ctx, PbdWork *W, int ball, int slot, bool active)
{
	unsigned char *flag = &W->touching[(size_t)ball * (size_t)(W->walls + W->balls) + (size_t)slot];
	if (active && !*flag)
		cl_step_contact(ctx, ctx->step * ctx->dt, ball, slot < W->walls ? -1 - slot : slot - W->walls);
	*flag = active;
}

/* Finds the contacts on the predicted positions q and gives every touching
 * ball its derivative rows, seeded with x, q, ṽ as functions of (x, v, u). */
static int find_contacts(ClStepContext *ctx, PbdWork *W)
{
	bool f32 = W->f32;
	const double *q = W->value[QTY_Q];
	W->plane_count = 0;
	W->pair_count = 0;
	for (int i = 0; i < W->balls; i++)
		W->slot[i] = -1;
	for (int i = 0; i < W->balls; i++) {
		for (int k = 0; k < W->walls; k++) {
			double c = warp_plane_gap(f32, W->bodies.offset[k], W->bodies.normal + 2 * k, q[2 * i], q[2 * i + 1],
									  W->bodies.radius[i]);
			bool active = in_contact(W, c);
			note_contact(ctx, W, i, k, active);
			if (!active)
				continue;
			W->contact_plane[2 * W->plane_count] = i;
			W->contact_plane[2 * W->plane_count++ + 1] = k;
			W->slot[i] = 0;
		}
	}
	for (int i = 0; i < W->balls; i++)
		for (int j = i + 1; j < W->balls; j++) {
			double radii = cl_round(f32, W->bodies.radius[i] + W->bodies.radius[j]);
			bool active = in_contact(W, warp_pair_gap(f32, q[2 * i], q[2 * i + 1], q[2 * j], q[2 * j + 1], radii));
			note_contact(ctx, W, i, W->walls + j, active);
			if (!active)
				continue;
			W->contact_pair[2 * W->pair_count] = i;
			W->contact_pair[2 * W->pair_count++ + 1] = j;
			W->slot[i] = W->slot[j] = 0;
		}
	int touching = 0;
	for (int i = 0; i < W->balls; i++)
		if (W->slot[i] == 0)
			W->slot[i] = touching++;
	return touching;
}

/* x = x, q = x + ṽ·dt, ṽ = v + (u·w + g)·dt: their rows in (x, v, u). */
static void seed_rows(PbdWork *W, int touching)
{
	memset(W->rows, 0, sizeof(double) * (size_t)touching * QTY_COUNT * 2 * (size_t)W->width);
	double dt = W->dt;
	for (int i = 0; i < W->balls; i++) {
		if (W->slot[i] < 0)
			continue;
		double w = W->bodies.inverse_mass[i];
		for (int c = 0; c < 2; c++) {
			row(W, i, QTY_X, c)[6 * i + c] = 1.0;
			double *vpred = row(W, i, QTY_VPRED, c), *q = row(W, i, QTY_Q, c);
			vpred[6 * i + 2 + c] = 1.0;
			vpred[6 * i + 4 + c] = dt * w;
			q[6 * i + c] = 1.0;
			q[6 * i + 2 + c] = dt;
			q[6 * i + 4 + c] = dt * dt * w;
		}
	}
}

/* The step's Jacobian: constant blocks for free balls, and for a touching
 * ball every nonzero block of x' = q + Δ, v' = v̄ + Δv. */
static void record(PbdWork *W, ClTape *tape)
{
	double dt = W->dt;
	cl_tape_factor(tape);
	for (int i = 0; i < W->balls; i++) {
		if (W->slot[i] >= 0) {
			for (int j = 0; j < W->balls; j++) {
				double a[CL_BALL_STATE * CL_BALL_STATE] = {0}, b[2 * CL_BALL_STATE] = {0};
				bool nonzero = false;
				for (int r = 0; r < 4; r++) {
					int c = r % 2;
					const double *base = row(W, i, r < 2 ? QTY_Q : QTY_VBAR, c);
					const double *extra = row(W, i, r < 2 ? QTY_DELTA : QTY_DVEL, c);
					for (int k = 0; k < 6; k++) {
						double value = base[6 * j + k] + extra[6 * j + k];
						nonzero = nonzero || value != 0.0;
						if (k < 4)
							a[CL_A(r, k)] = value;
						else
							b[2 * r + k - 4] = value;
					}
				}
				if (!nonzero && j != i)
					continue;
				memcpy(cl_tape_a(tape, i, j), a, sizeof a);
				memcpy(cl_tape_b(tape, i, j), b, sizeof b);
			}
			continue;
		}
		double w = W->bodies.inverse_mass[i];
		double *A = cl_tape_a_identity(tape, i), *B = cl_tape_b(tape, i, i);
		A[CL_A(0, 2)] = A[CL_A(1, 3)] = dt;
		B[0] = B[3] = dt * dt * w;
		B[4] = B[7] = dt * w;
	}
}

static void pbd_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	PbdWork *W = ctx->workspace;
	if (ctx->step == 0)
		pbd_prepare(W, ctx);
	bool f32 = W->f32, tape = ctx->tape != NULL;
	double dt = W->dt;
	/* 1. predict: ṽ = v + (u·w + g·step(−w))·dt, q = x + ṽ·dt */
	for (int i = 0; i < W->balls; i++) {
		for (int c = 0; c < 2; c++) {
			const double *si = s + CL_BALL_STATE * i;
			double x = cl_round(f32, si[c]), v = cl_round(f32, si[2 + c]);
			double a =
				cl_round(f32, cl_round(f32, cl_round(f32, u[2 * i + c]) * W->bodies.inverse_mass[i]) + W->gravity[c]);
			double vpred = cl_round(f32, v + cl_round(f32, a * dt));
			W->value[QTY_X][2 * i + c] = x;
			W->value[QTY_VPRED][2 * i + c] = vpred;
			W->value[QTY_Q][2 * i + c] = cl_round(f32, x + cl_round(f32, vpred * dt));
			W->value[QTY_DELTA][2 * i + c] = 0.0;
			W->value[QTY_DVEL][2 * i + c] = 0.0;
		}
	}
	int touching = find_contacts(ctx, W);
	if (tape)
		seed_rows(W, touching);
	/* 2. project positions on q (Jacobi: every contact reads q) */
	for (int p = 0; p < W->plane_count; p++)
		project_plane(W, tape, W->contact_plane[2 * p], W->contact_plane[2 * p + 1]);
	for (int p = 0; p < W->pair_count; p++)
		project_pair(W, tape, W->contact_pair[2 * p], W->contact_pair[2 * p + 1]);
	/* 3. velocity from positions: v̄ = (q + Δ − x)/dt */
	for (int i = 0; i < W->balls; i++) {
		for (int c = 0; c < 2; c++) {
			double x_new = cl_round(f32, W->value[QTY_Q][2 * i + c] + W->value[QTY_DELTA][2 * i + c]);
			W->x_new[2 * i + c] = x_new;
			W->value[QTY_VBAR][2 * i + c] = cl_round(f32, cl_round(f32, x_new - W->value[QTY_X][2 * i + c]) / dt);
			if (!tape || W->slot[i] < 0)
				continue;
			const double *q = row(W, i, QTY_Q, c), *delta = row(W, i, QTY_DELTA, c), *x = row(W, i, QTY_X, c);
			double *vbar = row(W, i, QTY_VBAR, c);
			for (int col = 0; col < W->width; col++)
				vbar[col] = (q[col] + delta[col] - x[col]) / dt;
		}
	}
	/* 4. restitution and friction on the contacts found with q */
	ClDual2 shared = cl_dual2_const(&(ClArith){f32, tape ? 4 : 0}, 0.0, 0.0);
	for (int p = 0; p < W->plane_count; p++) {
		int i = W->contact_plane[2 * p];
		if (p == 0 || W->contact_plane[2 * p - 2] != i)
			shared = cl_dual2_const(&(ClArith){f32, tape ? 4 : 0}, 0.0, 0.0);
		bounce_plane(W, tape, i, W->contact_plane[2 * p + 1], &shared);
	}
	for (int p = 0; p < W->pair_count; p++)
		bounce_pair(W, tape, W->contact_pair[2 * p], W->contact_pair[2 * p + 1]);
	/* 5. x' = q + Δ, v' = v̄ + Δv */
	for (int i = 0; i < W->balls; i++)
		for (int c = 0; c < 2; c++) {
			s_next[CL_BALL_STATE * i + c] = W->x_new[2 * i + c];
			s_next[CL_BALL_STATE * i + 2 + c] =
				cl_round(f32, W->value[QTY_VBAR][2 * i + c] + W->value[QTY_DVEL][2 * i + c]);
		}
	if (tape)
		record(W, ctx->tape);
}

static const char *const pbd_inputs_choices[] = {"swapped", "as-named", NULL};

static const ClParamDesc pbd_warp_params[] = {
	[PARAM_PRECISION] = {"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
						 "arithmetic of the forward pass (Warp 0.2.0 ran float32)", cl_precision_choices},
	[PARAM_INPUTS] = {"velocity_inputs", CL_PARAM_KIND_CHOICE, INPUTS_SWAPPED, 0, 1, "",
					  "velocity pass: pre/post-projection velocities swapped and c < 0 (Task 2's kernel) or as "
					  "named and c ≤ 0 (Tasks 1, 3)",
					  pbd_inputs_choices},
	[PARAM_TANGENT_BUG] = {"wall_tangent_bug", CL_PARAM_KIND_BOOL, 1, 0, 1, "",
						   "walls after the first take the first wall's friction tangent (zero unless it touched), "
						   "as Task 2's kernel did",
						   NULL},
};

const ClBackend cl_backend_pbd_warp = {
	.info = {
		.id = "pbd-warp",
		.label = "PBD (Warp)",
		.family = "pbd",
		.mirrors = "Warp XPBD",
		.toi = false,
		.gradient_is_derivative = true,
		.intro = "Moves overlapping balls apart and infers their velocity from the move (position-based, like Warp's XPBD).",
		.summary =
			"Position-based dynamics as the paper's Warp 0.2.0 XPBD scripts ran it: predict ṽ = v + (u/m + g)·dt, "
			"q = x + ṽ·dt; one Jacobi projection with no compliance on q (planes: q += −c·n, plus Task 2's static "
			"friction that undoes the tangential displacement when it is below μ·|c|; ball pairs: "
			"q_i −= n·c·w_i/(w_i + w_j), q_j += n·c·w_j/(w_i + w_j)); v̄ = (q' − x)/dt; then a restitution and "
			"friction pass on the contacts found with the unprojected q: Δ_n = −v_n − min(e·v_n,old, 0), "
			"and for |v_t| ≥ 1e-6 a tangential loss min(μ|(1+e)·v_n,old|, |v_t|). One general kernel reproduces "
			"the paper's three. Its quirks are kept: Task 2's kernel passes the velocities in swapped roles "
			"(v_n is the pre-projection ṽ, v_n,old the post-projection v̄), so the outgoing normal velocity is "
			"−ṽ_n + (1−e)·v̄_n; Tasks 1 and 3 use the named roles with e = 1, which gives the same numbers "
			"whenever both normal velocities approach (every published run) but not in general, so "
			"velocity_inputs keeps both (the as-named variant also tests c ≤ 0 like those kernels, the "
			"swapped one c < 0 like Task 2's). Warp's wall friction multiplies by the ground branch's tangent, "
			"zero unless the ground branch ran in the same call: here walls after the first use the first "
			"wall's tangent (wall_tangent_bug). Static-friction flags are branch constants; ball pairs and "
			"masses use inverse-mass weights, planes none. Float32 by default. The gradient is Warp's autodiff "
			"of this program and is far from the physics: the projection puts the ball on the surface whatever "
			"its height, so Task 1's ∂y_N/∂y_0 is 0, and with e < 1 the term (1−e)·v̄_n = (1−e)(r − y)/dt "
			"gives ∂v'/∂y = −(1−e)/dt (−38.4 in Task 2), with friction μ(1+e)/dt more, hence Task 2's huge "
			"gradients and chaotic training. Degenerate contacts pass silently (status ok; Warp reports "
			"nothing): a tangential (grazing) pass is a hit only if a predicted position is inside, so the step "
			"grid decides; simultaneous contacts (a corner, three balls at once) are averaged by the Jacobi "
			"projection, so no order enters but the outcome is not Newton's (three balls in a row at e = 1 "
			"leave at a quarter of the speed); in resting contact (Zeno) the projection holds the ball exactly "
			"on the surface, but that ∂v'/∂y term compounds at every contact step, so the gradient grows "
			"geometrically (×−32 per 0.1 s with e = 0.5, dt = 0.01: 1e15 after 1 s); a ball starting in "
			"contact (at t = 0) is an ordinary contact.",
		.params = pbd_warp_params,
		.param_count = PARAM_COUNT,
	},
	.create = pbd_create,
	.destroy = pbd_destroy,
	.step = pbd_step,
	.tape_blocks_per_ball = true,
	.workspace_bytes = pbd_workspace_bytes,
};
