/* Brax v0.0.13 legacy_spring collisions: velocity impulses with drag
 * (colliders.py OneWayCollider._contact and TwoWayCollider._contact). */
#include "brax.h"

/* What body.impulse(qp, impulse, pos) gives: Δv = impulse/m, Δω = I⁻¹·((pos − p) × impulse). */
typedef struct Impulse {
	BraxVec linear;
	BraxDual angular;
} Impulse;

static Impulse body_impulse(bool f, const BraxBall *body, BraxVec p, BraxVec impulse, BraxVec point)
{
	BraxDual torque = bv_cross(f, bv_sub(f, point, p), impulse);
	return (Impulse){bv_div(f, impulse, bd_const(body->mass)), bd_mul(f, bd_const(body->inverse_inertia), torque)};
}

/* dp_n·apply_n + dp_d·apply_d */
static Impulse combine(bool f, Impulse normal, double apply_n, Impulse drag, double apply_d)
{
	return (Impulse){bv_add(f, bv_mask(normal.linear, apply_n), bv_mask(drag.linear, apply_d)),
					 bd_add(f, bd_mask(normal.angular, apply_n), bd_mask(drag.angular, apply_d))};
}

/* Ball against a frozen plane. */
static void plane_pair(BraxModel *m, BraxPair *pair, bool value_run)
{
	bool f = m->f32;
	int i = pair->a;
	const BraxBall *ball = &m->balls[i];
	BraxVec p = m->in_p[i], v = m->in_v[i];
	BraxVec c, n;
	BraxDual d;
	brax_plane_contact(m, i, -1 - pair->b, p, &c, &n, &d);
	BraxVec rho = bv_sub(f, c, p);
	BraxVec velocity = bv_add(f, v, bv_spin(f, bd_const(m->spin[i]), rho));
	BraxDual baumgarte = bd_mul(f, bd_const(m->erp_rate), d);
	BraxDual vn = bv_dot(f, n, velocity);
	BraxDual temp = bd_mul(f, bd_const(ball->inverse_inertia), bv_cross(f, rho, n));
	BraxDual angular = bv_dot(f, n, bv_spin(f, temp, rho));
	BraxDual weight = bd_add(f, bd_const(ball->inverse_mass), angular);
	BraxDual target = bd_add(f, bd_mul(f, bd_const(-brax_round(f, 1.0 + m->elasticity)), vn), baumgarte);
	BraxDual impulse = bd_div(f, target, weight);
	Impulse normal = body_impulse(f, ball, p, bv_scale(f, n, impulse), c);

	BraxVec slip = bv_sub(f, velocity, bv_scale(f, n, vn));
	BraxDual slip_norm = bv_safe_norm(f, slip);
	BraxDual drag = bd_min(bd_div(f, slip_norm, weight), bd_mul(f, bd_const(m->friction), impulse));
	BraxVec direction = bv_div(f, slip, bd_add(f, bd_const(brax_round(f, 1e-6)), slip_norm));
	Impulse friction = body_impulse(f, ball, p, bv_scale(f, direction, bd_neg(drag)), c);

	double apply_n = d.v > 0.0 && vn.v < 0.0 && impulse.v > 0.0 ? 1.0 : 0.0;
	double apply_d = apply_n * (slip_norm.v > brax_round(f, 0.01) ? 1.0 : 0.0);
	Impulse total = combine(f, normal, apply_n, friction, apply_d);
	if (value_run)
		pair->applied = total.linear.x.v != 0.0 || total.linear.y.v != 0.0;
	brax_sums_add(m, i, BRAX_COLLIDER_PLANE, total.linear, &total.angular, 1);
}

