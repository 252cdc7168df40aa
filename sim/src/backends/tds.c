/* The Tiny Differentiable Simulator's rigid-body World (backend-tds.md):
 * semi-implicit Euler (forces, then contacts on the start-of-step
 * positions, then p += v·dt), contacts acted on only while they penetrate,
 * one sequential-impulse pass with restitution plus the Baumgarte push-out
 * erp·d/dt, friction capped by μ·j with spin (unit inverse inertia). Float64
 * throughout in the spec's operation order. The recorded Jacobian is the
 * forward-mode derivative TDS's dual numbers give (§7): every comparison on
 * values, the derivative through v_n, the gap d (Baumgarte), the ball–ball
 * normal and friction, and along the scene's numbers (the parameter
 * columns: the World's restitution, friction, gravity and dt and the
 * shapes' radii, masses and planes are dual scalars too). Spin is simulated
 * but the engine's state has no slot for it: its value is kept here, its
 * derivative is not carried.
 */
#include "../dual.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_ERP, PARAM_ITERATIONS };

/* Tangent slots of one contact: ball a's [px py vx vy], then ball b's. */
enum { TDS_SLOTS = 8 };

/* Tangent slots of a contact's parameter pass (the state held): the
 * scene's numbers it uses, the wall's pose where a ball b has radius and
 * mass, then the World's erp. */
enum { P_ELASTICITY, P_FRICTION, P_DT, P_RADIUS_A, P_MASS_A, P_RADIUS_B, P_MASS_B, P_POINT_X = P_RADIUS_B, P_POINT_Y,
	   P_ANGLE, P_ERP, P_SLOTS };

#define TDS_MIN_CENTRE_DISTANCE 1e-5 /* sphere–sphere: no contact below it */
#define TDS_FRICTION_THRESHOLD 1e-4  /* |v_t| above which friction is applied */

/* A penetrating pair of this step: ball a, and ball b or wall −1 − b. */
typedef struct TdsContact {
	int a, b;
	bool reported;
} TdsContact;

typedef struct TdsWorkspace {
	double *spin;     /* z angular velocity per ball, from the run's first step */
	double *velocity; /* 2 per ball: the velocities the solver changes */
	double *inverse_mass;
	TdsContact *contacts;
	int contact_capacity;
} TdsWorkspace;

static void tds_destroy(void *workspace)
{
	TdsWorkspace *ws = workspace;
	free(ws->spin);
	free(ws->velocity);
	free(ws->inverse_mass);
	free(ws->contacts);
	free(ws);
}

static void *tds_create(const ClScene *scene, const double *params)
{
	(void)params;
	TdsWorkspace *ws = cl_calloc(1, sizeof *ws);
	size_t n = (size_t)scene->ball_count;
	if (ws && (!(ws->spin = cl_calloc(n, sizeof(double))) || !(ws->velocity = cl_calloc(2 * n, sizeof(double))) ||
			   !(ws->inverse_mass = cl_calloc(n, sizeof(double))))) {
		tds_destroy(ws);
		return NULL;
	}
	for (size_t i = 0; ws && i < n; i++)
		ws->inverse_mass[i] = 1.0 / scene->balls[i].mass;
	return ws;
}

/* --------------------------------------------------------------- geometry */

/* A contact's frame (§3): the normal on b pointing towards a, the world
 * points on a and b, the signed distance. */
typedef struct TdsFrame {
	ClDual2 normal, point_a, point_b;
	ClDual distance;
} TdsFrame;

/* The contact's inputs: a's position in slots 0–1, b's in 4–5, or the
 * scene's numbers in the P_ slots. */
typedef struct TdsBodies {
	ClDual2 p_a, v_a, p_b, v_b;
	double w_a, w_b;     /* spin values (no derivative) */
	ClDual im_a, im_b;   /* inverse masses, 0 for a plane */
	double ii_a, ii_b;   /* inverse inertia, 1 for a ball, 0 for a plane */
	ClDual r_a, r_b;     /* radii */
	ClDual2 wall_normal; /* the plane's n and c of {x : n·x = c} */
	ClDual wall_constant;
	ClDual elasticity, friction, dt;
	bool plane;
} TdsBodies;

