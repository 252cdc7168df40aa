/* DiffTaichi's direct velocity impulse, with and without time of impact
 * (backends-paper.md §1): each step first collides the start-of-step state
 * (a velocity impulse per contact, plus a TOI position correction), then
 * advances with symplectic Euler. Forward pass in the peer's float32 order;
 * the recorded Jacobian is the peer's autodiff gradient (dual.h).
 */
#include "../core.h"
#include "predicted_contact.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_PRECISION, PARAM_TOI_CLAMP };

typedef struct ImpulseWorkspace {
	double *state;   /* the start-of-step state in working precision */
	double *impulse; /* 4 per ball: accumulated Δx (2) and Δv (2) */
} ImpulseWorkspace;

/* The step's constants, each rounded once like the peer's. */
typedef struct ImpulseRule {
	ClArith value;   /* value-only evaluation (detection, no tape) */
	ClArith tangent; /* with tangents along two balls' states */
	bool toi;
	double dt;
	double clamp;   /* −threshold of min(−10⁻³, s) */
	double elastic; /* −(1+e), a compile-time constant in Taichi: no derivative */
} ImpulseRule;

static void impulse_destroy(void *workspace);

static void *impulse_create(const ClScene *scene, const double *params)
{
	(void)params;
	ImpulseWorkspace *ws = cl_calloc(1, sizeof *ws);
	size_t n = (size_t)scene->ball_count;
	if (ws && (!(ws->state = cl_calloc(CL_BALL_STATE * n, sizeof(double))) ||
			   !(ws->impulse = cl_calloc(4 * n, sizeof(double))))) {
		impulse_destroy(ws);
		return NULL;
	}
	return ws;
}

static void impulse_destroy(void *workspace)
{
	ImpulseWorkspace *ws = workspace;
	free(ws->state);
	free(ws->impulse);
	free(ws);
}

/* Δx = shift·Δv, or none without TOI. */
static void position_shift(const ClArith *m, const ImpulseRule *rule, ClDual gap, ClDual normal_speed, ClDual out[4])
{
	if (!rule->toi) {
		out[0] = out[1] = cl_dual_const(m, 0.0);
		return;
	}
	ClDual shift = cl_toi_shift(m, rule->clamp, cl_dual_const(m, rule->dt), gap, normal_speed);
	out[0] = cl_dual_mul(m, shift, out[2]);
	out[1] = cl_dual_mul(m, shift, out[3]);
}

/* One plane against ball b (§1.1). Fills out = (Δx, Δv); false when the
 * plane is no candidate or the ball is not approaching. */
static bool wall_impulse(const ClArith *m, const ImpulseRule *rule, const double *state, double radius,
						 const ClWall *wall, ClDual out[4])
{
	ClDual b[4], distance, normal_speed;
	double n[2];
	if (!cl_predicted_wall_contact(m, rule->dt, state, radius, wall, b, n, &distance, &normal_speed))
		return false;
	ClDual impulse = cl_dual_scale(m, rule->elastic, normal_speed);
	out[2] = cl_dual_scale(m, n[0], impulse);
	out[3] = cl_dual_scale(m, n[1], impulse);
	position_shift(m, rule, cl_dual_sub(m, distance, cl_dual_const(m, radius)), normal_speed, out);
	return true;
}

/* Ball a's side of a ball–ball contact with ball b (§1.2): the normal is
 * differentiable; factor = −(1+e)·m_b/(m_a + m_b) (−(1+e)·½ for equal masses). */
