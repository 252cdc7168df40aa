/* Forward-mode dual numbers for the backends that mirror an autodiff peer
 * (impulse, convex, the Warp and the Brax backends).
 *
 * A value is computed in the peer's arithmetic: float64 as is, float32 by
 * rounding every operation of float inputs to float, which is exact because
 * double has more than 2·24 + 2 bits. Its tangent along up to CL_DUAL_SLOTS
 * local inputs is carried in double; only the arithmetic's live slots are
 * computed (none for a value-only pass such as contact detection), the
 * others are left unset and never read: value-only passes then cost little
 * more than plain arithmetic. Branches are decided on values and detached
 * quantities are constants, so the tangent is what the peer's autodiff of the
 * same program gives (backends-paper.md §5).
 *
 * Where the peers' derivative rules differ the variants are named: min ties
 * (Python's min: the first argument; Warp's adj_min: the second; JAX: half to
 * each), the vector norm at 0 (Warp's length, jumpy's safe_norm), and the
 * exact form of the quotient and square-root tangents each backend recorded.
 */
#pragma once

#include "core.h"

/* Copies of a dual whose dead slots are unset are not reads of them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

enum { CL_DUAL_SLOTS = 12 };

typedef struct ClDual {
	double v; /* value, representable in the working precision */
	double d[CL_DUAL_SLOTS];
} ClDual;

typedef struct ClDual2 {
	ClDual x, y;
} ClDual2;

/* How to evaluate: the peer's rounding and the number of live tangent slots. */
typedef struct ClArith {
	bool f32;
	int slots;
} ClArith;

static inline double cl_arith_round(const ClArith *A, double x)
{
	return cl_round(A->f32, x);
}

/* A constant: value already in working precision, zero tangent. */
static inline ClDual cl_dual_const(const ClArith *A, double v)
{
	ClDual r;
	r.v = v;
	for (int i = 0; i < A->slots; i++)
		r.d[i] = 0.0;
	return r;
}

/* Input number `slot`: its tangent is the unit vector there (none when the
 * slot is not live). */
static inline ClDual cl_dual_input(const ClArith *A, double v, int slot)
{
	ClDual r = cl_dual_const(A, v);
	if (slot < A->slots)
		r.d[slot] = 1.0;
	return r;
}

static inline ClDual cl_dual_add(const ClArith *A, ClDual a, ClDual b)
{
	ClDual r;
	r.v = cl_arith_round(A, a.v + b.v);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = a.d[i] + b.d[i];
	return r;
}

static inline ClDual cl_dual_sub(const ClArith *A, ClDual a, ClDual b)
{
	ClDual r;
	r.v = cl_arith_round(A, a.v - b.v);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = a.d[i] - b.d[i];
	return r;
}

static inline ClDual cl_dual_neg(const ClArith *A, ClDual a)
{
	ClDual r;
	r.v = -a.v;
	for (int i = 0; i < A->slots; i++)
		r.d[i] = -a.d[i];
	return r;
}

static inline ClDual cl_dual_mul(const ClArith *A, ClDual a, ClDual b)
{
	ClDual r;
	r.v = cl_arith_round(A, a.v * b.v);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = a.d[i] * b.v + a.v * b.d[i];
	return r;
}

/* c·a for a constant c already in working precision (also a 0/±1 mask). */
static inline ClDual cl_dual_scale(const ClArith *A, double c, ClDual a)
{
	ClDual r;
	r.v = cl_arith_round(A, c * a.v);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = c * a.d[i];
	return r;
}

/* a/b with the tangent (a' − q·b')/b, q = a/b unrounded (Warp, Brax). */
static inline ClDual cl_dual_div(const ClArith *A, ClDual a, ClDual b)
{
	ClDual r;
	double q = a.v / b.v;
	r.v = cl_arith_round(A, q);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = (a.d[i] - q * b.d[i]) / b.v;
	return r;
}

/* a/b with the tangent (a'·b − a·b')/b² (impulse, convex). */
static inline ClDual cl_dual_div_expanded(const ClArith *A, ClDual a, ClDual b)
{
	ClDual r;
	r.v = cl_arith_round(A, a.v / b.v);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = (a.d[i] * b.v - a.v * b.d[i]) / (b.v * b.v);
	return r;
}

/* √a with the slope 1/(2√a) at the rounded result, as JAX's rule (Brax). */
static inline ClDual cl_dual_sqrt(const ClArith *A, ClDual a)
{
	ClDual r;
	r.v = cl_arith_round(A, sqrt(a.v));
	for (int i = 0; i < A->slots; i++)
		r.d[i] = a.d[i] / (2.0 * r.v);
	return r;
}

/* √a with the slope at the unrounded root (impulse, convex). */
static inline ClDual cl_dual_sqrt_unrounded_slope(const ClArith *A, ClDual a)
{
	ClDual r;
	double root = sqrt(a.v);
	r.v = cl_arith_round(A, root);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = 0.5 * a.d[i] / root;
	return r;
}