/* §3.1: false when the centres are closer than 1e-5. */
static bool sphere_sphere(const ClArith *A, ClDual2 p_a, ClDual r_a, ClDual2 p_b, ClDual r_b, TdsFrame *f)
{
	ClDual2 delta = cl_dual2_sub(A, p_a, p_b);
	ClDual length = cl_dual_sqrt(A, cl_dual2_dot(A, delta, delta));
	if (length.v <= TDS_MIN_CENTRE_DISTANCE)
		return false;
	ClDual inverse = cl_dual_div_expanded(A, cl_dual_const(A, 1.0), length);
	f->normal = cl_dual2_mul(A, delta, inverse);
	f->distance = cl_dual_sub(A, length, cl_dual_add(A, r_a, r_b));
	f->point_a = cl_dual2_sub(A, p_a, cl_dual2_mul(A, f->normal, r_a));
	f->point_b = cl_dual2_sub(A, f->point_a, cl_dual2_mul(A, f->normal, f->distance));
	return true;
}

/* §3.2, ball created before the plane: a = ball, b = plane, n_b = +n. */
static void sphere_plane(const ClArith *A, ClDual2 p, ClDual r, ClDual2 normal, ClDual c, TdsFrame *f)
{
	/* t = −(p·(−n) + c): the centre's signed height above the plane */
	ClDual2 away = cl_dual2_neg(A, normal);
	ClDual t = cl_dual_neg(A, cl_dual_add(A, cl_dual2_dot(A, away, p), c));
	f->normal = normal;
	f->distance = cl_dual_sub(A, t, r);
	f->point_a = cl_dual2_sub(A, p, cl_dual2_mul(A, normal, r));
	f->point_b = cl_dual2_sub(A, p, cl_dual2_mul(A, normal, t));
}

/* The contact's frame from the bodies' positions; false when none exists. */
static bool contact_frame(const ClArith *A, const TdsBodies *bodies, TdsFrame *f)
{
	if (bodies->plane) {
		sphere_plane(A, bodies->p_a, bodies->r_a, bodies->wall_normal, bodies->wall_constant, f);
		return true;
	}
	return sphere_sphere(A, bodies->p_a, bodies->r_a, bodies->p_b, bodies->r_b, f);
}

/* ------------------------------------------------------------- the solver */

/* w ẑ × ρ */
static ClDual2 spin_cross(const ClArith *A, double w, ClDual2 rho)
{
	return (ClDual2){cl_dual_scale(A, -w, rho.y), cl_dual_scale(A, w, rho.x)};
}

/* (a × b)_z */
static ClDual cross_z(const ClArith *A, ClDual2 a, ClDual2 b)
{
	return cl_dual_sub(A, cl_dual_mul(A, a.x, b.y), cl_dual_mul(A, a.y, b.x));
}

/* n·((I⁻¹(ρ × n)) × ρ) for a body in the plane: (I⁻¹ c ẑ) × ρ = I⁻¹ c (−ρ_y, ρ_x). */
static ClDual angular_term(const ClArith *A, double inverse_inertia, ClDual2 rho, ClDual2 n)
{
	ClDual c = cl_dual_scale(A, inverse_inertia, cross_z(A, rho, n));
	ClDual2 arm = {cl_dual_neg(A, cl_dual_mul(A, c, rho.y)), cl_dual_mul(A, c, rho.x)};
	return cl_dual2_dot(A, n, arm);
}

/* Applies impulse P at lever ρ: v += (1/m)·P, w += I⁻¹ (ρ × P)_z. */
static void apply_impulse(const ClArith *A, ClDual inverse_mass, double inverse_inertia, ClDual2 rho, ClDual2 P,
						  ClDual2 *v, double *w)
{
	*v = cl_dual2_add(A, *v, cl_dual2_mul(A, P, inverse_mass));
	*w += inverse_inertia * cross_z(A, rho, P).v;
}

/* resolve_collision's branching path (§4) on one contact: changes the
 * velocities (and spin values) in bodies; false when it applied nothing.
 * erp_slot (−1: none) is the tangent slot along erp, a dual scalar in TDS. */