static bool ball_impulse(const ClArith *m, const ImpulseRule *rule, const double *state_a, const double *state_b,
						 double reach, double factor, ClDual out[4])
{
	ClDual a[4], b[4], delta[2], distance;
	if (!cl_predicted_pair_contact(m, rule->dt, state_a, state_b, reach, a, b, delta, &distance))
		return false;
	ClDual inverse = cl_dual_div_expanded(m, cl_dual_const(m, 1.0), distance);
	ClDual nx = cl_dual_mul(m, delta[0], inverse), ny = cl_dual_mul(m, delta[1], inverse);
	ClDual normal_speed = cl_dual_add(m, cl_dual_mul(m, nx, cl_dual_sub(m, a[2], b[2])),
									  cl_dual_mul(m, ny, cl_dual_sub(m, a[3], b[3])));
	if (!(normal_speed.v < 0.0))
		return false;
	ClDual impulse = cl_dual_scale(m, factor, normal_speed);
	out[2] = cl_dual_mul(m, impulse, nx);
	out[3] = cl_dual_mul(m, impulse, ny);
	position_shift(m, rule, cl_dual_sub(m, distance, cl_dual_const(m, reach)), normal_speed, out);
	return true;
}

/* Ball row's d(x', v')/d(state of col) through one contact's (Δx, Δv),
 * whose tangents sit in slots first..first+3: x' = (x + dt·v') + Δx. */
static void record_contact(ClTape *tape, int row, int col, const ClDual out[4], int first, double dt)
{
	double *a = cl_tape_a(tape, row, col);
	for (int c = 0; c < 4; c++) {
		double dvx = out[2].d[first + c], dvy = out[3].d[first + c];
		a[CL_A(0, c)] = out[0].d[first + c] + dt * dvx;
		a[CL_A(1, c)] = out[1].d[first + c] + dt * dvy;
		a[CL_A(2, c)] = dvx;
		a[CL_A(3, c)] = dvy;
	}
}

/* ------------------------------------------------- parameter columns
 *
 * The peer's autodiff of a contact with respect to the scene's numbers
 * instead of the state: the same expressions, branches as constants, with
 * tangents along the parameters (the slots below) and the state held. The
 * elasticity is not among them: Taichi's (1+e) is a compile-time constant. */

enum { P_RADIUS, P_OTHER_RADIUS, P_POINT_X = 1, P_POINT_Y, P_ANGLE, P_MASS = 2, P_OTHER_MASS, P_DT = 4, P_SLOTS };

/* min(τ − dt, 0)·Δv with τ = gap / min(clamp, s), dt a dual. */
static void position_shift_params(const ClArith *m, const ImpulseRule *rule, ClDual dt, ClDual gap, ClDual s,
								  ClDual out[4])
{
	if (!rule->toi) {
		out[0] = out[1] = cl_dual_const(m, 0.0);
		return;
	}
	ClDual shift = cl_toi_shift(m, rule->clamp, dt, gap, s);
	out[0] = cl_dual_mul(m, shift, out[2]);
	out[1] = cl_dual_mul(m, shift, out[3]);
}

/* wall_impulse along radius, the wall's point and angle (degrees), dt. */
static void wall_impulse_params(const ClArith *m, const ImpulseRule *rule, const double *state, double radius,
								const ClWall *wall, ClDual out[4])
{
	const double rad = 3.14159265358979323846 / 180.0;
	ClDual dt = cl_dual_input(m, rule->dt, P_DT);
	ClDual n[2] = {cl_dual_const(m, cl_arith_round(m, wall->normal.x)), cl_dual_const(m, cl_arith_round(m, wall->normal.y))};
	n[0].d[P_ANGLE] = -wall->normal.y * rad;
	n[1].d[P_ANGLE] = wall->normal.x * rad;
	ClDual q[2] = {cl_dual_input(m, cl_arith_round(m, wall->point.x), P_POINT_X),
				   cl_dual_input(m, cl_arith_round(m, wall->point.y), P_POINT_Y)};
	ClDual distance = cl_dual_const(m, 0.0), s = cl_dual_const(m, 0.0);
	for (int k = 0; k < 2; k++) {
		ClDual predicted = cl_dual_add(m, cl_dual_const(m, state[k]), cl_dual_mul(m, dt, cl_dual_const(m, state[2 + k])));
		distance = cl_dual_add(m, distance, cl_dual_mul(m, n[k], cl_dual_sub(m, predicted, q[k])));
		s = cl_dual_add(m, s, cl_dual_mul(m, n[k], cl_dual_const(m, state[2 + k])));
	}
	ClDual impulse = cl_dual_scale(m, rule->elastic, s);
	out[2] = cl_dual_mul(m, n[0], impulse);
	out[3] = cl_dual_mul(m, n[1], impulse);
	position_shift_params(m, rule, dt, cl_dual_sub(m, distance, cl_dual_input(m, radius, P_RADIUS)), s, out);
}

