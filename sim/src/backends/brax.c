/* compliant-brax and pbd-brax: Brax v0.0.13 legacy_spring and pbd
 * (shared/reference/backend-brax.md). This file holds the registry entries,
 * the sub-step loop, the kinetic updates, the contact frames and the tape;
 * brax_spring.c and brax_pbd.c hold the two contact models. */
#include "brax.h"

#include <stdlib.h>
#include <string.h>

enum {
	PARAM_PRECISION,
	PARAM_SUBSTEPS,
	PARAM_MATERIAL_PRODUCT,
	PARAM_VELOCITY_DAMPING,
	PARAM_ANGULAR_DAMPING,
	PARAM_INERTIA,
	PARAM_MODE, /* legacy: baumgarte_erp; pbd: solver_scale_collide */
	PARAM_COUNT
};

#define COMMON_PARAMS                                                                                                  \
	{"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",                                                \
	 "arithmetic of the forward pass (float64: JAX x64, config constants stay float32)", cl_precision_choices},        \
		{"substeps", CL_PARAM_KIND_INT, 1, 1, 100, "",                                                                 \
		 "integration sub-steps per control interval, control held over them (the paper: 2)", NULL},                  \
		{"material_product", CL_PARAM_KIND_BOOL, 1, 0, 1, "",                                                          \
		 "contacts use the product of both bodies' coefficients, e² and μ², as Brax does; off: e and μ", NULL},        \
		{"velocity_damping", CL_PARAM_KIND_REAL, 0, -100, 100, "1/s",                                                  \
		 "v is scaled by exp(damping·h) every sub-step (negative damps; Brax default 0)", NULL},                       \
		{"angular_damping", CL_PARAM_KIND_REAL, 0, -100, 100, "1/s",                                                   \
		 "spin is scaled by exp(damping·h) every sub-step (Brax default 0)", NULL},                                    \
		{"inertia", CL_PARAM_KIND_REAL, 1, 1e-6, 1e6, "kg·m²",                                                         \
		 "moment of inertia of every ball; Brax replaces an unset inertia by 1, not 2/5·m·r²", NULL}

static const ClParamDesc spring_params[PARAM_COUNT] = {
	COMMON_PARAMS,
	{"baumgarte_erp", CL_PARAM_KIND_REAL, 0, 0, 1, "",
	 "penetration feedback: adds erp·d/h to the impulse's target velocity (Brax default 0: none)", NULL},
};

static const ClParamDesc pbd_params[PARAM_COUNT] = {
	COMMON_PARAMS,
	{"solver_scale_collide", CL_PARAM_KIND_REAL, 1, 1e-3, 10, "",
	 "scale of the position-level contact corrections (Brax default 1)", NULL},
};

/* A physical parameter a contact pass is differentiated along: a global,
 * or a ball's or a wall's (index). */
typedef enum BraxSeedKind {
	SEED_ELASTICITY,
	SEED_FRICTION,
	SEED_DURATION,
	SEED_RADIUS,
	SEED_MASS,
	SEED_POINT_X,
	SEED_POINT_Y,
	SEED_ANGLE,
	SEED_ERP,           /* legacy: baumgarte_erp */
	SEED_COLLIDE_SCALE, /* pbd: solver_scale_collide */
	SEED_INERTIA,
	SEED_ANGULAR_DAMPING,
} BraxSeedKind;

typedef struct BraxSeed {
	BraxSeedKind kind;
	int index;
	int param; /* cl_phys_index */
} BraxSeed;

/* The workspace: the model and the not yet written kinetic factor. */
typedef struct BraxWorkspace {
	BraxModel model;
	/* Contact-free sub-steps compose to p' = p + a01·v + b0·u/m, v' = a11·v + b1·u/m. */
	bool pending;
	double a01, a11, b0, b1;
	/* with parameter columns: ∂(p, v)/∂h and ∂(p, v)/∂velocity_damping of
	 * the pending factor, 4 per ball each */
	double *pending_dh, *pending_dc;
	BraxSeed *seeds; /* of a contact pass's parameter runs */
} BraxWorkspace;

static void destroy(void *workspace);

/* Every ball–wall and ball–ball pair (balls² / 2 of them). */
static size_t pair_capacity(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count, nw = (size_t)scene->wall_count;
	return nb * nw + nb * (nb ? nb - 1 : 0) / 2;
}

static size_t workspace_bytes(const ClScene *scene)
{
	return pair_capacity(scene) * sizeof(BraxPair);
}

