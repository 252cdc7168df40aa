/* Contacts of the time-stepping impulse and convex backends, detected on the
 * predicted position x + dt·v: the dual-number inputs of a ball's state and
 * a conservative broad phase in plain double. */
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
