/* Brax v0.0.13 (legacy_spring and pbd) on ContactLab scenes: shared model
 * state and the arithmetic both modes are written in.
 *
 * The plane of a scene is Brax's x–z plane (ContactLab y is Brax z), the
 * rotation axis is Brax y. Out-of-plane components of Brax's 3-vectors are
 * exact zeros, so dropping them changes no bit of any sum or product.
 *
 * Every operation rounds to the working precision: computing in double and
 * rounding once to float gives the correctly rounded float result for
 * + − × ÷ √ (53 ≥ 2·24 + 2), so float32 runs are Brax's float32 program.
 *
 * The contact passes run on dual numbers (dual.h): a value-only run, then
 * runs with the tangents of up to CL_DUAL_SLOTS input directions at once to
 * record their Jacobian (the exact derivative of the rounded program's
 * formulas at its float values; masks and counts are constants, as in JAX;
 * min is jnp.minimum's, norms jumpy's safe_norm). With parameter columns
 * recorded, further runs carry tangents along the scene's numbers instead
 * (elasticity, friction, the sub-step h for the duration, radii, masses,
 * wall points and normals), the state held: what JAX's grad gives with
 * respect to them.
 */
#pragma once

#include "../dual.h"

#include <math.h>
#include <stdbool.h>

/* The out-of-plane (Brax y) component of a × b: a_z b_x − a_x b_z. */
static inline ClDual brax_cross(const ClArith *A, ClDual2 a, ClDual2 b)
{
	return cl_dual_sub(A, cl_dual_mul(A, a.y, b.x), cl_dual_mul(A, a.x, b.y));
}

/* (k ŷ) × r for an out-of-plane vector k ŷ: (k r_z, −k r_x). */
static inline ClDual2 brax_spin(const ClArith *A, ClDual k, ClDual2 r)
{
	return (ClDual2){cl_dual_mul(A, k, r.y), cl_dual_neg(A, cl_dual_mul(A, k, r.x))};
}

/* A rotation about Brax y: (w, 0, y, 0). Carried between contact passes
 * without its derivative. */
typedef struct BraxQuat {
	double w, y;
} BraxQuat;

/* The same inside a pbd pass, where the correction's rotation reaches the
 * projected spin and so the friction of the velocity pass. */
typedef struct BraxDualQuat {
	ClDual w, y;
} BraxDualQuat;

/* math.rotate(v, q) for an in-plane v: (s² − u·u)·v + 2s·(u × v). */
static inline ClDual2 brax_rotate(const ClArith *A, ClDual2 v, BraxQuat q)
{
	ClDual k = cl_dual_const(A, cl_arith_round(A, cl_arith_round(A, q.w * q.w) - cl_arith_round(A, q.y * q.y)));
	ClDual two_s = cl_dual_const(A, 2.0 * q.w), u = cl_dual_const(A, q.y);
	return (ClDual2){
		cl_dual_add(A, cl_dual_mul(A, k, v.x), cl_dual_mul(A, two_s, cl_dual_mul(A, u, v.y))),
		cl_dual_add(A, cl_dual_mul(A, k, v.y), cl_dual_mul(A, two_s, cl_dual_neg(A, cl_dual_mul(A, u, v.x))))};
}

static inline BraxQuat brax_quat_inv(BraxQuat q)
{
	return (BraxQuat){q.w, -q.y};
}

/* q / ‖q‖ */
static inline BraxQuat brax_normalize(bool f, BraxQuat q)
{
	double norm = cl_round(f, sqrt(cl_round(f, cl_round(f, q.w * q.w) + cl_round(f, q.y * q.y))));
	return (BraxQuat){cl_round(f, q.w / norm), cl_round(f, q.y / norm)};
}

typedef struct BraxBall {
	double radius, mass;
	double inverse_mass;    /* 1/m in the working precision */
} BraxBall;

typedef struct BraxWall {
	double point[2];
	BraxQuat rotation; /* the frozen plane body's quaternion, renormalised like Brax's */
	double normal[2];  /* rotate((0, 0, 1), rotation) */
} BraxWall;

/* A ball's and a wall's constants as inputs of a contact pass. */
typedef struct BraxBallInput {
	ClDual radius, mass, inverse_mass;
} BraxBallInput;

typedef struct BraxWallInput {
	ClDual2 point, normal;
} BraxWallInput;

/* A pair that may touch: ball a against wall (b < 0: wall −1−b) or ball b. */
typedef struct BraxPair {
	int a, b;
	bool applied; /* a non-zero impulse or correction in the value run */
	/* pbd: the contact frame before the position pass, and its λ */
	ClDual2 point, normal;
	ClDual penetration, lambda;
	/* sphere–sphere: ball b's part, summed after every ball-a part */
	ClDual2 b_linear;
	ClDual b_angular[2];
} BraxPair;

/* Per-body sums of one collider: Brax divides them by (ε + count). */
typedef struct BraxSum {
	ClDual2 linear;
	ClDual angular[2];
	int count;
} BraxSum;

enum { BRAX_COLLIDER_PLANE, BRAX_COLLIDER_SPHERE, BRAX_COLLIDER_COUNT };

