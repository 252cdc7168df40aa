/* Brax v0.0.13 pbd collisions: a position pass with static friction, the
 * velocity projection, and a velocity pass with dynamic friction and
 * restitution (colliders.py _position_contact, _velocity_contact). */
#include "brax.h"

/* A position correction: Δp and Δq of one body. */
typedef struct Correction {
	BraxVec position;
	BraxDualQuat rotation;
} Correction;

static BraxDual constant(bool f, double x)
{
	return bd_const(brax_round(f, x));
}

/* 1/m + (ρ × t)·(I⁻¹ (ρ × t)) */
static BraxDual weight(bool f, const BraxBall *body, BraxVec rho, BraxVec t)
{
	BraxDual cr = bv_cross(f, rho, t);
	return bd_add(f, bd_const(body->inverse_mass), bd_mul(f, cr, bd_mul(f, bd_const(body->inverse_inertia), cr)));
}

/* scale·(impulse/m, factor·vec_quat_mul(I⁻¹ (ρ × torque_impulse), q)) */
static Correction correction(const BraxModel *m, const BraxBall *body, BraxVec impulse, BraxVec torque_impulse,
							 BraxVec rho, BraxQuat q, double factor)
{
	bool f = m->f32;
	BraxDual scale = bd_const(m->collide_scale), half = bd_const(factor);
	BraxVec dp = bv_div(f, impulse, bd_const(body->mass));
	BraxDual k = bd_mul(f, bd_const(body->inverse_inertia), bv_cross(f, rho, torque_impulse));
	/* vec_quat_mul((0, k, 0), q) = (−k q_y, k q_w) */
	BraxDual dq_w = bd_mul(f, half, bd_neg(bd_mul(f, k, bd_const(q.y))));
	BraxDual dq_y = bd_mul(f, half, bd_mul(f, k, bd_const(q.w)));
	return (Correction){bv_scale(f, dp, scale), {bd_mul(f, scale, dq_w), bd_mul(f, scale, dq_y)}};
}

static Correction correction_add(bool f, Correction a, Correction b)
{
	return (Correction){bv_add(f, a.position, b.position),
						{bd_add(f, a.rotation.w, b.rotation.w), bd_add(f, a.rotation.y, b.rotation.y)}};
}

/* The point a body's contact point had at the start of the half-step:
 * p_prev + rotate(rotate(c − p, q⁻¹), q_prev). */
static BraxVec point_before(bool f, BraxVec c, BraxVec p, BraxQuat q, BraxVec p_prev, BraxQuat q_prev)
{
	BraxVec local = brax_rotate(f, bv_sub(f, c, p), brax_quat_inv(q));
	return bv_add(f, p_prev, brax_rotate(f, local, q_prev));
}

/* δ − (δ·n)·n */
static BraxVec tangential(bool f, BraxVec delta, BraxVec n)
{
	return bv_sub(f, delta, bv_scale(f, n, bv_dot(f, delta, n)));
}

static void add_correction(BraxModel *m, int ball, int collider, Correction c)
{
	BraxDual rotation[2] = {c.rotation.w, c.rotation.y};
	brax_sums_add(m, ball, collider, c.position, rotation, 2);
}

static bool nonzero(BraxVec v)
{
	return v.x.v != 0.0 || v.y.v != 0.0;
}

static void plane_position(BraxModel *m, BraxPair *pair, bool value_run)
{
	bool f = m->f32;
	int i = pair->a;
	const BraxBall *ball = &m->balls[i];
	BraxVec p = m->in_p[i], c = pair->point, n = pair->normal;
	BraxQuat q = m->rotation[i];
	BraxVec rho = bv_sub(f, c, p);
	BraxVec dx = bv_sub(f, c, bv_add(f, c, bv_scale(f, n, pair->penetration)));
	BraxDual C = bv_dot(f, dx, n);
	BraxDual lambda = bd_div(f, bd_neg(C), bd_add(f, weight(f, ball, rho, n), constant(f, 1e-6)));
	double coll = C.v < 0.0 ? 1.0 : 0.0;
	BraxVec P = bv_mask(bv_scale(f, n, lambda), coll);
	Correction normal = correction(m, ball, P, P, rho, q, 0.5);

	BraxVec slip = tangential(f, bv_sub(f, c, point_before(f, c, p, q, m->in_p_prev[i], m->rotation_prev[i])), n);
	BraxDual slip_norm = bv_safe_norm(f, slip);
	BraxVec t = bv_div(f, slip, bd_add(f, slip_norm, constant(f, 1e-6)));
	BraxDual lambda_t = bd_div(f, bd_neg(slip_norm), bd_add(f, weight(f, ball, rho, t), bd_const(0.0)));
	double stick = fabs(lambda_t.v) < fabs(brax_round(f, m->friction * lambda.v)) ? 1.0 : 0.0;
	BraxVec P_t = bv_mask(bv_mask(bv_scale(f, t, lambda_t), stick), coll);
	Correction total = correction_add(f, normal, correction(m, ball, P_t, P_t, rho, q, 0.5));

	pair->lambda = bd_mask(lambda, coll);
	if (value_run)
		pair->applied = nonzero(total.position);
	add_correction(m, i, BRAX_COLLIDER_PLANE, total);
}

