/* ContactLab engine: scenes of balls and half-plane walls, contact backends,
 * rollouts with per-step Jacobians, adjoint gradients, optimization, sweeps.
 *
 * Pure C17 + libm, no globals: every function is reentrant, so one const
 * scene can be simulated by many threads at once (each with its own rollout).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CL_ID_MAX 64
#define CL_NAME_MAX 128
#define CL_MESSAGE_MAX 256
#define CL_MAX_STEPS 10000000
#define CL_PARAMS_MAX 16

/* The limits of a scene (cl_scene_validate checks them). Counts keep the
 * parts of the backends that grow with ball pairs bounded; steps × balls
 * bounds the trajectory, (steps + 1) × state size doubles. */
#define CL_MAX_BALLS 1000
#define CL_MAX_WALLS 1000
#define CL_MAX_BALL_STEPS 20000000
/* Lengths (positions, wall points, radii) and speeds are at most
 * CL_LENGTH_MAX in magnitude, as is gravity: a rollout declares a state past
 * 1e8 diverged. Every radius is at least CL_RADIUS_MIN_FRACTION of the
 * scene's extent (cl_scene_extent), so that contact tolerances, which are
 * relative to the extent (1e-9 of it in the exact backend), stay far below
 * the size of every ball. */
#define CL_LENGTH_MAX 1e6
#define CL_RADIUS_MIN_FRACTION 1e-6

/* The memory one rollout may hold unless the scene says otherwise
 * (ClScene.memory_budget): the engine does not ask the system how much it
 * has, so its results do not depend on the machine; the application sets a
 * budget from the machine's memory. */
#define CL_MEMORY_BUDGET_DEFAULT ((size_t)1 << 30)

typedef struct ClVec2 {
	double x, y;
} ClVec2;

/* ------------------------------------------------------------------ scene */

typedef enum ClControlKind {
	CL_CONTROL_NONE,     /* no force is applied (a gradient w.r.t. one still exists) */
	CL_CONTROL_CONSTANT, /* the same force in every control interval */
	CL_CONTROL_SEQUENCE, /* one force per control interval */
} ClControlKind;

typedef struct ClBall {
	char id[CL_ID_MAX];
	double radius;
	double mass;
	ClVec2 position; /* at t = 0 */
	ClVec2 velocity; /* at t = 0 */
	ClControlKind control_kind;
	ClVec2 control_constant;
	ClVec2 *control_sequence; /* scene->steps entries when CL_CONTROL_SEQUENCE, owned */
} ClBall;

/* A half-plane: the free side is {x : n·(x − point) ≥ 0}, n a unit vector. */
typedef struct ClWall {
	char id[CL_ID_MAX];
	ClVec2 point;
	ClVec2 normal;
} ClWall;

typedef enum ClLossType {
	CL_LOSS_FINAL_POSITION,   /* weight·‖p_N − target‖² */
	CL_LOSS_FINAL_COORDINATE, /* weight·p_N[axis] */
	CL_LOSS_CONTROL_EFFORT,   /* weight·Σ_n ‖u_n‖²·dt */
	/* weight·Σ_k ‖p(t_k) − (x_k, y_k)‖², p linear within the step holding t_k */
	CL_LOSS_TRAJECTORY_MATCH,
	CL_LOSS_TYPE_COUNT
} ClLossType;

typedef struct ClLossTerm {
	ClLossType type;
	int ball;  /* index into scene->balls */
	int axis;  /* 0 = x, 1 = y (final_coordinate) */
	ClVec2 target;
	double weight;
	/* trajectory_match: observation_count (t, x, y) triples, owned by the
	 * scene (cl_loss_set_observations), t in [0, duration] */
	int observation_count;
	double *observations;
} ClLossTerm;

#define CL_OPTIMIZE_PARAMS_MAX 16
#define CL_OPTIMIZE_POSITIVE_MIN 1e-6
#define CL_OPTIMIZE_SAMPLES_DEFAULT 100
#define CL_OPTIMIZE_SEED_DEFAULT 1

typedef enum ClOptimizerKind {
	CL_OPTIMIZER_GD,
	CL_OPTIMIZER_ADAM,
} ClOptimizerKind;

/* The gradient an optimizer descends along (see cl_smooth for the three
 * estimates of the smoothed loss's gradient). */
typedef enum ClGradientEstimator {
	CL_GRADIENT_ADJOINT, /* the backend's own adjoint at θ */
	CL_GRADIENT_ZOBG,    /* zeroth order: losses at θ + w only */
	CL_GRADIENT_FOBG,    /* first order: the mean adjoint at θ + w */
	CL_GRADIENT_AOBG,    /* their α-interpolation */
	/* central differences of the backend's own loss (cl_fd_step), one pair
	 * of runs per parameter: only when asked for, e.g. for a physical
	 * parameter a backend has no adjoint of */
	CL_GRADIENT_FD,
	CL_GRADIENT_ESTIMATOR_COUNT
} ClGradientEstimator;

const char *cl_gradient_estimator_name(ClGradientEstimator estimator); /* "adjoint", "zobg", "fobg", "aobg", "fd" */
int cl_gradient_estimator_find(const char *name);                      /* −1 when unknown */

/* What gradient descent changes. A name is a scalar parameter
 * ("ball.velocity.x"), a vector ("ball.velocity", "ball.position"), a
 * whole control sequence ("ball1.control") or a physical parameter, named
 * as --set names it ("elasticity", "friction", "gravity.y", "duration",
 * "ball.radius", "ball.mass", "wall.point.x", "wall.angle",
 * "compliant-warp.stiffness": only with that backend). A physical
 * parameter needs the backend's adjoint of it (cl_backend_has_param_adjoint)
 * or gradient CL_GRADIENT_FD or CL_GRADIENT_ZOBG; after each step it is
 * projected back to its valid range: elasticity to [0, 1], friction to
 * [0, ∞), radii, masses and the duration to [CL_OPTIMIZE_POSITIVE_MIN, ∞),
 * a backend's parameter to its declared range. */
