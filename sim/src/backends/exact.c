/* Exact event-driven backend: the ground truth of the continuous problem with
 * piecewise-constant controls.
 *
 * Within a control interval every ball has a constant acceleration, so the
 * flow is exact. Impacts are found at their exact times (ball–wall: a
 * quadratic; ball–ball: a quartic with bracketed root isolation), resolved
 * one at a time, and their tangent jump is recorded as a saltation matrix
 * (backends-paper.md §6.3), which makes the recorded step Jacobian the true
 * derivative of the step. Degenerate contacts are reported, never hidden.
 */
#include "../core.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PARAM_RESTING_SPEED, PARAM_MAX_EVENTS, PARAM_MAX_IMPACTS };

/* Thresholds, relative to the scene's scales (see exact_create):
 * a gap within GAP_TOLERANCE·L counts as touching (about 10⁷ ulps of a
 * coordinate of size L, far above rounding, far below any physical gap);
 * two impacts sharing a ball within TIME_TOLERANCE·dt are simultaneous. */
#define GAP_TOLERANCE 1e-9
#define TIME_TOLERANCE 1e-9

typedef struct ExactWorkspace {
	int ball_count, wall_count;
	double gap_tolerance;  /* length */
	double resting_speed;  /* speed: slower impacts are grazing or resting */
	double time_tolerance; /* time */
	int max_events;
	/* impacts of the whole rollout, and its budget: a nearly inelastic
	 * cluster hits max_events in every interval, which would take minutes */
	long impacts, max_impacts;
	double *accel;           /* 2 per ball: the effective acceleration of the segment */
	unsigned char *resting;  /* ball_count × wall_count: resting contacts of the segment */
	unsigned char *disabled; /* ball_count²: pairs in resting contact, skipped for the interval */
	bool any_disabled;
	/* broad phase: each ball's swept box over the segment, the balls sorted
	 * by the box's left edge (kept from segment to segment, so re-sorting is
	 * nearly linear), and the candidate pairs whose boxes overlap */
	double *box;      /* 4 per ball: x_lo, x_hi, y_lo, y_hi */
	int *order;       /* ball_count */
	int *candidates;  /* pairs i·ball_count + j, i < j */
	int candidate_count, candidate_capacity;
	/* the previous impact, for simultaneity across interval boundaries */
	double last_time;
	int last_ball, last_other;
} ExactWorkspace;

static void exact_destroy(void *workspace);

static void *exact_create(const ClScene *scene, const double *params)
{
	ExactWorkspace *w = cl_calloc(1, sizeof *w);
	if (!w)
		return NULL;
	int nb = scene->ball_count, nw = scene->wall_count;
	w->ball_count = nb;
	w->wall_count = nw;
	w->accel = cl_calloc(2 * (size_t)nb, sizeof(double));
	w->resting = cl_calloc((size_t)nb * (size_t)nw, 1);
	w->disabled = cl_calloc((size_t)nb * (size_t)nb, 1);
	w->box = cl_calloc(4 * (size_t)nb, sizeof(double));
	w->order = cl_calloc((size_t)nb, sizeof(int));
	if (!w->accel || !w->resting || !w->disabled || !w->box || !w->order) {
		exact_destroy(w);
		return NULL;
	}
	for (int i = 0; i < nb; i++)
		w->order[i] = i;
	/* length scale L: the extent of the scene; speed scale V: its fastest
	 * initial speed, or the speed of crossing L in T or of falling through L */
	double length = cl_scene_extent(scene), speed = 0.0;
	for (int i = 0; i < nb; i++)
		speed = fmax(speed, hypot(scene->balls[i].velocity.x, scene->balls[i].velocity.y));
	speed = fmax(speed, length / scene->duration);
	speed = fmax(speed, sqrt(length * hypot(scene->gravity.x, scene->gravity.y)));
	w->gap_tolerance = GAP_TOLERANCE * length;
	w->resting_speed = params[PARAM_RESTING_SPEED] * speed;
	w->time_tolerance = TIME_TOLERANCE * cl_scene_dt(scene);
	w->max_events = (int)params[PARAM_MAX_EVENTS];
	w->max_impacts = (long)params[PARAM_MAX_IMPACTS];
	return w;
}

static void exact_destroy(void *workspace)
{
	ExactWorkspace *w = workspace;
	if (!w)
		return;
	free(w->accel);
	free(w->resting);
	free(w->disabled);
	free(w->box);
	free(w->order);
	free(w->candidates);
	free(w);
}

/* ------------------------------------------------------------ root finding */

/* c[0] + c[1]x + … + c[degree]x^degree and its derivative */
static double poly(const double *c, int degree, double x, double *derivative)
{
	double f = c[degree], df = 0.0;
	for (int k = degree - 1; k >= 0; k--) {
		df = df * x + f;
		f = f * x + c[k];
	}
	*derivative = df;
	return f;
}

/* The root of a polynomial that is monotone on [lo, hi] with a sign change
 * there (f_lo = value at lo, nonzero). Newton inside the bracket, bisection
 * when Newton leaves it; ends when the bracket cannot be split further. */
static double bracketed_root(const double *c, int degree, double lo, double hi, double f_lo)
{
	double x = 0.5 * (lo + hi);
	for (int iteration = 0; iteration < 200; iteration++) {
		double df, f = poly(c, degree, x, &df);
		if (f == 0.0)
			return x;
		if ((f > 0.0) == (f_lo > 0.0))
			lo = x;
		else
			hi = x;
		double mid = 0.5 * (lo + hi);
		if (mid <= lo || mid >= hi)
			break;
		double next = x - f / df;
		if (!(next > lo && next < hi))
			next = mid;
		if (fabs(next - x) <= 2.0 * DBL_EPSILON * fabs(x))
			return next;
		x = next;
	}
	return 0.5 * (lo + hi);
}