static void sphere_position(BraxModel *m, BraxPair *pair, Correction *b_part, bool value_run)
{
	bool f = m->f32;
	int a = pair->a, b = pair->b;
	const BraxBall *ball_a = &m->balls[a], *ball_b = &m->balls[b];
	BraxVec pa = m->in_p[a], pb = m->in_p[b], c = pair->point, n = pair->normal;
	BraxQuat qa = m->rotation[a], qb = m->rotation[b];
	BraxDual d = pair->penetration;
	BraxVec half = bv_div(f, bv_scale(f, n, d), bd_const(2.0));
	BraxVec rho_a = bv_sub(f, bv_sub(f, c, half), pa);
	BraxVec rho_b = bv_sub(f, bv_add(f, c, half), pb);
	BraxDual C = bd_neg(d);
	BraxDual weights = bd_add(f, weight(f, ball_a, rho_a, n), weight(f, ball_b, rho_b, n));
	BraxDual lambda = bd_div(f, bd_neg(C), bd_add(f, weights, constant(f, 1e-6)));
	double coll = C.v < 0.0 ? 1.0 : 0.0;
	BraxVec P = bv_mask(bv_scale(f, n, lambda), coll);
	Correction normal_a = correction(m, ball_a, P, P, rho_a, qa, 0.5);
	Correction normal_b = correction(m, ball_b, bv_neg(P), P, rho_b, qb, -0.5);

	/* static friction, with coefficient 1 whatever μ (as Brax's two-way pass) */
	BraxVec before_a = point_before(f, c, pa, qa, m->in_p_prev[a], m->rotation_prev[a]);
	BraxVec before_b = point_before(f, c, pb, qb, m->in_p_prev[b], m->rotation_prev[b]);
	BraxVec slip = tangential(f, bv_sub(f, bv_sub(f, c, before_a), bv_sub(f, c, before_b)), n);
	BraxVec arm_a = bv_sub(f, c, pa), arm_b = bv_sub(f, c, pb);
	BraxDual slip_norm = bv_safe_norm(f, slip);
	BraxVec t = bv_div(f, slip, bd_add(f, slip_norm, constant(f, 1e-6)));
	BraxDual lambda_t =
		bd_div(f, bd_neg(slip_norm), bd_add(f, weight(f, ball_a, arm_a, t), weight(f, ball_b, arm_b, t)));
	double stick = fabs(lambda_t.v) < fabs(lambda.v) ? 1.0 : 0.0;
	BraxVec P_t = bv_mask(bv_mask(bv_scale(f, t, lambda_t), stick), coll);
	Correction total_a = correction_add(f, normal_a, correction(m, ball_a, P_t, P_t, arm_a, qa, 0.5));
	*b_part = correction_add(f, normal_b, correction(m, ball_b, bv_neg(P_t), bv_neg(P_t), arm_b, qb, 0.5));

	pair->lambda = lambda;
	if (value_run)
		pair->applied = nonzero(total_a.position) || nonzero(b_part->position);
	add_correction(m, a, BRAX_COLLIDER_SPHERE, total_a);
}

/* The projected state (qp) of a ball and the one right before it (qp_rb). */
typedef struct Moving {
	BraxVec p, v, v_before;
	BraxDual spin, spin_before;
} Moving;

static Moving moving(const BraxModel *m, int i)
{
	return (Moving){m->out_p[i], m->out_v[i], m->in_v[i], m->out_spin[i], bd_const(m->spin[i])};
}

/* Dynamic friction: −τ·min(μ|λ|/2h, |v_t|) */
static BraxVec friction_velocity(const BraxModel *m, BraxVec relative, BraxVec n, BraxDual lambda, BraxVec *tau)
{
	bool f = m->f32;
	BraxVec vt = tangential(f, relative, n);
	BraxDual vt_norm = bv_safe_norm(f, vt);
	*tau = bv_div(f, vt, bd_add(f, constant(f, 1e-6), vt_norm));
	BraxDual cap = bd_div(f, bd_mul(f, bd_const(m->friction), bd_abs(lambda)), bd_const(2.0 * m->h));
	return bv_scale(f, bv_neg(*tau), bd_min(cap, vt_norm));
}