typedef struct ClOptimizeDef {
	int parameter_count;
	char parameters[CL_OPTIMIZE_PARAMS_MAX][CL_NAME_MAX];
	double learning_rate;
	int iterations;
	ClOptimizerKind optimizer;
	/* The smoothing estimators perturb every parameter by N(0, sigma²) and
	 * draw samples fresh at each iteration k, with seed + k (cl_scene_new:
	 * adjoint, sigma 0, CL_OPTIMIZE_SAMPLES_DEFAULT, CL_OPTIMIZE_SEED_DEFAULT). */
	ClGradientEstimator gradient;
	double sigma;
	int samples;
	uint64_t seed;
} ClOptimizeDef;

typedef struct ClScene ClScene;

/* Scene values for one backend's parameters, in the order of its descriptors. */
typedef struct ClBackendParams {
	double values[CL_PARAMS_MAX];
} ClBackendParams;

struct ClScene {
	char name[CL_NAME_MAX];
	char description[CL_MESSAGE_MAX]; /* one line on what the scene shows, may be empty */
	double duration; /* T */
	int steps;       /* N control intervals, dt = T / N */
	ClVec2 gravity;
	double elasticity; /* one restitution coefficient for every contact */
	double friction;   /* one Coulomb coefficient for every contact */
	int ball_count;
	ClBall *balls;
	int wall_count;
	ClWall *walls;
	int loss_count;
	ClLossTerm *loss;
	ClOptimizeDef optimize;
	ClBackendParams *backend_params; /* cl_backend_count() entries */
	/* Bytes one rollout of this scene may hold: its states, controls,
	 * recorded Jacobians, contacts and backend workspace. A run that would
	 * need more stops with CL_STATUS_MEMORY_LIMIT: before its first step when
	 * the trajectory, or the least its recording takes, does not fit, or at
	 * the step whose contacts pass it. A sweep or a convergence study shares
	 * it among the rollouts its threads hold at once. A run setting, not
	 * part of the scene: copied with it, not saved, not compared. */
	size_t memory_budget;
};

/* An empty scene with defaults: T = 1, N = 480, no gravity, e = 1, μ = 0,
 * every backend's parameters at their defaults, a memory budget of
 * CL_MEMORY_BUDGET_DEFAULT. Like every function of the engine that
 * allocates, NULL (or false) when out of memory; nothing aborts. */
ClScene *cl_scene_new(void);
ClScene *cl_scene_copy(const ClScene *scene);
void cl_scene_free(ClScene *scene);

/* Append objects (NULL when out of memory); the returned pointer stays
 * valid until the next add/remove. */
ClBall *cl_scene_add_ball(ClScene *scene, const char *id);
ClWall *cl_scene_add_wall(ClScene *scene, const char *id);
ClLossTerm *cl_scene_add_loss(ClScene *scene, ClLossType type);
void cl_scene_remove_ball(ClScene *scene, int index); /* also drops its loss terms */
void cl_scene_remove_wall(ClScene *scene, int index);
void cl_scene_remove_loss(ClScene *scene, int index);
/* Replaces a trajectory_match term's observations by a copy of count (t, x, y)
 * triples; false when out of memory (the term is left as it was). */
bool cl_loss_set_observations(ClLossTerm *term, const double *triples, int count);
int cl_scene_find_ball(const ClScene *scene, const char *id);
int cl_scene_find_wall(const ClScene *scene, const char *id);

/* Changes N; control sequences are resampled piecewise-constantly in time.
 * False (the scene unchanged) when out of memory. */
bool cl_scene_set_steps(ClScene *scene, int steps);
/* Stores a control sequence (steps entries of (ux, uy)) for a ball; false
 * when out of memory. */
bool cl_scene_set_control_sequence(ClScene *scene, int ball, const double *u);

static inline double cl_scene_dt(const ClScene *scene)
{
	return scene->duration / scene->steps;
}

/* The state is one flat array, CL_BALL_STATE numbers per ball, ball i from
 * index CL_BALL_STATE·i: position (x, y), velocity (x, y). */
enum { CL_BALL_STATE = 4 };

static inline int cl_state_size(const ClScene *scene)
{
	return CL_BALL_STATE * scene->ball_count;
}

/* 2 numbers per ball per control interval; every ball has a slot. */
static inline int cl_control_size(const ClScene *scene)
{
	return 2 * scene->ball_count * scene->steps;
}

void cl_scene_initial_state(const ClScene *scene, double *s0);
void cl_scene_controls(const ClScene *scene, double *u);
/* The scene's length scale: the largest |p| + r of a ball and |n·point| of
 * a wall (1 for an empty scene). */
double cl_scene_extent(const ClScene *scene);

/* Checks every semantic rule (positive radius, no overlap at t = 0, finite
 * numbers, …). On failure returns false and writes "path: reason", where the
 * path is the scene file's JSON path, e.g. "balls[1].radius: must be positive". */
bool cl_scene_validate(const ClScene *scene, char *message, size_t size);
bool cl_scene_equal(const ClScene *a, const ClScene *b);

/* ------------------------------------------------------------- parameters */

typedef enum ClParamTarget {
	CL_PARAM_POSITION,
	CL_PARAM_VELOCITY,
	CL_PARAM_CONTROL,    /* ball.control[K].x */
	CL_PARAM_ELASTICITY, /* global */
	CL_PARAM_FRICTION,   /* global */
	CL_PARAM_DURATION,   /* global */
	CL_PARAM_GRAVITY,    /* gravity.x, gravity.y */
	CL_PARAM_RADIUS,     /* ball.radius */
	CL_PARAM_MASS,       /* ball.mass */
	CL_PARAM_WALL_POINT, /* wall.point.x, wall.point.y */
	CL_PARAM_WALL_ANGLE, /* wall.angle: the normal's direction in degrees, counter-clockwise from +x */
	CL_PARAM_BACKEND,    /* backend.param: a backend's own real parameter, "compliant-warp.stiffness" */
} ClParamTarget;

