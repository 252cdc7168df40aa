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
 * A BraxDual carries one tangent in double beside its value: the contact
 * passes are evaluated once per seeded input direction to record their
 * Jacobian (the exact derivative of the rounded program's formulas at its
 * float values; masks and counts are constants, as in JAX).
 */
#pragma once

#include "../core.h"

#include <math.h>
#include <stdbool.h>

typedef struct BraxDual {
	double v; /* value, representable in the working precision */
	double d; /* tangent */
} BraxDual;

typedef struct BraxVec {
	BraxDual x, y;
} BraxVec;

static inline double brax_round(bool f32, double x)
{
	return f32 ? (double)(float)x : x;
}

static inline BraxDual bd_const(double v)
{
	return (BraxDual){v, 0.0};
}

static inline BraxDual bd_add(bool f, BraxDual a, BraxDual b)
{
	return (BraxDual){brax_round(f, a.v + b.v), a.d + b.d};
}

static inline BraxDual bd_sub(bool f, BraxDual a, BraxDual b)
{
	return (BraxDual){brax_round(f, a.v - b.v), a.d - b.d};
}

static inline BraxDual bd_mul(bool f, BraxDual a, BraxDual b)
{
	return (BraxDual){brax_round(f, a.v * b.v), a.d * b.v + a.v * b.d};
}

static inline BraxDual bd_div(bool f, BraxDual a, BraxDual b)
{
	return (BraxDual){brax_round(f, a.v / b.v), (a.d - a.v / b.v * b.d) / b.v};
}

static inline BraxDual bd_neg(BraxDual a)
{
	return (BraxDual){-a.v, -a.d};
}

static inline BraxDual bd_sqrt(bool f, BraxDual a)
{
	double s = brax_round(f, sqrt(a.v));
	return (BraxDual){s, a.d / (2.0 * s)};
}

/* jnp.minimum / jnp.amin: the derivative goes to the smaller argument, half
 * to each at a tie. */
static inline BraxDual bd_min(BraxDual a, BraxDual b)
{
	if (a.v < b.v)
		return a;
	if (b.v < a.v)
		return b;
	return (BraxDual){a.v, 0.5 * (a.d + b.d)};
}

/* JAX's |x|: derivative +1 for x ≥ 0. */
static inline BraxDual bd_abs(BraxDual a)
{
	return a.v >= 0.0 ? (BraxDual){a.v, a.d} : (BraxDual){-a.v, -a.d};
}

/* Multiplication by a 0/1 mask, a constant for differentiation. */
static inline BraxDual bd_mask(BraxDual a, double mask)
{
	return (BraxDual){a.v * mask, a.d * mask};
}

static inline BraxVec bv_add(bool f, BraxVec a, BraxVec b)
{
	return (BraxVec){bd_add(f, a.x, b.x), bd_add(f, a.y, b.y)};
}

static inline BraxVec bv_sub(bool f, BraxVec a, BraxVec b)
{
	return (BraxVec){bd_sub(f, a.x, b.x), bd_sub(f, a.y, b.y)};
}

static inline BraxVec bv_scale(bool f, BraxVec a, BraxDual s)
{
	return (BraxVec){bd_mul(f, a.x, s), bd_mul(f, a.y, s)};
}

static inline BraxVec bv_div(bool f, BraxVec a, BraxDual s)
{
	return (BraxVec){bd_div(f, a.x, s), bd_div(f, a.y, s)};
}

static inline BraxVec bv_neg(BraxVec a)
{
	return (BraxVec){bd_neg(a.x), bd_neg(a.y)};
}

static inline BraxVec bv_mask(BraxVec a, double mask)
{
	return (BraxVec){bd_mask(a.x, mask), bd_mask(a.y, mask)};
}

static inline BraxDual bv_dot(bool f, BraxVec a, BraxVec b)
{
	return bd_add(f, bd_mul(f, a.x, b.x), bd_mul(f, a.y, b.y));
}

/* The out-of-plane (Brax y) component of a × b: a_z b_x − a_x b_z. */
static inline BraxDual bv_cross(bool f, BraxVec a, BraxVec b)
{
	return bd_sub(f, bd_mul(f, a.y, b.x), bd_mul(f, a.x, b.y));
}

/* (k ŷ) × r for an out-of-plane vector k ŷ: (k r_z, −k r_x). */
static inline BraxVec bv_spin(bool f, BraxDual k, BraxVec r)
{
	return (BraxVec){bd_mul(f, k, r.y), bd_neg(bd_mul(f, k, r.x))};
}

/* jumpy.safe_norm: 0 with zero derivative when every component is within
 * 1e-8 of 0 (jnp.allclose), else the norm. */
static inline BraxDual bv_safe_norm(bool f, BraxVec a)
{
	double tolerance = brax_round(f, 1e-8);
	if (fabs(a.x.v) <= tolerance && fabs(a.y.v) <= tolerance)
		return bd_const(0.0);
	return bd_sqrt(f, bv_dot(f, a, a));
}

/* A rotation about Brax y: (w, 0, y, 0). Carried between contact passes
 * without its derivative. */
typedef struct BraxQuat {
	double w, y;
} BraxQuat;

/* The same inside a pbd pass, where the correction's rotation reaches the
 * projected spin and so the friction of the velocity pass. */
typedef struct BraxDualQuat {
	BraxDual w, y;
} BraxDualQuat;