static void *create(const ClScene *scene, bool pbd)
{
	BraxWorkspace *w = cl_calloc(1, sizeof *w);
	if (!w)
		return NULL;
	BraxModel *m = &w->model;
	int nb = scene->ball_count, nw = scene->wall_count;
	m->pbd = pbd;
	m->ball_count = nb;
	m->wall_count = nw;
	m->balls = cl_calloc((size_t)nb, sizeof *m->balls);
	m->walls = cl_calloc((size_t)nw, sizeof *m->walls);
	m->p = cl_calloc(2 * (size_t)nb, sizeof *m->p);
	m->v = cl_calloc(2 * (size_t)nb, sizeof *m->v);
	m->spin = cl_calloc((size_t)nb, sizeof *m->spin);
	m->spin_dc = cl_calloc((size_t)nb, sizeof *m->spin_dc);
	m->in_spin = cl_calloc((size_t)nb, sizeof *m->in_spin);
	m->rotation = cl_calloc((size_t)nb, sizeof *m->rotation);
	m->p_prev = cl_calloc(2 * (size_t)nb, sizeof *m->p_prev);
	m->rotation_prev = cl_calloc((size_t)nb, sizeof *m->rotation_prev);
	m->in_p = cl_calloc((size_t)nb, sizeof *m->in_p);
	m->in_v = cl_calloc((size_t)nb, sizeof *m->in_v);
	m->in_p_prev = cl_calloc((size_t)nb, sizeof *m->in_p_prev);
	m->out_p = cl_calloc((size_t)nb, sizeof *m->out_p);
	m->out_v = cl_calloc((size_t)nb, sizeof *m->out_v);
	m->out_spin = cl_calloc((size_t)nb, sizeof *m->out_spin);
	m->out_rotation = cl_calloc((size_t)nb, sizeof *m->out_rotation);
	m->in_balls = cl_calloc((size_t)nb, sizeof *m->in_balls);
	m->in_walls = cl_calloc((size_t)nw, sizeof *m->in_walls);
	w->pending_dh = cl_calloc(CL_BALL_STATE * (size_t)nb, sizeof *w->pending_dh);
	w->pending_dc = cl_calloc(CL_BALL_STATE * (size_t)nb, sizeof *w->pending_dc);
	/* the physical parameters and the three own ones (collect_seeds) */
	w->seeds = cl_calloc((size_t)(CL_PHYS_BALLS + 2 * nb + 3 * nw + 3), sizeof *w->seeds);
	m->sums = cl_calloc((size_t)nb * BRAX_COLLIDER_COUNT, sizeof *m->sums);
	m->touched = cl_calloc((size_t)nb, sizeof *m->touched);
	m->touched_balls = cl_calloc((size_t)nb, sizeof *m->touched_balls);
	m->pair_capacity = (int)pair_capacity(scene);
	m->pairs = cl_calloc((size_t)m->pair_capacity, sizeof *m->pairs);
	if (!m->balls || !m->walls || !m->p || !m->v || !m->spin || !m->spin_dc || !m->in_spin || !m->rotation || !m->p_prev || !m->rotation_prev ||
		!m->in_p || !m->in_v || !m->in_p_prev || !m->out_p || !m->out_v || !m->out_spin || !m->out_rotation ||
		!m->in_balls || !m->in_walls || !w->pending_dh || !w->pending_dc || !w->seeds || !m->sums || !m->touched || !m->touched_balls || !m->pairs) {
		destroy(w);
		return NULL;
	}
	return w;
}

static void *create_spring(const ClScene *scene, const double *params)
{
	(void)params;
	return create(scene, false);
}

static void *create_pbd(const ClScene *scene, const double *params)
{
	(void)params;
	return create(scene, true);
}

static void destroy(void *workspace)
{
	BraxWorkspace *w = workspace;
	BraxModel *m = &w->model;
	free(m->balls);
	free(m->walls);
	free(m->p);
	free(m->v);
	free(m->spin);
	free(m->spin_dc);
	free(m->in_spin);
	free(m->rotation);
	free(m->p_prev);
	free(m->rotation_prev);
	free(m->in_p);
	free(m->in_v);
	free(m->in_p_prev);
	free(m->out_p);
	free(m->out_v);
	free(m->out_spin);
	free(m->out_rotation);
	free(m->in_balls);
	free(m->in_walls);
	free(w->pending_dh);
	free(w->pending_dc);
	free(w->seeds);
	free(m->sums);
	free(m->touched);
	free(m->touched_balls);
	free(m->pairs);
	free(m->jacobian);
	free(w);
}

/* Constants as Brax holds them: the config's scalars are protobuf floats
 * (float32 values in either precision); initial state, controls and the
 * plane bodies' placement come from the script in the working precision. */
static void prepare(BraxModel *m, const ClStepContext *ctx)
{
	const ClScene *scene = ctx->scene;
	const double *params = ctx->params;
	bool f = params[PARAM_PRECISION] == CL_PRECISION_FLOAT32;
	m->f32 = f;
	m->substeps = (int)params[PARAM_SUBSTEPS];
	double dt = (float)ctx->dt;
	double h = dt / m->substeps; /* Python: config.dt / config.substeps */
	m->h = cl_round(f, h);
	m->h_per_duration = 1.0 / ((double)scene->steps * m->substeps);
	double e = (float)scene->elasticity, mu = (float)scene->friction;
	bool product = params[PARAM_MATERIAL_PRODUCT] != 0;
	m->elasticity = product ? cl_round(f, e * e) : e;
	m->friction = product ? cl_round(f, mu * mu) : mu;
	m->elasticity_slope = product ? 2.0 * e : 1.0;
	m->friction_slope = product ? 2.0 * mu : 1.0;
	m->gravity[0] = (float)scene->gravity.x;
	m->gravity[1] = (float)scene->gravity.y;
	double velocity_damping = (float)params[PARAM_VELOCITY_DAMPING];
	double angular_damping = (float)params[PARAM_ANGULAR_DAMPING];
	m->velocity_damping = velocity_damping;
	m->damping_h = h;
	m->velocity_factor = cl_round(f, exp(cl_round(f, velocity_damping * h)));
	m->angular_factor = cl_round(f, exp(cl_round(f, angular_damping * h)));
	if (m->pbd) {
		m->erp_rate = 0.0;
		m->collide_scale = (float)params[PARAM_MODE];
	} else {
		m->erp_rate = cl_round(f, (double)(float)params[PARAM_MODE] * m->substeps / dt);
		m->erp_slope = m->substeps / dt;
		m->collide_scale = 1.0;
	}
	m->inverse_inertia = cl_round(f, 1.0 / (float)params[PARAM_INERTIA]);
	for (int i = 0; i < m->ball_count; i++) {
		BraxBall *b = &m->balls[i];
		b->radius = (float)scene->balls[i].radius;
		b->mass = (float)scene->balls[i].mass;
		b->inverse_mass = cl_round(f, 1.0 / b->mass);
		m->spin[i] = 0.0;
		m->spin_dc[i] = 0.0;
		m->rotation[i] = (BraxQuat){1.0, 0.0};
	}
	/* A plane body rotated about y by θ has the normal (sin θ, cos θ). */
	for (int k = 0; k < m->wall_count; k++) {
		const ClWall *src = &scene->walls[k];
		BraxWall *w = &m->walls[k];
		double theta = atan2(src->normal.x, src->normal.y);
		w->point[0] = cl_round(f, src->point.x);
		w->point[1] = cl_round(f, src->point.y);
		w->rotation = (BraxQuat){cl_round(f, cos(0.5 * theta)), cl_round(f, sin(0.5 * theta))};
	}
}

/* ---------------------------------------------------------- contact frames */