/* A named scalar of a scene: "ball.position.x", "ball1.control[0].y",
 * "elasticity", "gravity.y", "ball.radius", "floor.point.y", "floor.angle".
 * A wall's parameters have ball −1 and name their wall by index. */
typedef struct ClParam {
	ClParamTarget target;
	int ball;
	int step;
	int axis;
	int wall; /* CL_PARAM_WALL_POINT, CL_PARAM_WALL_ANGLE */
	int backend, index; /* CL_PARAM_BACKEND: the backend and its parameter's index */
} ClParam;

bool cl_param_parse(const ClScene *scene, const char *name, ClParam *param, char *message, size_t size);
void cl_param_name(const ClScene *scene, const ClParam *param, char *name, size_t size);
/* True when both name the same scalar (fields a target does not use are ignored). */
bool cl_param_equal(const ClParam *a, const ClParam *b);
/* A wall's angle: its normal's direction in degrees, in (−180, 180]. Setting
 * CL_PARAM_WALL_ANGLE to θ makes the normal (cos θ, sin θ), exactly at
 * multiples of 90°; setting the angle it already has changes nothing. */
double cl_wall_angle(const ClWall *wall);
/* True when the scene has what the parameter names (its ball, its control
 * step): a parameter parsed for one scene may not fit another. get and set
 * need a parameter that fits. */
bool cl_param_fits(const ClScene *scene, const ClParam *param);
double cl_param_get(const ClScene *scene, const ClParam *param);
/* False when out of memory (a control of a ball without a sequence gets one). */
bool cl_param_set(ClScene *scene, const ClParam *param, double value);
/* True when the adjoint gives this derivative (initial state and controls). */
bool cl_param_has_adjoint(const ClParam *param);
/* Where a parameter with an adjoint lives in a rollout's initial state s0
 * and controls u, or likewise in its gradient (dL/ds0, dL/du): a pointer
 * into one of the two arrays. */
double *cl_param_slot(const ClScene *scene, const ClParam *param, double *s0, double *u);

/* Groups of the scalar parameters a scene offers. */
typedef enum ClParamGroup {
	CL_PARAMS_INITIAL_STATE = 1 << 0, /* each ball's position.x|y, velocity.x|y */
	CL_PARAMS_FIRST_CONTROL = 1 << 1, /* each ball's control[0].x|y */
	CL_PARAMS_BALL_PHYSICS = 1 << 2,  /* each ball's radius, mass */
	CL_PARAMS_GLOBAL = 1 << 3,        /* elasticity, friction, gravity.x|y, duration */
	CL_PARAMS_WALLS = 1 << 4,         /* each wall's point.x|y, angle */
	CL_PARAMS_BACKENDS = 1 << 5,      /* every backend's real parameters: compliant-warp.stiffness, … */
	/* the gradient table's columns, the perturbation and convergence choices */
	CL_PARAMS_TABLE = CL_PARAMS_INITIAL_STATE | CL_PARAMS_FIRST_CONTROL,
	/* the parameters beyond the table's: the gradient table's "Add parameter"
	 * columns, the perturbation view's second list */
	CL_PARAMS_PHYSICAL = CL_PARAMS_BALL_PHYSICS | CL_PARAMS_GLOBAL | CL_PARAMS_WALLS,
	/* what a heatmap axis can vary */
	CL_PARAMS_SWEEPABLE = CL_PARAMS_INITIAL_STATE | CL_PARAMS_BALL_PHYSICS | CL_PARAMS_GLOBAL | CL_PARAMS_WALLS,
} ClParamGroup;

/* The one enumeration of a scene's parameters, in a fixed order (ball by
 * ball: position, velocity, control[0], radius, mass; then the globals;
 * then wall by wall: point.x, point.y, angle), of
 * the groups asked for; ball ≥ 0 keeps that ball's only (globals stay).
 * Writes up to capacity into out (which may be NULL) and returns how many
 * there are. */
int cl_scene_params(const ClScene *scene, unsigned groups, int ball, ClParam *out, int capacity);
/* The same in a new array (free() it), *count its length; NULL and 0 when
 * out of memory. */
ClParam *cl_scene_params_new(const ClScene *scene, unsigned groups, int ball, int *count);
/* True when the ball takes part in the loss or is actuated: the balls whose
 * columns a big scene's gradient table shows first. */
bool cl_scene_ball_matters(const ClScene *scene, int ball);

/* --------------------------------------------------------------- backends */

typedef enum ClParamKind {
	CL_PARAM_KIND_REAL,
	CL_PARAM_KIND_INT,
	CL_PARAM_KIND_BOOL,
	CL_PARAM_KIND_CHOICE, /* value is the index into choices */
} ClParamKind;

typedef struct ClParamDesc {
	const char *name; /* "stiffness" */
	ClParamKind kind;
	double default_value;
	double min, max;
	const char *unit;           /* "N/m", "" */
	const char *help;           /* one line */
	const char *const *choices; /* NULL-terminated, for CL_PARAM_KIND_CHOICE */
} ClParamDesc;

/* The precision parameter every float32-mirroring backend has. */
enum { CL_PRECISION_FLOAT32 = 0, CL_PRECISION_FLOAT64 = 1 };