/* Real roots of c0 + c1x + c2x² in (0, h), ascending; returns their count. */
static int quadratic_roots_in(double c0, double c1, double c2, double h, double *roots)
{
	double r[2];
	int n = 0;
	if (c2 == 0.0) {
		if (c1 != 0.0)
			r[n++] = -c0 / c1;
	} else {
		double disc = c1 * c1 - 4.0 * c2 * c0;
		if (disc < 0.0)
			return 0;
		double q = -0.5 * (c1 + copysign(sqrt(disc), c1));
		if (q == 0.0) {
			r[n++] = 0.0; /* c0 = c1 = 0: double root at 0 */
		} else {
			r[n++] = q / c2;
			r[n++] = c0 / q;
		}
	}
	if (n == 2 && r[0] > r[1]) {
		double t = r[0];
		r[0] = r[1];
		r[1] = t;
	}
	int count = 0;
	for (int k = 0; k < n; k++)
		if (r[k] > 0.0 && r[k] < h)
			roots[count++] = r[k];
	return count;
}

/* The first time in (0, h] at which P = Σ c_k τ^k (the pair's squared
 * distance minus (r1 + r2)²) goes from positive to non-positive, or INFINITY.
 * *graze receives the first interior local minimum of P before it with
 * 0 ≤ P ≤ graze_level (a near-tangent miss), or INFINITY. */
static double quartic_first_crossing(const double *c, double h, double graze_level, double *graze)
{
	*graze = INFINITY;
	/* P' is monotone between the roots of P'' */
	double d1[4] = {c[1], 2.0 * c[2], 3.0 * c[3], 4.0 * c[4]};
	double breaks[4], monotone[5];
	int nb = quadratic_roots_in(2.0 * c[2], 6.0 * c[3], 12.0 * c[4], h, breaks);
	double edges[4] = {0.0};
	int ne = 1;
	for (int k = 0; k < nb; k++)
		edges[ne++] = breaks[k];
	edges[ne++] = h;
	/* P is monotone between the roots of P' */
	int nm = 0;
	monotone[nm++] = 0.0;
	double dummy;
	for (int k = 0; k + 1 < ne; k++) {
		double a = edges[k], b = edges[k + 1];
		double fa = poly(d1, 3, a, &dummy), fb = poly(d1, 3, b, &dummy);
		if (fa != 0.0 && fb != 0.0 && (fa > 0.0) != (fb > 0.0))
			monotone[nm++] = bracketed_root(d1, 3, a, b, fa);
		else if (fb == 0.0 && b < h)
			monotone[nm++] = b;
	}
	monotone[nm++] = h;
	double pa = poly(c, 4, 0.0, &dummy);
	for (int k = 0; k + 1 < nm; k++) {
		double a = monotone[k], b = monotone[k + 1];
		double pb = poly(c, 4, b, &dummy);
		if (pa > 0.0 && pb <= 0.0) {
			if (pb == 0.0)
				return b;
			double t = bracketed_root(c, 4, a, b, pa);
			/* one Newton polish, kept inside the bracket */
			double dp, p = poly(c, 4, t, &dp);
			if (dp != 0.0) {
				double polished = t - p / dp;
				if (polished > a && polished <= b)
					t = polished;
			}
			return t;
		}
		/* an interior minimum that touches without crossing */
		if (k + 2 < nm && pb >= 0.0 && pb <= graze_level && pb < pa && *graze == INFINITY) {
			double pc = poly(c, 4, monotone[k + 2], &dummy);
			if (pc > pb)
				*graze = b;
		}
		pa = pb;
	}
	return INFINITY;
}

/* ---------------------------------------------------------------- impacts */

/* Which impact law applies, for the messages. */
typedef enum ImpactRegime { REGIME_FRICTIONLESS, REGIME_SLIDING, REGIME_STICKING } ImpactRegime;

/* Newton restitution with Coulomb impulse friction on the relative velocity
 * w across unit normal n (pointing to the body whose velocity is w): the
 * change Δw = K·w, with K and ∂Δw/∂n (2×2, row-major) for the saltation. */
static void impact_law(const double n[2], const double w[2], double e, double mu, double K[4], double dn[4])
{
	double s = n[0] * w[0] + n[1] * w[1];
	double t[2] = {-n[1], n[0]};
	double wt = t[0] * w[0] + t[1] * w[1];
	ImpactRegime regime = REGIME_FRICTIONLESS;
	if (mu > 0.0)
		regime = mu * (1.0 + e) * fabs(s) < fabs(wt) ? REGIME_SLIDING : REGIME_STICKING;
	switch (regime) {
	case REGIME_FRICTIONLESS:
		/* Δw = −(1+e)(n·w)n */
		for (int r = 0; r < 2; r++)
			for (int col = 0; col < 2; col++) {
				K[2 * r + col] = -(1.0 + e) * n[r] * n[col];
				dn[2 * r + col] = -(1.0 + e) * (n[r] * w[col] + (r == col ? s : 0.0));
			}
		break;
	case REGIME_SLIDING: {
		/* Δw = (1+e)(n·w)(−n + μσt), σ = sign(t·w), t = Rn with R a quarter turn */
		double sigma = wt > 0.0 ? 1.0 : -1.0;
		double d[2] = {-n[0] + mu * sigma * t[0], -n[1] + mu * sigma * t[1]};
		static const double R[4] = {0.0, -1.0, 1.0, 0.0};
		for (int r = 0; r < 2; r++)
			for (int col = 0; col < 2; col++) {
				K[2 * r + col] = (1.0 + e) * d[r] * n[col];
				dn[2 * r + col] =
					(1.0 + e) * (d[r] * w[col] + s * ((r == col ? -1.0 : 0.0) + mu * sigma * R[2 * r + col]));
			}
		break;
	}
	case REGIME_STICKING:
		/* Δw = −w − e(n·w)n: tangential slip stops, normal restitution */
		for (int r = 0; r < 2; r++)
			for (int col = 0; col < 2; col++) {
				K[2 * r + col] = (r == col ? -1.0 : 0.0) - e * n[r] * n[col];
				dn[2 * r + col] = -e * (n[r] * w[col] + (r == col ? s : 0.0));
			}
		break;
	}
}

/* ∂Δw/∂e and ∂Δw/∂μ of impact_law in the regime it chose. At μ = 0 the
 * friction derivative is the one from above (μ < 0 is not a friction): the
 * sliding law's, zero when w has no tangential part. */
