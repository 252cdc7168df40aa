/* Contacts of the time-stepping impulse and convex backends, detected on the
 * predicted position x + dt·v (backends-paper.md §1, §2): the tests on dual
 * numbers, the TOI shift, and a conservative broad phase in plain double. */
#pragma once

#include "../dual.h"

/* The tangent slots of a contact: ball a's state [px py vx vy], then ball b's. */
enum { CL_CONTACT_SLOTS = 8 };

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

/* Ball state against a plane (any normal): the predicted gap
 * n·(x + dt·v − point) below the radius and approaching, s = n·v < 0. Sets
 * the state's inputs b (slots 0–3), the rounded normal n, the gap and s;
 * false when either test fails. */
static inline bool cl_predicted_wall_contact(const ClArith *m, double dt, const double *state, double radius,
											 const ClWall *wall, ClDual b[4], double n[2], ClDual *distance,
											 ClDual *normal_speed)
{
	cl_dual_ball(m, state, 0, b);
	n[0] = cl_arith_round(m, wall->normal.x);
	n[1] = cl_arith_round(m, wall->normal.y);
	ClDual px = cl_dual_add(m, b[0], cl_dual_scale(m, dt, b[2]));
	ClDual py = cl_dual_add(m, b[1], cl_dual_scale(m, dt, b[3]));
	ClDual gap_x = cl_dual_sub(m, px, cl_dual_const(m, cl_arith_round(m, wall->point.x)));
	ClDual gap_y = cl_dual_sub(m, py, cl_dual_const(m, cl_arith_round(m, wall->point.y)));
	*distance = cl_dual_add(m, cl_dual_scale(m, n[0], gap_x), cl_dual_scale(m, n[1], gap_y));
	if (!(distance->v < radius))
		return false;
	*normal_speed = cl_dual_add(m, cl_dual_scale(m, n[0], b[2]), cl_dual_scale(m, n[1], b[3]));
	return normal_speed->v < 0.0;
}

/* Balls a and b (inputs in slots 0–3 and 4–7): δ = (x_a + dt·v_a) −
 * (x_b + dt·v_b) with |δ| below reach; false when it is not. */
static inline bool cl_predicted_pair_contact(const ClArith *m, double dt, const double *state_a,
											 const double *state_b, double reach, ClDual a[4], ClDual b[4],
											 ClDual delta[2], ClDual *distance)
{
	cl_dual_ball(m, state_a, 0, a);
	cl_dual_ball(m, state_b, 4, b);
	for (int k = 0; k < 2; k++)
		delta[k] = cl_dual_sub(m, cl_dual_add(m, a[k], cl_dual_scale(m, dt, a[2 + k])),
							   cl_dual_add(m, b[k], cl_dual_scale(m, dt, b[2 + k])));
	*distance = cl_dual_sqrt_unrounded_slope(
		m, cl_dual_add(m, cl_dual_mul(m, delta[0], delta[0]), cl_dual_mul(m, delta[1], delta[1])));
	return distance->v < reach;
}

/* The TOI factor min(τ − dt, 0) with τ = gap / min(clamp, s), clamp the
 * rounded −10⁻³: both Python min(), so ties and their derivative go to the
 * first argument, and a shift cut to 0 is a constant. dt is a dual for the
 * parameter columns (a constant otherwise). */
static inline ClDual cl_toi_shift(const ClArith *m, double clamp, ClDual dt, ClDual gap, ClDual normal_speed)
{
	ClDual denominator = cl_dual_min_first(cl_dual_const(m, clamp), normal_speed);
	ClDual tau = cl_dual_div_expanded(m, gap, denominator);
	return cl_dual_min_first(cl_dual_sub(m, tau, dt), cl_dual_const(m, 0.0));
}