static bool resolve(const ClArith *A, const TdsFrame *f, TdsBodies *b, double erp, int erp_slot)
{
	if (!(f->distance.v < 0.0))
		return false;
	ClDual2 n = f->normal;
	ClDual2 rho_a = cl_dual2_sub(A, f->point_a, b->p_a);
	ClDual2 rho_b = b->plane ? cl_dual2_const(A, 0.0, 0.0) : cl_dual2_sub(A, f->point_b, b->p_b);
	ClDual2 u_a = cl_dual2_add(A, b->v_a, spin_cross(A, b->w_a, rho_a));
	ClDual2 u_b = b->plane ? cl_dual2_const(A, 0.0, 0.0) : cl_dual2_add(A, b->v_b, spin_cross(A, b->w_b, rho_b));
	ClDual2 v_rel = cl_dual2_sub(A, u_a, u_b);
	ClDual v_n = cl_dual2_dot(A, n, v_rel);
	if (!(v_n.v < 0.0))
		return false;
	ClDual ang = cl_dual_add(A, angular_term(A, b->ii_a, rho_a, n), angular_term(A, b->ii_b, rho_b, n));
	ClDual K = cl_dual_add(A, cl_dual_add(A, b->im_a, b->im_b), ang);
	ClDual push = cl_dual_scale(A, erp, f->distance);
	if (erp_slot >= 0 && erp_slot < A->slots)
		push.d[erp_slot] += f->distance.v;
	ClDual beta = cl_dual_div_expanded(A, push, b->dt);
	ClDual restitution = cl_dual_neg(A, cl_dual_add(A, cl_dual_const(A, 1.0), b->elasticity));
	ClDual j = cl_dual_div_expanded(A, cl_dual_sub(A, cl_dual_mul(A, restitution, v_n), beta), K);
	if (!(j.v > 0.0))
		return false;
	ClDual2 P = cl_dual2_mul(A, n, j);
	apply_impulse(A, b->im_a, b->ii_a, rho_a, P, &b->v_a, &b->w_a);
	if (!b->plane)
		apply_impulse(A, b->im_b, b->ii_b, rho_b, cl_dual2_neg(A, P), &b->v_b, &b->w_b);

	/* friction from the relative velocity before the normal impulse */
	ClDual2 lateral = cl_dual2_sub(A, v_rel, cl_dual2_mul(A, n, v_n));
	ClDual lateral_speed = cl_dual_sqrt(A, cl_dual2_dot(A, lateral, lateral));
	ClDual trial = cl_dual_div_expanded(A, lateral_speed, K);
	ClDual cap = cl_dual_mul(A, b->friction, j);
	ClDual magnitude = trial.v < cap.v ? trial : cap;
	if (lateral_speed.v > TDS_FRICTION_THRESHOLD) {
		ClDual inverse = cl_dual_div_expanded(A, cl_dual_const(A, 1.0), lateral_speed);
		ClDual2 direction = cl_dual2_mul(A, lateral, inverse);
		ClDual2 F = cl_dual2_mul(A, direction, magnitude);
		apply_impulse(A, b->im_a, b->ii_a, rho_a, cl_dual2_neg(A, F), &b->v_a, &b->w_a);
		if (!b->plane)
			apply_impulse(A, b->im_b, b->ii_b, rho_b, F, &b->v_b, &b->w_b);
	}
	return true;
}

static double tds_spin(const void *workspace, int ball)
{
	const TdsWorkspace *ws = workspace;
	return ws->spin[ball];
}

/* ------------------------------------------------------------------ step */

/* Input number v in slot, or a constant for slot < 0. */
static ClDual input(const ClArith *A, double v, int slot)
{
	return slot < 0 ? cl_dual_const(A, v) : cl_dual_input(A, v, slot);
}

/* A 2-vector input in slots slot and slot + 1, or a constant for slot < 0. */
static ClDual2 input2(const ClArith *A, double x, double y, int slot)
{
	return slot < 0 ? cl_dual2_const(A, x, y) : cl_dual2_input(A, x, y, slot);
}

/* 1/m as a dual input along m (d/dm = −1/m²), or a constant for slot < 0. */
static ClDual inverse_mass_input(const ClArith *A, const TdsWorkspace *ws, const ClScene *scene, int ball, int slot)
{
	ClDual r = cl_dual_const(A, ws->inverse_mass[ball]);
	if (slot >= 0 && slot < A->slots)
		r.d[slot] = -1.0 / (scene->balls[ball].mass * scene->balls[ball].mass);
	return r;
}

