/* Brax v0.0.13 legacy_spring collisions: velocity impulses with drag
 * (colliders.py OneWayCollider._contact and TwoWayCollider._contact). */
#include "brax.h"

/* What body.impulse(qp, impulse, pos) gives: Δv = impulse/m, Δω = I⁻¹·((pos − p) × impulse). */
typedef struct Impulse {
	ClDual2 linear;
	ClDual angular;
} Impulse;

static Impulse body_impulse(const BraxModel *m, int body, ClDual2 p, ClDual2 impulse, ClDual2 point)
{
	const ClArith *A = &m->arith;
	ClDual torque = brax_cross(A, cl_dual2_sub(A, point, p), impulse);
	return (Impulse){cl_dual2_div(A, impulse, m->in_balls[body].mass),
					 cl_dual_mul(A, m->in_inverse_inertia, torque)};
}

/* −(1 + e) */
static ClDual restitution_factor(const BraxModel *m)
{
	const ClArith *A = &m->arith;
	return cl_dual_neg(A, cl_dual_add(A, cl_dual_const(A, 1.0), m->in_elasticity));
}

/* dp_n·apply_n + dp_d·apply_d */
static Impulse combine(const ClArith *A, Impulse normal, double apply_n, Impulse drag, double apply_d)
{
	return (Impulse){
		cl_dual2_add(A, cl_dual2_scale(A, apply_n, normal.linear), cl_dual2_scale(A, apply_d, drag.linear)),
		cl_dual_add(A, cl_dual_scale(A, apply_n, normal.angular), cl_dual_scale(A, apply_d, drag.angular))};
}

/* Ball against a frozen plane. */
static void plane_pair(BraxModel *m, BraxPair *pair, bool value_run)
{
	const ClArith *A = &m->arith;
	int i = pair->a;
	ClDual2 p = m->in_p[i], v = m->in_v[i];
	ClDual2 c, n;
	ClDual d;
	brax_plane_contact(A, p, m->in_balls[i].radius, &m->in_walls[-1 - pair->b], &c, &n, &d);
	ClDual2 rho = cl_dual2_sub(A, c, p);
	ClDual2 velocity = cl_dual2_add(A, v, brax_spin(A, m->in_spin[i], rho));
	ClDual baumgarte = cl_dual_mul(A, m->in_erp_rate, d);
	ClDual vn = cl_dual2_dot(A, n, velocity);
	ClDual temp = cl_dual_mul(A, m->in_inverse_inertia, brax_cross(A, rho, n));
	ClDual angular = cl_dual2_dot(A, n, brax_spin(A, temp, rho));
	ClDual weight = cl_dual_add(A, m->in_balls[i].inverse_mass, angular);
	ClDual target = cl_dual_add(A, cl_dual_mul(A, restitution_factor(m), vn), baumgarte);
	ClDual impulse = cl_dual_div(A, target, weight);
	Impulse normal = body_impulse(m, i, p, cl_dual2_mul(A, n, impulse), c);

	ClDual2 slip = cl_dual2_sub(A, velocity, cl_dual2_mul(A, n, vn));
	ClDual slip_norm = cl_dual2_safe_norm(A, slip);
	ClDual drag = cl_dual_min_split(A, cl_dual_div(A, slip_norm, weight), cl_dual_mul(A, m->in_friction, impulse));
	ClDual2 direction = cl_dual2_div(A, slip, cl_dual_add(A, cl_dual_const(A, cl_arith_round(A, 1e-6)), slip_norm));
	Impulse friction = body_impulse(m, i, p, cl_dual2_mul(A, direction, cl_dual_neg(A, drag)), c);

	double apply_n = d.v > 0.0 && vn.v < 0.0 && impulse.v > 0.0 ? 1.0 : 0.0;
	double apply_d = apply_n * (slip_norm.v > cl_arith_round(A, 0.01) ? 1.0 : 0.0);
	Impulse total = combine(A, normal, apply_n, friction, apply_d);
	if (value_run)
		pair->applied = total.linear.x.v != 0.0 || total.linear.y.v != 0.0;
	brax_sums_add(m, i, BRAX_COLLIDER_PLANE, total.linear, &total.angular, 1);
}

