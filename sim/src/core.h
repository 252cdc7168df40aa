/* Engine internals shared by the rollout and the backends. Not installed. */
#pragma once

#include "contactlab/sim.h"
#include "memory.h"

#include <math.h>
#include <stdint.h>

/* ------------------------------------------------------------------ tape
 *
 * A step's linearisation is recorded as one or more factors, applied in
 * order: s_out = A·s_in + B·u_n. A factor is either a drift (every ball moves
 * for τ under constant acceleration: the exact backend's smooth segments) or a
 * list of blocks. Blocks are per ball pair: A(row, col) is d s'_row / d s_col
 * over one ball's CL_BALL_STATE numbers, B(row, col) is d s'_row / d u_col
 * (CL_BALL_STATE × 2), both row-major: entry (r, c) of an A block is
 * m[CL_A(r, c)], of a B block m[2r + c]. A ball row that has no A block in a
 * factor passes through unchanged (identity); a row with any A block is
 * exactly the sum of its blocks. So contacts add pair blocks and memory grows
 * with balls + contacts, never balls².
 */

#define CL_A(r, c) (CL_BALL_STATE * (r) + (c))

typedef struct ClBlockA {
	int row, col;
	double m[CL_BALL_STATE * CL_BALL_STATE];
} ClBlockA;

typedef struct ClBlockB {
	int row, col;
	double m[CL_BALL_STATE * 2];
} ClBlockB;

/* A parameter column of a factor: d s'_row / d θ_param over one ball's
 * CL_BALL_STATE numbers, θ a physical parameter (cl_phys_index). Factors
 * carry them only when the tape records parameters: s_out = A·s_in + B·u +
 * C·θ. Kept in factor order. */
typedef struct ClBlockC {
	int factor, row, param;
	double m[CL_BALL_STATE];
} ClBlockC;

typedef enum ClFactorKind {
	CL_FACTOR_BLOCKS,
	CL_FACTOR_DRIFT,
} ClFactorKind;

typedef struct ClFactor {
	ClFactorKind kind;
	double tau; /* drift duration */
	int a_begin, a_count;
	int b_begin, b_count;
} ClFactor;

typedef struct ClTape {
	int ball_count;
	const double *inverse_mass; /* per ball, for drift factors */
	/* the rollout's memory: every growth is charged to it. Once one fails,
	 * the tape records nothing more (blocks go to the sinks) and the rollout
	 * stops after the step with CL_STATUS_MEMORY_LIMIT. */
	ClMemoryAccount *account;
	bool failed;
	ClBlockA sink_a;
	ClBlockB sink_b;
	ClFactor *factors;
	int factor_count, factor_capacity;
	ClBlockA *a;
	int a_count, a_capacity;
	ClBlockB *b;
	int b_count, b_capacity;
	/* parameter columns, recorded when record_params is set */
	bool record_params;
	ClBlockC sink_c;
	ClBlockC *c;
	int c_count, c_capacity;
	int *step_begin; /* first factor of each step; steps + 1 entries */
	int step_count;
} ClTape;

/* False when step_begin cannot be had (the rollout charges it with the states). */
bool cl_tape_init(ClTape *tape, int ball_count, const double *inverse_mass, int steps, ClMemoryAccount *account);
/* What recording steps contact-free intervals takes at least: one factor
 * each with blocks A and B blocks (cl_backend_tape_blocks). */
size_t cl_tape_bytes(int steps, size_t blocks);
/* Reserves that much room, so that a recording run grows the tape only for
 * contacts; false when it does not fit the account. */
bool cl_tape_reserve(ClTape *tape, int steps, size_t blocks);
void cl_tape_release(ClTape *tape);
void cl_tape_reset(ClTape *tape);
void cl_tape_begin_step(ClTape *tape, int step);
void cl_tape_end_step(ClTape *tape, int step);

/* Starts a block factor; the blocks added next belong to it. */
void cl_tape_factor(ClTape *tape);
/* Adds a zeroed block to the current factor and returns it to be filled. */
double *cl_tape_a(ClTape *tape, int row, int col);
double *cl_tape_b(ClTape *tape, int row, int col);
/* Adds a zeroed parameter column of the current factor and returns its
 * CL_BALL_STATE numbers to be filled; a sink when parameters are not
 * recorded (check tape->record_params to skip the work). */
double *cl_tape_c(ClTape *tape, int row, int param);
/* Adds the identity as ball's A block to the current factor and returns it
 * to be filled further (the free-motion block of a backend without rotation,
 * whose spin passes through). */