typedef struct ClBackendInfo {
	const char *id;      /* stable: "impulse-toi" */
	const char *label;   /* "Direct impulse + TOI" */
	const char *family;  /* "impulse", "lcp", "convex", "compliant", "pbd", "exact" */
	const char *mirrors; /* "DiffTaichi", "analytical gradients", … */
	bool toi;
	/* The same peer's model with the other TOI setting ("impulse" for
	 * "impulse-toi" and back), NULL when there is none. */
	const char *twin;
	/* The ground truth every other backend is judged against (exact). */
	bool reference;
	/* false when the peer's gradient is not the derivative of its own forward
	 * map (Nimble's hand-written Jacobian): then it differs from FD. */
	bool gradient_is_derivative;
	const char *intro;   /* one plain sentence a student understands */
	const char *summary; /* the details: what the model does, where its gradient goes wrong */
	/* What of a scene it cannot express and ignores or refuses (Dojo's
	 * elasticity), said wherever the backend is listed; NULL: nothing. */
	const char *cannot_express;
	const ClParamDesc *params;
	int param_count;
} ClBackendInfo;

int cl_backend_count(void);
/* True when the backend computes in float32 in this scene (its precision
 * parameter, if it has one, set to float32). */
bool cl_backend_is_float32(const ClScene *scene, int backend);
const ClBackendInfo *cl_backend_info(int backend);
int cl_backend_find(const char *id); /* −1 when unknown */
/* The reference backend's index (the one with info->reference). */
int cl_backend_reference(void);
bool cl_backend_is_reference(int backend);
/* False when the backend cannot model the scene at all (ncp-dojo: friction),
 * with the reason in why; its runs of it stop at step 0 as unsupported. */
bool cl_backend_can_run(int backend, const ClScene *scene, char *why, size_t size);
/* Index of the backend's precision parameter (the one choosing among
 * cl_precision_choices), −1 when it always computes in float64. */
int cl_backend_precision_param(int backend);
int cl_backend_param_find(int backend, const char *name);
/* The scene's value of a backend parameter (its default unless set). */
double cl_scene_backend_param(const ClScene *scene, int backend, const char *name);
bool cl_scene_set_backend_param(ClScene *scene, int backend, const char *name, double value, char *message, size_t size);

/* ----------------------------------------------------------------- status */

typedef enum ClStatusCode {
	CL_STATUS_OK,
	CL_STATUS_GRAZING,        /* exact: tangential contact, saltation undefined */
	CL_STATUS_SIMULTANEOUS,   /* exact: two impacts at the same instant */
	CL_STATUS_ZENO,           /* exact: infinitely many impacts (resting contact) */
	CL_STATUS_IN_CONTACT,     /* exact: a contact is active at the start */
	CL_STATUS_DIVERGED,       /* the state blew up (stiffness too large for dt) */
	CL_STATUS_NOT_FINITE,     /* a NaN or Inf appeared */
	CL_STATUS_SOLVER_FAILED,  /* an LCP / QP did not converge */
	CL_STATUS_UNSUPPORTED,    /* the backend cannot simulate this scene */
	CL_STATUS_IMPACT_LIMIT,   /* exact: the rollout's impact budget ran out */
	CL_STATUS_MEMORY_LIMIT,   /* the run needs more memory than its budget, or the system has */
	CL_STATUS_CANCELLED,
	CL_STATUS_COUNT
} ClStatusCode;

typedef struct ClStatus {
	ClStatusCode code;
	int step; /* control interval where it happened, −1 if none */
	char message[CL_MESSAGE_MAX];
} ClStatus;

const char *cl_status_name(ClStatusCode code); /* "ok", "grazing", … */

/* A contact a backend reported: which ball, what it hit, when. */
typedef struct ClContactEvent {
	int step;   /* control interval */
	double time; /* absolute time of the contact (step start for time-stepping) */
	int ball;
	int other; /* ≥ 0: a ball index; < 0: wall index −1 − other */
} ClContactEvent;

/* ---------------------------------------------------------------- rollout */

typedef struct ClRollout ClRollout;

/* Workspace for one backend on one scene; the scene must outlive it and not
 * change its ball count or steps while it is in use. NULL only for an
 * unknown backend or when not even the rollout's own few hundred bytes can
 * be had: a rollout whose trajectory does not fit scene->memory_budget is
 * made, and its every run stops before the first step with
 * CL_STATUS_MEMORY_LIMIT, so callers handle it as any failed run. */
ClRollout *cl_rollout_new(const ClScene *scene, int backend);
/* What a rollout of this scene takes at least (states, controls, backend
 * workspace and, with record, the Jacobians of contact-free intervals):
 * contacts add to it while it runs. */
size_t cl_rollout_bytes(const ClScene *scene, int backend, bool record);
/* "64 MiB", "1.5 GiB", "512 bytes": sizes as the messages print them. */
void cl_format_bytes(size_t bytes, char *text, size_t size);
/* True when bytes fit scene->memory_budget; else sets status to
 * CL_STATUS_MEMORY_LIMIT, "WHAT needs N, more than the memory budget of M". */
bool cl_memory_fits(const ClScene *scene, size_t bytes, const char *what, ClStatus *status);
void cl_rollout_free(ClRollout *rollout);

/* Runs the forward pass from s0 with controls u (NULL: the scene's own).
 * With record = true it stores the Jacobians for gradients. Returns false
 * when the status is not ok (the trajectory up to that step is kept). */
bool cl_rollout_run(ClRollout *rollout, const double *s0, const double *u, bool record);

const ClScene *cl_rollout_scene(const ClRollout *rollout);
int cl_rollout_backend(const ClRollout *rollout);
const ClStatus *cl_rollout_status(const ClRollout *rollout);
/* (steps + 1) × state size. */
const double *cl_rollout_states(const ClRollout *rollout);
/* Steps actually simulated (N unless the run stopped on an error). */
int cl_rollout_steps_done(const ClRollout *rollout);
double cl_rollout_loss(const ClRollout *rollout);
int cl_rollout_event_count(const ClRollout *rollout);
/* The bytes it holds (charged to scene->memory_budget): after a recorded
 * run without contacts, exactly cl_rollout_bytes(scene, backend, true). */
size_t cl_rollout_memory(const ClRollout *rollout);
const ClContactEvent *cl_rollout_events(const ClRollout *rollout);