static ClDual2 value_vec(const ClArith *A, const double *x)
{
	return cl_dual2_const(A, x[0], x[1]);
}

static BraxWallInput wall_input(const ClArith *A, const BraxWall *w)
{
	return (BraxWallInput){value_vec(A, w->point), value_vec(A, w->normal)};
}

int brax_find_pairs(BraxModel *m)
{
	const ClArith value = {m->f32, 0};
	m->pair_count = 0;
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < m->wall_count; k++) {
			ClDual2 c, n;
			ClDual d;
			BraxWallInput wall = wall_input(&value, &m->walls[k]);
			brax_plane_contact(&value, value_vec(&value, m->p + 2 * i), cl_dual_const(&value, m->balls[i].radius), &wall,
							   &c, &n, &d);
			if (d.v > 0.0)
				m->pairs[m->pair_count++] = (BraxPair){.a = i, .b = -1 - k};
		}
	}
	for (int i = 0; i < m->ball_count; i++) {
		for (int j = i + 1; j < m->ball_count; j++) {
			ClDual2 c, n;
			ClDual d;
			brax_sphere_contact(&value, value_vec(&value, m->p + 2 * i), value_vec(&value, m->p + 2 * j),
								cl_dual_const(&value, m->balls[i].radius), cl_dual_const(&value, m->balls[j].radius),
								&c, &n, &d);
			if (d.v > 0.0)
				m->pairs[m->pair_count++] = (BraxPair){.a = i, .b = j};
		}
	}
	return m->pair_count;
}

/* The pass inputs with zero tangents in count slots: the state and the constants. */
static void seed_values(BraxModel *m, int count)
{
	m->arith = (ClArith){m->f32, count};
	const ClArith *A = &m->arith;
	for (int i = 0; i < m->ball_count; i++) {
		const BraxBall *b = &m->balls[i];
		m->in_p[i] = value_vec(A, m->p + 2 * i);
		m->in_v[i] = value_vec(A, m->v + 2 * i);
		m->in_p_prev[i] = value_vec(A, m->p_prev + 2 * i);
		m->in_balls[i] = (BraxBallInput){cl_dual_const(A, b->radius), cl_dual_const(A, b->mass),
										 cl_dual_const(A, b->inverse_mass)};
		m->in_spin[i] = cl_dual_const(A, m->spin[i]);
	}
	m->in_inverse_inertia = cl_dual_const(A, m->inverse_inertia);
	for (int k = 0; k < m->wall_count; k++)
		m->in_walls[k] = wall_input(A, &m->walls[k]);
	m->in_elasticity = cl_dual_const(A, m->elasticity);
	m->in_friction = cl_dual_const(A, m->friction);
	m->in_h = cl_dual_const(A, m->h);
	m->in_erp_rate = cl_dual_const(A, m->erp_rate);
	m->in_collide_scale = cl_dual_const(A, m->collide_scale);
}

void brax_seed(BraxModel *m, int first, int count)
{
	seed_values(m, count);
	for (int k = 0; k < count; k++) {
		int column = first + k, i = m->touched_balls[column / CL_BALL_STATE];
		ClDual *seeded[CL_BALL_STATE] = {&m->in_p[i].x, &m->in_p[i].y, &m->in_v[i].x, &m->in_v[i].y};
		seeded[column % CL_BALL_STATE]->d[k] = 1.0;
	}
	/* the contact pass sees the state after the kinetic update, so the start
	 * of the half-step is p − h·v there */
	for (int i = 0; i < m->ball_count; i++) {
		ClDual2 *prev = &m->in_p_prev[i];
		for (int k = 0; k < count; k++) {
			prev->x.d[k] = m->in_p[i].x.d[k] - m->h * m->in_v[i].x.d[k];
			prev->y.d[k] = m->in_p[i].y.d[k] - m->h * m->in_v[i].y.d[k];
		}
	}
}

void brax_sums_clear(BraxModel *m)
{
	memset(m->sums, 0, sizeof *m->sums * (size_t)m->ball_count * BRAX_COLLIDER_COUNT);
}

void brax_sums_add(BraxModel *m, int ball, int collider, ClDual2 linear, const ClDual *angular, int angular_count)
{
	const ClArith *A = &m->arith;
	BraxSum *s = &m->sums[BRAX_COLLIDER_COUNT * ball + collider];
	if (linear.x.v != 0.0 || linear.y.v != 0.0)
		s->count++;
	s->linear = cl_dual2_add(A, s->linear, linear);
	for (int k = 0; k < angular_count; k++)
		s->angular[k] = cl_dual_add(A, s->angular[k], angular[k]);
}

ClDual2 brax_sums_total(const BraxModel *m, int ball, double epsilon, ClDual *angular, int angular_count)
{
	const ClArith *A = &m->arith;
	ClDual2 total = cl_dual2_const(A, 0.0, 0.0);
	for (int k = 0; k < angular_count; k++)
		angular[k] = cl_dual_const(A, 0.0);
	for (int c = 0; c < BRAX_COLLIDER_COUNT; c++) {
		const BraxSum *s = &m->sums[BRAX_COLLIDER_COUNT * ball + c];
		ClDual share = cl_dual_const(A, cl_arith_round(A, cl_arith_round(A, epsilon) + s->count));
		total = cl_dual2_add(A, total, cl_dual2_div(A, s->linear, share));
		for (int k = 0; k < angular_count; k++)
			angular[k] = cl_dual_add(A, angular[k], cl_dual_div(A, s->angular[k], share));
	}
	return total;
}

/* ------------------------------------------------------------- kinematics */

/* integrators.py kinetic: p += v·h; q += ((0, ω)·½·h) ⊗ q, renormalised.
 * dh, dc (NULL: none): ∂(p, v)/∂h and ∂(p, v)/∂velocity_damping of each
 * ball, 4 per ball, carried along. */
