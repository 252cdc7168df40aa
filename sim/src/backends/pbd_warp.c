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
 * their other contacts, so a row may reach two contacts away. When the tape
 * records parameter columns the rows also have a column per physical
 * parameter (cl_phys_index), and each contact is evaluated a second time
 * with the parameters it reads as the duals' inputs and the state held. */
#include "warp.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_PRECISION, PARAM_INPUTS, PARAM_TANGENT_BUG, PARAM_COUNT };
enum { INPUTS_SWAPPED, INPUTS_AS_NAMED };

/* The per-ball quantities a contact reads, each with a derivative row (2 rows
 * of 6·balls: d/d(x, v, u) of every ball, then the physical parameters'). */
enum { QTY_X, QTY_Q, QTY_VPRED, QTY_DELTA, QTY_VBAR, QTY_DVEL, QTY_COUNT };

typedef struct PbdWork {
	int balls, walls;
	bool f32;
	/* Task 2's kernel (swapped velocity roles, c < 0) or Tasks 1 and 3's (c ≤ 0) */
	bool swapped;
	bool tangent_bug;
	double dt, elasticity, one_plus_e, friction, eps, gravity[2];
	WarpBodies bodies;
	const ClScene *scene;
	/* per step, 2 per ball: x, q, ṽ, Δ, x_new, v̄, Δv */
	double *value[QTY_COUNT];
	double *x_new;
	double *accel; /* per step, 2 per ball: u·w + g */
	int *contact_plane; /* (ball, wall) pairs in ball-then-wall order */
	int plane_count;
	int *contact_pair; /* (i, j), i < j, lexicographic */
	int pair_count;
	int *slot;    /* per ball: its derivative rows, −1 when it touches nothing */
	double *rows; /* per touching ball: QTY_COUNT × 2 rows of width */
	/* a row: 6·balls state columns, then params parameter columns (0 unless
	 * the tape records them); rows holds rows of up to capacity columns */
	int width, params, capacity;
	unsigned char *touching; /* balls × (walls + balls): in contact last step */
} PbdWork;

/* The derivative rows: QTY_COUNT × 2 rows of 6·balls (+ params) per ball, balls² in all. */
static size_t rows_count(const ClScene *scene, int params)
{
	size_t nb = (size_t)scene->ball_count + 1;
	return nb * QTY_COUNT * 2 * (6 * (size_t)scene->ball_count + (size_t)params + 1);
}