/* Reverse mode through the recorded Jacobians: dL/ds0 (state size) and
 * dL/du (control size), either may be NULL. */
void cl_rollout_gradient(const ClRollout *rollout, double *dl_ds0, double *dl_du);
/* With on, the recorded runs that follow also record the step Jacobians
 * parameter columns (what elasticity, friction, radii, masses, walls and the
 * duration do to each step), for cl_rollout_param_gradient; off by default,
 * as they take memory at every contact. */
void cl_rollout_record_params(ClRollout *rollout, bool on);
/* True when the backend's adjoint gives the derivative with respect to
 * param: every backend's for initial states and controls (cl_param_has_adjoint),
 * some backends' for physical parameters (e.g. exact: elasticity, friction,
 * gravity, duration, radii, masses, wall points and angles). */
bool cl_backend_has_param_adjoint(int backend, const ClParam *param);
/* dL/dθ for each of params after a run recorded with parameters, by one
 * reverse sweep: NAN where the backend has none (cl_backend_has_param_adjoint),
 * or when the run was not recorded with parameters or stopped. Initial
 * states and controls too, though cl_rollout_gradient is their reference
 * (the sums here run in another order). */
void cl_rollout_param_gradient(const ClRollout *rollout, const ClParam *params, int count, double *out);
/* Forward mode along one parameter: the tangent d s_n/dθ of the state
 * after n of the run's steps (n = its step count: the final state), into
 * ds (state size). For a physical parameter the run must have been
 * recorded with parameters. False (ds NAN) where the backend has no such
 * derivative or the run was not recorded so or stopped. */
bool cl_rollout_param_tangent(const ClRollout *rollout, const ClParam *param, double *ds);
/* Forward mode: the loss's directional derivative along (ds0, du); either
 * may be NULL (zero). ds_final (state size) may be NULL. */
double cl_rollout_jvp(const ClRollout *rollout, const double *ds0, const double *du, double *ds_final);

/* The loss of a final state and controls, and its partial derivatives:
 * every term but trajectory_match, which reads the whole trajectory. */
double cl_loss(const ClScene *scene, const double *s_final, const double *u, double *dl_ds, double *dl_du);
/* The trajectory_match terms of states ((steps + 1) × state size), and
 * with dl_ds (state size) non-NULL their partial derivative with respect
 * to state n added into dl_ds. cl_rollout_loss is cl_loss of the final
 * state plus this. */
double cl_loss_observations(const ClScene *scene, const double *states, int n, double *dl_ds);

/* ------------------------------------------------------------ gradients */

/* Central finite difference of the backend's own forward map:
 * (L(θ+h) − L(θ−h)) / 2h. */
double cl_finite_difference(const ClScene *scene, int backend, const ClParam *param, double h, ClStatus *status);

/* The one step h every central difference of a backend's loss uses:
 * 1e-6·max(1, |θ|), where truncation and rounding balance in float64, or
 * 1e-4·max(1, |θ|) for a backend computing in float32 (its loss carries
 * ~1e-7 relative noise, so FD keeps about 3 digits; a step much above 1e-4
 * moves a time-stepped contact into another step: on Task 3,
 * compliant-warp's FD of ball1.position.x is 0.97 at 1e-4, 0.42 at 1e-3,
 * against an adjoint of 0.95). A control's step is divided by dt: a force
 * acts through dt, so h/dt moves the state as much as a velocity step of h. */
double cl_fd_step(const ClScene *scene, int backend, const ClParam *param);

/* One derivative of a gradient row. */
typedef struct ClGradientCell {
	double adjoint;         /* the backend's own gradient; NAN without one or when the run stopped */
	double fd;              /* its central difference; NAN until taken */
	double fd_step;         /* h of that difference; 0 when none was asked for */
	ClStatusCode fd_status; /* the worse status of its two runs */
} ClGradientCell;

/* A backend's loss and derivatives with respect to a list of parameters:
 * what the gradient table, the CLI, lessons and reproduce show. */
typedef struct ClGradientRow {
	int backend;
	ClStatus status; /* of the recorded run */
	bool complete;   /* every step simulated (ok or a warning): loss and gradients exist */
	double loss;
	int count;
	ClGradientCell *cells; /* count entries, owned (cl_gradient_row_clear) */
} ClGradientRow;

/* Which central differences are taken beside the adjoints. */
typedef enum ClFdChoice {
	CL_FD_NONE, /* adjoints only */
	CL_FD_AUTO, /* all when there are at most CL_FD_AUTO_ALL parameters, else those of the balls that matter */
	CL_FD_ALL,
	CL_FD_CHOICE_COUNT
} ClFdChoice;

#define CL_FD_AUTO_ALL 60

const char *cl_fd_choice_name(ClFdChoice choice); /* "none", "auto", "all" */
int cl_fd_choice_find(const char *name);          /* −1 when unknown */
/* Whether choice differences parameter k of params. */
bool cl_fd_choice_wants(ClFdChoice choice, const ClScene *scene, const ClParam *params, int count, int k);

/* Loss and adjoints from a rollout run with record = true: a row of count
 * cells with no differences taken yet. A physical parameter's adjoint
 * (cl_backend_has_param_adjoint) needs a run recorded with
 * cl_rollout_record_params, else it is NAN; cl_gradient_row_compute asks
 * for one when params has such a parameter. */
void cl_gradient_row_from_rollout(ClGradientRow *row, const ClRollout *rollout, const ClParam *params, int count);
/* Whether a run of backend must be recorded with cl_rollout_record_params
 * for the adjoints of params (one of them physical, differentiated by it). */
bool cl_gradient_wants_param_columns(int backend, const ClParam *params, int count);
/* Takes cell k's central difference (step cl_fd_step); a run that stopped
 * has no loss to difference, so there fd stays NAN. */