/* The contact's bodies from the start-of-step positions and the current
 * velocities: with params false the state in the tangent slots when A has
 * them (the recorded Jacobian), with params true the scene's numbers in
 * the P_ slots and the state held (the parameter columns). */
static TdsBodies contact_bodies(const ClArith *A, const ClScene *scene, double dt, const TdsWorkspace *ws,
								const double *s, const TdsContact *c, bool params)
{
	const double rad = 3.14159265358979323846 / 180.0;
	TdsBodies b = {0};
	const double *x = s + CL_BALL_STATE * c->a;
	b.p_a = input2(A, x[0], x[1], params ? -1 : 0);
	b.v_a = input2(A, ws->velocity[2 * c->a], ws->velocity[2 * c->a + 1], params ? -1 : 2);
	b.w_a = ws->spin[c->a];
	b.im_a = inverse_mass_input(A, ws, scene, c->a, params ? P_MASS_A : -1);
	b.ii_a = 1.0;
	b.r_a = input(A, scene->balls[c->a].radius, params ? P_RADIUS_A : -1);
	b.elasticity = input(A, scene->elasticity, params ? P_ELASTICITY : -1);
	b.friction = input(A, scene->friction, params ? P_FRICTION : -1);
	b.dt = input(A, dt, params ? P_DT : -1);
	b.plane = c->b < 0;
	if (b.plane) {
		const ClWall *wall = &scene->walls[-1 - c->b];
		b.p_b = b.v_b = cl_dual2_const(A, 0.0, 0.0);
		b.im_b = b.r_b = cl_dual_const(A, 0.0);
		b.wall_normal = cl_dual2_const(A, wall->normal.x, wall->normal.y);
		if (params && P_ANGLE < A->slots) {
			b.wall_normal.x.d[P_ANGLE] = -wall->normal.y * rad;
			b.wall_normal.y.d[P_ANGLE] = wall->normal.x * rad;
		}
		ClDual2 q = input2(A, wall->point.x, wall->point.y, params ? P_POINT_X : -1);
		b.wall_constant = cl_dual2_dot(A, b.wall_normal, q);
		return b;
	}
	const double *y = s + CL_BALL_STATE * c->b;
	b.p_b = input2(A, y[0], y[1], params ? -1 : 4);
	b.v_b = input2(A, ws->velocity[2 * c->b], ws->velocity[2 * c->b + 1], params ? -1 : 6);
	b.w_b = ws->spin[c->b];
	b.im_b = inverse_mass_input(A, ws, scene, c->b, params ? P_MASS_B : -1);
	b.ii_b = 1.0;
	b.r_b = input(A, scene->balls[c->b].radius, params ? P_RADIUS_B : -1);
	return b;
}

/* One applied contact as a factor: positions pass, the velocities' rows
 * are the dual derivatives along the contact's slots. */
static void record_contact(ClTape *tape, const TdsContact *c, const TdsBodies *b)
{
	cl_tape_factor(tape);
	int balls[2] = {c->a, c->b};
	const ClDual2 *velocity[2] = {&b->v_a, &b->v_b};
	int count = b->plane ? 1 : 2;
	for (int row = 0; row < count; row++)
		for (int col = 0; col < count; col++) {
			double *m = cl_tape_a(tape, balls[row], balls[col]);
			if (row == col)
				m[CL_A(0, 0)] = m[CL_A(1, 1)] = 1.0;
			for (int k = 0; k < 4; k++) {
				m[CL_A(2, k)] = velocity[row]->x.d[4 * col + k];
				m[CL_A(3, k)] = velocity[row]->y.d[4 * col + k];
			}
		}
}

/* The parameter columns of the contact's factor: its resolve again with
 * the scene's numbers as the inputs and the state held (the same values,
 * so the same branches), velocities' rows only. */