/* ball_impulse (ball a's side) along both radii, both masses, dt. */
static void ball_impulse_params(const ClArith *m, const ImpulseRule *rule, const double *state_a,
								const double *state_b, double radius_a, double radius_b, double mass_a, double mass_b,
								double elasticity, ClDual out[4])
{
	ClDual dt = cl_dual_input(m, rule->dt, P_DT);
	ClDual delta[2];
	for (int k = 0; k < 2; k++)
		delta[k] = cl_dual_sub(m, cl_dual_add(m, cl_dual_const(m, state_a[k]), cl_dual_mul(m, dt, cl_dual_const(m, state_a[2 + k]))),
							   cl_dual_add(m, cl_dual_const(m, state_b[k]), cl_dual_mul(m, dt, cl_dual_const(m, state_b[2 + k]))));
	ClDual distance = cl_dual_sqrt_unrounded_slope(
		m, cl_dual_add(m, cl_dual_mul(m, delta[0], delta[0]), cl_dual_mul(m, delta[1], delta[1])));
	ClDual inverse = cl_dual_div_expanded(m, cl_dual_const(m, 1.0), distance);
	ClDual nx = cl_dual_mul(m, delta[0], inverse), ny = cl_dual_mul(m, delta[1], inverse);
	ClDual s = cl_dual_add(m, cl_dual_scale(m, state_a[2] - state_b[2], nx), cl_dual_scale(m, state_a[3] - state_b[3], ny));
	/* factor = −(1+e)·m_b/(m_a + m_b) */
	double total = mass_a + mass_b;
	ClDual factor = cl_dual_const(m, cl_round(m->f32, -(1.0 + elasticity) * mass_b / total));
	factor.d[P_MASS] = (1.0 + elasticity) * mass_b / (total * total);
	factor.d[P_OTHER_MASS] = -(1.0 + elasticity) * mass_a / (total * total);
	ClDual impulse = cl_dual_mul(m, factor, s);
	out[2] = cl_dual_mul(m, impulse, nx);
	out[3] = cl_dual_mul(m, impulse, ny);
	ClDual reach = cl_dual_add(m, cl_dual_input(m, radius_a, P_RADIUS), cl_dual_input(m, radius_b, P_OTHER_RADIUS));
	position_shift_params(m, rule, dt, cl_dual_sub(m, distance, reach), s, out);
}

/* Ball row's parameter column through a contact's (Δx, Δv) along slot:
 * x' = (x + dt·v') + Δx, v' = v + Δv + …; dt's tangent is per interval,
 * divided by N for the duration T = N·dt. */
static void record_contact_param(ClTape *tape, int row, int param, const ClDual out[4], int slot, double dt,
								 double scale)
{
	double *c = cl_tape_c(tape, row, param);
	double dvx = out[2].d[slot], dvy = out[3].d[slot];
	c[0] = scale * (out[0].d[slot] + dt * dvx);
	c[1] = scale * (out[1].d[slot] + dt * dvy);
	c[2] = scale * dvx;
	c[3] = scale * dvy;
}

static void accumulate(const ClArith *m, double *impulse, const ClDual out[4], bool toi)
{
	for (int k = toi ? 0 : 2; k < 4; k++)
		impulse[k] = cl_arith_round(m, impulse[k] + out[k].v);
}

