/* Brax v0.0.13 pbd collisions: a position pass with static friction, the
 * velocity projection, and a velocity pass with dynamic friction and
 * restitution (colliders.py _position_contact, _velocity_contact). */
#include "brax.h"

/* A position correction: Δp and Δq of one body. */
typedef struct Correction {
	ClDual2 position;
	BraxDualQuat rotation;
} Correction;

static ClDual constant(const ClArith *A, double x)
{
	return cl_dual_const(A, cl_arith_round(A, x));
}

/* 1/m + (ρ × t)·(I⁻¹ (ρ × t)) */
static ClDual weight(const BraxModel *m, int body, ClDual2 rho, ClDual2 t)
{
	const ClArith *A = &m->arith;
	ClDual cr = brax_cross(A, rho, t);
	return cl_dual_add(A, m->in_balls[body].inverse_mass,
					   cl_dual_mul(A, cr, cl_dual_mul(A, m->in_inverse_inertia, cr)));
}

/* scale·(impulse/m, factor·vec_quat_mul(I⁻¹ (ρ × torque_impulse), q)) */
static Correction correction(const BraxModel *m, int body, ClDual2 impulse, ClDual2 torque_impulse, ClDual2 rho,
							 BraxQuat q, double factor)
{
	const ClArith *A = &m->arith;
	ClDual scale = m->in_collide_scale, half = cl_dual_const(A, factor);
	ClDual2 dp = cl_dual2_div(A, impulse, m->in_balls[body].mass);
	ClDual k = cl_dual_mul(A, m->in_inverse_inertia, brax_cross(A, rho, torque_impulse));
	/* vec_quat_mul((0, k, 0), q) = (−k q_y, k q_w) */
	ClDual dq_w = cl_dual_mul(A, half, cl_dual_neg(A, cl_dual_mul(A, k, cl_dual_const(A, q.y))));
	ClDual dq_y = cl_dual_mul(A, half, cl_dual_mul(A, k, cl_dual_const(A, q.w)));
	return (Correction){cl_dual2_mul(A, dp, scale), {cl_dual_mul(A, scale, dq_w), cl_dual_mul(A, scale, dq_y)}};
}

static Correction correction_add(const ClArith *A, Correction a, Correction b)
{
	return (Correction){cl_dual2_add(A, a.position, b.position),
						{cl_dual_add(A, a.rotation.w, b.rotation.w), cl_dual_add(A, a.rotation.y, b.rotation.y)}};
}

/* The point a body's contact point had at the start of the half-step:
 * p_prev + rotate(rotate(c − p, q⁻¹), q_prev). */
static ClDual2 point_before(const ClArith *A, ClDual2 c, ClDual2 p, BraxQuat q, ClDual2 p_prev, BraxQuat q_prev)
{
	ClDual2 local = brax_rotate(A, cl_dual2_sub(A, c, p), brax_quat_inv(q));
	return cl_dual2_add(A, p_prev, brax_rotate(A, local, q_prev));
}

/* δ − (δ·n)·n */
static ClDual2 tangential(const ClArith *A, ClDual2 delta, ClDual2 n)
{
	return cl_dual2_sub(A, delta, cl_dual2_mul(A, n, cl_dual2_dot(A, delta, n)));
}

static void add_correction(BraxModel *m, int ball, int collider, Correction c)
{
	ClDual rotation[2] = {c.rotation.w, c.rotation.y};
	brax_sums_add(m, ball, collider, c.position, rotation, 2);
}

static bool nonzero(ClDual2 v)
{
	return v.x.v != 0.0 || v.y.v != 0.0;
}

