/* The paper's three tasks built in C, as the presets in data/presets/ define
 * them (a test compares the two), for tests and benchmarks. */
#pragma once

#include "contactlab/sim.h"

ClScene *cl_test_task1(void);              /* bounce once */
ClScene *cl_test_task2(double friction);   /* ground then wall; friction 0 or 0.1 */
ClScene *cl_test_task3(void);              /* two-ball collision */
/* The scenes of smoothing.md: Task 3 with ball1's constant control (2.029,
 * 3.726), aimed to just touch ball2; and a ball at (0.5, 1) moving (2, −2)
 * into a 120° corner of the ground and a slope, loss ‖p_N − (0, 2)‖². */
ClScene *cl_test_task3_graze(void);
ClScene *cl_test_wedge(void);

/* A billiards break: balls − 1 balls racked in a triangle (rows filled in
 * order, positions jittered by a fixed pseudo-random pattern so no two
 * impacts coincide) and a cue ball shot into its apex, on a 2.54 × 1.27 m
 * table of four walls; no gravity, e = 0.95, T = 2 s, N = 2000; Adam on the
 * cue ball's velocity. balls ≥ 2. data/presets/billiards-break.json is the
 * 100-ball case. */
ClScene *cl_test_billiards(int balls);

/* Random valid scene: balls, walls, gravity, e < 1, controls. Deterministic in seed. */
ClScene *cl_test_random_scene(unsigned seed, int balls, int walls);

/* Random valid scene for property tests, deterministic in seed: 1–20
 * balls (radii, masses differ), 0–6 walls with random normals, gravity of
 * random direction and size, e in [0, 1], friction 0 or up to 0.5, steps
 * 10–120, no control / constant / sequence on each ball, every loss type. */
ClScene *cl_test_property_scene(unsigned seed);

/* The degenerate contacts of issue 6, as the exact backend's tests build
 * them; every backend is run on them too. The scene's name says which. */
typedef enum ClTestDegenerate {
	CL_TEST_GRAZING_PAIR,         /* a ball passes another exactly tangentially */
	CL_TEST_GRAZING_WALL,         /* a parabola tangent to a wall */
	CL_TEST_CORNER,               /* straight into the corner of two walls */
	CL_TEST_THREE_BALLS,          /* two balls reach a third at the same instant */
	CL_TEST_ZENO,                 /* bouncing to rest on the ground, e < 1 */
	CL_TEST_STARTS_IN_CONTACT,    /* touching the ground at t = 0, moving into it */
	CL_TEST_STARTS_RESTING,       /* resting on the ground at t = 0 under gravity */
	CL_TEST_BALLS_START_TOUCHING, /* two balls touching at t = 0, pushed together */
	CL_TEST_DEGENERATE_COUNT
} ClTestDegenerate;

ClScene *cl_test_degenerate(ClTestDegenerate which);

/* Index of a backend by id; aborts when unknown (a test bug). */
int cl_test_backend(const char *id);

/* Sets a backend parameter of a scene; aborts when it does not exist. */
void cl_test_set_param(ClScene *scene, const char *backend, const char *name, double value);