static void impulse_step(ClStepContext *ctx, const double *s, const double *u, double *s_next, bool toi)
{
	const ClScene *scene = ctx->scene;
	ImpulseWorkspace *ws = ctx->workspace;
	bool f32 = cl_param_value(ctx, PARAM_PRECISION) == CL_PRECISION_FLOAT32;
	ImpulseRule rule = {
		.value = {f32, 0},
		.tangent = {f32, CL_CONTACT_SLOTS},
		.toi = toi,
		.dt = cl_round(f32, ctx->dt),
		.clamp = toi ? cl_round(f32, -cl_param_value(ctx, PARAM_TOI_CLAMP)) : 0.0,
		.elastic = cl_round(f32, -(1.0 + scene->elasticity)),
	};
	const ClArith *m = &rule.value;
	const ClArith params = {f32, P_SLOTS};
	int nb = scene->ball_count;
	for (int i = 0; i < CL_BALL_STATE * nb; i++)
		ws->state[i] = cl_round(f32, s[i]);
	memset(ws->impulse, 0, sizeof(double) * 4 * (size_t)nb);
	ClTape *tape = ctx->tape;
	if (tape)
		cl_tape_factor(tape);
	double time = ctx->step * ctx->dt;

	/* collide: every ball against every plane, then every other ball, all
	 * from the start-of-step state (Taichi's collide kernel) */
	for (int i = 0; i < nb; i++) {
		const ClBall *ball = &scene->balls[i];
		double radius = cl_round(f32, ball->radius);
		const double *state = ws->state + CL_BALL_STATE * i;
		ClDual out[4];
		for (int w = 0; w < scene->wall_count; w++) {
			if (!cl_wall_may_touch(state, rule.dt, &scene->walls[w], radius) ||
				!wall_impulse(m, &rule, state, radius, &scene->walls[w], out))
				continue;
			cl_step_contact(ctx, time, i, -1 - w);
			if (tape) {
				ClDual param[4];
				if (tape->record_params) {
					wall_impulse_params(&params, &rule, state, radius, &scene->walls[w], param);
					record_contact_param(tape, i, cl_phys_radius(i), param, P_RADIUS, rule.dt, 1.0);
					for (int k = 0; k < 3; k++)
						record_contact_param(tape, i, cl_phys_wall(scene, w, k), param, P_POINT_X + k, rule.dt, 1.0);
					record_contact_param(tape, i, CL_PHYS_DURATION, param, P_DT, rule.dt, 1.0 / scene->steps);
				}
				wall_impulse(&rule.tangent, &rule, state, radius, &scene->walls[w], out);
				record_contact(tape, i, i, out, 0, rule.dt);
			}
			accumulate(m, ws->impulse + 4 * i, out, toi);
		}
		for (int o = 0; o < nb; o++) {
			if (o == i)
				continue;
			const ClBall *other = &scene->balls[o];
			double reach = cl_round(f32, radius + cl_round(f32, other->radius));
			const double *state_other = ws->state + CL_BALL_STATE * o;
			if (!cl_pair_may_touch(state, state_other, rule.dt, reach))
				continue;
			double factor = cl_round(f32, -(1.0 + scene->elasticity) * other->mass / (ball->mass + other->mass));
			if (!ball_impulse(m, &rule, state, state_other, reach, factor, out))
				continue;
			if (i < o)
				cl_step_contact(ctx, time, i, o);
			if (tape) {
				ClDual param[4];
				if (tape->record_params) {
					ball_impulse_params(&params, &rule, state, state_other, radius, cl_round(f32, other->radius),
										ball->mass, other->mass, scene->elasticity, param);
					record_contact_param(tape, i, cl_phys_radius(i), param, P_RADIUS, rule.dt, 1.0);
					record_contact_param(tape, i, cl_phys_radius(o), param, P_OTHER_RADIUS, rule.dt, 1.0);
					record_contact_param(tape, i, cl_phys_mass(i), param, P_MASS, rule.dt, 1.0);
					record_contact_param(tape, i, cl_phys_mass(o), param, P_OTHER_MASS, rule.dt, 1.0);
					record_contact_param(tape, i, CL_PHYS_DURATION, param, P_DT, rule.dt, 1.0 / scene->steps);
				}
				ball_impulse(&rule.tangent, &rule, state, state_other, reach, factor, out);
				record_contact(tape, i, i, out, 0, rule.dt);
				record_contact(tape, i, o, out, 4, rule.dt);
			}
			accumulate(m, ws->impulse + 4 * i, out, toi);
		}
	}

	/* advance: v' = ((v + Δv) + g·dt) + (u/m)·dt; x' = (x + dt·v') [+ Δx] */
	double gravity_dt[2] = {cl_round(f32, cl_round(f32, scene->gravity.x) * rule.dt),
							cl_round(f32, cl_round(f32, scene->gravity.y) * rule.dt)};
	for (int i = 0; i < nb; i++) {
		const double *x = ws->state + CL_BALL_STATE * i, *impulse = ws->impulse + 4 * i;
		double *next = s_next + CL_BALL_STATE * i;
		double mass = cl_round(f32, scene->balls[i].mass);
		for (int k = 0; k < 2; k++) {
			double acceleration = cl_round(f32, cl_round(f32, u[2 * i + k]) / mass);
			double v = cl_round(f32, cl_round(f32, x[2 + k] + impulse[2 + k]) + gravity_dt[k]);
			v = cl_round(f32, v + cl_round(f32, acceleration * rule.dt));
			double p = cl_round(f32, x[k] + cl_round(f32, rule.dt * v));
			next[k] = toi ? cl_round(f32, p + impulse[k]) : p;
			next[2 + k] = v;
		}
		if (tape) {
			double *a = cl_tape_a_identity(tape, i), *bu = cl_tape_b(tape, i, i);
			double dt = rule.dt, du = dt / mass;
			a[CL_A(0, 2)] = a[CL_A(1, 3)] = dt;
			bu[0] = bu[3] = dt * du;
			bu[4] = bu[7] = du;
			if (tape->record_params) {
				/* ∂/∂dt of the advance: v' gains g + u/m per unit dt, x' = x + dt·v' gains v' + dt·∂v'/∂dt */
				double *c = cl_tape_c(tape, i, CL_PHYS_DURATION);
				for (int k = 0; k < 2; k++) {
					double rate = scene->gravity.x * (k == 0) + scene->gravity.y * (k == 1) + u[2 * i + k] / mass;
					c[k] = (next[2 + k] + dt * rate) / scene->steps;
					c[2 + k] = rate / scene->steps;
				}
			}
		}
	}
}

