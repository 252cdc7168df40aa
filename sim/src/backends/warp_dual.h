/* Forward-mode dual numbers for the two Warp backends.
 *
 * A value is computed in the peer's arithmetic (float32, emulated by
 * rounding every operation of float inputs, which is exact because double has
 * more than 2·24 + 2 bits, or float64) and carries its derivatives w.r.t. up to
 * WD_SEEDS local inputs in double. The derivative rules are those of Warp
 * 0.2.0's autodiff: a branch condition is a constant, min(a, b) sends ties to
 * b, |x| has slope +1 at 0. With n = 0 seeds only the value is computed. */
#pragma once

#include "../core.h"

#define WD_SEEDS 12

typedef struct WdArith {
	bool f32;
	int n; /* active seeds */
} WdArith;

typedef struct Wd {
	double v;
	double d[WD_SEEDS];
} Wd;

typedef struct Wd2 {
	Wd x, y;
} Wd2;

static inline Wd wd_const(const WdArith *A, double value)
{
	Wd r = {0};
	r.v = cl_round(A->f32, value);
	for (int k = 0; k < A->n; k++)
		r.d[k] = 0.0;
	return r;
}

/* An input: value already in working precision, d/d(seed k) = 1. */
static inline Wd wd_seed(const WdArith *A, double value, int k)
{
	Wd r = wd_const(A, value);
	if (k < A->n)
		r.d[k] = 1.0;
	return r;
}

static inline Wd wd_add(const WdArith *A, Wd a, Wd b)
{
	Wd r = {0};
	r.v = cl_round(A->f32, a.v + b.v);
	for (int k = 0; k < A->n; k++)
		r.d[k] = a.d[k] + b.d[k];
	return r;
}

static inline Wd wd_sub(const WdArith *A, Wd a, Wd b)
{
	Wd r = {0};
	r.v = cl_round(A->f32, a.v - b.v);
	for (int k = 0; k < A->n; k++)
		r.d[k] = a.d[k] - b.d[k];
	return r;
}

static inline Wd wd_neg(const WdArith *A, Wd a)
{
	Wd r = {0};
	r.v = -a.v;
	for (int k = 0; k < A->n; k++)
		r.d[k] = -a.d[k];
	return r;
}

static inline Wd wd_mul(const WdArith *A, Wd a, Wd b)
{
	Wd r = {0};
	r.v = cl_round(A->f32, a.v * b.v);
	for (int k = 0; k < A->n; k++)
		r.d[k] = a.d[k] * b.v + a.v * b.d[k];
	return r;
}

static inline Wd wd_div(const WdArith *A, Wd a, Wd b)
{
	Wd r = {0};
	r.v = cl_round(A->f32, a.v / b.v);
	double q = a.v / b.v;
	for (int k = 0; k < A->n; k++)
		r.d[k] = (a.d[k] - q * b.d[k]) / b.v;
	return r;
}

/* Warp's adj_abs: slope −1 below 0, +1 from 0 on. */
static inline Wd wd_abs(const WdArith *A, Wd a)
{
	if (a.v < 0.0)
		return wd_neg(A, a);
	a.v = fabs(a.v); /* −0 → +0 */
	return a;
}

/* Warp's min: a when a < b, otherwise b (ties, and their gradient, go to b). */
static inline Wd wd_min(Wd a, Wd b)
{
	return a.v < b.v ? a : b;
}

static inline Wd2 wd2_const(const WdArith *A, double x, double y)
{
	return (Wd2){wd_const(A, x), wd_const(A, y)};
}

/* A 2-vector input seeded at k and k + 1. */
static inline Wd2 wd2_seed(const WdArith *A, double x, double y, int k)
{
	return (Wd2){wd_seed(A, x, k), wd_seed(A, y, k + 1)};
}

static inline Wd2 wd2_add(const WdArith *A, Wd2 a, Wd2 b)
{
	return (Wd2){wd_add(A, a.x, b.x), wd_add(A, a.y, b.y)};
}

static inline Wd2 wd2_sub(const WdArith *A, Wd2 a, Wd2 b)
{
	return (Wd2){wd_sub(A, a.x, b.x), wd_sub(A, a.y, b.y)};
}

static inline Wd2 wd2_neg(const WdArith *A, Wd2 a)
{
	return (Wd2){wd_neg(A, a.x), wd_neg(A, a.y)};
}

static inline Wd2 wd2_scale(const WdArith *A, Wd2 a, Wd s)
{
	return (Wd2){wd_mul(A, a.x, s), wd_mul(A, a.y, s)};
}

/* Warp's vec / scalar divides every component. */
static inline Wd2 wd2_div(const WdArith *A, Wd2 a, Wd s)
{
	return (Wd2){wd_div(A, a.x, s), wd_div(A, a.y, s)};
}

/* Warp's dot: a.x·b.x + a.y·b.y (+ a.z·b.z, which is +0 here). */
static inline Wd wd2_dot(const WdArith *A, Wd2 a, Wd2 b)
{
	return wd_add(A, wd_mul(A, a.x, b.x), wd_mul(A, a.y, b.y));
}

/* Warp's adj_length is normalize(a)·adj, and normalize(0) = 0: no NaN at 0. */
static inline Wd wd2_length(const WdArith *A, Wd2 a)
{
	Wd r = {0};
	double length = sqrt(wd2_dot(&(WdArith){A->f32, 0}, a, a).v);
	r.v = cl_round(A->f32, length);
	for (int k = 0; k < A->n; k++)
		r.d[k] = length > 0.0 ? (a.x.v * a.x.d[k] + a.y.v * a.y.d[k]) / length : 0.0;
	return r;
}

/* The contact tests in plain arithmetic, bit for bit the dual computations
 * below them (plane: −n·p + n·x − r; pair: ‖x_i − x_j‖ − (r_i + r_j)), so that
 * duals are formed only for contacts that exist. */
static inline double wd_plane_gap(bool f32, double offset, const double n[2], double x, double y, double radius)
{
	double dot = cl_round(f32, cl_round(f32, x * n[0]) + cl_round(f32, y * n[1]));
	return cl_round(f32, cl_round(f32, offset + dot) - radius);
}

static inline double wd_pair_gap(bool f32, double xi, double yi, double xj, double yj, double radii)
{
	double dx = cl_round(f32, xi - xj), dy = cl_round(f32, yi - yj);
	double length = cl_round(f32, sqrt(cl_round(f32, cl_round(f32, dx * dx) + cl_round(f32, dy * dy))));
	return cl_round(f32, length - radii);
}