/* Two balls; the drag on b uses a's mass and inertia, as Brax's does. */
static void sphere_pair(BraxModel *m, BraxPair *pair, bool value_run)
{
	bool f = m->f32;
	int a = pair->a, b = pair->b;
	const BraxBall *ball_a = &m->balls[a], *ball_b = &m->balls[b];
	BraxVec pa = m->in_p[a], pb = m->in_p[b];
	BraxVec c, n;
	BraxDual d;
	brax_sphere_contact(m, a, b, pa, pb, &c, &n, &d);
	BraxVec rho_a = bv_sub(f, c, pa), rho_b = bv_sub(f, c, pb);
	BraxVec velocity = bv_sub(f, bv_add(f, m->in_v[a], bv_spin(f, bd_const(m->spin[a]), rho_a)),
							  bv_add(f, m->in_v[b], bv_spin(f, bd_const(m->spin[b]), rho_b)));
	BraxDual baumgarte = bd_mul(f, bd_const(m->erp_rate), d);
	BraxDual vn = bv_dot(f, n, velocity);
	BraxDual temp_a = bd_mul(f, bd_const(ball_a->inverse_inertia), bv_cross(f, rho_a, n));
	BraxDual temp_b = bd_mul(f, bd_const(ball_b->inverse_inertia), bv_cross(f, rho_b, n));
	BraxDual angular = bv_dot(f, n, bv_add(f, bv_spin(f, temp_a, rho_a), bv_spin(f, temp_b, rho_b)));
	BraxDual weight = bd_add(
		f, bd_add(f, bd_const(ball_a->inverse_mass), bd_const(ball_b->inverse_mass)), angular);
	BraxDual target = bd_add(f, bd_mul(f, bd_const(-brax_round(f, 1.0 + m->elasticity)), vn), baumgarte);
	BraxDual impulse = bd_div(f, target, weight);
	BraxVec jn = bv_scale(f, n, impulse);
	Impulse normal_a = body_impulse(f, ball_a, pa, jn, c);
	Impulse normal_b = body_impulse(f, ball_b, pb, bv_scale(f, n, bd_neg(impulse)), c);

	BraxVec slip = bv_sub(f, velocity, bv_scale(f, n, vn));
	BraxDual slip_norm = bv_safe_norm(f, slip);
	BraxDual drag = bd_min(bd_div(f, slip_norm, weight), bd_mul(f, bd_const(m->friction), impulse));
	BraxVec direction = bv_div(f, slip, bd_add(f, bd_const(brax_round(f, 1e-6)), slip_norm));
	Impulse friction_a = body_impulse(f, ball_a, pa, bv_scale(f, direction, bd_neg(drag)), c);
	Impulse friction_b = body_impulse(f, ball_a, pb, bv_scale(f, direction, drag), c);

	double apply_n = d.v > 0.0 && vn.v < 0.0 && impulse.v > 0.0 ? 1.0 : 0.0;
	double apply_d = apply_n * (slip_norm.v > brax_round(f, 0.01) ? 1.0 : 0.0);
	Impulse total_a = combine(f, normal_a, apply_n, friction_a, apply_d);
	Impulse total_b = combine(f, normal_b, apply_n, friction_b, apply_d);
	if (value_run)
		pair->applied = total_a.linear.x.v != 0.0 || total_a.linear.y.v != 0.0 || total_b.linear.x.v != 0.0 ||
						total_b.linear.y.v != 0.0;
	brax_sums_add(m, a, BRAX_COLLIDER_SPHERE, total_a.linear, &total_a.angular, 1);
	pair->b_linear = total_b.linear;
	pair->b_angular[0] = total_b.angular;
}

void brax_spring_collide(BraxModel *m, bool value_run)
{
	bool f = m->f32;
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
		BraxDual spin;
		BraxVec dv = brax_sums_total(m, i, 1e-8, &spin, 1);
		m->out_p[i] = m->in_p[i];
		m->out_v[i] = bv_add(f, m->in_v[i], dv);
		m->out_spin[i] = bd_add(f, bd_const(m->spin[i]), spin);
		m->out_rotation[i] = m->rotation[i];
	}
}