static void kinetic(BraxModel *m, double *dh, double *dc)
{
	bool f = m->f32;
	double h = m->h;
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < 2; k++) {
			if (dh)
				dh[CL_BALL_STATE * i + k] += h * dh[CL_BALL_STATE * i + 2 + k] + m->v[2 * i + k];
			if (dc)
				dc[CL_BALL_STATE * i + k] += h * dc[CL_BALL_STATE * i + 2 + k];
			m->p[2 * i + k] = cl_round(f, m->p[2 * i + k] + cl_round(f, m->v[2 * i + k] * h));
		}
		BraxQuat q = m->rotation[i];
		if (m->spin[i] == 0.0 && q.w == 1.0 && q.y == 0.0)
			continue; /* the update gives back the identity exactly */
		double a = cl_round(f, cl_round(f, m->spin[i] * 0.5) * h);
		q = (BraxQuat){cl_round(f, q.w - cl_round(f, a * q.y)), cl_round(f, q.y + cl_round(f, a * q.w))};
		m->rotation[i] = brax_normalize(f, q);
	}
	for (int k = 0; k < m->wall_count; k++)
		m->walls[k].rotation = brax_normalize(f, m->walls[k].rotation);
}

/* integrators.py update(acc_p): v ← exp(c·h)·v + (u/m + g)·h, likewise ω;
 * dh, dc as for kinetic (∂exp(c·h)/∂c = h·exp(c·h)). */
static void accelerate(BraxModel *m, const double *u, double *dh, double *dc)
{
	bool f = m->f32;
	double h = m->h;
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < 2; k++) {
			double a = cl_round(f, cl_round(f, u[2 * i + k]) / m->balls[i].mass);
			double rate = cl_round(f, a + m->gravity[k]);
			if (dh) {
				double *dv = &dh[CL_BALL_STATE * i + 2 + k];
				*dv = m->velocity_factor * (*dv + m->velocity_damping * m->v[2 * i + k]) + rate;
			}
			if (dc) {
				double *dv = &dc[CL_BALL_STATE * i + 2 + k];
				*dv = m->velocity_factor * (*dv + m->damping_h * m->v[2 * i + k]);
			}
			m->v[2 * i + k] = cl_round(f, cl_round(f, m->velocity_factor * m->v[2 * i + k]) + cl_round(f, rate * h));
		}
		/* the spin is outside the tape: its tangent along angular_damping
		 * is carried here, to seed the next contact pass */
		if (dc)
			m->spin_dc[i] = m->angular_factor * (m->spin_dc[i] + m->damping_h * m->spin[i]);
		m->spin[i] = cl_round(f, m->angular_factor * m->spin[i]);
	}
}

/* The identity with zero tangent, on which the projection leaves q and ω = 0. */
static bool is_identity(const ClArith *A, BraxDualQuat q)
{
	if (q.w.v != 1.0 || q.y.v != 0.0)
		return false;
	for (int k = 0; k < A->slots; k++)
		if (q.w.d[k] != 0.0 || q.y.d[k] != 0.0)
			return false;
	return true;
}

void brax_pbd_project(const BraxModel *m, const ClArith *A, ClDual2 p, ClDual2 p_prev, BraxDualQuat rotation,
					  BraxQuat rotation_prev, ClDual2 *v, BraxDualQuat *rotation_out, ClDual *spin)
{
	*v = cl_dual2_div(A, cl_dual2_sub(A, p, p_prev), m->in_h);
	if (is_identity(A, rotation) && rotation_prev.w == 1.0 && rotation_prev.y == 0.0) {
		*rotation_out = rotation;
		*spin = cl_dual_const(A, 0.0);
		return;
	}
	ClDual norm =
		cl_dual_sqrt(A, cl_dual_add(A, cl_dual_mul(A, rotation.w, rotation.w), cl_dual_mul(A, rotation.y, rotation.y)));
	BraxDualQuat q = {cl_dual_div(A, rotation.w, norm), cl_dual_div(A, rotation.y, norm)};
	/* δ = q ⊗ q_prev⁻¹ */
	ClDual prev_w = cl_dual_const(A, rotation_prev.w), prev_y = cl_dual_const(A, rotation_prev.y);
	ClDual delta_w = cl_dual_add(A, cl_dual_mul(A, q.w, prev_w), cl_dual_mul(A, q.y, prev_y));
	ClDual delta_y = cl_dual_add(A, cl_dual_neg(A, cl_dual_mul(A, q.w, prev_y)), cl_dual_mul(A, q.y, prev_w));
	*rotation_out = q;
	*spin = cl_dual_scale(A, delta_w.v >= 0.0 ? 1.0 : -1.0,
						  cl_dual_div(A, cl_dual_mul(A, cl_dual_const(A, 2.0), delta_y), m->in_h));
}

static void walls_update_normals(BraxModel *m)
{
	const ClArith value = {m->f32, 0};
	ClDual2 up = cl_dual2_const(&value, 0.0, 1.0);
	for (int k = 0; k < m->wall_count; k++) {
		ClDual2 n = brax_rotate(&value, up, m->walls[k].rotation);
		m->walls[k].normal[0] = n.x.v;
		m->walls[k].normal[1] = n.y.v;
	}
}

/* ------------------------------------------------------------------- tape */

/* Before a sub-step's updates: starts the pending factor if there is none;
 * returns its ∂/∂h to carry along (NULL without parameter columns), *dc its
 * ∂/∂velocity_damping. */
static double *pending_begin(BraxWorkspace *w, const ClTape *tape, double **dc)
{
	*dc = NULL;
	if (!tape)
		return NULL;
	if (!w->pending) {
		w->pending = true;
		w->a01 = 0.0;
		w->a11 = 1.0;
		w->b0 = 0.0;
		w->b1 = 0.0;
		memset(w->pending_dh, 0, sizeof *w->pending_dh * CL_BALL_STATE * (size_t)w->model.ball_count);
		memset(w->pending_dc, 0, sizeof *w->pending_dc * CL_BALL_STATE * (size_t)w->model.ball_count);
	}
	if (!tape->record_params)
		return NULL;
	*dc = w->pending_dc;
	return w->pending_dh;
}