/* |a|: slope −1 below 0, +1 from 0 on (Warp's adj_abs, JAX's |x|); −0 → +0. */
static inline ClDual cl_dual_abs(const ClArith *A, ClDual a)
{
	if (a.v < 0.0)
		return cl_dual_neg(A, a);
	a.v = fabs(a.v);
	return a;
}

/* Python's min(a, b): a unless b < a, so ties (and their derivative) go to a. */
static inline ClDual cl_dual_min_first(ClDual a, ClDual b)
{
	return b.v < a.v ? b : a;
}

/* Warp's min(a, b): a when a < b, otherwise b (ties go to b). */
static inline ClDual cl_dual_min_second(ClDual a, ClDual b)
{
	return a.v < b.v ? a : b;
}

/* jnp.minimum / jnp.amin: the derivative goes to the smaller argument, half
 * to each at a tie. */
static inline ClDual cl_dual_min_split(const ClArith *A, ClDual a, ClDual b)
{
	if (a.v < b.v)
		return a;
	if (b.v < a.v)
		return b;
	for (int i = 0; i < A->slots; i++)
		a.d[i] = 0.5 * (a.d[i] + b.d[i]);
	return a;
}

/* ------------------------------------------------------------- 2-vectors */

static inline ClDual2 cl_dual2_const(const ClArith *A, double x, double y)
{
	return (ClDual2){cl_dual_const(A, x), cl_dual_const(A, y)};
}

/* A 2-vector input in slots `slot` and `slot` + 1. */
static inline ClDual2 cl_dual2_input(const ClArith *A, double x, double y, int slot)
{
	return (ClDual2){cl_dual_input(A, x, slot), cl_dual_input(A, y, slot + 1)};
}

static inline ClDual2 cl_dual2_add(const ClArith *A, ClDual2 a, ClDual2 b)
{
	return (ClDual2){cl_dual_add(A, a.x, b.x), cl_dual_add(A, a.y, b.y)};
}

static inline ClDual2 cl_dual2_sub(const ClArith *A, ClDual2 a, ClDual2 b)
{
	return (ClDual2){cl_dual_sub(A, a.x, b.x), cl_dual_sub(A, a.y, b.y)};
}

static inline ClDual2 cl_dual2_neg(const ClArith *A, ClDual2 a)
{
	return (ClDual2){cl_dual_neg(A, a.x), cl_dual_neg(A, a.y)};
}

/* a·s for a dual scalar s. */
static inline ClDual2 cl_dual2_mul(const ClArith *A, ClDual2 a, ClDual s)
{
	return (ClDual2){cl_dual_mul(A, a.x, s), cl_dual_mul(A, a.y, s)};
}

/* c·a for a constant c (a 0/1 mask in Brax). */
static inline ClDual2 cl_dual2_scale(const ClArith *A, double c, ClDual2 a)
{
	return (ClDual2){cl_dual_scale(A, c, a.x), cl_dual_scale(A, c, a.y)};
}

/* Every component divided by s. */
static inline ClDual2 cl_dual2_div(const ClArith *A, ClDual2 a, ClDual s)
{
	return (ClDual2){cl_dual_div(A, a.x, s), cl_dual_div(A, a.y, s)};
}

/* a.x·b.x + a.y·b.y (a 3-vector's + a.z·b.z adds an exact +0). */
static inline ClDual cl_dual2_dot(const ClArith *A, ClDual2 a, ClDual2 b)
{
	return cl_dual_add(A, cl_dual_mul(A, a.x, b.x), cl_dual_mul(A, a.y, b.y));
}

/* Warp's length: adj_length is normalize(a)·adj and normalize(0) = 0, so the
 * slope is 0 at a = 0, not NaN. */
static inline ClDual cl_dual2_length(const ClArith *A, ClDual2 a)
{
	double x = a.x.v, y = a.y.v;
	double length = sqrt(cl_arith_round(A, cl_arith_round(A, x * x) + cl_arith_round(A, y * y)));
	ClDual r;
	r.v = cl_arith_round(A, length);
	for (int i = 0; i < A->slots; i++)
		r.d[i] = length > 0.0 ? (x * a.x.d[i] + y * a.y.d[i]) / length : 0.0;
	return r;
}

/* jumpy.safe_norm: 0 with zero derivative when every component is within
 * 1e-8 of 0 (jnp.allclose), else the norm. */
static inline ClDual cl_dual2_safe_norm(const ClArith *A, ClDual2 a)
{
	double tolerance = cl_arith_round(A, 1e-8);
	if (fabs(a.x.v) <= tolerance && fabs(a.y.v) <= tolerance)
		return cl_dual_const(A, 0.0);
	return cl_dual_sqrt(A, cl_dual2_dot(A, a, a));
}

#pragma GCC diagnostic pop