static void impact_law_params(const double n[2], const double w[2], double e, double mu, double de[2], double dmu[2])
{
	double s = n[0] * w[0] + n[1] * w[1];
	double t[2] = {-n[1], n[0]};
	double wt = t[0] * w[0] + t[1] * w[1];
	bool sliding = mu > 0.0 ? mu * (1.0 + e) * fabs(s) < fabs(wt) : true;
	double sigma = wt > 0.0 ? 1.0 : wt < 0.0 ? -1.0 : 0.0;
	for (int r = 0; r < 2; r++) {
		if (sliding) {
			de[r] = s * (-n[r] + mu * sigma * t[r]);
			dmu[r] = (1.0 + e) * s * sigma * t[r];
		} else { /* sticking */
			de[r] = -s * n[r];
			dmu[r] = 0.0;
		}
	}
}

/* A parameter column γ·(D + J·g_θ/s) of an impact: D the reset's own
 * derivative (velocity rows), J = f⁺ − D_xR f⁻ the saltation's jump of the
 * vector field, g_θ the guard's derivative, s = ∇g·f⁻ the approach speed
 * (the parameter analogue of the saltation matrix). */
static void record_column(ClTape *tape, int row, int param, double gamma, const double dv[2], const double J[4],
						  double g_theta, double s)
{
	double *m = cl_tape_c(tape, row, param);
	for (int r = 0; r < 4; r++)
		m[r] = gamma * J[r] * g_theta / s;
	if (dv) {
		m[2] += gamma * dv[0];
		m[3] += gamma * dv[1];
	}
}

/* The relative part Z of a saltation matrix (4×4 on [p v], row-major):
 *   Ξ = D_xR + (f⁺ − D_xR f⁻)∇gᵀ/(∇g·f⁻)
 * for a reset Δw = K(n)w with n = n(p) (G = ∂Δw/∂n·∂n/∂p, zero for a wall),
 * relative velocity w, relative acceleration α, approach speed s = n·w:
 *   pp = Δw nᵀ/s,  pv = 0,  vp = G − (G w + K α) nᵀ/s,  vv = K.
 * A ball with mass share γ gets I ± γZ in its blocks. */
static void saltation_relative(const double n[2], const double w[2], const double alpha[2], const double K[4],
							   const double G[4], double Z[16])
{
	double s = n[0] * w[0] + n[1] * w[1];
	double dw[2] = {K[0] * w[0] + K[1] * w[1], K[2] * w[0] + K[3] * w[1]};
	double q[2];
	for (int r = 0; r < 2; r++)
		q[r] = G[2 * r] * w[0] + G[2 * r + 1] * w[1] + K[2 * r] * alpha[0] + K[2 * r + 1] * alpha[1];
	memset(Z, 0, 16 * sizeof(double));
	for (int r = 0; r < 2; r++)
		for (int col = 0; col < 2; col++) {
			Z[4 * r + col] = dw[r] * n[col] / s;
			Z[4 * (r + 2) + col] = G[2 * r + col] - q[r] * n[col] / s;
			Z[4 * (r + 2) + col + 2] = K[2 * r + col];
		}
}

/* A tape block γZ on [p v] (plus the identity on a diagonal block). */
static void write_block(double *m, bool diagonal, double gamma, const double Z[16])
{
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++)
			m[CL_A(r, c)] = gamma * Z[4 * r + c];
	if (diagonal)
		for (int k = 0; k < CL_BALL_STATE; k++)
			m[CL_A(k, k)] += 1.0;
}

/* Projection that keeps a ball on a wall: p and v lose their normal parts. */
static void record_projection(ClTape *tape, int ball, const double n[2])
{
	cl_tape_factor(tape);
	double *m = cl_tape_a(tape, ball, ball);
	for (int r = 0; r < 2; r++)
		for (int col = 0; col < 2; col++) {
			double p = (r == col ? 1.0 : 0.0) - n[r] * n[col];
			m[CL_A(r, col)] = p;
			m[CL_A(r + 2, col + 2)] = p;
		}
}

/* --------------------------------------------------------------- the step */

typedef enum EventKind { EVENT_NONE, EVENT_WALL, EVENT_PAIR } EventKind;

typedef struct Event {
	EventKind kind;
	double tau; /* from the segment start */
	int ball, other; /* wall index or second ball */
} Event;

typedef struct StepState {
	ClStepContext *ctx;
	ExactWorkspace *w;
	double *x;          /* the state being advanced */
	double t;           /* time since the interval start */
	bool at_start;      /* the very first instant of the run */
} StepState;

static double absolute_time(const StepState *st)
{
	return st->ctx->step * st->ctx->dt + st->t;
}

static const char *ball_id(const StepState *st, int i)
{
	return st->ctx->scene->balls[i].id;
}

static const char *wall_id(const StepState *st, int k)
{
	return st->ctx->scene->walls[k].id;
}

/* "ball and wall \"a\" and \"w\"" or "balls \"a\" and \"b\"": an impact's parties, for messages */
static const char *event_parties(const StepState *st, const Event *e, char *out, size_t size)
{
	bool wall = e->kind == EVENT_WALL;
	snprintf(out, size, "%s \"%s\" and \"%s\"", wall ? "ball and wall" : "balls", ball_id(st, e->ball),
			 wall ? wall_id(st, e->other) : ball_id(st, e->other));
	return out;
}

static void wall_geometry(const StepState *st, int i, int k, double *gap, double n[2])
{
	const ClWall *wall = &st->ctx->scene->walls[k];
	const double *p = st->x + CL_BALL_STATE * i;
	n[0] = wall->normal.x;
	n[1] = wall->normal.y;
	*gap = n[0] * (p[0] - wall->point.x) + n[1] * (p[1] - wall->point.y) - st->ctx->scene->balls[i].radius;
}

/* Resting contacts at the segment start: a ball touching a wall with almost
 * no normal speed while its acceleration pushes into the wall would bounce
 * infinitely often (Zeno). It is put on the surface and slides. */