/* Restitution: n·(−v_n − min(e·v_n,old, 0)) */
static BraxVec restitution_velocity(const BraxModel *m, BraxDual vn, BraxDual vn_before, BraxVec n)
{
	bool f = m->f32;
	BraxDual target = bd_min(bd_mul(f, bd_const(m->elasticity), vn_before), bd_const(0.0));
	return bv_scale(f, n, bd_sub(f, bd_neg(vn), target));
}

/* The velocity change P/m and spin change (I⁻¹ ρ) × P of one body. */
static void add_velocity(BraxModel *m, int ball, int collider, const BraxBall *body, BraxVec P, BraxDual mass,
						 BraxVec rho)
{
	bool f = m->f32;
	BraxVec arm = bv_scale(f, rho, bd_const(body->inverse_inertia));
	BraxDual spin = bv_cross(f, arm, P);
	brax_sums_add(m, ball, collider, bv_div(f, P, mass), &spin, 1);
}

static void plane_velocity(BraxModel *m, BraxPair *pair, bool value_run)
{
	bool f = m->f32;
	int i = pair->a;
	const BraxBall *ball = &m->balls[i];
	Moving s = moving(m, i);
	BraxVec c = pair->point, n = pair->normal;
	BraxVec rho = bv_sub(f, c, s.p);
	BraxVec relative = bv_add(f, s.v, bv_spin(f, s.spin, rho));
	BraxDual vn = bv_dot(f, relative, n);
	BraxVec tau;
	BraxVec dv_friction = friction_velocity(m, relative, n, pair->lambda, &tau);
	BraxDual angw = bv_cross(f, rho, tau);
	BraxDual w = bd_add(f, bd_const(ball->inverse_mass), bd_mul(f, angw, angw));
	BraxVec p_dyn = bv_div(f, dv_friction, bd_add(f, w, constant(f, 1e-6)));

	BraxVec relative_before = bv_add(f, s.v_before, bv_spin(f, s.spin_before, rho));
	BraxDual vn_before = bv_dot(f, relative_before, n);
	BraxVec dv_rest = restitution_velocity(m, vn, vn_before, n);
	BraxDual rest_norm = bv_safe_norm(f, dv_rest);
	BraxVec k = bv_div(f, dv_rest, bd_add(f, rest_norm, constant(f, 1e-6)));
	BraxDual lambda_rest = bd_div(f, rest_norm, bd_add(f, weight(f, ball, rho, k), constant(f, 1e-6)));
	double overlap = pair->penetration.v > 0.0 ? 1.0 : 0.0;
	double sinking = vn_before.v <= 0.0 ? 1.0 : 0.0;
	BraxVec P = bv_mask(bv_add(f, bv_mask(bv_scale(f, k, lambda_rest), sinking), p_dyn), overlap);
	if (value_run && nonzero(P))
		pair->applied = true;
	add_velocity(m, i, BRAX_COLLIDER_PLANE, ball, P, bd_const(ball->mass), rho);
}

/* Two balls; b's velocity change divides by a's mass, as Brax's does. */
static void sphere_velocity(BraxModel *m, BraxPair *pair, bool value_run)
{
	bool f = m->f32;
	int a = pair->a, b = pair->b;
	const BraxBall *ball_a = &m->balls[a], *ball_b = &m->balls[b];
	Moving sa = moving(m, a), sb = moving(m, b);
	BraxVec c = pair->point, n = pair->normal;
	BraxVec rho_a = bv_sub(f, c, sa.p), rho_b = bv_sub(f, c, sb.p);
	BraxVec relative = bv_sub(f, bv_add(f, sa.v, bv_spin(f, sa.spin, rho_a)),
							  bv_add(f, sb.v, bv_spin(f, sb.spin, rho_b)));
	BraxDual vn = bv_dot(f, relative, n);
	BraxVec tau;
	BraxVec dv_friction = friction_velocity(m, relative, n, pair->lambda, &tau);
	BraxDual w = bd_add(f, weight(f, ball_a, rho_a, tau), weight(f, ball_b, rho_b, tau));
	BraxVec p_dyn = bv_div(f, dv_friction, bd_add(f, w, constant(f, 1e-6)));

	BraxVec relative_before = bv_sub(f, bv_add(f, sa.v_before, bv_spin(f, sa.spin_before, rho_a)),
									 bv_add(f, sb.v_before, bv_spin(f, sb.spin_before, rho_b)));
	BraxDual vn_before = bv_dot(f, relative_before, n);
	BraxVec dv_rest = restitution_velocity(m, vn, vn_before, n);
	BraxVec rho_c = bv_sub(f, bv_add(f, c, bv_scale(f, n, pair->penetration)), sb.p);
	BraxDual rest_norm = bv_safe_norm(f, dv_rest);
	BraxVec k = bv_div(f, dv_rest, bd_add(f, rest_norm, constant(f, 1e-6)));
	BraxDual weights = bd_add(f, weight(f, ball_a, rho_a, k), weight(f, ball_b, rho_c, k));
	BraxDual lambda_rest = bd_div(f, rest_norm, bd_add(f, weights, constant(f, 1e-6)));
	double overlap = pair->penetration.v > 0.0 ? 1.0 : 0.0;
	double sinking = vn_before.v <= 0.0 ? 1.0 : 0.0;
	BraxVec P = bv_mask(bv_add(f, bv_mask(bv_scale(f, k, lambda_rest), sinking), p_dyn), overlap);
	if (value_run && nonzero(P))
		pair->applied = true;
	add_velocity(m, a, BRAX_COLLIDER_SPHERE, ball_a, P, bd_const(ball_a->mass), rho_a);
	/* b's part is added after every a part: store it */
	BraxVec arm_b = bv_scale(f, rho_b, bd_const(ball_b->inverse_inertia));
	pair->b_linear = bv_div(f, bv_neg(P), bd_const(ball_a->mass));
	pair->b_angular[0] = bv_cross(f, arm_b, bv_neg(P));
}