static size_t pbd_workspace_bytes(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count + 1, nw = (size_t)scene->wall_count + 1;
	return rows_count(scene, 0) * sizeof(double) + nb * nb * sizeof(int) + nb * (nw + nb);
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
	W->width = W->capacity = 6 * W->balls;
	bool ok = warp_bodies_create(&W->bodies, scene);
	for (int k = 0; k < QTY_COUNT; k++)
		ok = (W->value[k] = cl_calloc(2 * nb, sizeof(double))) && ok;
	W->x_new = cl_calloc(2 * nb, sizeof(double));
	W->accel = cl_calloc(2 * nb, sizeof(double));
	W->contact_plane = cl_calloc(2 * nb * nw, sizeof(int));
	W->contact_pair = cl_calloc(nb * nb, sizeof(int));
	W->slot = cl_calloc(nb, sizeof(int));
	W->rows = cl_calloc(rows_count(scene, 0), sizeof(double));
	W->touching = cl_calloc(nb * (nw + nb), 1);
	if (!ok || !W->x_new || !W->accel || !W->contact_plane || !W->contact_pair || !W->slot || !W->rows || !W->touching) {
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
	free(W->accel);
	free(W->contact_plane);
	free(W->contact_pair);
	free(W->slot);
	free(W->rows);
	free(W->touching);
	free(W);
}

/* Every constant rounded once, as Warp received Python floats as float32
 * kernel arguments; (1 + e) is formed inside the kernel. False when the
 * parameter columns' wider rows cannot be had. */
static bool pbd_prepare(PbdWork *W, const ClStepContext *ctx)
{
	const ClScene *scene = ctx->scene;
	W->scene = scene;
	W->params = ctx->tape && ctx->tape->record_params ? cl_phys_count(scene) : 0;
	W->width = 6 * W->balls + W->params;
	if (W->width > W->capacity) {
		double *rows = cl_calloc(rows_count(scene, W->params), sizeof(double));
		if (!rows)
			return false;
		free(W->rows);
		W->rows = rows;
		W->capacity = W->width;
	}
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
	return true;
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

/* A contact is evaluated for its values only (no tape), with the duals'
 * inputs its state seeds, or (parameter columns) its parameters. */
typedef enum Mode { MODE_VALUE, MODE_STATE, MODE_PARAMS } Mode;

/* What the seeds of a contact's duals are: in MODE_STATE seed 2m + c is
 * component c of quantity qty[m] of ball[m]; in MODE_PARAMS seed m is the
 * physical parameter param[m]. */
typedef struct Seeds {
	int count;
	int ball[6], qty[6];
	int params;
	int param[4];
} Seeds;

static ClArith arith(const PbdWork *W, Mode mode, const Seeds *seeds)
{
	return (ClArith){W->f32, mode == MODE_STATE ? 2 * seeds->count : mode == MODE_PARAMS ? seeds->params : 0};
}

/* The dual slot of state seed slot, or of parameter m: CL_DUAL_SLOTS (never
 * live, a constant) in the other mode. */
static int state_slot(Mode mode, int slot)
{
	return mode == MODE_PARAMS ? CL_DUAL_SLOTS : slot;
}

static int param_slot(Mode mode, int m)
{
	return mode == MODE_PARAMS ? m : CL_DUAL_SLOTS;
}

/* target (a 2-row quantity of a ball) += sign · d(value)/d(seeds) · rows(seeds),
 * or in MODE_PARAMS sign · d(value)/d(param) in the parameters' columns. */
static void chain(PbdWork *W, Mode mode, const Seeds *seeds, const ClDual2 *value, double sign, int ball, int qty)
{
	const ClDual *c[2] = {&value->x, &value->y};
	for (int r = 0; r < 2; r++) {
		double *target = row(W, ball, qty, r);
		if (mode == MODE_PARAMS) {
			for (int m = 0; m < seeds->params; m++)
				target[6 * W->balls + seeds->param[m]] += sign * c[r]->d[m];
			continue;
		}
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

/* The gap and normal of wall k; the radius's tangent goes to slot, the
 * wall's point.x, point.y and angle to the next three. */
static ClDual plane_gap(const ClArith *A, const PbdWork *W, int wall, int ball, ClDual2 q, int slot, ClDual2 *n)
{
	const ClWall *w = &W->scene->walls[wall];
	*n = warp_wall_normal(A, &W->bodies, w, wall, slot + 3);
	return cl_dual_sub(A, cl_dual_add(A, warp_wall_offset(A, &W->bodies, w, wall, slot + 1), cl_dual2_dot(A, q, *n)),
					   cl_dual_input(A, W->bodies.radius[ball], slot));
}

/* The gap and normal of a pair; r_i + r_j (one rounded sum) has a unit
 * tangent along radius_slot and radius_slot + 1. */
static ClDual pair_gap(const ClArith *A, const PbdWork *W, int i, int j, ClDual2 qi, ClDual2 qj, int radius_slot,
					   ClDual2 *n)
{
	ClDual2 xij = cl_dual2_sub(A, qi, qj);
	ClDual l = cl_dual2_length(A, xij);
	*n = cl_dual2_mul(A, xij, cl_dual_div(A, cl_dual_const(A, 1.0), l));
	ClDual reach = cl_dual_input(A, cl_arith_round(A, W->bodies.radius[i] + W->bodies.radius[j]), radius_slot);
	if (radius_slot + 1 < A->slots)
		reach.d[radius_slot + 1] = 1.0;
	return cl_dual_sub(A, l, reach);
}

/* w = 1/m with dw/dm = −w² along slot. */
static ClDual inverse_mass(const ClArith *A, const PbdWork *W, int ball, int slot)
{
	ClDual w = cl_dual_const(A, W->bodies.inverse_mass[ball]);
	if (slot < A->slots)
		w.d[slot] = -w.v * w.v;
	return w;
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

/* The contact's new values (not in MODE_PARAMS: its values are the state
 * pass's) and derivative rows. */
static void add(PbdWork *W, Mode mode, const Seeds *seeds, const ClDual2 *term, double sign, int ball, int qty)
{
	if (mode != MODE_PARAMS)
		add_value(W, qty, ball, term, sign);
	if (mode != MODE_VALUE)
		chain(W, mode, seeds, term, sign, ball, qty);
}

static void project_plane(PbdWork *W, Mode mode, int i, int k)
{
	Seeds seeds = {2, {i, i}, {QTY_Q, QTY_X}, 4,
				   {cl_phys_radius(i), cl_phys_wall(W->scene, k, 0), cl_phys_wall(W->scene, k, 1),
					cl_phys_wall(W->scene, k, 2)}};
	ClArith A = arith(W, mode, &seeds);
	ClDual2 q = load(&A, W, QTY_Q, i, state_slot(mode, 0)), x = load(&A, W, QTY_X, i, state_slot(mode, 2)), n;
	ClDual c = plane_gap(&A, W, k, i, q, param_slot(mode, 0), &n);
	bool sticks;
	ClDual2 tangential = static_friction(&A, W, cl_dual2_sub(&A, q, x), n, c, &sticks);
	ClDual2 delta = cl_dual2_add(&A, cl_dual2_mul(&A, n, cl_dual_neg(&A, c)), tangential);
	add(W, mode, &seeds, &delta, 1.0, i, QTY_DELTA);
}

static void project_pair(PbdWork *W, Mode mode, int i, int j)
{
	Seeds seeds = {4, {i, j, i, j}, {QTY_Q, QTY_Q, QTY_X, QTY_X}, 4,
				   {cl_phys_radius(i), cl_phys_radius(j), cl_phys_mass(i), cl_phys_mass(j)}};
	ClArith A = arith(W, mode, &seeds);
	ClDual2 qi = load(&A, W, QTY_Q, i, state_slot(mode, 0)), qj = load(&A, W, QTY_Q, j, state_slot(mode, 2));
	ClDual2 n;
	ClDual c = pair_gap(&A, W, i, j, qi, qj, param_slot(mode, 0), &n);
	ClDual wi = inverse_mass(&A, W, i, param_slot(mode, 2)), wj = inverse_mass(&A, W, j, param_slot(mode, 3));
	ClDual denominator = cl_dual_add(&A, wi, wj);
	ClDual2 xd = cl_dual2_mul(&A, n, cl_dual_div(&A, c, denominator));
	ClDual2 di = cl_dual2_mul(&A, xd, wi), dj = cl_dual2_mul(&A, xd, wj);
	add(W, mode, &seeds, &di, -1.0, i, QTY_DELTA);
	add(W, mode, &seeds, &dj, 1.0, j, QTY_DELTA);
	if (W->friction == 0.0)
		return;
	/* Task 2's static friction on the relative displacement, split by inverse mass */
	ClDual2 xi = load(&A, W, QTY_X, i, state_slot(mode, 4)), xj = load(&A, W, QTY_X, j, state_slot(mode, 6));
	ClDual2 displacement = cl_dual2_sub(&A, cl_dual2_sub(&A, qi, xi), cl_dual2_sub(&A, qj, xj));
	bool sticks;
	ClDual2 tangential = static_friction(&A, W, displacement, n, c, &sticks);
	if (!sticks)
		return;
	ClDual2 share = cl_dual2_div(&A, tangential, denominator);
	ClDual2 ti = cl_dual2_mul(&A, share, wi), tj = cl_dual2_mul(&A, share, wj);
	add(W, mode, &seeds, &ti, 1.0, i, QTY_DELTA);
	add(W, mode, &seeds, &tj, -1.0, j, QTY_DELTA);
}

/* The restitution and friction pass's normal and tangential change for the
 * relative velocities "rel" (the kernel's rel_v / v_n) and "old" (rel_v_old /
 * v_n_old): Δ_n = −v_n − min(e·v_n_old, 0); the slip v_t = rel − n·v_n, when
 * |v_t| ≥ 1e-6, loses min(μ|(1+e)·v_n_old|, |v_t|) along *direction (the own
 * tangent, or the shared one of Warp's wall branch). */
typedef struct Coefficients {
	ClDual e, one_plus_e, mu;
} Coefficients;

/* e, 1 + e (d/de = 1) with the tangent along slot, μ along slot + 1. */
static Coefficients coefficients(const ClArith *A, const PbdWork *W, int slot)
{
	Coefficients k = {cl_dual_input(A, W->elasticity, slot), cl_dual_input(A, W->one_plus_e, slot),
					  cl_dual_input(A, W->friction, slot + 1)};
	return k;
}

static ClDual restitution(const ClArith *A, const Coefficients *k, ClDual v_n, ClDual v_n_old)
{
	return cl_dual_sub(A, cl_dual_neg(A, v_n), cl_dual_min_second(cl_dual_mul(A, k->e, v_n_old), cl_dual_const(A, 0.0)));
}

static bool slip(const ClArith *A, const PbdWork *W, const Coefficients *k, ClDual2 rel, ClDual2 n, ClDual v_n,
				 ClDual v_n_old, ClDual2 *direction, ClDual *amount)
{
	ClDual2 v_t = cl_dual2_sub(A, rel, cl_dual2_mul(A, n, v_n));
	ClDual norm = cl_dual2_length(A, v_t);
	if (norm.v < W->eps)
		return false;
	*direction = cl_dual2_div(A, v_t, norm);
	ClDual bound = cl_dual_mul(A, k->mu, cl_dual_abs(A, cl_dual_mul(A, k->one_plus_e, v_n_old)));
	*amount = cl_dual_min_second(bound, norm);
	return true;
}

/* One plane contact of the velocity pass; *shared is the kernel's ground
 * tangent v_t_dir: written by the first wall, read by the others (with its
 * angle's tangent in slot 1 in MODE_PARAMS). */
static void bounce_plane(PbdWork *W, Mode mode, int i, int k, ClDual2 *shared)
{
	int rel_qty = W->swapped ? QTY_VPRED : QTY_VBAR, old_qty = W->swapped ? QTY_VBAR : QTY_VPRED;
	Seeds seeds = {2, {i, i}, {rel_qty, old_qty}, 4,
				   {cl_phys_wall(W->scene, k, 2), cl_phys_wall(W->scene, 0, 2), CL_PHYS_ELASTICITY, CL_PHYS_FRICTION}};
	ClArith A = arith(W, mode, &seeds);
	ClDual2 rel = load(&A, W, rel_qty, i, state_slot(mode, 0)), old = load(&A, W, old_qty, i, state_slot(mode, 2));
	ClDual2 n = warp_wall_normal(&A, &W->bodies, &W->scene->walls[k], k, param_slot(mode, 0));
	Coefficients coefficient = coefficients(&A, W, param_slot(mode, 2));
	ClDual v_n = cl_dual2_dot(&A, rel, n), v_n_old = cl_dual2_dot(&A, old, n);
	ClDual dv_rest = restitution(&A, &coefficient, v_n, v_n_old);
	ClDual2 change = cl_dual2_mul(&A, n, dv_rest);
	ClDual2 direction, amount_dir;
	ClDual amount;
	if (slip(&A, W, &coefficient, rel, n, v_n, v_n_old, &direction, &amount)) {
		if (k == 0) {
			*shared = direction;
			if (mode == MODE_PARAMS) /* wall 0's angle is the others' second parameter */
				for (int c = 0; c < 2; c++) {
					ClDual *d = c ? &shared->y : &shared->x;
					d->d[1] = d->d[0];
					d->d[0] = 0.0;
				}
		}
		amount_dir = cl_dual2_mul(&A, cl_dual2_neg(&A, W->tangent_bug && k > 0 ? *shared : direction), amount);
	} else {
		amount_dir = cl_dual2_const(&A, 0.0, 0.0);
	}
	change = cl_dual2_add(&A, change, amount_dir);
	add(W, mode, &seeds, &change, 1.0, i, QTY_DVEL);
}

static void bounce_pair(PbdWork *W, Mode mode, int i, int j)
{
	int rel_qty = W->swapped ? QTY_VPRED : QTY_VBAR, old_qty = W->swapped ? QTY_VBAR : QTY_VPRED;
	Seeds seeds = {6, {i, j, i, j, i, j}, {QTY_Q, QTY_Q, rel_qty, rel_qty, old_qty, old_qty}, 4,
				   {cl_phys_mass(i), cl_phys_mass(j), CL_PHYS_ELASTICITY, CL_PHYS_FRICTION}};
	ClArith A = arith(W, mode, &seeds);
	ClDual2 qi = load(&A, W, QTY_Q, i, state_slot(mode, 0)), qj = load(&A, W, QTY_Q, j, state_slot(mode, 2));
	ClDual2 rel = cl_dual2_sub(&A, load(&A, W, rel_qty, i, state_slot(mode, 4)),
							   load(&A, W, rel_qty, j, state_slot(mode, 6)));
	ClDual2 old = cl_dual2_sub(&A, load(&A, W, old_qty, i, state_slot(mode, 8)),
							   load(&A, W, old_qty, j, state_slot(mode, 10)));
	ClDual2 n;
	pair_gap(&A, W, i, j, qi, qj, CL_DUAL_SLOTS, &n); /* the gap is not used: no radius */
	Coefficients coefficient = coefficients(&A, W, param_slot(mode, 2));
	ClDual v_n = cl_dual2_dot(&A, rel, n), v_n_old = cl_dual2_dot(&A, old, n);
	ClDual dv_rest = restitution(&A, &coefficient, v_n, v_n_old);
	ClDual wi = inverse_mass(&A, W, i, param_slot(mode, 0)), wj = inverse_mass(&A, W, j, param_slot(mode, 1));
	ClDual denominator = cl_dual_add(&A, wi, wj);
	ClDual2 vd = cl_dual2_mul(&A, n, cl_dual_div(&A, dv_rest, denominator));
	ClDual2 direction;
	ClDual amount;
	if (W->friction > 0.0 && slip(&A, W, &coefficient, rel, n, v_n, v_n_old, &direction, &amount))
		vd = cl_dual2_add(&A, vd, cl_dual2_div(&A, cl_dual2_mul(&A, cl_dual2_neg(&A, direction), amount), denominator));
	ClDual2 ci = cl_dual2_mul(&A, vd, wi), cj = cl_dual2_mul(&A, vd, wj);
	add(W, mode, &seeds, &ci, 1.0, i, QTY_DVEL);
	add(W, mode, &seeds, &cj, -1.0, j, QTY_DVEL);
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

/* x = x, q = x + ṽ·dt, ṽ = v + (u·w + g)·dt: their rows in (x, v, u), and
 * in the duration T = N·dt: ṽ gains a per unit dt, q gains ṽ + dt·a. */
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
			if (W->params) {
				double a = W->accel[2 * i + c];
				vpred[6 * W->balls + CL_PHYS_DURATION] = a / W->scene->steps;
				q[6 * W->balls + CL_PHYS_DURATION] = (W->value[QTY_VPRED][2 * i + c] + dt * a) / W->scene->steps;
			}
		}
	}
}

/* The step's Jacobian: constant blocks for free balls, and for a touching
 * ball every nonzero block of x' = q + Δ, v' = v̄ + Δv; with parameter
 * columns, every nonzero one of those too, and a free ball's duration
 * column (x' = q, v' = (q − x)/dt). */
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
			for (int p = 0; p < W->params; p++) {
				double column[CL_BALL_STATE];
				bool nonzero = false;
				for (int r = 0; r < 4; r++) {
					int at = 6 * W->balls + p;
					column[r] = row(W, i, r < 2 ? QTY_Q : QTY_VBAR, r % 2)[at] +
								row(W, i, r < 2 ? QTY_DELTA : QTY_DVEL, r % 2)[at];
					nonzero = nonzero || column[r] != 0.0;
				}
				if (nonzero)
					memcpy(cl_tape_c(tape, i, p), column, sizeof column);
			}
			continue;
		}
		double w = W->bodies.inverse_mass[i];
		double *A = cl_tape_a_identity(tape, i), *B = cl_tape_b(tape, i, i);
		A[CL_A(0, 2)] = A[CL_A(1, 3)] = dt;
		B[0] = B[3] = dt * dt * w;
		B[4] = B[7] = dt * w;
		if (!W->params)
			continue;
		double *C = cl_tape_c(tape, i, CL_PHYS_DURATION);
		for (int c = 0; c < 2; c++) {
			double dq = W->value[QTY_VPRED][2 * i + c] + dt * W->accel[2 * i + c];
			C[c] = dq / W->scene->steps;
			C[2 + c] = (dq - W->value[QTY_VBAR][2 * i + c]) / dt / W->scene->steps;
		}
	}
}

