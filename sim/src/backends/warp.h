/* What the two Warp backends (compliant_warp.c, pbd_warp.c) share: Warp
 * 0.2.0's arithmetic on dual numbers (dual.h: branch conditions constant,
 * min() ties to its second argument, |x| with slope +1 at 0, length with
 * slope 0 at 0) and the contact tests in plain arithmetic. */
#pragma once

#include "../dual.h"

/* The contact tests in plain arithmetic, bit for bit the dual computations
 * below them (plane: −n·p + n·x − r; pair: ‖x_i − x_j‖ − (r_i + r_j)), so that
 * duals are formed only for contacts that exist. */
static inline double warp_plane_gap(bool f32, double offset, const double n[2], double x, double y, double radius)
{
	double dot = cl_round(f32, cl_round(f32, x * n[0]) + cl_round(f32, y * n[1]));
	return cl_round(f32, cl_round(f32, offset + dot) - radius);
}

static inline double warp_pair_gap(bool f32, double xi, double yi, double xj, double yj, double radii)
{
	double dx = cl_round(f32, xi - xj), dy = cl_round(f32, yi - yj);
	double length = cl_round(f32, sqrt(cl_round(f32, cl_round(f32, dx * dx) + cl_round(f32, dy * dy))));
	return cl_round(f32, length - radii);
}