void cl_gradient_row_take_fd(ClGradientRow *row, const ClScene *scene, const ClParam *params, int k);
/* The whole row: a recorded run, its adjoints, and the differences fd asks for. */
void cl_gradient_row_compute(ClGradientRow *row, const ClScene *scene, int backend, const ClParam *params, int count,
							 ClFdChoice fd);
void cl_gradient_row_clear(ClGradientRow *row);

/* ------------------------------------------------------------ optimization */

typedef struct ClOptimizeResult {
	int iterations_done;
	double *loss;   /* loss at each iteration, before that iteration's update */
	int parameter_count;
	double *parameters; /* final values, after the last update */
	ClStatus status;
} ClOptimizeResult;

/* Called after each iteration; returning false cancels. */
typedef bool (*ClOptimizeProgress)(int iteration, double loss, const double *parameters, void *user);

/* Runs the scene's optimization problem (scene->optimize, or def if not NULL)
 * with one backend. The result's arrays are owned by it (cl_optimize_result_clear). */
bool cl_optimize(const ClScene *scene, int backend, const ClOptimizeDef *def, ClOptimizeProgress progress, void *user,
				 ClOptimizeResult *result);
void cl_optimize_result_clear(ClOptimizeResult *result);
/* The scalar parameters an optimize def expands to, and the scene with values applied. */
ClParam *cl_optimize_expand(const ClScene *scene, const ClOptimizeDef *def, int *count, char *message, size_t size);
void cl_optimize_apply(ClScene *scene, const ClParam *params, int count, const double *values);
/* True when the backend can descend along def->gradient for every
 * parameter def expands to; else false with the reason in message (the
 * one cl_optimize would stop on at once). */
bool cl_optimize_check(const ClScene *scene, int backend, const ClOptimizeDef *def, char *message, size_t size);

/* ------------------------------------------------------ analytic optimum */

/* The two-ball problem of Task 3 in closed form (Hu et al. 2022): one ball,
 * charged weight·Σ‖u‖²dt, pushes a passive ball at rest head-on so that it
 * coasts to a target on the line of centres (no walls, no gravity, no
 * friction, both at rest). Returns the continuous optimum of the cost and its
 * collision time, or NaN for scenes that are not this problem. */
double cl_two_ball_optimum(const ClScene *scene, double *collision_time);
/* That optimum's control of the pushing ball, sampled at the interval
 * midpoints: steps × 2 numbers (ux, uy). False when it does not apply. */
bool cl_two_ball_optimal_control(const ClScene *scene, double *u);

/* -------------------------------------------------------------- smoothing */

/* Gradients of the randomly smoothed loss F_σ(θ) = E f(θ + w), w ~ N(0,
 * diag σ²), f one backend's loss (Suh, Simchowitz, Zhang, Tedrake, "Do
 * Differentiable Simulators Give Better Policy Gradients?", ICML 2022):
 *   ZoBG  (1/N) Σ (f(θ + w_i) − f(θ)) w_i / σ²      losses only, unbiased for any f
 *   FoBG  (1/N) Σ ∇f(θ + w_i)                        the backend's adjoint; biased where f jumps
 *   AoBG  α·FoBG + (1 − α)·ZoBG, α from a confidence rule (cl_smooth_alpha).
 * Samples: ε_i ~ N(0, I) from a SplitMix64 stream seeded by (seed, i) and
 * the polar method, w_i = σ ∘ ε_i; with antithetic sampling pair j uses
 * ±ε_j. The same seed gives the same samples for every backend (common
 * random numbers) and the same numbers for any thread count. */

/* Which case of the α rule decided. */
typedef enum ClSmoothAlphaRule {
	CL_SMOOTH_ALPHA_ZOBG,       /* ε > γ: ZoBG's own uncertainty exceeds the tolerated bias, α = 0 */
	CL_SMOOTH_ALPHA_OPTIMUM,    /* the inverse-variance weight σ̂0²/(σ̂0² + σ̂1²) keeps the bias within γ */
	CL_SMOOTH_ALPHA_CONSTRAINT, /* α = (γ − ε)/‖ĝ1 − ĝ0‖: as much FoBG as the bias constraint allows */
	CL_SMOOTH_ALPHA_NO_FOBG,    /* FoBG not available (no adjoint, no usable sample): α = 0 */
	CL_SMOOTH_ALPHA_RULE_COUNT
} ClSmoothAlphaRule;

const char *cl_smooth_alpha_rule_name(ClSmoothAlphaRule rule); /* "eps>gamma", "optimum", "constraint", "no-fobg" */

/* The α rule's inputs (first block) and outcome. */
typedef struct ClSmoothAlpha {
	int dimension;        /* d */
	int terms;            /* N of the ZoBG mean */
	double zobg_variance; /* σ̂0²: trace of the ZoBG terms' sample covariance (divisor N − 1) */
	double fobg_variance; /* σ̂1², NAN when FoBG is not available */
	double bound;         /* R: the largest ‖ZoBG term‖ (plug-in bound) */
	double gap;           /* ‖ĝ1 − ĝ0‖ */
	double gamma;         /* γ, the tolerated bias, in the gradient's units */
	double delta;         /* δ, the failure probability of the ZoBG confidence bound */
	/* ε = √(2σ̂0² log((d+1)/δ)/N) + 2R log((d+1)/δ)/(3N): ‖ĝ0 − ∇F_σ‖ ≤ ε with probability 1 − δ */
	double epsilon;
	double alpha;
	ClSmoothAlphaRule rule;
} ClSmoothAlpha;

/* Fills epsilon, alpha and rule from the inputs: α = 0 if ε > γ; else the
 * inverse-variance weight if α·gap ≤ γ − ε; else (γ − ε)/gap. */
void cl_smooth_alpha(ClSmoothAlpha *a);
/* The rule on a batch of n terms, z the ZoBG and y the FoBG terms (n × d,
 * row-major), as cl_smooth computes it; gamma ≤ 0 or NAN: cl_smooth_auto_gamma. */