void brax_pbd_collide(BraxModel *m, bool value_run)
{
	bool f = m->f32;
	int nb = m->ball_count;
	/* contact frames before the correction; the velocity pass reuses them */
	for (int k = 0; k < m->pair_count; k++) {
		BraxPair *pair = &m->pairs[k];
		if (pair->b < 0)
			brax_plane_contact(m, pair->a, -1 - pair->b, m->in_p[pair->a], &pair->point, &pair->normal,
							   &pair->penetration);
		else
			brax_sphere_contact(m, pair->a, pair->b, m->in_p[pair->a], m->in_p[pair->b], &pair->point,
								&pair->normal, &pair->penetration);
	}

	/* position pass, averaged per body (ε 1e-6), q not renormalised */
	brax_sums_clear(m);
	for (int k = 0; k < m->pair_count; k++) {
		BraxPair *pair = &m->pairs[k];
		if (pair->b < 0) {
			plane_position(m, pair, value_run);
		} else {
			Correction b_part;
			sphere_position(m, pair, &b_part, value_run);
			pair->b_linear = b_part.position;
			pair->b_angular[0] = b_part.rotation.w;
			pair->b_angular[1] = b_part.rotation.y;
		}
	}
	for (int k = 0; k < m->pair_count; k++) {
		const BraxPair *pair = &m->pairs[k];
		if (pair->b >= 0)
			brax_sums_add(m, pair->b, BRAX_COLLIDER_SPHERE, pair->b_linear, pair->b_angular, 2);
	}
	for (int i = 0; i < nb; i++) {
		BraxDual dq[2];
		BraxVec dp = brax_sums_total(m, i, 1e-6, dq, 2);
		BraxQuat q = m->rotation[i];
		m->out_p[i] = bv_add(f, m->in_p[i], dp);
		BraxDualQuat corrected = {bd_add(f, bd_const(q.w), dq[0]), bd_add(f, bd_const(q.y), dq[1])}, projected;
		brax_pbd_project(m, m->out_p[i], m->in_p_prev[i], corrected, m->rotation_prev[i], &m->out_v[i], &projected,
						 &m->out_spin[i]);
		m->out_rotation[i] = (BraxQuat){projected.w.v, projected.y.v};
	}

	/* velocity pass on the projected state */
	brax_sums_clear(m);
	for (int k = 0; k < m->pair_count; k++) {
		BraxPair *pair = &m->pairs[k];
		if (pair->b < 0)
			plane_velocity(m, pair, value_run);
		else
			sphere_velocity(m, pair, value_run);
	}
	for (int k = 0; k < m->pair_count; k++) {
		const BraxPair *pair = &m->pairs[k];
		if (pair->b >= 0)
			brax_sums_add(m, pair->b, BRAX_COLLIDER_SPHERE, pair->b_linear, pair->b_angular, 1);
	}
	for (int i = 0; i < nb; i++) {
		BraxDual spin;
		BraxVec dv = brax_sums_total(m, i, 1e-6, &spin, 1);
		m->out_v[i] = bv_add(f, m->out_v[i], dv);
		m->out_spin[i] = bd_add(f, m->out_spin[i], spin);
	}
}