/* Composes a linear sub-step p' = p + α·v + β·u/m, v' = γ·v + δ·u/m onto the pending factor. */
static void pending_compose(BraxWorkspace *w, double alpha, double beta, double gamma, double delta)
{
	w->a01 += alpha * w->a11;
	w->b0 += alpha * w->b1 + beta;
	w->a11 *= gamma;
	w->b1 = gamma * w->b1 + delta;
}

static void pending_flush(BraxWorkspace *w, ClTape *tape, const ClScene *scene)
{
	if (!tape || !w->pending)
		return;
	w->pending = false;
	const BraxModel *m = &w->model;
	cl_tape_factor(tape);
	for (int i = 0; i < m->ball_count; i++) {
		double *a = cl_tape_a(tape, i, i);
		a[CL_A(0, 0)] = a[CL_A(1, 1)] = 1.0;
		a[CL_A(0, 2)] = a[CL_A(1, 3)] = w->a01;
		a[CL_A(2, 2)] = a[CL_A(3, 3)] = w->a11;
		double inverse_mass = 1.0 / m->balls[i].mass;
		double *b = cl_tape_b(tape, i, i);
		b[0] = b[3] = w->b0 * inverse_mass;
		b[4] = b[7] = w->b1 * inverse_mass;
		if (tape->record_params) {
			double *c = cl_tape_c(tape, i, CL_PHYS_DURATION);
			for (int k = 0; k < CL_BALL_STATE; k++)
				c[k] = w->pending_dh[CL_BALL_STATE * i + k] * m->h_per_duration;
			const double *dc = w->pending_dc + CL_BALL_STATE * i;
			if (dc[0] != 0.0 || dc[1] != 0.0 || dc[2] != 0.0 || dc[3] != 0.0)
				memcpy(cl_tape_c(tape, i, cl_phys_backend(scene, PARAM_VELOCITY_DAMPING)), dc,
					   sizeof(double) * CL_BALL_STATE);
		}
	}
}

/* The balls of the pairs that did something in the value run. */
static int collect_touched(BraxModel *m)
{
	memset(m->touched, 0, sizeof *m->touched * (size_t)m->ball_count);
	for (int k = 0; k < m->pair_count; k++) {
		const BraxPair *pair = &m->pairs[k];
		if (!pair->applied)
			continue;
		m->touched[pair->a] = true;
		if (pair->b >= 0)
			m->touched[pair->b] = true;
	}
	int count = 0;
	for (int i = 0; i < m->ball_count; i++)
		if (m->touched[i])
			m->touched_balls[count++] = i;
	return count;
}

/* The pass inputs with tangent slot k along seeds[k], the state held. */
static void seed_params(BraxModel *m, const BraxSeed *seeds, int count)
{
	seed_values(m, count);
	const double rad = 3.14159265358979323846 / 180.0;
	for (int k = 0; k < count; k++) {
		int j = seeds[k].index;
		switch (seeds[k].kind) {
		case SEED_ELASTICITY:
			m->in_elasticity.d[k] = m->elasticity_slope;
			break;
		case SEED_FRICTION:
			m->in_friction.d[k] = m->friction_slope;
			break;
		case SEED_DURATION:
			/* h = T/(N·substeps); erp_rate = erp/h; the half-step's start p − h·v */
			m->in_h.d[k] = m->h_per_duration;
			m->in_erp_rate.d[k] = -m->erp_rate / m->h * m->h_per_duration;
			for (int i = 0; i < m->ball_count; i++) {
				m->in_p_prev[i].x.d[k] = -m->v[2 * i] * m->h_per_duration;
				m->in_p_prev[i].y.d[k] = -m->v[2 * i + 1] * m->h_per_duration;
			}
			break;
		case SEED_RADIUS:
			m->in_balls[j].radius.d[k] = 1.0;
			break;
		case SEED_MASS:
			m->in_balls[j].mass.d[k] = 1.0;
			m->in_balls[j].inverse_mass.d[k] = -1.0 / (m->balls[j].mass * m->balls[j].mass);
			break;
		case SEED_POINT_X:
			m->in_walls[j].point.x.d[k] = 1.0;
			break;
		case SEED_POINT_Y:
			m->in_walls[j].point.y.d[k] = 1.0;
			break;
		case SEED_ANGLE: /* the normal (cos α, sin α) turns with α in degrees */
			m->in_walls[j].normal.x.d[k] = -m->walls[j].normal[1] * rad;
			m->in_walls[j].normal.y.d[k] = m->walls[j].normal[0] * rad;
			break;
		case SEED_ERP:
			m->in_erp_rate.d[k] = m->erp_slope;
			break;
		case SEED_COLLIDE_SCALE:
			m->in_collide_scale.d[k] = 1.0;
			break;
		case SEED_INERTIA: /* d(1/I)/dI */
			m->in_inverse_inertia.d[k] = -m->inverse_inertia * m->inverse_inertia;
			break;
		case SEED_ANGULAR_DAMPING:
			for (int i = 0; i < m->ball_count; i++)
				m->in_spin[i].d[k] = m->spin_dc[i];
			break;
		}
	}
}

/* The parameters a contact pass depends on: the globals, the touched
 * balls' radius and mass, the point and angle of the walls it touches. */
static int collect_seeds(BraxWorkspace *w, const ClScene *scene, int count)
{
	const BraxModel *m = &w->model;
	BraxSeed *s = w->seeds;
	int n = 0;
	s[n++] = (BraxSeed){SEED_ELASTICITY, -1, CL_PHYS_ELASTICITY};
	s[n++] = (BraxSeed){SEED_FRICTION, -1, CL_PHYS_FRICTION};
	s[n++] = (BraxSeed){SEED_DURATION, -1, CL_PHYS_DURATION};
	s[n++] = (BraxSeed){m->pbd ? SEED_COLLIDE_SCALE : SEED_ERP, -1, cl_phys_backend(scene, PARAM_MODE)};
	s[n++] = (BraxSeed){SEED_INERTIA, -1, cl_phys_backend(scene, PARAM_INERTIA)};
	s[n++] = (BraxSeed){SEED_ANGULAR_DAMPING, -1, cl_phys_backend(scene, PARAM_ANGULAR_DAMPING)};
	for (int r = 0; r < count; r++) {
		int i = m->touched_balls[r];
		s[n++] = (BraxSeed){SEED_RADIUS, i, cl_phys_radius(i)};
		s[n++] = (BraxSeed){SEED_MASS, i, cl_phys_mass(i)};
	}
	for (int k = 0; k < m->wall_count; k++) {
		bool touched = false;
		for (int p = 0; p < m->pair_count && !touched; p++)
			touched = m->pairs[p].applied && m->pairs[p].b == -1 - k;
		if (!touched)
			continue;
		s[n++] = (BraxSeed){SEED_POINT_X, k, cl_phys_wall(scene, k, 0)};
		s[n++] = (BraxSeed){SEED_POINT_Y, k, cl_phys_wall(scene, k, 1)};
		s[n++] = (BraxSeed){SEED_ANGLE, k, cl_phys_wall(scene, k, 2)};
	}
	return n;
}