static void record_contact_params(ClTape *tape, const ClScene *scene, double dt, const TdsWorkspace *ws,
								  const double *s, const TdsContact *c, double erp)
{
	const ClArith A = {false, P_SLOTS};
	TdsBodies bodies = contact_bodies(&A, scene, dt, ws, s, c, true), *b = &bodies;
	TdsFrame f;
	contact_frame(&A, b, &f);
	resolve(&A, &f, b, erp, P_ERP);
	int balls[2] = {c->a, c->b};
	const ClDual2 *velocity[2] = {&b->v_a, &b->v_b};
	int phys[P_SLOTS] = {CL_PHYS_ELASTICITY, CL_PHYS_FRICTION, CL_PHYS_DURATION, cl_phys_radius(c->a),
						 cl_phys_mass(c->a)};
	for (int k = 0; k < 3; k++)
		phys[P_POINT_X + k] = b->plane ? cl_phys_wall(scene, -1 - c->b, k) : -1;
	if (!b->plane) {
		phys[P_RADIUS_B] = cl_phys_radius(c->b);
		phys[P_MASS_B] = cl_phys_mass(c->b);
	}
	phys[P_ERP] = cl_phys_backend(scene, PARAM_ERP);
	for (int row = 0; row < (b->plane ? 1 : 2); row++)
		for (int slot = 0; slot < P_SLOTS; slot++) {
			if (phys[slot] < 0)
				continue;
			/* dt = T/N */
			double scale = slot == P_DT ? 1.0 / scene->steps : 1.0;
			double *m = cl_tape_c(tape, balls[row], phys[slot]);
			m[2] = scale * velocity[row]->x.d[slot];
			m[3] = scale * velocity[row]->y.d[slot];
		}
}

static bool add_contact(ClStepContext *ctx, TdsWorkspace *ws, int *count, int a, int b)
{
	if (!cl_grow(&ws->contacts, &ws->contact_capacity, (size_t)*count + 1, sizeof *ws->contacts)) {
		cl_step_out_of_memory(ctx, "the contact list");
		return false;
	}
	ws->contacts[(*count)++] = (TdsContact){.a = a, .b = b};
	return true;
}

/* Contact generation (§3) on the start-of-step positions, every pair (i, j),
 * i < j, balls before walls; only penetrating pairs (d < 0) are kept, the
 * only ones the solver acts on. False when out of memory. */
static bool generate_contacts(ClStepContext *ctx, TdsWorkspace *ws, const double *s, int *count)
{
	const ClScene *scene = ctx->scene;
	const ClArith value = {false, 0};
	*count = 0;
	for (int i = 0; i < scene->ball_count; i++) {
		const double *x = s + CL_BALL_STATE * i;
		for (int j = i + 1; j < scene->ball_count; j++) {
			const double *y = s + CL_BALL_STATE * j;
			/* certainly apart: L ≥ max(|Δx|, |Δy|) up to rounding */
			double reach = (scene->balls[i].radius + scene->balls[j].radius) * (1.0 + 1e-9);
			if (fabs(x[0] - y[0]) > reach || fabs(x[1] - y[1]) > reach)
				continue;
			TdsContact c = {.a = i, .b = j};
			TdsBodies b = contact_bodies(&value, scene, ctx->dt, ws, s, &c, false);
			TdsFrame f;
			if (contact_frame(&value, &b, &f) && f.distance.v < 0.0 && !add_contact(ctx, ws, count, i, j))
				return false;
		}
		for (int w = 0; w < scene->wall_count; w++) {
			TdsContact c = {.a = i, .b = -1 - w};
			TdsBodies b = contact_bodies(&value, scene, ctx->dt, ws, s, &c, false);
			TdsFrame f;
			if (contact_frame(&value, &b, &f) && f.distance.v < 0.0 && !add_contact(ctx, ws, count, i, c.b))
				return false;
		}
	}
	return true;
}

/* F·(1/m) along axis k with the force F = u + m·g, in the spec's order. */
static double acceleration(const ClScene *scene, const TdsWorkspace *ws, const double *u, int ball, int k)
{
	double g = k == 0 ? scene->gravity.x : scene->gravity.y;
	return (u[2 * ball + k] + scene->balls[ball].mass * g) * ws->inverse_mass[ball];
}