/* math.rotate(v, q) for an in-plane v: (s² − u·u)·v + 2s·(u × v). */
static inline BraxVec brax_rotate(bool f, BraxVec v, BraxQuat q)
{
	BraxDual k = bd_const(brax_round(f, brax_round(f, q.w * q.w) - brax_round(f, q.y * q.y)));
	BraxDual two_s = bd_const(2.0 * q.w), u = bd_const(q.y);
	return (BraxVec){bd_add(f, bd_mul(f, k, v.x), bd_mul(f, two_s, bd_mul(f, u, v.y))),
					 bd_add(f, bd_mul(f, k, v.y), bd_mul(f, two_s, bd_neg(bd_mul(f, u, v.x))))};
}

static inline BraxQuat brax_quat_inv(BraxQuat q)
{
	return (BraxQuat){q.w, -q.y};
}

/* q / ‖q‖ */
static inline BraxQuat brax_normalize(bool f, BraxQuat q)
{
	double norm = brax_round(f, sqrt(brax_round(f, brax_round(f, q.w * q.w) + brax_round(f, q.y * q.y))));
	return (BraxQuat){brax_round(f, q.w / norm), brax_round(f, q.y / norm)};
}

typedef struct BraxBall {
	double radius, mass;
	double inverse_mass;    /* 1/m in the working precision */
	double inverse_inertia; /* every component of Brax's inertia vector */
} BraxBall;

typedef struct BraxWall {
	double point[2];
	BraxQuat rotation; /* the frozen plane body's quaternion, renormalised like Brax's */
	double normal[2];  /* rotate((0, 0, 1), rotation) */
} BraxWall;

/* A pair that may touch: ball a against wall (b < 0: wall −1−b) or ball b. */
typedef struct BraxPair {
	int a, b;
	bool applied; /* a non-zero impulse or correction in the value run */
	/* pbd: the contact frame before the position pass, and its λ */
	BraxVec point, normal;
	BraxDual penetration, lambda;
	/* sphere–sphere: ball b's part, summed after every ball-a part */
	BraxVec b_linear;
	BraxDual b_angular[2];
} BraxPair;

/* Per-body sums of one collider: Brax divides them by (ε + count). */
typedef struct BraxSum {
	BraxVec linear;
	BraxDual angular[2];
	int count;
} BraxSum;

enum { BRAX_COLLIDER_PLANE, BRAX_COLLIDER_SPHERE, BRAX_COLLIDER_COUNT };

typedef struct BraxModel {
	bool f32, pbd;
	int ball_count, wall_count, substeps;
	double h;           /* sub-step, working precision */
	double elasticity;  /* of a contact (Brax: product of both bodies') */
	double friction;
	double gravity[2];
	double erp_rate;        /* legacy: baumgarte_erp·substeps/dt */
	double collide_scale;   /* pbd: solver_scale_collide */
	double velocity_factor; /* exp(velocity_damping·h) */
	double angular_factor;
	BraxBall *balls;
	BraxWall *walls;

	/* State: positions and velocities (also in the engine state), spin and
	 * orientation (hidden: simulated, not differentiated). */
	double *p, *v; /* 2 per ball */
	double *spin;
	BraxQuat *rotation;
	/* pbd: the state at the start of the half-step (qprev). */
	double *p_prev;
	BraxQuat *rotation_prev;

	/* Contact pass input (seeded) and output, per ball. */
	BraxVec *in_p, *in_v, *in_p_prev;
	BraxVec *out_p, *out_v;
	BraxDual *out_spin;
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

/* Fills in_p/in_v (and pbd in_p_prev) from the state with a unit tangent on
 * component (0 px, 1 py, 2 vx, 3 vy) of one ball, or none for ball < 0. */
void brax_seed(BraxModel *m, int ball, int component);

/* Contact frames (brax colliders.py capsule_plane, capsule_capsule): the
 * point c, the normal n and the penetration d > 0 when overlapping. */
void brax_plane_contact(const BraxModel *m, int ball, int wall, BraxVec p, BraxVec *point, BraxVec *normal,
						BraxDual *penetration);
void brax_sphere_contact(const BraxModel *m, int a, int b, BraxVec pa, BraxVec pb, BraxVec *point, BraxVec *normal,
						 BraxDual *penetration);

/* Sphere–plane and sphere–sphere pairs that overlap (penetration > 0) in
 * the current positions, in Brax's pair order; returns their number. */
int brax_find_pairs(BraxModel *m);

/* Clears the per-body collider sums. */
void brax_sums_clear(BraxModel *m);
/* Adds one contribution to a body's sum of one collider. */
void brax_sums_add(BraxModel *m, int ball, int collider, BraxVec linear, const BraxDual *angular, int angular_count);
/* The averaged impulse of a body, summed over the colliders (ε: 1e-8 legacy, 1e-6 pbd). */
BraxVec brax_sums_total(const BraxModel *m, int ball, double epsilon, BraxDual *angular, int angular_count);

/* legacy_spring: the velocity impulses of one sub-step, from in_p/in_v and
 * the hidden spin, into out_v and out_spin. */
void brax_spring_collide(BraxModel *m, bool value_run);

/* pbd: velocity projection of one body against the start of the half-step. */
void brax_pbd_project(const BraxModel *m, BraxVec p, BraxVec p_prev, BraxDualQuat rotation, BraxQuat rotation_prev,
					  BraxVec *v, BraxDualQuat *rotation_out, BraxDual *spin);
/* pbd: position pass, projection and velocity pass of a collision
 * half-step, from in_p/in_v/in_p_prev into out_p, out_v, out_spin and
 * out_rotation. */
void brax_pbd_collide(BraxModel *m, bool value_run);