double *cl_tape_a_identity(ClTape *tape, int ball);
/* Adds a drift factor: p += τv + ½τ²u/m, v += τu/m for every ball. */
void cl_tape_drift(ClTape *tape, double tau);
/* Scatters a dense Jacobian of k balls (A: nk×nk, B: nk×2k, row-major, n =
 * CL_BALL_STATE) as a new factor, skipping zero blocks but keeping every
 * diagonal one. */
void cl_tape_dense(ClTape *tape, const int *balls, int k, const double *A, const double *B);

/* λ ← Fᵀλ over the factors of one step, adding Bᵀλ to g_u (2 per ball). */
void cl_tape_adjoint_step(const ClTape *tape, int step, double *lambda, double *g_u, double *scratch);
/* The same, also adding Cᵀλ to g_theta (cl_phys_count entries; NULL: none). */
void cl_tape_adjoint_step_params(const ClTape *tape, int step, double *lambda, double *g_u, double *g_theta,
								 double *scratch);
/* δs ← F·δs + B·δu over one step. */
void cl_tape_forward_step(const ClTape *tape, int step, double *ds, const double *du, double *scratch);
/* The same along one physical parameter too: each factor adds its C column
 * of param (cl_phys_index; < 0: none) after its A and B. */
void cl_tape_forward_step_param(const ClTape *tape, int step, double *ds, const double *du, int param, double *scratch);

/* ----------------------------------------------------- physical parameters
 *
 * The parameters a tape's C columns differentiate, numbered: the globals,
 * then radius and mass of every ball, then point.x, point.y and angle of
 * every wall (the angle in degrees, as the parameter is named). */
enum {
	CL_PHYS_ELASTICITY,
	CL_PHYS_FRICTION,
	CL_PHYS_GRAVITY_X,
	CL_PHYS_GRAVITY_Y,
	CL_PHYS_DURATION,
	CL_PHYS_BALLS, /* radius of ball b: CL_PHYS_BALLS + 2b, mass: + 1 */
};

static inline int cl_phys_radius(int ball)
{
	return CL_PHYS_BALLS + 2 * ball;
}

static inline int cl_phys_mass(int ball)
{
	return CL_PHYS_BALLS + 2 * ball + 1;
}

/* which: 0 point.x, 1 point.y, 2 angle */
static inline int cl_phys_wall(const ClScene *scene, int wall, int which)
{
	return CL_PHYS_BALLS + 2 * scene->ball_count + 3 * wall + which;
}

/* A backend's own parameter by its index: each backend's tape has columns
 * of its own parameters only, so the backends share these numbers. */
static inline int cl_phys_backend(const ClScene *scene, int index)
{
	return CL_PHYS_BALLS + 2 * scene->ball_count + 3 * scene->wall_count + index;
}

static inline int cl_phys_count(const ClScene *scene)
{
	return cl_phys_backend(scene, CL_PARAMS_MAX);
}

/* The number of a physical parameter, −1 for an initial state or a control. */
int cl_phys_index(const ClScene *scene, const ClParam *param);

/* ------------------------------------------------------------- backends */

typedef struct ClStepContext {
	const ClScene *scene;
	const double *params; /* this backend's parameter values */
	int step;             /* control interval index n */
	double dt;            /* control interval T / N */
	ClTape *tape;         /* NULL when no Jacobian is wanted */
	void *workspace;      /* from the backend's create */
	ClStatus *status;     /* set through cl_step_fail */
	ClRollout *rollout;   /* receives cl_step_contact events */
} ClStepContext;