static void tds_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	const ClScene *scene = ctx->scene;
	TdsWorkspace *ws = ctx->workspace;
	double erp = cl_param_value(ctx, PARAM_ERP);
	int iterations = (int)cl_param_value(ctx, PARAM_ITERATIONS);
	double dt = ctx->dt;
	int nb = scene->ball_count;
	ClTape *tape = ctx->tape;
	if (ctx->step == 0)
		memset(ws->spin, 0, sizeof(double) * (size_t)nb);

	/* forces → velocity: v += (F·(1/m))·dt */
	for (int i = 0; i < nb; i++)
		for (int k = 0; k < 2; k++)
			ws->velocity[2 * i + k] = s[CL_BALL_STATE * i + 2 + k] + acceleration(scene, ws, u, i, k) * dt;

	int count;
	if (!generate_contacts(ctx, ws, s, &count))
		return;
	if (tape && count > 0) {
		/* the velocity update as its own factor, before the contacts' */
		cl_tape_factor(tape);
		for (int i = 0; i < nb; i++) {
			double *b = cl_tape_b(tape, i, i);
			b[4] = b[7] = dt * ws->inverse_mass[i];
			if (tape->record_params) {
				/* ∂v/∂dt = F·(1/m), dt = T/N */
				double *c = cl_tape_c(tape, i, CL_PHYS_DURATION);
				for (int k = 0; k < 2; k++)
					c[2 + k] = acceleration(scene, ws, u, i, k) / scene->steps;
			}
		}
	}

	/* the sequential-impulse passes: the frames stay, the velocities change */
	const ClArith arith = {false, tape ? TDS_SLOTS : 0};
	double time = ctx->step * dt;
	for (int pass = 0; pass < iterations && count > 0; pass++)
		for (int k = 0; k < count; k++) {
			TdsContact *c = &ws->contacts[k];
			TdsBodies b = contact_bodies(&arith, scene, dt, ws, s, c, false);
			TdsFrame f;
			if (!contact_frame(&arith, &b, &f) || !resolve(&arith, &f, &b, erp, -1))
				continue;
			if (tape) {
				record_contact(tape, c, &b);
				if (tape->record_params)
					record_contact_params(tape, scene, dt, ws, s, c, erp);
			}
			ws->velocity[2 * c->a] = b.v_a.x.v;
			ws->velocity[2 * c->a + 1] = b.v_a.y.v;
			ws->spin[c->a] = b.w_a;
			if (!b.plane) {
				ws->velocity[2 * c->b] = b.v_b.x.v;
				ws->velocity[2 * c->b + 1] = b.v_b.y.v;
				ws->spin[c->b] = b.w_b;
			}
			if (!c->reported) {
				c->reported = true;
				cl_step_contact(ctx, time, c->a, c->b);
			}
		}

	/* integrate: p += v·dt with the new velocity */
	for (int i = 0; i < nb; i++) {
		const double *x = s + CL_BALL_STATE * i;
		double *next = s_next + CL_BALL_STATE * i;
		for (int k = 0; k < 2; k++) {
			next[2 + k] = ws->velocity[2 * i + k];
			next[k] = x[k] + next[2 + k] * dt;
		}
	}
	if (!tape)
		return;
	cl_tape_factor(tape); /* the whole step, or the integration after the contacts */
	for (int i = 0; i < nb; i++) {
		double *a = cl_tape_a_identity(tape, i);
		a[CL_A(0, 2)] = a[CL_A(1, 3)] = dt;
		const double *next = s_next + CL_BALL_STATE * i;
		double *c = tape->record_params ? cl_tape_c(tape, i, CL_PHYS_DURATION) : NULL;
		if (count > 0) {
			/* ∂p/∂dt = v */
			for (int k = 0; c && k < 2; k++)
				c[k] = next[2 + k] / scene->steps;
			continue;
		}
		double *b = cl_tape_b(tape, i, i), du = dt * ws->inverse_mass[i];
		b[0] = b[3] = dt * du;
		b[4] = b[7] = du;
		/* the velocity update and p += v·dt in one: ∂v/∂dt = F·(1/m), ∂p/∂dt = v + dt·∂v/∂dt */
		for (int k = 0; c && k < 2; k++) {
			double rate = acceleration(scene, ws, u, i, k);
			c[k] = (next[2 + k] + dt * rate) / scene->steps;
			c[2 + k] = rate / scene->steps;
		}
	}
}

