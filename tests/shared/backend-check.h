/* Checks shared by the backend tests: named gradients from the adjoint and
 * one-step Jacobians against central finite differences. */
#pragma once

#include "contactlab/sim.h"

/* dL/d(name) at iteration 0 by the rollout's adjoint (initial state or a
 * control); aborts on an unknown name or a failed run (a test bug). */
double cl_test_gradient(const ClScene *scene, int backend, const char *name);

/* One-step scenes (steps = 1) started from s0 with controls u (2 per ball),
 * central differences of step h, in float64 mode for a meaningful FD. */

/* The largest |J·(ds, du) − FD| over the outputs for one direction. */
double cl_test_step_jvp_error(const ClScene *scene, int backend, const double *s0, const double *u, const double *ds,
							  const double *du, double h);

/* The largest |J − J_fd| over every entry of d s_1/d(s_0, u_0). Writes the
 * number of contacts the step reported to *contacts. */
double cl_test_step_jacobian_error(const ClScene *scene, int backend, const double *s0, const double *u, double h,
								   int *contacts);

/* Runs the scene twice with its Jacobians and gradient: true when every state
 * and gradient is finite and both runs agree bit for bit. Writes the number
 * of contacts to *contacts. */
bool cl_test_deterministic(const ClScene *scene, int backend, int *contacts);

/* A one-step scene: up to 3 balls and 2 walls, gravity (0.3, −9.8). */
typedef struct ClTestStepBall {
	double radius, mass;
	double state[CL_BALL_STATE];
	double control[2];
} ClTestStepBall;

typedef struct ClTestStepCase {
	const char *name;
	double friction, elasticity;
	int ball_count;
	ClTestStepBall balls[3];
	int wall_count;
	ClVec2 wall_point[2], wall_normal[2];
	int contacts; /* reported by the step */
} ClTestStepCase;

/* Contacts within the step, TOI's clamps away from their switches: one
 * wall, two balls, corners (decoupled and coupled), a ball between two. */
extern const ClTestStepCase cl_test_step_cases[];
extern const int cl_test_step_case_count;

/* The case as a scene for a backend, in float64 (steps 1, dt 1/480). */
ClScene *cl_test_step_scene(const ClTestStepCase *c, const char *backend);
void cl_test_step_inputs(const ClTestStepCase *c, double *s0, double *u);
/* The case's contacts as detected on the predicted positions: (ball, ball
 * or −1 for a wall) and the unit normal; returns their number. */
int cl_test_step_normals(const ClTestStepCase *c, double dt, int pairs[][2], double normals[][2]);