static bool classify_resting(StepState *st)
{
	ExactWorkspace *w = st->w;
	bool any = false;
	for (int i = 0; i < w->ball_count; i++) {
		double *p = st->x + CL_BALL_STATE * i, *a = w->accel + 2 * i;
		for (int k = 0; k < w->wall_count; k++) {
			double gap, n[2];
			wall_geometry(st, i, k, &gap, n);
			double vn = n[0] * p[2] + n[1] * p[3], an = n[0] * a[0] + n[1] * a[1];
			bool rest = gap <= w->gap_tolerance && fabs(vn) <= w->resting_speed && an < 0.0;
			w->resting[i * w->wall_count + k] = rest;
			if (!rest)
				continue;
			any = true;
			if (st->at_start)
				cl_step_fail(st->ctx, CL_STATUS_IN_CONTACT,
							 "ball \"%s\" starts resting on wall \"%s\" (gap %.3g, normal speed %.3g): the "
							 "contact is active at t = 0, so the gradient is one-sided",
							 ball_id(st, i), wall_id(st, k), gap, vn);
			else
				cl_step_fail(st->ctx, CL_STATUS_ZENO,
							 "ball \"%s\" rests on wall \"%s\" at t = %.9g s (resting contact, Zeno limit of "
							 "bounces): it slides on the surface from here, and the gradient is not exact",
							 ball_id(st, i), wall_id(st, k), absolute_time(st));
			p[0] -= gap * n[0];
			p[1] -= gap * n[1];
			p[2] -= vn * n[0];
			p[3] -= vn * n[1];
			a[0] -= an * n[0];
			a[1] -= an * n[1];
		}
	}
	return any;
}

typedef struct Search {
	Event best;
	Event second; /* the next earliest, for simultaneity */
	double graze_tau;
	int graze_ball, graze_other; /* other < 0: wall −1 − other */
} Search;

static void offer(Search *search, EventKind kind, double tau, int ball, int other)
{
	Event e = {kind, tau, ball, other};
	if (tau < search->best.tau) {
		search->second = search->best;
		search->best = e;
	} else if (tau < search->second.tau) {
		search->second = e;
	}
}

static void offer_graze(Search *search, double tau, int ball, int other)
{
	if (tau < search->graze_tau) {
		search->graze_tau = tau;
		search->graze_ball = ball;
		search->graze_other = other;
	}
}

static void search_walls(StepState *st, double h, Search *search)
{
	ExactWorkspace *w = st->w;
	for (int i = 0; i < w->ball_count; i++) {
		const double *p = st->x + CL_BALL_STATE * i, *a = w->accel + 2 * i;
		for (int k = 0; k < w->wall_count; k++) {
			if (w->resting[i * w->wall_count + k])
				continue;
			double gap, n[2];
			wall_geometry(st, i, k, &gap, n);
			double vn = n[0] * p[2] + n[1] * p[3], an = n[0] * a[0] + n[1] * a[1];
			if (gap <= w->gap_tolerance) {
				if (st->at_start && vn <= w->resting_speed)
					cl_step_fail(st->ctx, CL_STATUS_IN_CONTACT,
								 "ball \"%s\" starts touching wall \"%s\" (gap %.3g, normal speed %.3g): the "
								 "contact is active at t = 0, so the gradient is one-sided",
								 ball_id(st, i), wall_id(st, k), gap, vn);
				/* only an actual overlap impacts at once: a positive gap within
				 * tolerance still has its root, so the forward map stays
				 * continuous for perturbations smaller than the tolerance */
				if (vn < 0.0 && gap <= 0.0) {
					offer(search, EVENT_WALL, 0.0, i, k);
					continue;
				}
			} else if (gap - fabs(vn) * h - 0.5 * fabs(an) * h * h > w->gap_tolerance) {
				continue; /* cannot reach the wall in this segment */
			}
			/* gap(τ) = gap + vn τ + ½ an τ²; the approaching root has gap' = −√disc */
			double disc = vn * vn - 2.0 * an * gap;
			if (disc < 0.0) {
				double vertex = -vn / an;
				if (an > 0.0 && vertex > 0.0 && vertex < h && -disc / (2.0 * an) <= w->gap_tolerance)
					offer_graze(search, vertex, i, -1 - k);
				continue;
			}
			double root = sqrt(disc), tau;
			if (vn < 0.0)
				tau = 2.0 * gap / (root - vn);
			else if (an < 0.0)
				tau = -(vn + root) / an;
			else
				continue;
			if (tau > 0.0 && tau <= h)
				offer(search, EVENT_WALL, tau, i, k);
		}
	}
}

static void pair_kinematics(const StepState *st, int i, int j, double d[2], double wv[2], double alpha[2])
{
	const double *pi = st->x + CL_BALL_STATE * i, *pj = st->x + CL_BALL_STATE * j;
	const double *ai = st->w->accel + 2 * i, *aj = st->w->accel + 2 * j;
	for (int c = 0; c < 2; c++) {
		d[c] = pi[c] - pj[c];
		wv[c] = pi[2 + c] - pj[2 + c];
		alpha[c] = ai[c] - aj[c];
	}
}

static void disable_pair(ExactWorkspace *w, int i, int j)
{
	w->disabled[i * w->ball_count + j] = 1;
	w->any_disabled = true;
}

/* Narrow phase for one pair: its first impact in the segment, or a graze. */
static void search_pair(StepState *st, double h, Search *search, int i, int j)
{
	ExactWorkspace *w = st->w;
	const ClScene *scene = st->ctx->scene;
	double d[2], wv[2], alpha[2];
	pair_kinematics(st, i, j, d, wv, alpha);
	double rho = scene->balls[i].radius + scene->balls[j].radius;
	double dist = hypot(d[0], d[1]), gap = dist - rho;
	double speed = hypot(wv[0], wv[1]), accel = hypot(alpha[0], alpha[1]);
	if (gap > w->gap_tolerance && gap - speed * h - 0.5 * accel * h * h > w->gap_tolerance)
		return; /* cannot reach each other in this segment */
	if (gap <= w->gap_tolerance) {
		double s = (d[0] * wv[0] + d[1] * wv[1]) / dist;
		/* second derivative of the distance: pushing together if < 0 */
		double curvature = (d[0] * alpha[0] + d[1] * alpha[1] + speed * speed - s * s) / dist;
		if (st->at_start && s <= w->resting_speed)
			cl_step_fail(st->ctx, CL_STATUS_IN_CONTACT,
						 "balls \"%s\" and \"%s\" start touching (gap %.3g, normal speed %.3g): the "
						 "contact is active at t = 0, so the gradient is one-sided",
						 ball_id(st, i), ball_id(st, j), gap, s);
		if (fabs(s) <= w->resting_speed && curvature < 0.0) {
			cl_step_fail(st->ctx, CL_STATUS_ZENO,
						 "balls \"%s\" and \"%s\" are in resting contact at t = %.9g s (Zeno limit of "
						 "bounces): their contact is not resolved in this interval, and the gradient is "
						 "not exact",
						 ball_id(st, i), ball_id(st, j), absolute_time(st));
			disable_pair(w, i, j);
			return;
		}
		if (s < 0.0 && gap <= 0.0) {
			offer(search, EVENT_PAIR, 0.0, i, j);
			return;
		}
	}
	double c[5] = {
		d[0] * d[0] + d[1] * d[1] - rho * rho,
		2.0 * (d[0] * wv[0] + d[1] * wv[1]),
		speed * speed + d[0] * alpha[0] + d[1] * alpha[1],
		wv[0] * alpha[0] + wv[1] * alpha[1],
		0.25 * accel * accel,
	};
	double graze;
	double tau = quartic_first_crossing(c, h, 2.0 * rho * w->gap_tolerance, &graze);
	if (tau <= h)
		offer(search, EVENT_PAIR, tau, i, j);
	if (graze < tau)
		offer_graze(search, graze, i, j);
}