static void impulse_toi_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	impulse_step(ctx, s, u, s_next, true);
}

static void impulse_plain_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	impulse_step(ctx, s, u, s_next, false);
}

static const ClParamDesc impulse_toi_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
	 "arithmetic of the forward pass (the peer ran Taichi in float32)", cl_precision_choices},
	{"toi_clamp", CL_PARAM_KIND_REAL, 1e-3, 0, 1, "m/s",
	 "TOI denominator clamp: tau = gap / min(-clamp, n.v) (DiffTaichi: 1e-3)", NULL},
};

static const ClParamDesc impulse_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
	 "arithmetic of the forward pass (the peer ran Taichi in float32)", cl_precision_choices},
};

#define IMPULSE_SUMMARY_COMMON                                                                                       \
	"Direct velocity impulse as in the DiffTaichi scripts: contacts are detected on the predicted position x + "   \
	"dt*v (gap n.(x + dt*v - point) < r for any wall normal, distance < r_a + r_b for balls, every ordered ball "    \
	"pair as Taichi's loop does) and are active while approaching (s = n.v < 0); the impulse -(1+e)*s*n is "        \
	"applied to the start-of-step velocity, then v' = ((v + dv) + g*dt) + (u/m)*dt and x' = x + dt*v'. A ball "    \
	"receives the share m_other/(m_a + m_b) of a ball-ball impulse (1/2 for equal masses, as in the paper); "       \
	"several contacts of one ball simply add. No friction: DiffTaichi has none, so the scene's friction is "       \
	"ignored. Float32 by default, every constant rounded once, no FMA. The gradient is the peer's autodiff: "       \
	"branches constant, (1+e) a constant, the ball-ball normal differentiable. Degenerate contacts pass "       \
	"silently (status ok; the peer reports nothing): a tangential (grazing) pass is a hit only if a predicted "     \
	"position is strictly inside, so the step grid decides; simultaneous impacts are computed from the same "     \
	"start-of-step velocities and added, so a corner reflects both components but three balls in a row all "     \
	"stop (momentum kept, energy lost although e = 1); in resting contact (Zeno) gravity is added after the "      \
	"impulse, so a resting ball sinks into the surface at |g|dt/(1+e) and never rests; a ball starting in "        \
	"contact (at t = 0) gets an ordinary first-step impulse. "