static void pbd_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	PbdWork *W = ctx->workspace;
	if (ctx->step == 0 && !pbd_prepare(W, ctx)) {
		cl_step_out_of_memory(ctx, "the PBD backend's parameter rows");
		return;
	}
	bool f32 = W->f32, tape = ctx->tape != NULL;
	Mode mode = tape ? MODE_STATE : MODE_VALUE;
	double dt = W->dt;
	/* 1. predict: ṽ = v + (u·w + g·step(−w))·dt, q = x + ṽ·dt */
	for (int i = 0; i < W->balls; i++) {
		for (int c = 0; c < 2; c++) {
			const double *si = s + CL_BALL_STATE * i;
			double x = cl_round(f32, si[c]), v = cl_round(f32, si[2 + c]);
			double a =
				cl_round(f32, cl_round(f32, cl_round(f32, u[2 * i + c]) * W->bodies.inverse_mass[i]) + W->gravity[c]);
			double vpred = cl_round(f32, v + cl_round(f32, a * dt));
			W->accel[2 * i + c] = a;
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
		for (Mode m = mode; m <= (W->params ? MODE_PARAMS : mode); m++)
			project_plane(W, m, W->contact_plane[2 * p], W->contact_plane[2 * p + 1]);
	for (int p = 0; p < W->pair_count; p++)
		for (Mode m = mode; m <= (W->params ? MODE_PARAMS : mode); m++)
			project_pair(W, m, W->contact_pair[2 * p], W->contact_pair[2 * p + 1]);
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
			if (W->params) /* Warp's adj_div: −(a/b)/b along b = dt */
				vbar[6 * W->balls + CL_PHYS_DURATION] -=
					W->value[QTY_VBAR][2 * i + c] / dt / W->scene->steps;
		}
	}
	/* 4. restitution and friction on the contacts found with q; a shared
	 * tangent per mode (the state's and the parameters' tangents) */
	ClDual2 shared[3];
	for (int p = 0; p < W->plane_count; p++) {
		int i = W->contact_plane[2 * p];
		for (Mode m = mode; m <= (W->params ? MODE_PARAMS : mode); m++) {
			if (p == 0 || W->contact_plane[2 * p - 2] != i)
				shared[m] = cl_dual2_const(&(ClArith){f32, CL_DUAL_SLOTS}, 0.0, 0.0);
			bounce_plane(W, m, i, W->contact_plane[2 * p + 1], &shared[m]);
		}
	}
	for (int p = 0; p < W->pair_count; p++)
		for (Mode m = mode; m <= (W->params ? MODE_PARAMS : mode); m++)
			bounce_pair(W, m, W->contact_pair[2 * p], W->contact_pair[2 * p + 1]);
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
			"contact (at t = 0) is an ordinary contact. Parameter columns are the same autodiff w.r.t. the "
			"scene's numbers as inputs of the kernels (Warp's adjoint kernels form them for every argument; "
			"branches constant): elasticity (e and 1 + e) and friction in the velocity pass (the static-friction "
			"flag of the projection is a branch, no derivative), gravity, duration (dt = T/N, through q, ṽ and "
			"the division by dt), radii, masses (through the inverse-mass weights), wall points and angles.",
		.params = pbd_warp_params,
		.param_count = PARAM_COUNT,
	},
	.create = pbd_create,
	.destroy = pbd_destroy,
	.step = pbd_step,
	.tape_blocks_per_ball = true,
	.param_adjoints = 1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY |
					  1u << CL_PARAM_DURATION | 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS |
					  1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE,
	.accel_form = true,
	/* without the parameter columns' wider rows, allocated when a run records them */
	.workspace_bytes = pbd_workspace_bytes,
};