static void plane_position(BraxModel *m, BraxPair *pair, bool value_run)
{
	const ClArith *A = &m->arith;
	int i = pair->a;
	ClDual2 p = m->in_p[i], c = pair->point, n = pair->normal;
	BraxQuat q = m->rotation[i];
	ClDual2 rho = cl_dual2_sub(A, c, p);
	ClDual2 dx = cl_dual2_sub(A, c, cl_dual2_add(A, c, cl_dual2_mul(A, n, pair->penetration)));
	ClDual C = cl_dual2_dot(A, dx, n);
	ClDual lambda = cl_dual_div(A, cl_dual_neg(A, C), cl_dual_add(A, weight(m, i, rho, n), constant(A, 1e-6)));
	double coll = C.v < 0.0 ? 1.0 : 0.0;
	ClDual2 P = cl_dual2_scale(A, coll, cl_dual2_mul(A, n, lambda));
	Correction normal = correction(m, i, P, P, rho, q, 0.5);

	ClDual2 slip = tangential(A, cl_dual2_sub(A, c, point_before(A, c, p, q, m->in_p_prev[i], m->rotation_prev[i])), n);
	ClDual slip_norm = cl_dual2_safe_norm(A, slip);
	ClDual2 t = cl_dual2_div(A, slip, cl_dual_add(A, slip_norm, constant(A, 1e-6)));
	ClDual lambda_t =
		cl_dual_div(A, cl_dual_neg(A, slip_norm), cl_dual_add(A, weight(m, i, rho, t), cl_dual_const(A, 0.0)));
	double stick = fabs(lambda_t.v) < fabs(cl_arith_round(A, m->friction * lambda.v)) ? 1.0 : 0.0;
	ClDual2 P_t = cl_dual2_scale(A, coll, cl_dual2_scale(A, stick, cl_dual2_mul(A, t, lambda_t)));
	Correction total = correction_add(A, normal, correction(m, i, P_t, P_t, rho, q, 0.5));

	pair->lambda = cl_dual_scale(A, coll, lambda);
	if (value_run)
		pair->applied = nonzero(total.position);
	add_correction(m, i, BRAX_COLLIDER_PLANE, total);
}

static void sphere_position(BraxModel *m, BraxPair *pair, Correction *b_part, bool value_run)
{
	const ClArith *A = &m->arith;
	int a = pair->a, b = pair->b;
	ClDual2 pa = m->in_p[a], pb = m->in_p[b], c = pair->point, n = pair->normal;
	BraxQuat qa = m->rotation[a], qb = m->rotation[b];
	ClDual d = pair->penetration;
	ClDual2 half = cl_dual2_div(A, cl_dual2_mul(A, n, d), cl_dual_const(A, 2.0));
	ClDual2 rho_a = cl_dual2_sub(A, cl_dual2_sub(A, c, half), pa);
	ClDual2 rho_b = cl_dual2_sub(A, cl_dual2_add(A, c, half), pb);
	ClDual C = cl_dual_neg(A, d);
	ClDual weights = cl_dual_add(A, weight(m, a, rho_a, n), weight(m, b, rho_b, n));
	ClDual lambda = cl_dual_div(A, cl_dual_neg(A, C), cl_dual_add(A, weights, constant(A, 1e-6)));
	double coll = C.v < 0.0 ? 1.0 : 0.0;
	ClDual2 P = cl_dual2_scale(A, coll, cl_dual2_mul(A, n, lambda));
	Correction normal_a = correction(m, a, P, P, rho_a, qa, 0.5);
	Correction normal_b = correction(m, b, cl_dual2_neg(A, P), P, rho_b, qb, -0.5);

	/* static friction, with coefficient 1 whatever μ (as Brax's two-way pass) */
	ClDual2 before_a = point_before(A, c, pa, qa, m->in_p_prev[a], m->rotation_prev[a]);
	ClDual2 before_b = point_before(A, c, pb, qb, m->in_p_prev[b], m->rotation_prev[b]);
	ClDual2 slip = tangential(A, cl_dual2_sub(A, cl_dual2_sub(A, c, before_a), cl_dual2_sub(A, c, before_b)), n);
	ClDual2 arm_a = cl_dual2_sub(A, c, pa), arm_b = cl_dual2_sub(A, c, pb);
	ClDual slip_norm = cl_dual2_safe_norm(A, slip);
	ClDual2 t = cl_dual2_div(A, slip, cl_dual_add(A, slip_norm, constant(A, 1e-6)));
	ClDual lambda_t = cl_dual_div(A, cl_dual_neg(A, slip_norm),
								  cl_dual_add(A, weight(m, a, arm_a, t), weight(m, b, arm_b, t)));
	double stick = fabs(lambda_t.v) < fabs(lambda.v) ? 1.0 : 0.0;
	ClDual2 P_t = cl_dual2_scale(A, coll, cl_dual2_scale(A, stick, cl_dual2_mul(A, t, lambda_t)));
	Correction total_a = correction_add(A, normal_a, correction(m, a, P_t, P_t, arm_a, qa, 0.5));
	*b_part = correction_add(A, normal_b, correction(m, b, cl_dual2_neg(A, P_t), cl_dual2_neg(A, P_t), arm_b, qb, 0.5));

	pair->lambda = lambda;
	if (value_run)
		pair->applied = nonzero(total_a.position) || nonzero(b_part->position);
	add_correction(m, a, BRAX_COLLIDER_SPHERE, total_a);
}

/* The projected state (qp) of a ball and the one right before it (qp_rb). */
typedef struct Moving {
	ClDual2 p, v, v_before;
	ClDual spin, spin_before;
} Moving;