/* The range of p + vτ + ½aτ² over τ in [0, h]. */
static void swept_range(double p, double v, double a, double h, double *lo, double *hi)
{
	double end = p + h * (v + 0.5 * h * a);
	*lo = fmin(p, end);
	*hi = fmax(p, end);
	if (a != 0.0) {
		double vertex = -v / a;
		if (vertex > 0.0 && vertex < h) {
			double extreme = p + vertex * (v + 0.5 * vertex * a);
			*lo = fmin(*lo, extreme);
			*hi = fmax(*hi, extreme);
		}
	}
}

static bool add_candidate(ExactWorkspace *w, int i, int j)
{
	if (!cl_grow(&w->candidates, &w->candidate_capacity, (size_t)w->candidate_count + 1, sizeof *w->candidates))
		return false;
	w->candidates[w->candidate_count++] = i < j ? i * w->ball_count + j : j * w->ball_count + i;
	return true;
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Broad phase, then the narrow phase on the candidates in (i, j) order, the
 * order of an all-pairs loop, so ties between equal impact times resolve
 * as they would without it. A pair is dropped only when the boxes swept by
 * the balls over the segment, grown by their radii and the gap tolerance,
 * are disjoint: then the balls stay more than r_i + r_j + 2·tolerance apart,
 * and the narrow phase could report neither an impact nor a graze. False
 * when the candidate list cannot grow (out of memory). */
static bool search_pairs(StepState *st, double h, Search *search)
{
	ExactWorkspace *w = st->w;
	const ClScene *scene = st->ctx->scene;
	int nb = w->ball_count;
	for (int i = 0; i < nb; i++) {
		const double *p = st->x + CL_BALL_STATE * i, *a = w->accel + 2 * i;
		double *box = w->box + 4 * i;
		double grow = scene->balls[i].radius + w->gap_tolerance;
		swept_range(p[0], p[2], a[0], h, &box[0], &box[1]);
		swept_range(p[1], p[3], a[1], h, &box[2], &box[3]);
		box[0] -= grow;
		box[1] += grow;
		box[2] -= grow;
		box[3] += grow;
	}
	/* insertion sort by the left edge: the order changes little between segments */
	for (int k = 1; k < nb; k++) {
		int ball = w->order[k];
		double key = w->box[4 * ball];
		int m = k - 1;
		for (; m >= 0 && w->box[4 * w->order[m]] > key; m--)
			w->order[m + 1] = w->order[m];
		w->order[m + 1] = ball;
	}
	w->candidate_count = 0;
	for (int k = 0; k < nb; k++) {
		int i = w->order[k];
		const double *bi = w->box + 4 * i;
		for (int m = k + 1; m < nb; m++) {
			int j = w->order[m];
			const double *bj = w->box + 4 * j;
			if (bj[0] > bi[1])
				break; /* every later box starts further right */
			if (bj[2] <= bi[3] && bi[2] <= bj[3] && !add_candidate(w, i, j))
				return false;
		}
	}
	if (w->candidate_count > 1) /* qsort of a NULL array is undefined even for 0 items */
		qsort(w->candidates, (size_t)w->candidate_count, sizeof *w->candidates, compare_ints);
	for (int k = 0; k < w->candidate_count; k++) {
		int i = w->candidates[k] / nb, j = w->candidates[k] % nb;
		if (!w->disabled[i * nb + j])
			search_pair(st, h, search, i, j);
	}
	return true;
}

static void drift(StepState *st, double tau)
{
	for (int i = 0; i < st->w->ball_count; i++) {
		double *p = st->x + CL_BALL_STATE * i;
		const double *a = st->w->accel + 2 * i;
		p[0] += tau * (p[2] + 0.5 * tau * a[0]);
		p[1] += tau * (p[3] + 0.5 * tau * a[1]);
		p[2] += tau * a[0];
		p[3] += tau * a[1];
	}
	st->t += tau;
}

static bool share_ball(const Event *a, const Event *b)
{
	if (a->ball == b->ball)
		return true;
	if (a->kind == EVENT_PAIR && (a->other == b->ball || (b->kind == EVENT_PAIR && a->other == b->other)))
		return true;
	return b->kind == EVENT_PAIR && b->other == a->ball;
}

static void describe(const StepState *st, const Event *e, char *text, size_t size)
{
	if (e->kind == EVENT_WALL)
		snprintf(text, size, "ball \"%s\" hits wall \"%s\"", ball_id(st, e->ball), wall_id(st, e->other));
	else
		snprintf(text, size, "balls \"%s\" and \"%s\" collide", ball_id(st, e->ball), ball_id(st, e->other));
}

static void check_simultaneous(StepState *st, const Event *e, const Search *search)
{
	ExactWorkspace *w = st->w;
	double now = absolute_time(st);
	Event last = {w->last_other < 0 ? EVENT_WALL : EVENT_PAIR, 0.0, w->last_ball,
				  w->last_other < 0 ? -1 - w->last_other : w->last_other};
	bool same_as_last = last.ball == e->ball && last.kind == e->kind && last.other == e->other;
	const Event *partner = NULL;
	if (search->second.kind != EVENT_NONE && search->second.tau - e->tau <= w->time_tolerance &&
		share_ball(e, &search->second))
		partner = &search->second;
	else if (now - w->last_time <= w->time_tolerance && !same_as_last && share_ball(e, &last))
		partner = &last;
	if (partner) {
		char a[2 * CL_ID_MAX + 32], b[2 * CL_ID_MAX + 32];
		describe(st, e, a, sizeof a);
		describe(st, partner, b, sizeof b);
		cl_step_fail(st->ctx, CL_STATUS_SIMULTANEOUS,
					 "%s at the same instant t = %.9g s as %s: resolved one after the other, but the outcome "
					 "depends on the order and the gradient is not defined",
					 a, now, b);
	}
	w->last_time = now;
	w->last_ball = e->ball;
	w->last_other = e->kind == EVENT_WALL ? -1 - e->other : e->other;
}

/* The parameter columns of ball i's impact on wall k (guard g = n·(p − q) − r,
 * approach speed s = n·v < 0). */
static void record_wall_columns(StepState *st, int i, int k, const double n[2], const double v[2], const double a[2],
								const double K[4], const double dn[4])
{
	ClTape *tape = st->ctx->tape;
	const ClScene *scene = st->ctx->scene;
	const ClWall *wall = &scene->walls[k];
	const double *p = st->x + CL_BALL_STATE * i;
	double s = n[0] * v[0] + n[1] * v[1];
	double J[4] = {K[0] * v[0] + K[1] * v[1], K[2] * v[0] + K[3] * v[1], -(K[0] * a[0] + K[1] * a[1]),
				   -(K[2] * a[0] + K[3] * a[1])};
	double de[2], dmu[2];
	impact_law_params(n, v, scene->elasticity, scene->friction, de, dmu);
	record_column(tape, i, CL_PHYS_ELASTICITY, 1.0, de, J, 0.0, s);
	record_column(tape, i, CL_PHYS_FRICTION, 1.0, dmu, J, 0.0, s);
	record_column(tape, i, cl_phys_radius(i), 1.0, NULL, J, -1.0, s);
	record_column(tape, i, cl_phys_wall(scene, k, 0), 1.0, NULL, J, -n[0], s);
	record_column(tape, i, cl_phys_wall(scene, k, 1), 1.0, NULL, J, -n[1], s);
	/* the angle φ in degrees turns n = (cos φ, sin φ) along t = (−sin φ, cos φ) */
	double rad = 3.14159265358979323846 / 180.0;
	double t[2] = {-n[1] * rad, n[0] * rad};
	double dv[2] = {dn[0] * t[0] + dn[1] * t[1], dn[2] * t[0] + dn[3] * t[1]};
	record_column(tape, i, cl_phys_wall(scene, k, 2), 1.0, dv, J, t[0] * (p[0] - wall->point.x) + t[1] * (p[1] - wall->point.y),
				  s);
}

static void resolve_wall(StepState *st, const Event *e)
{
	ClStepContext *ctx = st->ctx;
	ExactWorkspace *w = st->w;
	int i = e->ball, k = e->other;
	double *p = st->x + CL_BALL_STATE * i;
	const double *a = w->accel + 2 * i;
	double gap, n[2];
	wall_geometry(st, i, k, &gap, n);
	double vn = n[0] * p[2] + n[1] * p[3], an = n[0] * a[0] + n[1] * a[1];
	cl_step_contact(ctx, absolute_time(st), i, -1 - k);
	if (vn > -w->resting_speed) {
		if (an < 0.0) {
			/* too slow to bounce measurably, pushed in: the ball comes to rest */
			cl_step_fail(ctx, CL_STATUS_ZENO,
						 "ball \"%s\" comes to rest on wall \"%s\" at t = %.9g s (approach speed %.3g, Zeno "
						 "limit of bounces): it slides on the surface from here, and the gradient is not exact",
						 ball_id(st, i), wall_id(st, k), absolute_time(st), -vn);
			p[2] -= vn * n[0];
			p[3] -= vn * n[1];
			if (ctx->tape)
				record_projection(ctx->tape, i, n);
			return;
		}
		cl_step_fail(ctx, CL_STATUS_GRAZING,
					 "ball \"%s\" grazes wall \"%s\" at t = %.9g s (approach speed %.3g): the saltation matrix is "
					 "undefined at a tangential contact, so the gradient is not exact",
					 ball_id(st, i), wall_id(st, k), absolute_time(st), -vn);
		if (vn >= 0.0)
			return; /* touching without approaching: no impulse */
	}
	double K[4], dn[4];
	double v[2] = {p[2], p[3]};
	impact_law(n, v, ctx->scene->elasticity, ctx->scene->friction, K, dn);
	if (ctx->tape) {
		static const double no_turn[4] = {0.0, 0.0, 0.0, 0.0}; /* a state change does not turn a wall */
		double Z[16];
		saltation_relative(n, v, a, K, no_turn, Z);
		cl_tape_factor(ctx->tape);
		write_block(cl_tape_a(ctx->tape, i, i), true, 1.0, Z);
		if (ctx->tape->record_params)
			record_wall_columns(st, i, k, n, v, a, K, dn);
	}
	p[2] += K[0] * v[0] + K[1] * v[1];
	p[3] += K[2] * v[0] + K[3] * v[1];
}

static void resolve_pair(StepState *st, const Event *e)
{
	ClStepContext *ctx = st->ctx;
	ExactWorkspace *w = st->w;
	const ClScene *scene = ctx->scene;
	int i = e->ball, j = e->other;
	double d[2], wv[2], alpha[2];
	pair_kinematics(st, i, j, d, wv, alpha);
	double dist = hypot(d[0], d[1]);
	double n[2] = {d[0] / dist, d[1] / dist};
	double s = n[0] * wv[0] + n[1] * wv[1];
	cl_step_contact(ctx, absolute_time(st), i, j);
	if (s > -w->resting_speed) {
		double speed = hypot(wv[0], wv[1]);
		double curvature = (d[0] * alpha[0] + d[1] * alpha[1] + speed * speed - s * s) / dist;
		if (curvature < 0.0) {
			cl_step_fail(ctx, CL_STATUS_ZENO,
						 "balls \"%s\" and \"%s\" come into resting contact at t = %.9g s (approach speed %.3g, "
						 "Zeno limit of bounces): their contact is not resolved for the rest of this interval, "
						 "and the gradient is not exact",
						 ball_id(st, i), ball_id(st, j), absolute_time(st), -s);
			disable_pair(w, i, j);
		} else {
			cl_step_fail(ctx, CL_STATUS_GRAZING,
						 "balls \"%s\" and \"%s\" graze at t = %.9g s (approach speed %.3g): the saltation matrix "
						 "is undefined at a tangential contact, so the gradient is not exact",
						 ball_id(st, i), ball_id(st, j), absolute_time(st), -s);
		}
		if (s >= 0.0)
			return;
	}
	double mi = scene->balls[i].mass, mj = scene->balls[j].mass;
	double gamma_i = mj / (mi + mj), gamma_j = mi / (mi + mj);
	double K[4], dn[4];
	impact_law(n, wv, scene->elasticity, scene->friction, K, dn);
	if (ctx->tape) {
		/* ∂n/∂p_i = (I − n nᵀ)/‖d‖ */
		double P[4] = {(1.0 - n[0] * n[0]) / dist, -n[0] * n[1] / dist, -n[1] * n[0] / dist,
					   (1.0 - n[1] * n[1]) / dist};
		double G[4];
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 2; c++)
				G[2 * r + c] = dn[2 * r] * P[c] + dn[2 * r + 1] * P[2 + c];
		double Z[16];
		saltation_relative(n, wv, alpha, K, G, Z);
		cl_tape_factor(ctx->tape);
		write_block(cl_tape_a(ctx->tape, i, i), true, gamma_i, Z);
		write_block(cl_tape_a(ctx->tape, i, j), false, -gamma_i, Z);
		write_block(cl_tape_a(ctx->tape, j, i), false, -gamma_j, Z);
		write_block(cl_tape_a(ctx->tape, j, j), true, gamma_j, Z);
		if (ctx->tape->record_params) {
			/* guard g = ‖d‖ − r_i − r_j; ball i takes γ_i of the relative jump J, ball j −γ_j */
			double dw[2] = {K[0] * wv[0] + K[1] * wv[1], K[2] * wv[0] + K[3] * wv[1]};
			double J[4] = {dw[0], dw[1], 0.0, 0.0};
			for (int r = 0; r < 2; r++)
				J[2 + r] = -(G[2 * r] * wv[0] + G[2 * r + 1] * wv[1] + K[2 * r] * alpha[0] + K[2 * r + 1] * alpha[1]);
			double de[2], dmu[2];
			impact_law_params(n, wv, scene->elasticity, scene->friction, de, dmu);
			ClTape *tape = ctx->tape;
			record_column(tape, i, CL_PHYS_ELASTICITY, gamma_i, de, J, 0.0, s);
			record_column(tape, j, CL_PHYS_ELASTICITY, -gamma_j, de, J, 0.0, s);
			record_column(tape, i, CL_PHYS_FRICTION, gamma_i, dmu, J, 0.0, s);
			record_column(tape, j, CL_PHYS_FRICTION, -gamma_j, dmu, J, 0.0, s);
			for (int b = 0; b < 2; b++) {
				int ball = b ? j : i;
				record_column(tape, i, cl_phys_radius(ball), gamma_i, NULL, J, -1.0, s);
				record_column(tape, j, cl_phys_radius(ball), -gamma_j, NULL, J, -1.0, s);
			}
			/* γ_i = m_j/M, γ_j = m_i/M: ∂γ_i/∂m_i = −m_j/M² = −∂γ_j/∂m_i, and likewise for m_j */
			double M2 = (mi + mj) * (mi + mj);
			double by_mi[2] = {-mj / M2 * dw[0], -mj / M2 * dw[1]}, by_mj[2] = {mi / M2 * dw[0], mi / M2 * dw[1]};
			record_column(tape, i, cl_phys_mass(i), 1.0, by_mi, J, 0.0, s);
			record_column(tape, j, cl_phys_mass(i), 1.0, by_mi, J, 0.0, s);
			record_column(tape, i, cl_phys_mass(j), 1.0, by_mj, J, 0.0, s);
			record_column(tape, j, cl_phys_mass(j), 1.0, by_mj, J, 0.0, s);
		}
	}
	double dw[2] = {K[0] * wv[0] + K[1] * wv[1], K[2] * wv[0] + K[3] * wv[1]};
	double *pi = st->x + CL_BALL_STATE * i, *pj = st->x + CL_BALL_STATE * j;
	for (int c = 0; c < 2; c++) {
		pi[2 + c] += gamma_i * dw[c];
		pj[2 + c] -= gamma_j * dw[c];
	}
}