/* Two balls; the drag on b uses a's mass and inertia, as Brax's does. */
static void sphere_pair(BraxModel *m, BraxPair *pair, bool value_run)
{
	const ClArith *A = &m->arith;
	int a = pair->a, b = pair->b;
	ClDual2 pa = m->in_p[a], pb = m->in_p[b];
	ClDual2 c, n;
	ClDual d;
	brax_sphere_contact(A, pa, pb, m->in_balls[a].radius, m->in_balls[b].radius, &c, &n, &d);
	ClDual2 rho_a = cl_dual2_sub(A, c, pa), rho_b = cl_dual2_sub(A, c, pb);
	ClDual2 velocity = cl_dual2_sub(A, cl_dual2_add(A, m->in_v[a], brax_spin(A, m->in_spin[a], rho_a)),
									cl_dual2_add(A, m->in_v[b], brax_spin(A, m->in_spin[b], rho_b)));
	ClDual baumgarte = cl_dual_mul(A, m->in_erp_rate, d);
	ClDual vn = cl_dual2_dot(A, n, velocity);
	ClDual temp_a = cl_dual_mul(A, m->in_inverse_inertia, brax_cross(A, rho_a, n));
	ClDual temp_b = cl_dual_mul(A, m->in_inverse_inertia, brax_cross(A, rho_b, n));
	ClDual angular = cl_dual2_dot(A, n, cl_dual2_add(A, brax_spin(A, temp_a, rho_a), brax_spin(A, temp_b, rho_b)));
	ClDual weight =
		cl_dual_add(A, cl_dual_add(A, m->in_balls[a].inverse_mass, m->in_balls[b].inverse_mass), angular);
	ClDual target = cl_dual_add(A, cl_dual_mul(A, restitution_factor(m), vn), baumgarte);
	ClDual impulse = cl_dual_div(A, target, weight);
	ClDual2 jn = cl_dual2_mul(A, n, impulse);
	Impulse normal_a = body_impulse(m, a, pa, jn, c);
	Impulse normal_b = body_impulse(m, b, pb, cl_dual2_mul(A, n, cl_dual_neg(A, impulse)), c);

	ClDual2 slip = cl_dual2_sub(A, velocity, cl_dual2_mul(A, n, vn));
	ClDual slip_norm = cl_dual2_safe_norm(A, slip);
	ClDual drag = cl_dual_min_split(A, cl_dual_div(A, slip_norm, weight), cl_dual_mul(A, m->in_friction, impulse));
	ClDual2 direction = cl_dual2_div(A, slip, cl_dual_add(A, cl_dual_const(A, cl_arith_round(A, 1e-6)), slip_norm));
	Impulse friction_a = body_impulse(m, a, pa, cl_dual2_mul(A, direction, cl_dual_neg(A, drag)), c);
	Impulse friction_b = body_impulse(m, a, pb, cl_dual2_mul(A, direction, drag), c);

	double apply_n = d.v > 0.0 && vn.v < 0.0 && impulse.v > 0.0 ? 1.0 : 0.0;
	double apply_d = apply_n * (slip_norm.v > cl_arith_round(A, 0.01) ? 1.0 : 0.0);
	Impulse total_a = combine(A, normal_a, apply_n, friction_a, apply_d);
	Impulse total_b = combine(A, normal_b, apply_n, friction_b, apply_d);
	if (value_run)
		pair->applied = total_a.linear.x.v != 0.0 || total_a.linear.y.v != 0.0 || total_b.linear.x.v != 0.0 ||
						total_b.linear.y.v != 0.0;
	brax_sums_add(m, a, BRAX_COLLIDER_SPHERE, total_a.linear, &total_a.angular, 1);
	pair->b_linear = total_b.linear;
	pair->b_angular[0] = total_b.angular;
}

void brax_spring_collide(BraxModel *m, bool value_run)
{
	const ClArith *A = &m->arith;
	brax_sums_clear(m);
	for (int k = 0; k < m->pair_count; k++) {
		BraxPair *pair = &m->pairs[k];
		if (pair->b < 0)
			plane_pair(m, pair, value_run);
		else
			sphere_pair(m, pair, value_run);
	}
	/* segment_sum over (a parts, then b parts) */
	for (int k = 0; k < m->pair_count; k++) {
		const BraxPair *pair = &m->pairs[k];
		if (pair->b >= 0)
			brax_sums_add(m, pair->b, BRAX_COLLIDER_SPHERE, pair->b_linear, pair->b_angular, 1);
	}
	for (int i = 0; i < m->ball_count; i++) {
		ClDual spin;
		ClDual2 dv = brax_sums_total(m, i, 1e-8, &spin, 1);
		m->out_p[i] = m->in_p[i];
		m->out_v[i] = cl_dual2_add(A, m->in_v[i], dv);
		m->out_spin[i] = cl_dual_add(A, m->in_spin[i], spin);
		m->out_rotation[i] = m->rotation[i];
	}
}