static Moving moving(const BraxModel *m, int i)
{
	return (Moving){m->out_p[i], m->out_v[i], m->in_v[i], m->out_spin[i], m->in_spin[i]};
}

/* Dynamic friction: −τ·min(μ|λ|/2h, |v_t|) */
static ClDual2 friction_velocity(const BraxModel *m, ClDual2 relative, ClDual2 n, ClDual lambda, ClDual2 *tau)
{
	const ClArith *A = &m->arith;
	ClDual2 vt = tangential(A, relative, n);
	ClDual vt_norm = cl_dual2_safe_norm(A, vt);
	*tau = cl_dual2_div(A, vt, cl_dual_add(A, constant(A, 1e-6), vt_norm));
	ClDual cap = cl_dual_div(A, cl_dual_mul(A, m->in_friction, cl_dual_abs(A, lambda)), cl_dual_scale(A, 2.0, m->in_h));
	return cl_dual2_mul(A, cl_dual2_neg(A, *tau), cl_dual_min_split(A, cap, vt_norm));
}

/* Restitution: n·(−v_n − min(e·v_n,old, 0)) */
static ClDual2 restitution_velocity(const BraxModel *m, ClDual vn, ClDual vn_before, ClDual2 n)
{
	const ClArith *A = &m->arith;
	ClDual target = cl_dual_min_split(A, cl_dual_mul(A, m->in_elasticity, vn_before), cl_dual_const(A, 0.0));
	return cl_dual2_mul(A, n, cl_dual_sub(A, cl_dual_neg(A, vn), target));
}

/* The velocity change P/m and spin change (I⁻¹ ρ) × P of one body. */
static void add_velocity(BraxModel *m, int ball, int collider, ClDual2 P, ClDual mass, ClDual2 rho)
{
	const ClArith *A = &m->arith;
	ClDual2 arm = cl_dual2_mul(A, rho, m->in_inverse_inertia);
	ClDual spin = brax_cross(A, arm, P);
	brax_sums_add(m, ball, collider, cl_dual2_div(A, P, mass), &spin, 1);
}

static void plane_velocity(BraxModel *m, BraxPair *pair, bool value_run)
{
	const ClArith *A = &m->arith;
	int i = pair->a;
	Moving s = moving(m, i);
	ClDual2 c = pair->point, n = pair->normal;
	ClDual2 rho = cl_dual2_sub(A, c, s.p);
	ClDual2 relative = cl_dual2_add(A, s.v, brax_spin(A, s.spin, rho));
	ClDual vn = cl_dual2_dot(A, relative, n);
	ClDual2 tau;
	ClDual2 dv_friction = friction_velocity(m, relative, n, pair->lambda, &tau);
	ClDual angw = brax_cross(A, rho, tau);
	ClDual w = cl_dual_add(A, m->in_balls[i].inverse_mass, cl_dual_mul(A, angw, angw));
	ClDual2 p_dyn = cl_dual2_div(A, dv_friction, cl_dual_add(A, w, constant(A, 1e-6)));

	ClDual2 relative_before = cl_dual2_add(A, s.v_before, brax_spin(A, s.spin_before, rho));
	ClDual vn_before = cl_dual2_dot(A, relative_before, n);
	ClDual2 dv_rest = restitution_velocity(m, vn, vn_before, n);
	ClDual rest_norm = cl_dual2_safe_norm(A, dv_rest);
	ClDual2 k = cl_dual2_div(A, dv_rest, cl_dual_add(A, rest_norm, constant(A, 1e-6)));
	ClDual lambda_rest = cl_dual_div(A, rest_norm, cl_dual_add(A, weight(m, i, rho, k), constant(A, 1e-6)));
	double overlap = pair->penetration.v > 0.0 ? 1.0 : 0.0;
	double sinking = vn_before.v <= 0.0 ? 1.0 : 0.0;
	ClDual2 P =
		cl_dual2_scale(A, overlap, cl_dual2_add(A, cl_dual2_scale(A, sinking, cl_dual2_mul(A, k, lambda_rest)), p_dyn));
	if (value_run && nonzero(P))
		pair->applied = true;
	add_velocity(m, i, BRAX_COLLIDER_PLANE, P, m->in_balls[i].mass, rho);
}