typedef struct ClBackend {
	ClBackendInfo info;
	/* Optional: per-rollout workspace, e.g. float copies of constants. */
	void *(*create)(const ClScene *scene, const double *params);
	void (*destroy)(void *workspace);
	/* Advances one control interval: s_next from s and the interval's
	 * controls u (2 per ball). With ctx->tape, records its Jacobian. */
	void (*step)(ClStepContext *ctx, const double *s, const double *u, double *s_next);
	/* Its tape in an interval without contacts (the memory prediction, see
	 * cl_tape_bytes): true when every ball gets a state and a control block
	 * (time-stepping), false for one drift factor (exact). test-core checks it. */
	bool tape_blocks_per_ball;
	/* Every step's tape is one dense factor, an A and a B block for every
	 * pair of balls (ncp-dojo: every pair is a contact at every step). */
	bool tape_dense;
	/* The physical parameters whose derivatives its tape gives: a bit
	 * 1u << target for each ClParamTarget (elasticity, radius, …) whose
	 * columns the step records when the tape records parameters, or that
	 * accel_form covers. */
	unsigned param_adjoints;
	/* Its own parameters the tape differentiates: a bit 1u << index per
	 * ClBackendInfo.params entry, columns cl_phys_backend(scene, index). */
	unsigned own_param_adjoints;
	/* Controls and gravity enter the step only through the acceleration
	 * u_i/m_i + g: then dL/dg = Σ m_i·dL/du_i and the acceleration's part of
	 * dL/dm_i is −Σ dL/du_i·u_i/m_i (the rest of m_i's effect, e.g. in
	 * impulses between balls, goes to C columns). */
	bool accel_form;
	/* Optional: the bytes create() allocates where they grow faster than
	 * balls + walls (dense per-ball rows), so that the prediction counts them. */
	size_t (*workspace_bytes)(const ClScene *scene);
	/* Optional: a ball's spin (z angular velocity, rad/s) after the last
	 * step, for a backend that simulates spin outside the engine's state. */
	double (*spin)(const void *workspace, int ball);
	/* Optional: false when it cannot model the scene (cl_backend_can_run). */
	bool (*can_run)(const ClScene *scene, char *why, size_t size);
} ClBackend;

const ClBackend *cl_backend_get(int backend);

/* The A (and B) blocks a step of the backend records without contacts. */
static inline size_t cl_backend_tape_blocks(const ClBackend *backend, int ball_count)
{
	size_t nb = (size_t)ball_count;
	return backend->tape_dense ? nb * nb : backend->tape_blocks_per_ball ? nb : 0;
}

/* The backend's spin of ball after the rollout's last run (ClBackend.spin);
 * NAN when the backend keeps none or the rollout could not be set up. The
 * engine's state has no spin: tests read what a backend simulates. */
double cl_rollout_spin(const ClRollout *rollout, int ball);

/* A backend's scratch memory could not be had: the step fails with
 * CL_STATUS_MEMORY_LIMIT (what: "the LCP workspace"). */
void cl_step_out_of_memory(ClStepContext *ctx, const char *what);
void cl_step_fail(ClStepContext *ctx, ClStatusCode code, const char *format, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Sets *status (when not NULL) to code and the formatted message, step −1;
 * returns false, for "return cl_status_fail(…)" on invalid input. */
bool cl_status_fail(ClStatus *status, ClStatusCode code, const char *format, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Warnings (grazing, simultaneous, Zeno, in contact) keep the run going and
 * flag its gradient; every other failure stops the rollout at this step. */
bool cl_status_is_fatal(ClStatusCode code);
/* Records a contact for the UI and CSV. */
void cl_step_contact(ClStepContext *ctx, double time, int ball, int other);

/* Value of a backend parameter by descriptor index. */
static inline double cl_param_value(const ClStepContext *ctx, int index)
{
	return ctx->params[index];
}

/* ------------------------------------------------------------- precision */

/* Rounds to the backend's working precision; float32 peers round every
 * intermediate so that branch decisions match theirs. */
static inline double cl_round(bool f32, double x)
{
	return f32 ? (double)(float)x : x;
}

/* ------------------------------------------------------------- registry */

extern const ClBackend cl_backend_exact;
extern const ClBackend cl_backend_impulse_toi;
extern const ClBackend cl_backend_impulse;
extern const ClBackend cl_backend_impulse_tds;
extern const ClBackend cl_backend_ncp_dojo;
extern const ClBackend cl_backend_convex_toi;
extern const ClBackend cl_backend_convex;
extern const ClBackend cl_backend_compliant_warp;
extern const ClBackend cl_backend_pbd_warp;
extern const ClBackend cl_backend_compliant_brax;
extern const ClBackend cl_backend_pbd_brax;
extern const ClBackend cl_backend_lcp_nimble;

/* Shared parameter choices. */
extern const char *const cl_precision_choices[];

/* ---------------------------------------------------------------- random
 *
 * Counter-based streams for reproducible sampling: stream (seed, index) is
 * a SplitMix64 generator whose start depends only on both numbers, so
 * sample i draws the same numbers whichever thread computes it, in
 * whatever order. Gaussians by Marsaglia's polar method (log and sqrt only).
 */

typedef struct ClRandom {
	uint64_t state;
	double spare; /* the polar method's second normal */
	bool has_spare;
} ClRandom;

ClRandom cl_random_stream(uint64_t seed, uint64_t index);
uint64_t cl_random_next(ClRandom *random);
/* Uniform in (0, 1): 53 random bits, never 0. */
double cl_random_uniform(ClRandom *random);
/* Standard normal. */
double cl_random_gaussian(ClRandom *random);