static const ClParamDesc tds_params[] = {
	{"erp", CL_PARAM_KIND_REAL, 0.1, 0, 1, "",
	 "Baumgarte factor: the impulse adds the push-out erp*d/dt to the restitution target (TDS: 0.1; 0 is the plain "
	 "no-TOI impulse)",
	 NULL},
	{"iterations", CL_PARAM_KIND_INT, 1, 1, 1000, "",
	 "sequential-impulse passes over the step's contacts (TDS: num_solver_iterations = 1)", NULL},
};

const ClBackend cl_backend_impulse_tds = {
	.info = {
		.id = "impulse-tds",
		.label = "Impulse + Baumgarte (TDS)",
		.family = "impulse",
		.mirrors = "Tiny Differentiable Simulator 8381b8c9",
		.toi = false,
		.twin = NULL,
		.gradient_is_derivative = true,
		.intro = "Bounces a ball only once it has sunk into a surface, and pushes it back out a little harder the "
				 "deeper it sank (like the Tiny Differentiable Simulator).",
		.summary =
			"The Tiny Differentiable Simulator's rigid-body World: semi-implicit Euler (v += (u + m*g)/m*dt, then "
			"the contact impulses, then p += v*dt). Contacts are generated on the start-of-step positions for every "
			"pair (balls before walls) and acted on only while they penetrate: d < 0, approaching (v_n < 0) and "
			"j > 0, all strict, so a ball reaching a surface exactly at a step boundary is caught one step later. "
			"One sequential-impulse pass (iterations) with j = (-(1+e)*v_n - erp*d/dt)/(1/m_a + 1/m_b): the "
			"Baumgarte term pushes a penetrating ball out faster than restitution alone (Task 1 leaves at 2.2 m/s, "
			"not 2). Friction uses the relative velocity "
			"before the normal impulse: f = min(|v_t|/K, mu*j), applied only when |v_t| > 1e-4, and spins the ball "
			"(unit inverse inertia, as TDS gives every body), the spin entering later contacts through w x r. "
			"The scene's elasticity and friction are used for every contact as the World's values. Float64. "
			"Degenerate contacts pass silently (status ok; TDS reports nothing): a ball still penetrating while "
			"separating gets nothing; a grazing (tangential) pass is a contact only if a step starts with the ball "
			"inside and approaching, so the step grid decides; simultaneous impacts (a corner, three balls in a "
			"row) are resolved one after the other in pair order, each seeing the velocities the one before left, "
			"which is where more iterations change anything; in resting contact (Zeno) a ball sinks by up to one "
			"step's travel and is thrown out again by restitution plus the push-out, so it never rests; a ball "
			"starting in contact (inside at t = 0) gets an ordinary first-step impulse if approaching; centres "
			"closer than 1e-5 get no contact. "
			"The gradient is TDS's forward-mode dual numbers through its branches (step of contact, resolved or "
			"not, the min of friction: constants): it flows through v_n, through the ball-ball normal and through "
			"the gap d, where the Baumgarte slope erp/dt makes d(final height)/d(initial height) = 1 - erp*k for k "
			"steps after the contact: -25.3 in Task 1 (exact -1), growing like 1/dt; erp = 0 gives the plain no-TOI "
			"impulse gradient (+1). The engine's state has no spin: the spin's value is simulated, its derivative "
			"is not carried, so a gradient through a sticking friction contact of a ball that already spins lacks "
			"that term (sliding contacts, and all of Tasks 1-3, do not need it). "
			"The same duals give the derivatives with respect to elasticity, friction, gravity, duration (dt, "
			"also in erp*d/dt), every radius and mass and every wall's point and angle (through the plane's "
			"normal and constant), with the same missing spin term. Its own erp (impulse-tds.erp) is a dual "
			"scalar of the World too: its column is d/d(erp) of the push-out erp*d/dt, the contact's gap d; "
			"iterations is an integer and has no derivative.",
		.params = tds_params,
		.param_count = 2,
	},
	.create = tds_create,
	.destroy = tds_destroy,
	.step = tds_step,
	.tape_blocks_per_ball = true,
	.param_adjoints = 1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY |
					  1u << CL_PARAM_DURATION | 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS |
					  1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE,
	.own_param_adjoints = 1u << PARAM_ERP,
	.accel_form = true,
	.spin = tds_spin,
};
