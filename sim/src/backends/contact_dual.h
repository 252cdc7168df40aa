/* Forward-mode dual numbers for the time-stepping contact backends (impulse,
 * convex): a value rounded like the peer's arithmetic and its tangent along
 * up to two balls' states [px py vx vy]. Branches are decided on values and
 * detached quantities are constants, so the tangent is exactly what the
 * peer's reverse-mode autodiff of the same program gives (backends-paper.md
 * §5). The tangent itself is carried in double.
 */
#pragma once

#include "../core.h"

enum { CL_DUAL_SLOTS = 8 };

typedef struct ClDual {
	double v;
	double d[CL_DUAL_SLOTS];
} ClDual;

/* How to evaluate: the peer's rounding, and how many tangent slots are live
 * (0 for a value-only pass such as contact detection). */
typedef struct ClArith {
	bool f32;
	int slots;
} ClArith;

static inline double cl_arith_round(const ClArith *m, double x)
{
	return cl_round(m->f32, x);
}

static inline ClDual cl_dual_const(double v)
{
	return (ClDual){.v = v};
}

/* Input number `slot`: its tangent is the unit vector there. */
static inline ClDual cl_dual_input(const ClArith *m, double v, int slot)
{
	ClDual r = {.v = v};
	if (slot < m->slots)
		r.d[slot] = 1.0;
	return r;
}

static inline ClDual cl_dual_add(const ClArith *m, ClDual a, ClDual b)
{
	ClDual r = {.v = cl_arith_round(m, a.v + b.v)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = a.d[i] + b.d[i];
	return r;
}

static inline ClDual cl_dual_sub(const ClArith *m, ClDual a, ClDual b)
{
	ClDual r = {.v = cl_arith_round(m, a.v - b.v)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = a.d[i] - b.d[i];
	return r;
}

static inline ClDual cl_dual_mul(const ClArith *m, ClDual a, ClDual b)
{
	ClDual r = {.v = cl_arith_round(m, a.v * b.v)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = a.d[i] * b.v + a.v * b.d[i];
	return r;
}

/* c·a for a constant c (already in working precision). */
static inline ClDual cl_dual_scale(const ClArith *m, double c, ClDual a)
{
	ClDual r = {.v = cl_arith_round(m, c * a.v)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = c * a.d[i];
	return r;
}

static inline ClDual cl_dual_div(const ClArith *m, ClDual a, ClDual b)
{
	ClDual r = {.v = cl_arith_round(m, a.v / b.v)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = (a.d[i] * b.v - a.v * b.d[i]) / (b.v * b.v);
	return r;
}

static inline ClDual cl_dual_sqrt(const ClArith *m, ClDual a)
{
	double root = sqrt(a.v);
	ClDual r = {.v = cl_arith_round(m, root)};
	for (int i = 0; i < m->slots; i++)
		r.d[i] = 0.5 * a.d[i] / root;
	return r;
}

/* A ball's rounded state as inputs in slots first..first+3. */
static inline void cl_dual_ball(const ClArith *m, const double *state, int first, ClDual out[4])
{
	for (int k = 0; k < 4; k++)
		out[k] = cl_dual_input(m, state[k], first + k);
}

/* Conservative broad phase in plain double: false only when the rounded
 * test (predicted distance below reach) certainly fails, so the exact test
 * with duals runs on few pairs. The margin covers float32 rounding. */
static inline bool cl_pair_may_touch(const double *a, const double *b, double dt, double reach)
{
	double dx = (a[0] + dt * a[2]) - (b[0] + dt * b[2]), dy = (a[1] + dt * a[3]) - (b[1] + dt * b[3]);
	double scale = fabs(a[0]) + fabs(a[1]) + fabs(b[0]) + fabs(b[1]);
	double limit = reach * (1.0 + 1e-4) + 1e-6 * scale;
	return dx * dx + dy * dy < limit * limit;
}

static inline bool cl_wall_may_touch(const double *a, double dt, const ClWall *wall, double radius)
{
	double px = a[0] + dt * a[2], py = a[1] + dt * a[3];
	double gap = wall->normal.x * (px - wall->point.x) + wall->normal.y * (py - wall->point.y);
	double scale = fabs(px) + fabs(py) + fabs(wall->point.x) + fabs(wall->point.y);
	return gap < radius * (1.0 + 1e-4) + 1e-6 * scale;
}