typedef struct BraxModel {
	bool f32, pbd;
	int ball_count, wall_count, substeps;
	double h;           /* sub-step, working precision */
	double h_per_duration; /* ∂h/∂T = 1/(N·substeps) */
	double elasticity;  /* of a contact (Brax: product of both bodies') */
	double friction;
	double elasticity_slope, friction_slope; /* d(the contact's)/d(the scene's): 2e, 2μ for a product */
	double gravity[2];
	double erp_rate;        /* legacy: baumgarte_erp·substeps/dt */
	double erp_slope;       /* ∂erp_rate/∂baumgarte_erp = substeps/dt */
	double collide_scale;   /* pbd: solver_scale_collide */
	double velocity_damping;
	double inverse_inertia; /* every ball's, every component of Brax's inertia vector */
	double damping_h;       /* the h of exp(velocity_damping·h) */
	double velocity_factor; /* exp(velocity_damping·h) */
	double angular_factor;
	BraxBall *balls;
	BraxWall *walls;

	/* State: positions and velocities (also in the engine state), spin and
	 * orientation (hidden: simulated, not differentiated). */
	double *p, *v; /* 2 per ball */
	double *spin;
	BraxQuat *rotation;
	/* with parameter columns: ∂spin/∂angular_damping since the ball's last
	 * contact pass (whose spin comes out without its derivative) */
	double *spin_dc;
	/* pbd: the state at the start of the half-step (qprev). */
	double *p_prev;
	BraxQuat *rotation_prev;

	/* Contact pass: its arithmetic (the tangent slots of the run), input
	 * (seeded) and output, per ball. */
	ClArith arith;
	ClDual2 *in_p, *in_v, *in_p_prev;
	/* the scene's constants: zero tangents, or seeded along the physical
	 * parameters (h stands for the duration; erp_rate = erp/h moves with it)
	 * and the backend's own (baumgarte_erp, solver_scale_collide) */
	ClDual in_elasticity, in_friction, in_h, in_erp_rate, in_collide_scale;
	ClDual in_inverse_inertia; /* every ball's */
	ClDual *in_spin;           /* per ball: its spin, seeded along angular_damping */
	BraxBallInput *in_balls;
	BraxWallInput *in_walls;
	ClDual2 *out_p, *out_v;
	ClDual *out_spin;
	BraxQuat *out_rotation;
	BraxSum *sums; /* BRAX_COLLIDER_COUNT per ball */
	bool *touched; /* a ball received a non-zero contribution */
	BraxPair *pairs;
	int pair_count, pair_capacity;
	/* the Jacobian of one contact pass over the touched balls */
	int *touched_balls;
	double *jacobian;
	int jacobian_capacity;
} BraxModel;

/* Starts a contact pass: fills in_p/in_v (and pbd in_p_prev) from the state
 * with tangent slot k on column first + k of the touched balls' states (4 per
 * touched ball: px py vx vy), and the constants; count 0 for the value run. */
void brax_seed(BraxModel *m, int first, int count);

/* Contact frames (brax colliders.py capsule_plane, capsule_capsule): the
 * point c, the normal n and the penetration d > 0 when overlapping. Inline,
 * so that the value-only pair search compiles to plain arithmetic. */
static inline void brax_plane_contact(const ClArith *A, ClDual2 p, ClDual radius, const BraxWallInput *wall,
									  ClDual2 *point, ClDual2 *normal, ClDual *penetration)
{
	ClDual2 n = wall->normal;
	*point = cl_dual2_sub(A, p, cl_dual2_mul(A, n, radius));
	*normal = n;
	*penetration = cl_dual2_dot(A, cl_dual2_sub(A, wall->point, *point), n);
}

static inline void brax_sphere_contact(const ClArith *A, ClDual2 pa, ClDual2 pb, ClDual radius_a, ClDual radius_b,
									   ClDual2 *point, ClDual2 *normal, ClDual *penetration)
{
	ClDual2 delta = cl_dual2_sub(A, pa, pb);
	ClDual distance = cl_dual2_safe_norm(A, delta);
	*normal = cl_dual2_div(A, delta, cl_dual_add(A, cl_dual_const(A, cl_arith_round(A, 1e-6)), distance));
	*penetration = cl_dual_sub(A, cl_dual_add(A, radius_a, radius_b), distance);
	*point = cl_dual2_div(A, cl_dual2_add(A, pa, pb), cl_dual_const(A, 2.0));
}

/* Sphere–plane and sphere–sphere pairs that overlap (penetration > 0) in
 * the current positions, in Brax's pair order; returns their number. */
int brax_find_pairs(BraxModel *m);

/* Clears the per-body collider sums. */
void brax_sums_clear(BraxModel *m);
/* Adds one contribution to a body's sum of one collider. */
void brax_sums_add(BraxModel *m, int ball, int collider, ClDual2 linear, const ClDual *angular, int angular_count);
/* The averaged impulse of a body, summed over the colliders (ε: 1e-8 legacy, 1e-6 pbd). */
ClDual2 brax_sums_total(const BraxModel *m, int ball, double epsilon, ClDual *angular, int angular_count);

/* legacy_spring: the velocity impulses of one sub-step, from in_p/in_v and
 * the hidden spin, into out_v and out_spin. */
void brax_spring_collide(BraxModel *m, bool value_run);

/* pbd: velocity projection of one body against the start of the half-step. */
void brax_pbd_project(const BraxModel *m, const ClArith *A, ClDual2 p, ClDual2 p_prev, BraxDualQuat rotation,
					  BraxQuat rotation_prev, ClDual2 *v, BraxDualQuat *rotation_out, ClDual *spin);
/* pbd: position pass, projection and velocity pass of a collision
 * half-step, from in_p/in_v/in_p_prev into out_p, out_v, out_spin and
 * out_rotation. */
void brax_pbd_collide(BraxModel *m, bool value_run);
