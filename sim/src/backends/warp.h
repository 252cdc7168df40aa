/* What the two Warp backends (compliant_warp.c, pbd_warp.c) share: Warp
 * 0.2.0's arithmetic on dual numbers (dual.h: branch conditions constant,
 * min() ties to its second argument, |x| with slope +1 at 0, length with
 * slope 0 at 0) and the contact tests in plain arithmetic. */
#pragma once

#include "../dual.h"

#include <stdlib.h>

/* The scene as the kernels received it: every Python float rounded once to
 * a float32 kernel argument (in float32 runs). */
typedef struct WarpBodies {
	double *radius, *inverse_mass; /* per ball */
	double *normal, *offset;       /* per wall: n (2) and −n·p */
} WarpBodies;

/* False when out of memory (warp_bodies_destroy frees what was had). */
static inline bool warp_bodies_create(WarpBodies *b, const ClScene *scene)
{
	b->radius = cl_calloc((size_t)scene->ball_count, sizeof(double));
	b->inverse_mass = cl_calloc((size_t)scene->ball_count, sizeof(double));
	b->normal = cl_calloc(2 * (size_t)scene->wall_count, sizeof(double));
	b->offset = cl_calloc((size_t)scene->wall_count, sizeof(double));
	return b->radius && b->inverse_mass && b->normal && b->offset;
}

static inline void warp_bodies_destroy(WarpBodies *b)
{
	free(b->radius);
	free(b->inverse_mass);
	free(b->normal);
	free(b->offset);
}

static inline void warp_bodies_prepare(WarpBodies *b, const ClScene *scene, bool f32)
{
	for (int i = 0; i < scene->ball_count; i++) {
		b->radius[i] = cl_round(f32, scene->balls[i].radius);
		b->inverse_mass[i] = cl_round(f32, 1.0 / scene->balls[i].mass);
	}
	for (int k = 0; k < scene->wall_count; k++) {
		const ClWall *wall = &scene->walls[k];
		b->normal[2 * k] = cl_round(f32, wall->normal.x);
		b->normal[2 * k + 1] = cl_round(f32, wall->normal.y);
		b->offset[k] = cl_round(f32, -(wall->normal.x * wall->point.x + wall->normal.y * wall->point.y));
	}
}

/* Wall k's normal n and offset −n·p as duals, for parameter columns: the
 * angle (degrees) turns n, dn/dθ = (−n_y, n_x)·π/180, and the offset moves
 * with the point and the angle. The tangents go to the slots given (the
 * point's x and y in slot and slot + 1); a slot not live stays constant. */
static inline ClDual2 warp_wall_normal(const ClArith *A, const WarpBodies *b, const ClWall *wall, int k, int angle_slot)
{
	const double rad = 3.14159265358979323846 / 180.0;
	ClDual2 n = cl_dual2_const(A, b->normal[2 * k], b->normal[2 * k + 1]);
	if (angle_slot < A->slots) {
		n.x.d[angle_slot] = -wall->normal.y * rad;
		n.y.d[angle_slot] = wall->normal.x * rad;
	}
	return n;
}

static inline ClDual warp_wall_offset(const ClArith *A, const WarpBodies *b, const ClWall *wall, int k, int slot)
{
	const double rad = 3.14159265358979323846 / 180.0;
	ClDual offset = cl_dual_const(A, b->offset[k]);
	double tangent[3] = {-wall->normal.x, -wall->normal.y,
						 -rad * (wall->normal.x * wall->point.y - wall->normal.y * wall->point.x)};
	for (int m = 0; m < 3; m++)
		if (slot + m < A->slots)
			offset.d[slot + m] = tangent[m];
	return offset;
}

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