static void report_graze(StepState *st, const Search *search)
{
	int i = search->graze_ball, other = search->graze_other;
	double time = absolute_time(st) + search->graze_tau;
	if (other < 0)
		cl_step_fail(st->ctx, CL_STATUS_GRAZING,
					 "ball \"%s\" passes wall \"%s\" at t = %.9g s touching it tangentially: a perturbation "
					 "decides between no contact and a contact, so the gradient is not defined",
					 ball_id(st, i), wall_id(st, -1 - other), time);
	else
		cl_step_fail(st->ctx, CL_STATUS_GRAZING,
					 "balls \"%s\" and \"%s\" pass each other at t = %.9g s touching tangentially: a perturbation "
					 "decides between no contact and a contact, so the gradient is not defined",
					 ball_id(st, i), ball_id(st, other), time);
}

static void exact_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	const ClScene *scene = ctx->scene;
	ExactWorkspace *w = ctx->workspace;
	int nb = w->ball_count;
	memcpy(s_next, s, sizeof(double) * CL_BALL_STATE * (size_t)nb);
	if (ctx->step == 0) {
		w->last_time = -INFINITY;
		w->last_ball = -1;
		w->last_other = 0;
		w->impacts = 0;
	}
	if (w->any_disabled) {
		memset(w->disabled, 0, (size_t)nb * (size_t)nb);
		w->any_disabled = false;
	}
	StepState st = {.ctx = ctx, .w = w, .x = s_next, .t = 0.0, .at_start = ctx->step == 0};
	int events = 0;
	bool resolve = true;
	for (;;) {
		for (int i = 0; i < nb; i++) {
			double inverse_mass = 1.0 / scene->balls[i].mass;
			w->accel[2 * i] = u[2 * i] * inverse_mass + scene->gravity.x;
			w->accel[2 * i + 1] = u[2 * i + 1] * inverse_mass + scene->gravity.y;
		}
		bool resting = classify_resting(&st);
		double h = fmax(0.0, ctx->dt - st.t);
		Search search = {
			.best = {EVENT_NONE, INFINITY, -1, 0}, .second = {EVENT_NONE, INFINITY, -1, 0}, .graze_tau = INFINITY};
		if (resolve) {
			search_walls(&st, h, &search);
			if (!search_pairs(&st, h, &search)) {
				cl_step_out_of_memory(ctx, "the exact backend's list of ball pairs");
				return;
			}
		}
		st.at_start = false;
		Event e = search.best;
		double tau = e.kind == EVENT_NONE ? h : e.tau;
		if (search.graze_tau <= tau)
			report_graze(&st, &search);
		if (tau > 0.0) {
			drift(&st, tau);
			if (ctx->tape)
				cl_tape_drift(ctx->tape, tau);
		}
		if (resting && ctx->tape)
			for (int i = 0; i < nb; i++)
				for (int k = 0; k < w->wall_count; k++)
					if (w->resting[i * w->wall_count + k])
						record_projection(ctx->tape, i, (const double[2]){scene->walls[k].normal.x,
																		   scene->walls[k].normal.y});
		if (e.kind == EVENT_NONE) {
			if (ctx->tape && ctx->tape->record_params) {
				/* the interval ends at dt = T/N: ∂s_{n+1}/∂T = f(s_{n+1})/N */
				cl_tape_factor(ctx->tape);
				for (int i = 0; i < nb; i++) {
					double *m = cl_tape_c(ctx->tape, i, CL_PHYS_DURATION);
					const double *p = s_next + CL_BALL_STATE * i;
					m[0] = p[2] / scene->steps;
					m[1] = p[3] / scene->steps;
					m[2] = w->accel[2 * i] / scene->steps;
					m[3] = w->accel[2 * i + 1] / scene->steps;
				}
			}
			break;
		}
		check_simultaneous(&st, &e, &search);
		if (e.kind == EVENT_WALL)
			resolve_wall(&st, &e);
		else
			resolve_pair(&st, &e);
		char parties[3 * CL_ID_MAX + 32];
		if (++w->impacts > w->max_impacts) {
			cl_step_fail(ctx, CL_STATUS_IMPACT_LIMIT,
						 "more than %ld impacts by t = %.9g s (max_impacts; the last between %s): the impacts do "
						 "not die out, as in a nearly inelastic cluster; the run stops here",
						 w->max_impacts, absolute_time(&st), event_parties(&st, &e, parties, sizeof parties));
			return;
		}
		if (++events >= w->max_events) {
			cl_step_fail(ctx, CL_STATUS_ZENO,
						 "%d impacts in the control interval ending at t = %.9g s (the last between %s): resting "
						 "contact or a Zeno sequence; the remaining contacts of this interval are not resolved, "
						 "and the gradient is not exact",
						 events, (ctx->step + 1) * ctx->dt, event_parties(&st, &e, parties, sizeof parties));
			resolve = false;
		}
	}
}