/* The contact pass's parameter columns over the touched balls, one
 * re-evaluation per CL_DUAL_SLOTS parameters, into the current factor. */
static void record_contact_params(BraxWorkspace *w, ClTape *tape, const ClScene *scene, int count,
								  void (*collide)(BraxModel *, bool))
{
	BraxModel *m = &w->model;
	int seeds = collect_seeds(w, scene, count);
	for (int first = 0; first < seeds; first += CL_DUAL_SLOTS) {
		int live = seeds - first < CL_DUAL_SLOTS ? seeds - first : CL_DUAL_SLOTS;
		seed_params(m, w->seeds + first, live);
		collide(m, false);
		for (int r = 0; r < count; r++) {
			int i = m->touched_balls[r];
			for (int k = 0; k < live; k++) {
				double column[CL_BALL_STATE] = {m->out_p[i].x.d[k], m->out_p[i].y.d[k], m->out_v[i].x.d[k],
												m->out_v[i].y.d[k]};
				if (column[0] == 0.0 && column[1] == 0.0 && column[2] == 0.0 && column[3] == 0.0)
					continue;
				memcpy(cl_tape_c(tape, i, w->seeds[first + k].param), column, sizeof column);
			}
		}
	}
}

/* Records the contact pass's Jacobian over the touched balls, one
 * re-evaluation per CL_DUAL_SLOTS input components, and its parameter
 * columns when the tape records them. The re-evaluations reproduce the
 * value run's outputs bit for bit, so the outputs stay valid afterwards.
 * False when out of memory. */
static bool record_contact_jacobian(BraxWorkspace *w, ClTape *tape, const ClScene *scene, int count,
									void (*collide)(BraxModel *, bool))
{
	BraxModel *m = &w->model;
	int size = CL_BALL_STATE * count;
	if (size * size > m->jacobian_capacity) {
		free(m->jacobian);
		m->jacobian_capacity = size * size;
		if (!(m->jacobian = cl_calloc((size_t)m->jacobian_capacity, sizeof *m->jacobian))) {
			m->jacobian_capacity = 0;
			return false;
		}
	}
	for (int first = 0; first < size; first += CL_DUAL_SLOTS) {
		int live = size - first < CL_DUAL_SLOTS ? size - first : CL_DUAL_SLOTS;
		brax_seed(m, first, live);
		collide(m, false);
		for (int r = 0; r < count; r++) {
			int i = m->touched_balls[r];
			double *row = m->jacobian + (size_t)(CL_BALL_STATE * r) * (size_t)size + first;
			for (int k = 0; k < live; k++) {
				row[k] = m->out_p[i].x.d[k];
				row[size + k] = m->out_p[i].y.d[k];
				row[2 * size + k] = m->out_v[i].x.d[k];
				row[3 * size + k] = m->out_v[i].y.d[k];
			}
		}
	}
	pending_flush(w, tape, scene);
	cl_tape_dense(tape, m->touched_balls, count, m->jacobian, NULL);
	if (tape->record_params)
		record_contact_params(w, tape, scene, count, collide);
	return true;
}

/* One contact pass: value run, events, Jacobian, then the new state. */
static void contact_pass(BraxWorkspace *w, ClStepContext *ctx, double time, void (*collide)(BraxModel *, bool))
{
	BraxModel *m = &w->model;
	brax_seed(m, 0, 0);
	collide(m, true);
	int count = collect_touched(m);
	for (int k = 0; k < m->pair_count; k++)
		if (m->pairs[k].applied)
			cl_step_contact(ctx, time, m->pairs[k].a, m->pairs[k].b);
	if (ctx->tape && count > 0 && !record_contact_jacobian(w, ctx->tape, ctx->scene, count, collide))
		cl_step_out_of_memory(ctx, "the contact Jacobian");
	for (int i = 0; i < m->ball_count; i++) {
		m->p[2 * i] = m->out_p[i].x.v;
		m->p[2 * i + 1] = m->out_p[i].y.v;
		m->v[2 * i] = m->out_v[i].x.v;
		m->v[2 * i + 1] = m->out_v[i].y.v;
		m->spin[i] = m->out_spin[i].v;
		if (m->touched[i]) /* its spin leaves the pass without its derivative */
			m->spin_dc[i] = 0.0;
		m->rotation[i] = m->out_rotation[i];
	}
}

/* system.py _spring_step, one sub-step: kinetic, acceleration, impulses. */
static void spring_substep(BraxWorkspace *w, ClStepContext *ctx, const double *u, double time)
{
	BraxModel *m = &w->model;
	double *dc, *dh = pending_begin(w, ctx->tape, &dc);
	kinetic(m, dh, dc);
	walls_update_normals(m);
	accelerate(m, u, dh, dc);
	if (ctx->tape) {
		pending_compose(w, m->h, 0.0, 1.0, 0.0);
		pending_compose(w, 0.0, 0.0, m->velocity_factor, m->h);
	}
	if (brax_find_pairs(m) > 0)
		contact_pass(w, ctx, time, brax_spring_collide);
}

/* The projection of a contact-free half-step: brax_pbd_project on plain
 * values, which the dual version would spend most of the run copying. */
