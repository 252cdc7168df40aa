/* Closed-form optimum of the two-ball problem (Task 3; Hu et al. 2022).
 *
 * Ball 1 (the one whose control effort is charged) starts at rest and is
 * pushed straight at ball 2, also at rest; after the head-on impact at time s
 * ball 2 coasts to the target. Along the line of centres ê, ball 1 must travel
 * D = ‖p2 − p1‖ − (r1 + r2) in time s and arrive with speed V. The least
 * effort for that is m1²(4V²/s − 12DV/s² + 12D²/s³) with an acceleration
 * affine in time, and ball 2 leaves with β2·V, β2 = (1+e)m1/(m1+m2). With the
 * target at distance X beyond ball 2 along ê, the cost
 *   w(X − β2 V (T − s))² + ε·m1²(4V²/s − 12DV/s² + 12D²/s³)
 * is a quadratic aV² + bV + c in V, minimised in closed form; what remains
 * is a one-dimensional minimisation over s.
 */
#include "contactlab/sim.h"

#include <math.h>

typedef struct TwoBall {
	int pusher, target_ball;
	double D, X, T, mass, beta, weight, effort;
	double ex, ey; /* ê */
} TwoBall;

/* The problem's data, or false when the scene is not this problem. */
static bool two_ball_setup(const ClScene *scene, TwoBall *tb)
{
	if (scene->ball_count != 2 || scene->wall_count != 0 || scene->gravity.x != 0.0 || scene->gravity.y != 0.0 ||
		scene->friction != 0.0 || !(scene->elasticity > 0.0) || scene->loss_count != 2)
		return false;
	const ClLossTerm *position = NULL, *effort = NULL;
	for (int k = 0; k < 2; k++) {
		const ClLossTerm *t = &scene->loss[k];
		if (t->type == CL_LOSS_FINAL_POSITION)
			position = t;
		else if (t->type == CL_LOSS_CONTROL_EFFORT)
			effort = t;
	}
	if (!position || !effort || position->ball == effort->ball || !(effort->weight > 0.0) ||
		!(position->weight > 0.0))
		return false;
	const ClBall *b1 = &scene->balls[effort->ball], *b2 = &scene->balls[position->ball];
	if (b1->velocity.x != 0.0 || b1->velocity.y != 0.0 || b2->velocity.x != 0.0 || b2->velocity.y != 0.0 ||
		b2->control_kind != CL_CONTROL_NONE)
		return false;
	double dx = b2->position.x - b1->position.x, dy = b2->position.y - b1->position.y;
	double distance = hypot(dx, dy);
	tb->ex = dx / distance;
	tb->ey = dy / distance;
	tb->D = distance - (b1->radius + b2->radius);
	/* the target must lie on the line of centres, beyond ball 2 */
	double tx = position->target.x - b2->position.x, ty = position->target.y - b2->position.y;
	tb->X = tx * tb->ex + ty * tb->ey;
	double off_line = -tx * tb->ey + ty * tb->ex;
	if (!(tb->D > 0.0) || !(tb->X > 0.0) || fabs(off_line) > 1e-12 * (fabs(tb->X) + 1.0))
		return false;
	tb->pusher = effort->ball;
	tb->target_ball = position->ball;
	tb->T = scene->duration;
	tb->mass = b1->mass;
	tb->beta = (1.0 + scene->elasticity) * b1->mass / (b1->mass + b2->mass);
	tb->weight = position->weight;
	tb->effort = effort->weight;
	return true;
}

/* The least cost for impact at time s, and the impact speed V that gives it. */
static double cost_at(const TwoBall *tb, double s, double *speed)
{
	double m2e = tb->effort * tb->mass * tb->mass, coast = tb->T - s;
	double a = tb->weight * tb->beta * tb->beta * coast * coast + 4.0 * m2e / s;
	double b = -2.0 * tb->weight * tb->X * tb->beta * coast - 12.0 * m2e * tb->D / (s * s);
	double c = tb->weight * tb->X * tb->X + 12.0 * m2e * tb->D * tb->D / (s * s * s);
	*speed = -b / (2.0 * a);
	return c - b * b / (4.0 * a);
}

/* Minimises cost_at over s in (0, T]: a scan, then golden sections. */
static double optimum(const TwoBall *tb, double *s_best, double *speed)
{
	enum { SCAN = 1000 };
	double best = INFINITY, at = tb->T;
	for (int k = 1; k <= SCAN; k++) {
		double s = tb->T * k / SCAN, v, c = cost_at(tb, s, &v);
		if (c < best) {
			best = c;
			at = s;
		}
	}
	double lo = fmax(at - tb->T / SCAN, 1e-9 * tb->T), hi = fmin(at + tb->T / SCAN, tb->T);
	const double ratio = 0.5 * (sqrt(5.0) - 1.0);
	double x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo), v;
	double f1 = cost_at(tb, x1, &v), f2 = cost_at(tb, x2, &v);
	while (hi - lo > 1e-13 * tb->T) {
		if (f1 < f2) {
			hi = x2;
			x2 = x1;
			f2 = f1;
			x1 = hi - ratio * (hi - lo);
			f1 = cost_at(tb, x1, &v);
		} else {
			lo = x1;
			x1 = x2;
			f1 = f2;
			x2 = lo + ratio * (hi - lo);
			f2 = cost_at(tb, x2, &v);
		}
	}
	double s = 0.5 * (lo + hi), c = cost_at(tb, s, speed);
	if (best < c) { /* the optimum is at an end of the scan (s = T) */
		s = at;
		c = cost_at(tb, s, speed);
	}
	*s_best = s;
	return c;
}

double cl_two_ball_optimum(const ClScene *scene, double *collision_time)
{
	TwoBall tb;
	if (!two_ball_setup(scene, &tb))
		return NAN;
	double s, speed, cost = optimum(&tb, &s, &speed);
	if (collision_time)
		*collision_time = s;
	return cost;
}

bool cl_two_ball_optimal_control(const ClScene *scene, double *u)
{
	TwoBall tb;
	if (!two_ball_setup(scene, &tb))
		return false;
	double s, V;
	optimum(&tb, &s, &V);
	/* ẍ(t) = A0 + A1 t reaches x(s) = D, ẋ(s) = V from rest */
	double A0 = 6.0 * tb.D / (s * s) - 2.0 * V / s;
	double A1 = 6.0 * V / (s * s) - 12.0 * tb.D / (s * s * s);
	double dt = cl_scene_dt(scene);
	for (int k = 0; k < scene->steps; k++) {
		double t = (k + 0.5) * dt;
		double force = t < s ? tb.mass * (A0 + A1 * t) : 0.0;
		u[2 * k] = force * tb.ex;
		u[2 * k + 1] = force * tb.ey;
	}
	return true;
}