ClSmoothAlpha cl_smooth_alpha_batch(int d, int n, const double *z, const double *y, double gamma, double delta);
/* The default γ: 10 % of ‖ĝ0‖, at least 1e-6. */
double cl_smooth_auto_gamma(double zobg_norm);

/* A mean over samples and its standard error (sample SD / √terms); NAN when
 * not available. */
typedef struct ClSmoothEstimate {
	double mean;
	double se;
} ClSmoothEstimate;

typedef struct ClSmoothGradient {
	/* ∇f(θ): the adjoint, or central differences (cl_fd_step) for a
	 * parameter without one, as `gradients` and sweeps do */
	double point;
	bool has_adjoint;
	ClSmoothEstimate zobg;            /* with the baseline f(θ), or antithetic */
	ClSmoothEstimate zobg_nobaseline; /* (1/N) Σ f(θ + w_i) w_i/σ²; antithetic pairs cancel the baseline: = zobg */
	ClSmoothEstimate fobg;            /* NAN without an adjoint */
	ClSmoothEstimate aobg;            /* α·FoBG + (1 − α)·ZoBG term by term, over the terms both use */
	ClSmoothEstimate fobg_bias;       /* FoBG − exact's ZoBG, paired term by term; NAN without exact */
} ClSmoothGradient;

typedef struct ClSmoothResult {
	int backend;
	ClStatus status;                /* of the run at θ */
	double loss;                    /* f(θ) */
	ClSmoothEstimate smoothed_loss; /* F_σ(θ): the mean of f(θ + w_i) */
	ClSmoothGradient *gradient;     /* one per parameter, owned */
	ClSmoothAlpha alpha;
	int terms;      /* N, or N/2 pairs with antithetic sampling */
	int zobg_terms; /* terms with a finite loss (both of a pair) */
	int fobg_terms; /* terms whose runs were ok (both of a pair): a degenerate run's gradient is dropped */
	int not_ok;     /* sample runs whose status was not ok */
	ClStatus first_problem; /* the lowest-numbered one's status */
	/* with keep_terms: terms × param_count each, NAN where dropped, owned */
	double *zobg_values, *fobg_values;
} ClSmoothResult;

/* Called after each chunk of runs, from a worker thread but never two at once. */
typedef void (*ClSmoothProgress)(int done, int total, void *user);

typedef struct ClSmoothDef {
	const ClParam *params; /* θ, any scalar parameters of the scene, no repeats */
	const double *sigma;   /* one noise scale per parameter, > 0, in its unit */
	int param_count;
	int samples;      /* N, 2 … 1 000 000 (even with antithetic) */
	uint64_t seed;
	bool antithetic;
	bool zeroth_order_only; /* forward runs only: no adjoints, FoBG and AoBG are not computed */
	bool keep_terms;
	double gamma; /* AoBG: ≤ 0 or NAN for cl_smooth_auto_gamma */
	double delta; /* AoBG, in (0, 1) */
	const int *backends;
	int backend_count;
	int threads; /* ≥ 1; the calling thread is one of them */
	ClSmoothProgress progress;
	void *user;
	const _Atomic int *cancel; /* optional: non-zero stops before the next chunk */
} ClSmoothDef;

/* N = 100, seed 1, no antithetic sampling, γ automatic, δ = 0.05, one thread. */
ClSmoothDef cl_smooth_default_def(void);

/* Every estimate for every backend, into caller-owned results
 * (backend_count, cleared with cl_smooth_result_clear). Returns false when
 * the definition is invalid (message in status) or the run was cancelled. */
bool cl_smooth(const ClScene *scene, const ClSmoothDef *def, ClSmoothResult *results, ClStatus *status);
void cl_smooth_result_clear(ClSmoothResult *result);

/* Ground truth for one or two parameters, without sampling noise: the
 * trapezoid rule on a uniform grid, per axis `points` (≤ 0: 2048 over ±6σ in
 * 1-D, 256 over ±4.5σ in 2-D), weights normalised by their mass. */
typedef struct ClSmoothQuadrature {
	double smoothed_loss;    /* F_σ(θ) */
	double grad[2];          /* ∇F_σ(θ) of the backend's own loss */
	double expected_grad[2]; /* E ∇f(θ + w): what FoBG converges to; NAN without an adjoint */
	double mass;             /* Σ φ·h over the grid before normalisation */
	int failed;              /* grid points without a finite loss (then everything is NAN) */
} ClSmoothQuadrature;

/* def: params, sigma, param_count (1 or 2), backends, threads, progress,
 * cancel; results: backend_count entries. */
bool cl_smooth_quadrature(const ClScene *scene, const ClSmoothDef *def, int points, ClSmoothQuadrature *results,
						  ClStatus *status);

/* ----------------------------------------------------------------- sweeps */

/* One axis of a 2-D sweep: count values from min to max inclusive. */
typedef struct ClSweepAxis {
	ClParam param;
	double min, max;
	int count;
} ClSweepAxis;

double cl_sweep_axis_value(const ClSweepAxis *axis, int index);

typedef struct ClSweepCell {
	double loss;
	double grad_x; /* dL/d(x parameter) */
	double grad_y; /* dL/d(y parameter) */
	ClStatusCode status; /* CL_STATUS_CANCELLED until the cell is computed */
	/* with def->smoothing (else NAN): F_σ and its ZoBG and FoBG over (x, y) */
	double smoothed_loss;
	double zobg_x, zobg_y;
	double fobg_x, fobg_y;
} ClSweepCell;

/* A cell not computed yet: every value NAN, status CL_STATUS_CANCELLED. */
ClSweepCell cl_sweep_cell_pending(void);

/* Smoothed quantities of a sweep: at every cell, cl_smooth over the two
 * swept parameters with the same samples (seed), so cells differ smoothly. */
typedef struct ClSweepSmoothing {
	int samples; /* N; 0: no smoothing */
	double sigma_x, sigma_y;
	uint64_t seed;
	bool antithetic;
	bool first_order; /* FoBG too (an adjoint per sample) */
} ClSweepSmoothing;