static void project_all(BraxModel *m)
{
	bool f = m->f32;
	double h = m->h;
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < 2; k++)
			m->v[2 * i + k] = cl_round(f, cl_round(f, m->p[2 * i + k] - m->p_prev[2 * i + k]) / h);
		BraxQuat q = m->rotation[i], prev = m->rotation_prev[i];
		if (q.w == 1.0 && q.y == 0.0 && prev.w == 1.0 && prev.y == 0.0) {
			m->spin[i] = 0.0;
			continue;
		}
		q = brax_normalize(f, q);
		double delta_w = cl_round(f, cl_round(f, q.w * prev.w) + cl_round(f, q.y * prev.y));
		double delta_y = cl_round(f, -cl_round(f, q.w * prev.y) + cl_round(f, q.y * prev.w));
		m->rotation[i] = q;
		m->spin[i] = (delta_w >= 0.0 ? 1.0 : -1.0) * cl_round(f, cl_round(f, 2.0 * delta_y) / h);
	}
}

/* system.py _pbd_step, one half-step of its loop body: acceleration,
 * kinetic, then either the velocity projection (first half) or the
 * collision passes (second half). The projection's derivative is the
 * identity, so a contact-free half-step is linear. */
static void pbd_halfstep(BraxWorkspace *w, ClStepContext *ctx, const double *u, double time, bool collide)
{
	BraxModel *m = &w->model;
	memcpy(m->p_prev, m->p, sizeof *m->p * 2 * (size_t)m->ball_count);
	memcpy(m->rotation_prev, m->rotation, sizeof *m->rotation * (size_t)m->ball_count);
	double *dc, *dh = pending_begin(w, ctx->tape, &dc);
	accelerate(m, u, dh, dc);
	kinetic(m, dh, dc);
	walls_update_normals(m);
	if (ctx->tape) {
		pending_compose(w, 0.0, 0.0, m->velocity_factor, m->h);
		pending_compose(w, m->h, 0.0, 1.0, 0.0);
	}
	if (collide && brax_find_pairs(m) > 0)
		contact_pass(w, ctx, time, brax_pbd_collide);
	else
		project_all(m);
	/* the frozen planes' quaternions are renormalised by the projection too */
	for (int k = 0; k < m->wall_count; k++)
		m->walls[k].rotation = brax_normalize(m->f32, m->walls[k].rotation);
}

static void step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	BraxWorkspace *w = ctx->workspace;
	BraxModel *m = &w->model;
	if (ctx->step == 0)
		prepare(m, ctx);
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < 2; k++) {
			m->p[2 * i + k] = cl_round(m->f32, s[CL_BALL_STATE * i + k]);
			m->v[2 * i + k] = cl_round(m->f32, s[CL_BALL_STATE * i + 2 + k]);
		}
	}
	w->pending = false;
	for (int j = 0; j < m->substeps; j++) {
		double time = (ctx->step + (j + 1.0) / m->substeps) * ctx->dt;
		if (m->pbd) {
			/* Brax pairs half-steps: even ones project, odd ones collide */
			long long index = (long long)ctx->step * m->substeps + j;
			pbd_halfstep(w, ctx, u, time, index % 2 == 1);
		} else {
			spring_substep(w, ctx, u, time);
		}
	}
	pending_flush(w, ctx->tape, ctx->scene);
	for (int i = 0; i < m->ball_count; i++) {
		for (int k = 0; k < 2; k++) {
			s_next[CL_BALL_STATE * i + k] = m->p[2 * i + k];
			s_next[CL_BALL_STATE * i + 2 + k] = m->v[2 * i + k];
		}
	}
}

#define PARAM_ADJOINTS                                                                                                 \
	(1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION |         \
	 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS | 1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE)
/* the config's real numbers, which JAX differentiates with the system:
 * velocity_damping through the kinetic factors, angular_damping through the
 * spin a contact pass reads, inertia inside the passes, and the mode's
 * baumgarte_erp or solver_scale_collide */
#define OWN_PARAM_ADJOINTS                                                                                             \
	(1u << PARAM_VELOCITY_DAMPING | 1u << PARAM_ANGULAR_DAMPING | 1u << PARAM_INERTIA | 1u << PARAM_MODE)