static const ClParamDesc exact_params[] = {
	[PARAM_RESTING_SPEED] = {"resting_speed", CL_PARAM_KIND_REAL, 1e-6, 1e-12, 1e-2, "× speed scale",
							 "approach speed below which an impact is grazing, or resting contact (Zeno) when pushed "
							 "into the surface; relative to max(|v0|, L/T, √(L|g|))",
							 NULL},
	[PARAM_MAX_EVENTS] = {"max_events", CL_PARAM_KIND_INT, 1000, 10, 1e6, "impacts",
						  "impacts allowed in one control interval before it is declared Zeno", NULL},
	[PARAM_MAX_IMPACTS] = {"max_impacts", CL_PARAM_KIND_INT, 50000, 100, 1e9, "impacts",
						   "impacts allowed in the whole run before it is stopped (impact-limit): bounds the time "
						   "and memory of scenes whose impacts never die out",
						   NULL},
};

const ClBackend cl_backend_exact = {
	.info = {
		.id = "exact",
		.label = "Exact (event-driven)",
		.family = "exact",
		.mirrors = "analytical gradients",
		.toi = false,
		.reference = true,
		.gradient_is_derivative = true,
		.intro = "The reference: it finds the exact moment of every impact, so its gradients are the true ones.",
		.summary =
			"Ground truth of the continuous problem with piecewise-constant controls, in float64. Each ball "
			"moves under constant acceleration u/m + g within a control interval; impacts are found at their "
			"exact times (ball-wall quadratic, ball-ball quartic with bracketed roots) and resolved one by one "
			"with Newton restitution and, when friction > 0, a Newton-Coulomb impulse (sliding or sticking; "
			"mass-weighted between balls). The step Jacobian goes through the saltation matrix of every impact, "
			"including its normal-acceleration term that time-stepping TOI schemes miss, so the gradient is "
			"exact. It is not exact, and is reported instead of returned silently, where the derivative does "
			"not exist or the model is ambiguous: grazing contacts (approach speed below resting_speed, or a "
			"tangential near-miss within 1e-9 L), simultaneous impacts sharing a ball (within 1e-9 dt; "
			"resolved in sequence, order-dependent), resting contact / Zeno (slow impacts pushed into the "
			"surface, or more than max_events impacts in one interval: the ball then rests and slides on a "
			"wall without friction; a resting ball pair is left unresolved for that interval), and contacts "
			"already active at t = 0 (one-sided gradient). A run whose impacts never die out (a nearly inelastic "
			"cluster, max_events in interval after interval) is stopped after max_impacts impacts in all "
			"(impact-limit), with no gradient. L is the scene's extent, V = max(|v0|, L/T, "
			"sqrt(L|g|)), dt = T/N.",
		.params = exact_params,
		.param_count = 3,
	},
	.create = exact_create,
	.destroy = exact_destroy,
	.step = exact_step,
	.tape_blocks_per_ball = false,
	.param_adjoints = 1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY |
					  1u << CL_PARAM_DURATION | 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS |
					  1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE,
	.accel_form = true,
};