/* Called after each finished cell, from a worker thread but never two at
 * once: done of total cells, which backend (index into def->backends) and
 * where. The cell's values are already in place. */
typedef void (*ClSweepProgress)(int done, int total, int backend_slot, int ix, int iy, void *user);

typedef struct ClSweepDef {
	ClSweepAxis x, y;
	const int *backends; /* registry indices */
	int backend_count;
	int threads;    /* worker threads, ≥ 1 */
	ClSweepProgress progress;
	void *user;
	const _Atomic int *cancel; /* optional: non-zero stops the sweep before the next cell */
	ClSweepSmoothing smoothing; /* zero: none */
} ClSweepDef;

/* Cell (backend slot b, ix, iy) of a sweep's results: cells[cl_sweep_index(def, b, ix, iy)]. */
static inline size_t cl_sweep_index(const ClSweepDef *def, int backend_slot, int ix, int iy)
{
	return ((size_t)backend_slot * (size_t)def->y.count + (size_t)iy) * (size_t)def->x.count + (size_t)ix;
}

static inline size_t cl_sweep_cell_count(const ClSweepDef *def)
{
	return (size_t)def->backend_count * (size_t)def->x.count * (size_t)def->y.count;
}

/* Loss and both derivatives (adjoint where cl_param_has_adjoint, else central
 * differences with cl_fd_step) at every grid point for every backend, into caller-owned cells
 * (cl_sweep_cell_count of them). Every cell is computed from scratch, so the
 * results do not depend on the thread count. Returns false when the
 * definition is invalid (message in status) or the sweep was cancelled. */
bool cl_sweep(const ClScene *scene, const ClSweepDef *def, ClSweepCell *cells, ClStatus *status);

typedef enum ClSweepQuantity {
	CL_SWEEP_LOSS,
	CL_SWEEP_GRAD_X,
	CL_SWEEP_GRAD_Y,
	CL_SWEEP_ANGLE_ERROR,    /* degrees between (grad_x, grad_y) and exact's, 0…180 */
	CL_SWEEP_SIGN_AGREEMENT, /* fraction of the two components whose sign matches exact's: 0, ½, 1 */
	CL_SWEEP_SMOOTHED_LOSS,  /* F_σ(θ), the mean loss over the samples */
	CL_SWEEP_ZOBG_X,         /* ZoBG of ∂F_σ/∂x */
	CL_SWEEP_ZOBG_Y,
	CL_SWEEP_FOBG_X,         /* FoBG of ∂F_σ/∂x */
	CL_SWEEP_FOBG_Y,
	CL_SWEEP_FOBG_BIAS_X,    /* FoBG − exact's ZoBG (same samples): how far the mean adjoint is from ∂F_σ/∂x */
	CL_SWEEP_FOBG_BIAS_Y,
	CL_SWEEP_QUANTITY_COUNT
} ClSweepQuantity;

const char *cl_sweep_quantity_name(ClSweepQuantity quantity); /* "loss", "grad-x", …, "fobg-bias-y" */
int cl_sweep_quantity_find(const char *name);                 /* −1 when unknown */

/* What a quantity needs from the sweep. */
enum {
	CL_SWEEP_NEEDS_EXACT = 1 << 0,     /* the exact backend's cell */
	CL_SWEEP_NEEDS_SMOOTHING = 1 << 1, /* def->smoothing.samples > 0 */
	CL_SWEEP_NEEDS_FOBG = 1 << 2,      /* def->smoothing.first_order */
};
unsigned cl_sweep_quantity_needs(ClSweepQuantity quantity);
/* The quantity of a cell; exact is the same cell under the exact backend
 * (needed by the angle error and the sign agreement). NAN when undefined. */
double cl_sweep_quantity(ClSweepQuantity quantity, const ClSweepCell *cell, const ClSweepCell *exact);

/* ------------------------------------------------------------ convergence */

/* One derivative as a function of the step count: does a backend's gradient
 * approach the exact one as dt = T/N → 0? */
typedef struct ClConvergencePoint {
	double loss;
	double value;        /* dL/d(param) at this step count */
	ClStatusCode status; /* CL_STATUS_CANCELLED until the point is computed */
} ClConvergencePoint;

/* Called after each finished point, from a worker thread but never two at
 * once; the point is already in place. */
typedef void (*ClConvergenceProgress)(int done, int total, int backend_slot, int step_index, void *user);

typedef struct ClConvergenceDef {
	/* The derivative's parameter. A control ball.control[K] is the K-th
	 * interval at every N, so its derivative shrinks with dt. */
	ClParam param;
	const int *steps; /* the step counts N, each in 1 … CL_MAX_STEPS */
	int step_count;
	const int *backends; /* registry indices */
	int backend_count;
	int threads; /* worker threads, ≥ 1 */
	ClConvergenceProgress progress;
	void *user;
	const _Atomic int *cancel; /* optional: non-zero stops before the next point */
} ClConvergenceDef;

/* Point (backend slot b, step index k): points[b · step_count + k]. */
static inline size_t cl_convergence_index(const ClConvergenceDef *def, int backend_slot, int step_index)
{
	return (size_t)backend_slot * (size_t)def->step_count + (size_t)step_index;
}

/* For every backend and step count N: the scene with N steps (controls
 * resampled piecewise-constantly in time; backend parameters such as Brax's
 * substeps kept as set), its loss and the derivative (adjoint where
 * cl_param_has_adjoint, else central differences), into caller-owned points
 * (backend_count · step_count). Points are computed from scratch, so results
 * do not depend on the thread count. Returns false when the definition is
 * invalid (message in status) or the run was cancelled. */
bool cl_convergence(const ClScene *scene, const ClConvergenceDef *def, ClConvergencePoint *points, ClStatus *status);

#ifdef __cplusplus
}
#endif