const ClBackend cl_backend_compliant_brax = {
	.info = {
		.id = "compliant-brax",
		.label = "Compliant (Brax)",
		.family = "compliant",
		.mirrors = "Brax 0.0.13 legacy_spring",
		.toi = false,
		.gradient_is_derivative = true,
		.intro = "Treats contact as a spring-like push in single precision (like Brax); rounding and the push itself bend its gradients.",
		.summary =
			"Brax 0.0.13 legacy_spring in float32. Each sub-step (substeps per control interval, the control held): "
			"p += v·h, then v += (u/m + g)·h, then velocity impulses from that state: a penetrating, approaching pair "
			"gets J = −(1+e)·v_n/(1/m_a + 1/m_b) and a friction drag min(|v_t|, μJ) when |v_t| > 0.01. No position "
			"correction (baumgarte_erp 0), so a ball may stay inside a wall after its bounce. Contact coefficients are "
			"products of the two bodies' values (e², μ²: Brax copies the scene's value into every body). Contacts of "
			"one body with several walls, or with several balls, are averaged (÷ count + 1e-8), not summed; the "
			"sphere–sphere normal is Δ/(|Δ| + 1e-6). Friction spins the balls (unit inverse inertia); spin is simulated "
			"but the state holds only p and v, so its derivative is not carried from one contact to the next (no "
			"effect without friction; below 1e-7 on Task 2 with friction). Gradient: reverse-mode AD of this float32 program with "
			"constant contact masks and no time-of-impact term, so the gradient ignores that a contact moves in time: "
			"Task 3 learns a zero control (the collision disappears, then the loss rises), and float32 rounding "
			"decides the Task 1 contact sub-step: ∂h/∂vy0 = −0.0958 in float32, −0.1000 in float64. "
			"Derivatives with respect to the scene's numbers are the same autodiff: elasticity and friction through "
			"the product (d/de = 2e·∂/∂(e²), what JAX gives for a config value copied into both bodies), the "
			"duration through h (and erp/h), gravity, radii, masses, wall points and angles; with baumgarte_erp 0 the "
			"penetration enters only the masks, so a wall's point and, but for spin, a radius have derivative 0. "
			"Spin's parameter derivatives are not carried between contacts either. "
			"Its own real parameters have columns too, as JAX differentiates the config: velocity_damping "
			"through every sub-step's exp(c·h) (∂/∂c = h·exp(c·h)), baumgarte_erp through the impulse's "
			"erp·substeps/dt·d (a column even at erp 0), angular_damping through the spin a contact reads (its "
			"factor since the ball's last contact) and inertia inside a contact pass; these two move p and v only "
			"through spin, so without friction both derivatives and central differences are 0; inertia's effect, "
			"here only through the spin a contact leaves (the impulse's weight has no angular part: a sphere's "
			"contact arm lies along the normal), is not carried (a random scene with friction: 0 against a "
			"central difference of 0.020). "
			"Generalisations: any wall normal (a plane body rotated about the out-of-plane axis, its quaternion "
			"renormalised each sub-step as Brax does, so a float32 normal may be off by one ulp), any number of walls "
			"and balls (one plane collider and one sphere collider, pairs in body order), masses (the drag on a "
			"pair's second ball uses the first ball's mass, as in Brax), gravity, controls on every ball. "
			"Degenerate contacts pass silently (status ok; Brax reports nothing): a tangential (grazing) pass "
			"that touches at a sub-step is a contact, so a ball that only touches a wall bounces off it; "
			"simultaneous contacts are averaged, so in a corner each wall's impulse is halved, the ball keeps "
			"approaching, is hit again every sub-step and stops dead about 1 cm inside both walls, and three "
			"balls in a row all stop; resting contact (Zeno) has no limit point: an impulse at every sub-step "
			"keeps the ball chattering within about 1 mm of the surface; a ball starting in contact (at t = 0) "
			"is an ordinary contact.",
		.params = spring_params,
		.param_count = PARAM_COUNT,
	},
	.create = create_spring,
	.destroy = destroy,
	.step = step,
	.tape_blocks_per_ball = true,
	.param_adjoints = PARAM_ADJOINTS,
	.own_param_adjoints = OWN_PARAM_ADJOINTS,
	.accel_form = true,
	.workspace_bytes = workspace_bytes,
};

const ClBackend cl_backend_pbd_brax = {
	.info = {
		.id = "pbd-brax",
		.label = "PBD (Brax)",
		.family = "pbd",
		.mirrors = "Brax 0.0.13 pbd",
		.toi = false,
		.gradient_is_derivative = true,
		.intro = "Moves overlapping balls apart and infers their velocity from the move (position-based, like Brax), in single precision.",
		.summary =
			"Brax 0.0.13 pbd in float32. Sub-steps alternate a half-step without collisions and one with them "
			"(Brax's loop body; with substeps 2 it is exactly Brax, an odd count carries the pairing into the next "
			"control interval). Each half-step: v += (u/m + g)·h, p += v·h, then the velocity is recomputed from "
			"the position change, (p − p_prev)/h, a float32 cancellation worth up to 3e-5 per half-step that biases "
			"long runs. A collision half-step first pushes a penetrating ball out (Δp = d·n/(1 + 1e-6), plus static "
			"friction), projects, then sets the normal velocity to −e times the approach velocity of before the "
			"projection and applies dynamic friction min(μ|λ|/2h, |v_t|). Contact coefficients are products of the "
			"two bodies' values (e², μ²); contacts of one body are averaged (÷ count + 1e-6); the 1e-6 regularisers "
			"are kept. Spin (unit inverse inertia) is simulated and differentiated within a collision half-step, not "
			"from one to the next: the state holds only p and v (no effect without friction; below 1e-7 on Task 2 "
			"with friction). Gradient: "
			"reverse-mode AD of this float32 program with constant contact masks and no time-of-impact term. The "
			"Task 1 ∂h/∂y0 = −0.0020 consists only of the 1e-6 regularisers and rounding (float64: −0.0005), and in "
			"Task 3 float32 drift moves the contact and changes the gradients by 0.5% against float64. "
			"Derivatives with respect to the scene's numbers are the same autodiff: elasticity and friction through "
			"the product (d/de = 2e·∂/∂(e²), d/dμ likewise), the duration through h (the projection, the friction "
			"cap μ|λ|/2h and the half-step's start), gravity, radii, masses, wall points and angles; spin's "
			"parameter derivatives are not carried between contacts. "
			"Its own real parameters have columns as compliant-brax's (velocity_damping, angular_damping, "
			"inertia), and solver_scale_collide through the scaled position corrections; inertia acts inside a "
			"pass also through the static friction's weight 1/m + (ρ × t)²/I, which it gives (0.1% off a central "
			"difference with friction, the spin a contact leaves missing). "
			"Generalisations as compliant-brax: any wall normal (rotated plane bodies, renormalised like Brax's), "
			"any number of walls and balls, masses (the second ball's velocity change uses the first ball's mass, as "
			"in Brax), gravity, controls on every ball. Degenerate contacts pass silently (status ok; Brax reports "
			"nothing): a tangential (grazing) pass is a contact only if a collision half-step finds the ball "
			"inside, so the sub-step grid decides; simultaneous contacts are averaged, so a corner or three balls "
			"in a row lose most of their speed (e = 0.8 into a corner leaves at 0.09 of the approach speed, three "
			"balls at e = 1 at half speed); in resting contact (Zeno) the projection holds the ball on the "
			"surface and its gradient with respect to the initial height vanishes (about 1e-37 after 1 s); a "
			"ball starting in contact (at t = 0) is an ordinary contact.",
		.params = pbd_params,
		.param_count = PARAM_COUNT,
	},
	.create = create_pbd,
	.destroy = destroy,
	.step = step,
	.tape_blocks_per_ball = true,
	.param_adjoints = PARAM_ADJOINTS,
	.own_param_adjoints = OWN_PARAM_ADJOINTS,
	.accel_form = true,
	.workspace_bytes = workspace_bytes,
};