/* Two balls; b's velocity change divides by a's mass, as Brax's does. */
static void sphere_velocity(BraxModel *m, BraxPair *pair, bool value_run)
{
	const ClArith *A = &m->arith;
	int a = pair->a, b = pair->b;
	Moving sa = moving(m, a), sb = moving(m, b);
	ClDual2 c = pair->point, n = pair->normal;
	ClDual2 rho_a = cl_dual2_sub(A, c, sa.p), rho_b = cl_dual2_sub(A, c, sb.p);
	ClDual2 relative = cl_dual2_sub(A, cl_dual2_add(A, sa.v, brax_spin(A, sa.spin, rho_a)),
									cl_dual2_add(A, sb.v, brax_spin(A, sb.spin, rho_b)));
	ClDual vn = cl_dual2_dot(A, relative, n);
	ClDual2 tau;
	ClDual2 dv_friction = friction_velocity(m, relative, n, pair->lambda, &tau);
	ClDual w = cl_dual_add(A, weight(m, a, rho_a, tau), weight(m, b, rho_b, tau));
	ClDual2 p_dyn = cl_dual2_div(A, dv_friction, cl_dual_add(A, w, constant(A, 1e-6)));

	ClDual2 relative_before = cl_dual2_sub(A, cl_dual2_add(A, sa.v_before, brax_spin(A, sa.spin_before, rho_a)),
										   cl_dual2_add(A, sb.v_before, brax_spin(A, sb.spin_before, rho_b)));
	ClDual vn_before = cl_dual2_dot(A, relative_before, n);
	ClDual2 dv_rest = restitution_velocity(m, vn, vn_before, n);
	ClDual2 rho_c = cl_dual2_sub(A, cl_dual2_add(A, c, cl_dual2_mul(A, n, pair->penetration)), sb.p);
	ClDual rest_norm = cl_dual2_safe_norm(A, dv_rest);
	ClDual2 k = cl_dual2_div(A, dv_rest, cl_dual_add(A, rest_norm, constant(A, 1e-6)));
	ClDual weights = cl_dual_add(A, weight(m, a, rho_a, k), weight(m, b, rho_c, k));
	ClDual lambda_rest = cl_dual_div(A, rest_norm, cl_dual_add(A, weights, constant(A, 1e-6)));
	double overlap = pair->penetration.v > 0.0 ? 1.0 : 0.0;
	double sinking = vn_before.v <= 0.0 ? 1.0 : 0.0;
	ClDual2 P =
		cl_dual2_scale(A, overlap, cl_dual2_add(A, cl_dual2_scale(A, sinking, cl_dual2_mul(A, k, lambda_rest)), p_dyn));
	if (value_run && nonzero(P))
		pair->applied = true;
	add_velocity(m, a, BRAX_COLLIDER_SPHERE, P, m->in_balls[a].mass, rho_a);
	/* b's part is added after every a part: store it */
	ClDual2 arm_b = cl_dual2_mul(A, rho_b, m->in_inverse_inertia);
	pair->b_linear = cl_dual2_div(A, cl_dual2_neg(A, P), m->in_balls[a].mass);
	pair->b_angular[0] = brax_cross(A, arm_b, cl_dual2_neg(A, P));
}

void brax_pbd_collide(BraxModel *m, bool value_run)
{
	const ClArith *A = &m->arith;
	int nb = m->ball_count;
	/* contact frames before the correction; the velocity pass reuses them */
	for (int k = 0; k < m->pair_count; k++) {
		BraxPair *pair = &m->pairs[k];
		if (pair->b < 0)
			brax_plane_contact(A, m->in_p[pair->a], m->in_balls[pair->a].radius, &m->in_walls[-1 - pair->b],
							   &pair->point, &pair->normal, &pair->penetration);
		else
			brax_sphere_contact(A, m->in_p[pair->a], m->in_p[pair->b], m->in_balls[pair->a].radius,
								m->in_balls[pair->b].radius, &pair->point, &pair->normal, &pair->penetration);
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
		ClDual dq[2];
		ClDual2 dp = brax_sums_total(m, i, 1e-6, dq, 2);
		BraxQuat q = m->rotation[i];
		m->out_p[i] = cl_dual2_add(A, m->in_p[i], dp);
		BraxDualQuat corrected = {cl_dual_add(A, cl_dual_const(A, q.w), dq[0]),
								  cl_dual_add(A, cl_dual_const(A, q.y), dq[1])},
					 projected;
		brax_pbd_project(m, A, m->out_p[i], m->in_p_prev[i], corrected, m->rotation_prev[i], &m->out_v[i], &projected,
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
		ClDual spin;
		ClDual2 dv = brax_sums_total(m, i, 1e-6, &spin, 1);
		m->out_v[i] = cl_dual2_add(A, m->out_v[i], dv);
		m->out_spin[i] = cl_dual_add(A, m->out_spin[i], spin);
	}
}