const ClBackend cl_backend_impulse_toi = {
	.info = {
		.id = "impulse-toi",
		.label = "Direct impulse + TOI",
		.family = "impulse",
		.mirrors = "DiffTaichi",
		.toi = true,
		.twin = "impulse",
		.gradient_is_derivative = true,
		.intro = "Flips the ball's velocity at impact (like DiffTaichi) and corrects the step for when the impact really happened.",
		.summary = IMPULSE_SUMMARY_COMMON
		"With TOI the position is corrected by min(tau - dt, 0)*dv, tau = (gap - r)/min(-clamp, s), so the step "
		"moves piecewise linearly through the impact and Task 1's gradients are right (-1, -1). Its gradient "
		"still misses the saltation's acceleration term: under gravity or a control at impact (Task 2's "
		"d/dvy0, all of Task 3) it converges to the wrong value. Its toi_clamp has no adjoint: in DiffTaichi "
		"it is a Python constant, not a differentiated input.",
		.params = impulse_toi_params,
		.param_count = 2,
	},
	.create = impulse_create,
	.destroy = impulse_destroy,
	.step = impulse_toi_step,
	.tape_blocks_per_ball = true,
	/* friction: none in the model, the derivative is 0; elasticity: a
	 * compile-time constant of the peer, no derivative */
	.param_adjoints = 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION |
					  1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS | 1u << CL_PARAM_WALL_POINT |
					  1u << CL_PARAM_WALL_ANGLE,
	.accel_form = true,
};

const ClBackend cl_backend_impulse = {
	.info = {
		.id = "impulse",
		.label = "Direct impulse",
		.family = "impulse",
		.mirrors = "DiffTaichi",
		.toi = false,
		.twin = "impulse-toi",
		.gradient_is_derivative = true,
		.intro = "Flips the ball's velocity at impact (like DiffTaichi) without correcting for when in the step it happened, so the timing of a bounce is lost.",
		.summary = IMPULSE_SUMMARY_COMMON
		"Without TOI the position is not corrected, so the time lost at an impact is never accounted for: "
		"Task 1's d(final height)/d(initial height) is +1 instead of -1, and gradients through an impact are "
		"those of a step-quantised collision time.",
		.params = impulse_params,
		.param_count = 1,
	},
	.create = impulse_create,
	.destroy = impulse_destroy,
	.step = impulse_plain_step,
	.tape_blocks_per_ball = true,
	/* friction: none in the model, the derivative is 0; elasticity: a
	 * compile-time constant of the peer, no derivative */
	.param_adjoints = 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION |
					  1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS | 1u << CL_PARAM_WALL_POINT |
					  1u << CL_PARAM_WALL_ANGLE,
	.accel_form = true,
};
