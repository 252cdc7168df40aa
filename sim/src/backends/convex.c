/* DiffCoSim's convex-optimisation contact model, with and without time of
 * impact (backends-paper.md §2): the impulse of every approaching contact
 * solves the maximum-dissipation QP  min ½fᵀGf + fᵀw,  f_k in the friction
 * cone, with w = J·v_rel, G = J·M⁻¹·Jᵀ and Δv = (1+e)·M⁻¹·Jᵀf; the position
 * then moves with the *old* velocity (forward Euler), plus the TOI shift.
 *
 * J is constant (wall normals; the detached ball–ball normal), so the QP
 * depends on the velocities only, and its derivative is the implicit
 * derivative of the KKT system for the active set: the closed-form cone
 * projection for a contact that couples to no other, an exact active-set
 * (Lawson–Hanson) solve for contacts that share a ball and interact.
 */
#include "../core.h"
#include "predicted_contact.h"

#include <stdlib.h>
#include <string.h>

enum { PARAM_PRECISION, PARAM_TOI_CLAMP };

typedef struct ConvexContact {
	int a, b;          /* balls; b < 0 for a wall contact */
	int wall;          /* wall index, or −1 */
	double n[2], t[2]; /* the rows of J: normal and tangent (−n_y, n_x), constants */
	double w[2];       /* J·v_rel as the peer's QP receives it (working precision) */
	double w_double[2]; /* the same in double: consistent with G for the coupled solve */
	double kappa;      /* this contact's own block of G is κ·I */
	double share[2];   /* fraction of the relative impulse ball a gets (+) and ball b (−) */
	double f[2];       /* f̃ = κ·f, the QP solution per unit effective mass */
	ClDual shift;      /* TOI: min(τ − dt, 0), tangents over a (slots 0–3) and b (4–7) */
	ClDual shift_params; /* the same along the scene's numbers (S_ slots): parameter columns */
	int derivative_begin, derivative_count; /* its group's ConvexDerivatives, its own among them */
	int component;     /* union-find parent, then the root */
	int coupling_begin, coupling_count;
} ConvexContact;

/* ∂f̃_k/∂w_l for one pair of contacts in the same component (2×2, row-major). */
typedef struct ConvexCoupling {
	int contact;
	double F[4];
} ConvexCoupling;

/* ∂f̃/∂θ of one contact for θ the friction or a ball's mass (cl_phys_index):
 * the QP's solution moves with them, on its active set. */
typedef struct ConvexDerivative {
	int contact, param;
	double df[2];
} ConvexDerivative;

/* Tangent slots of the TOI shift's parameter pass (the state held). */
enum { S_RADIUS, S_OTHER_RADIUS, S_POINT_X = 1, S_POINT_Y, S_ANGLE, S_DT, S_SLOTS };

typedef struct ConvexWorkspace {
	double *state;   /* the start-of-step state, working precision */
	double *impulse; /* 4 per ball: Δx (2), Δv (2) */
	ConvexContact *contacts;
	int contact_capacity;
	ConvexCoupling *couplings;
	int coupling_capacity;
	double *solver; /* scratch of the coupled solve */
	int solver_capacity;
	int *members;
	int member_capacity;
	ConvexDerivative *derivatives;
	int derivative_capacity, derivative_count;
	bool out_of_memory; /* a scratch array above could not grow: the step fails */
} ConvexWorkspace;

typedef struct ConvexRule {
	ClArith value, tangent;
	bool toi;
	double dt, clamp, elastic; /* elastic = 1 + e, a float32 tensor op in the peer */
	double mu;
	bool params; /* the tape records parameter columns */
} ConvexRule;

static void convex_destroy(void *workspace);

static void *convex_create(const ClScene *scene, const double *params)
{
	(void)params;
	ConvexWorkspace *ws = cl_calloc(1, sizeof *ws);
	size_t n = (size_t)scene->ball_count;
	if (ws && (!(ws->state = cl_calloc(CL_BALL_STATE * n, sizeof(double))) ||
			   !(ws->impulse = cl_calloc(4 * n, sizeof(double))))) {
		convex_destroy(ws);
		return NULL;
	}
	return ws;
}

static void convex_destroy(void *workspace)
{
	ConvexWorkspace *ws = workspace;
	free(ws->state);
	free(ws->impulse);
	free(ws->contacts);
	free(ws->couplings);
	free(ws->solver);
	free(ws->members);
	free(ws->derivatives);
	free(ws);
}

/* ------------------------------------------------------------ detection */

/* Ball a against a plane: predicted gap n·(x + v·dt − point) < r and
 * approaching (s = n·v < 0). Sets the contact's normal, w and shift. */
static bool wall_contact(const ClArith *m, const ConvexRule *rule, const double *state, double radius,
						 const ClWall *wall, ConvexContact *c)
{
	ClDual b[4], distance, normal_speed;
	double n[2];
	if (!cl_predicted_wall_contact(m, rule->dt, state, radius, wall, b, n, &distance, &normal_speed))
		return false;
	double nx = n[0], ny = n[1];
	c->n[0] = nx;
	c->n[1] = ny;
	c->t[0] = -ny;
	c->t[1] = nx;
	c->w[0] = normal_speed.v;
	c->w[1] = cl_arith_round(m, cl_arith_round(m, -ny * b[2].v) + cl_arith_round(m, nx * b[3].v));
	c->w_double[0] = nx * b[2].v + ny * b[3].v;
	c->w_double[1] = -ny * b[2].v + nx * b[3].v;
	if (rule->toi)
		c->shift = cl_toi_shift(m, rule->clamp, cl_dual_const(m, rule->dt),
								cl_dual_sub(m, distance, cl_dual_const(m, radius)), normal_speed);
	return true;
}

/* Balls a < b: one test on δ = (x_a + v_a·dt) − (x_b + v_b·dt), n = δ/‖δ‖.
 * The normal in τ is differentiable; the one in J is detached (a constant). */
static bool pair_contact(const ClArith *m, const ConvexRule *rule, const double *state_a, const double *state_b,
						 double reach, ConvexContact *c)
{
	ClDual a[4], b[4], delta[2], distance;
	if (!cl_predicted_pair_contact(m, rule->dt, state_a, state_b, reach, a, b, delta, &distance))
		return false;
	ClDual nx = cl_dual_div_expanded(m, delta[0], distance), ny = cl_dual_div_expanded(m, delta[1], distance);
	ClDual wx = cl_dual_sub(m, a[2], b[2]), wy = cl_dual_sub(m, a[3], b[3]);
	ClDual normal_speed = cl_dual_add(m, cl_dual_mul(m, nx, wx), cl_dual_mul(m, ny, wy));
	if (!(normal_speed.v < 0.0))
		return false;
	c->n[0] = nx.v;
	c->n[1] = ny.v;
	c->t[0] = -ny.v;
	c->t[1] = nx.v;
	c->w[0] = normal_speed.v;
	c->w[1] = cl_arith_round(m, cl_arith_round(m, -ny.v * wx.v) + cl_arith_round(m, nx.v * wy.v));
	double vx = a[2].v - b[2].v, vy = a[3].v - b[3].v;
	c->w_double[0] = nx.v * vx + ny.v * vy;
	c->w_double[1] = -ny.v * vx + nx.v * vy;
	if (rule->toi)
		c->shift = cl_toi_shift(m, rule->clamp, cl_dual_const(m, rule->dt),
								cl_dual_sub(m, distance, cl_dual_const(m, reach)), normal_speed);
	return true;
}

/* The TOI shift along the radius, the wall's point and angle (degrees) and
 * dt: the same expressions as wall_contact's with those as the inputs. The
 * normal in J stays a constant (as DiffCoSim builds J), the one in the gap
 * and in s does not. */
static ClDual wall_shift_params(const ConvexRule *rule, const double *state, double radius, const ClWall *wall)
{
	const double rad = 3.14159265358979323846 / 180.0;
	const ClArith m = {rule->value.f32, S_SLOTS};
	ClDual dt = cl_dual_input(&m, rule->dt, S_DT);
	ClDual n[2] = {cl_dual_const(&m, cl_arith_round(&m, wall->normal.x)),
				   cl_dual_const(&m, cl_arith_round(&m, wall->normal.y))};
	n[0].d[S_ANGLE] = -wall->normal.y * rad;
	n[1].d[S_ANGLE] = wall->normal.x * rad;
	ClDual q[2] = {cl_dual_input(&m, cl_arith_round(&m, wall->point.x), S_POINT_X),
				   cl_dual_input(&m, cl_arith_round(&m, wall->point.y), S_POINT_Y)};
	ClDual distance = cl_dual_const(&m, 0.0), s = cl_dual_const(&m, 0.0);
	for (int k = 0; k < 2; k++) {
		ClDual v = cl_dual_const(&m, state[2 + k]);
		ClDual predicted = cl_dual_add(&m, cl_dual_const(&m, state[k]), cl_dual_mul(&m, dt, v));
		distance = cl_dual_add(&m, distance, cl_dual_mul(&m, n[k], cl_dual_sub(&m, predicted, q[k])));
		s = cl_dual_add(&m, s, cl_dual_mul(&m, n[k], v));
	}
	return cl_toi_shift(&m, rule->clamp, dt, cl_dual_sub(&m, distance, cl_dual_input(&m, radius, S_RADIUS)), s);
}

/* The same for balls a < b along both (rounded) radii and dt, as pair_contact. */
static ClDual pair_shift_params(const ConvexRule *rule, const double *state_a, const double *state_b, double radius_a,
								double radius_b)
{
	const ClArith m = {rule->value.f32, S_SLOTS};
	ClDual dt = cl_dual_input(&m, rule->dt, S_DT);
	ClDual delta[2], w[2];
	for (int k = 0; k < 2; k++) {
		ClDual va = cl_dual_const(&m, state_a[2 + k]), vb = cl_dual_const(&m, state_b[2 + k]);
		delta[k] = cl_dual_sub(&m, cl_dual_add(&m, cl_dual_const(&m, state_a[k]), cl_dual_mul(&m, dt, va)),
							   cl_dual_add(&m, cl_dual_const(&m, state_b[k]), cl_dual_mul(&m, dt, vb)));
		w[k] = cl_dual_sub(&m, va, vb);
	}
	ClDual distance = cl_dual_sqrt_unrounded_slope(
		&m, cl_dual_add(&m, cl_dual_mul(&m, delta[0], delta[0]), cl_dual_mul(&m, delta[1], delta[1])));
	ClDual nx = cl_dual_div_expanded(&m, delta[0], distance), ny = cl_dual_div_expanded(&m, delta[1], distance);
	ClDual s = cl_dual_add(&m, cl_dual_mul(&m, nx, w[0]), cl_dual_mul(&m, ny, w[1]));
	ClDual reach = cl_dual_add(&m, cl_dual_input(&m, radius_a, S_RADIUS), cl_dual_input(&m, radius_b, S_OTHER_RADIUS));
	return cl_toi_shift(&m, rule->clamp, dt, cl_dual_sub(&m, distance, reach), s);
}

/* ------------------------------------------------------------------ QP */

/* f = Π_K(p) onto K = {f_0 ≥ 0, |f_1| ≤ μ·f_0} and Q = ∂f/∂p (§2.2). */
static void cone_projection(double mu, const double p[2], double f[2], double Q[4])
{
	memset(Q, 0, 4 * sizeof(double));
	if (mu <= 0.0) {
		f[0] = p[0] > 0.0 ? p[0] : 0.0;
		f[1] = 0.0;
		Q[0] = p[0] > 0.0 ? 1.0 : 0.0;
		return;
	}
	double magnitude = fabs(p[1]);
	if (magnitude <= mu * p[0]) { /* stick */
		f[0] = p[0];
		f[1] = p[1];
		Q[0] = Q[3] = 1.0;
		return;
	}
	if (p[0] + mu * magnitude <= 0.0) { /* separate: p in the polar cone */
		f[0] = f[1] = 0.0;
		return;
	}
	/* slide: the projection onto the active edge (1, μσ) */
	double sigma = p[1] > 0.0 ? 1.0 : -1.0, scale = 1.0 + mu * mu;
	double a = (p[0] + mu * magnitude) / scale;
	f[0] = a;
	f[1] = a * mu * sigma;
	Q[0] = 1.0 / scale;
	Q[1] = Q[2] = mu * sigma / scale;
	Q[3] = mu * mu / scale;
}

/* ∂f/∂μ of cone_projection at p, its case held: nonzero only when sliding,
 * f = a·(1, μσ) with a = (p_0 + μ|p_1|)/(1+μ²). At μ = 0 (the cone a ray,
 * its constraint |f_1| ≤ μf_0 active) the same: the derivative from above. */
static void cone_projection_mu(double mu, const double p[2], double df[2])
{
	df[0] = df[1] = 0.0;
	double magnitude = fabs(p[1]);
	if (magnitude <= mu * p[0] || p[0] + mu * magnitude <= 0.0)
		return;
	double sigma = p[1] > 0.0 ? 1.0 : -1.0, scale = 1.0 + mu * mu;
	double a = (p[0] + mu * magnitude) / scale;
	double da = magnitude / scale - 2.0 * mu * a / scale;
	df[0] = da;
	df[1] = sigma * (a + mu * da);
}

static double contact_sign(const ConvexContact *c, int ball)
{
	return ball == c->a ? 1.0 : ball == c->b ? -1.0 : 0.0;
}

/* The 2×2 block G_kl = Σ_shared σ_k σ_l / m · J_k J_lᵀ of the Delassus
 * operator; with ball ≥ 0 its derivative along that ball's mass instead. */
static void delassus_term(const ClScene *scene, const ConvexContact *k, const ConvexContact *l, int ball, double G[4])
{
	memset(G, 0, 4 * sizeof(double));
	int balls[2] = {k->a, k->b};
	for (int q = 0; q < 2; q++) {
		int i = balls[q];
		if (i < 0 || (ball >= 0 && i != ball))
			continue;
		double mass = scene->balls[i].mass;
		double weight = contact_sign(k, i) * contact_sign(l, i) / (ball >= 0 ? -mass * mass : mass);
		if (weight == 0.0)
			continue;
		const double *rows_k[2] = {k->n, k->t}, *rows_l[2] = {l->n, l->t};
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 2; c++)
				G[2 * r + c] += weight * (rows_k[r][0] * rows_l[c][0] + rows_k[r][1] * rows_l[c][1]);
	}
}

static void delassus_block(const ClScene *scene, const ConvexContact *k, const ConvexContact *l, double G[4])
{
	delassus_term(scene, k, l, -1, G);
}

/* aᵀ·G·b for a 2×2 G */
static double bilinear(const double a[2], const double G[4], const double b[2])
{
	return a[0] * (G[0] * b[0] + G[1] * b[1]) + a[1] * (G[2] * b[0] + G[3] * b[1]);
}

/* NULL when out of memory */
static ConvexDerivative *next_derivative(ConvexWorkspace *ws)
{
	if (!cl_grow(&ws->derivatives, &ws->derivative_capacity, (size_t)ws->derivative_count + 1,
				 sizeof *ws->derivatives)) {
		ws->out_of_memory = true;
		return NULL;
	}
	return &ws->derivatives[ws->derivative_count++];
}

/* Whether contacts k and l interact in the QP: a shared ball and a nonzero
 * cross term (with μ = 0 only the normal rows count: n_k·n_l ≠ 0). */
static bool contacts_coupled(const ClScene *scene, double mu, const ConvexContact *k, const ConvexContact *l)
{
	double G[4];
	delassus_block(scene, k, l, G);
	if (mu <= 0.0)
		return G[0] != 0.0;
	return G[0] != 0.0 || G[1] != 0.0 || G[2] != 0.0 || G[3] != 0.0;
}

static int find_root(ConvexContact *contacts, int k)
{
	while (contacts[k].component != k)
		k = contacts[k].component = contacts[contacts[k].component].component;
	return k;
}

/* Cholesky factor of the p×p matrix A (row-major, stride p) into L; false
 * when not positive definite (dependent active generators). */
static bool cholesky(const double *A, int p, double *L)
{
	for (int i = 0; i < p; i++) {
		for (int j = 0; j <= i; j++) {
			double sum = A[i * p + j];
			for (int k = 0; k < j; k++)
				sum -= L[i * p + k] * L[j * p + k];
			if (i == j) {
				if (!(sum > 1e-14 * (fabs(A[i * p + i]) + 1e-300)))
					return false;
				L[i * p + i] = sqrt(sum);
			} else {
				L[i * p + j] = sum / L[j * p + j];
			}
		}
	}
	return true;
}

static void cholesky_solve(const double *L, int p, double *x)
{
	for (int i = 0; i < p; i++) {
		for (int k = 0; k < i; k++)
			x[i] -= L[i * p + k] * x[k];
		x[i] /= L[i * p + i];
	}
	for (int i = p - 1; i >= 0; i--) {
		for (int k = i + 1; k < p; k++)
			x[i] -= L[k * p + i] * x[k];
		x[i] /= L[i * p + i];
	}
}

/* The derivative of the coupled QP's solution along θ = the friction
 * (ball < 0) or ball's mass, its active set P held: λ_P = −H_PP⁻¹·c_P moves
 * by ∂λ_P = −H_PP⁻¹(∂H_PP·λ_P + ∂c_P) (H = EᵀGE through E(μ) and G(m), c =
 * Eᵀw through E), and f̃_k = κ_k·E·λ_k by ∂κ_k·Eλ_k + κ_k·(∂E·λ_k + E·∂λ_k).
 * L is H_PP's factor; appends one ConvexDerivative per member. */
static bool coupled_derivative(ConvexWorkspace *ws, const ClScene *scene, const ConvexRule *rule, const int *members,
							   int count, int per, int p, const int *index, const double *L, const double *lambda,
							   double *rhs, int ball)
{
	double edge[2][2] = {{1.0, rule->mu}, {1.0, -rule->mu}};
	double along[2][2] = {{0.0, ball < 0 ? 1.0 : 0.0}, {0.0, ball < 0 ? -1.0 : 0.0}}; /* ∂E/∂θ */
	for (int r = 0; r < p; r++) {
		int i = index[r];
		const ConvexContact *ki = &ws->contacts[members[i / per]];
		const double *ei = edge[i % per], *di = along[i % per];
		double sum = di[0] * ki->w_double[0] + di[1] * ki->w_double[1]; /* ∂c_i */
		for (int q = 0; q < p; q++) {
			int j = index[q];
			const ConvexContact *kj = &ws->contacts[members[j / per]];
			const double *ej = edge[j % per], *dj = along[j % per];
			double G[4], dH;
			if (ball < 0) {
				delassus_block(scene, ki, kj, G);
				dH = bilinear(di, G, ej) + bilinear(ei, G, dj);
			} else {
				delassus_term(scene, ki, kj, ball, G);
				dH = bilinear(ei, G, ej);
			}
			sum += dH * lambda[j];
		}
		rhs[r] = -sum;
	}
	if (p > 0)
		cholesky_solve(L, p, rhs);
	for (int k = 0; k < count; k++) {
		const ConvexContact *ck = &ws->contacts[members[k]];
		ConvexDerivative *d = next_derivative(ws);
		if (!d)
			return false;
		d->contact = members[k];
		d->param = ball < 0 ? CL_PHYS_FRICTION : cl_phys_mass(ball);
		double dkappa = ball >= 0 && (ck->a == ball || ck->b == ball)
							? -1.0 / (scene->balls[ball].mass * scene->balls[ball].mass)
							: 0.0;
		for (int c = 0; c < 2; c++) {
			double f = 0.0, df = 0.0;
			for (int g = 0; g < per; g++) {
				double e = per == 2 || c == 0 ? edge[g][c] : 0.0, de = per == 2 ? along[g][c] : 0.0;
				double dlambda = 0.0;
				for (int r = 0; r < p; r++)
					dlambda += index[r] == per * k + g ? rhs[r] : 0.0;
				f += lambda[per * k + g] * e;
				df += dlambda * e + lambda[per * k + g] * de;
			}
			d->df[c] = dkappa * f + ck->kappa * df;
		}
	}
	return true;
}

/* The QP of several interacting contacts, exactly: with f_k = E·λ_k over the
 * cone's edges (1, ±μ) (or (1, 0) without friction) it is the NNLS problem
 * min ½λᵀHλ + cᵀλ, λ ≥ 0, H = EᵀGE, c = Eᵀw, solved by Lawson–Hanson's
 * active set. On the final active set P, λ_P = −H_PP⁻¹E_Pᵀw: that linear map
 * is the implicit derivative. Writes f̃ and appends the couplings; false on failure. */
static bool solve_coupled(ConvexWorkspace *ws, const ClScene *scene, const ConvexRule *rule, const int *members,
						  int count, int *coupling_count)
{
	int per = rule->mu > 0.0 ? 2 : 1, n = per * count;
	/* scratch: H, H_PP, its factor (n² each); c, λ, gradient, passive, rhs (n each) */
	if (!cl_grow(&ws->solver, &ws->solver_capacity, 3 * (size_t)n * (size_t)n + 5 * (size_t)n, sizeof(double)))
		return !(ws->out_of_memory = true);
	double *H = ws->solver, *A = H + n * n, *L = A + n * n, *c = L + n * n, *lambda = c + n;
	double *gradient = lambda + n, *passive = gradient + n, *rhs = passive + n;
	int *index = ws->members + count; /* passive generators, compacted (the caller sized it) */
	double edge[2][2] = {{1.0, rule->mu}, {1.0, -rule->mu}};
	for (int i = 0; i < n; i++) {
		const ConvexContact *ki = &ws->contacts[members[i / per]];
		const double *ei = edge[i % per];
		/* from the double J·v_rel: a c rounded apart from H could make the
		 * singular problems (a corner with friction) look unbounded */
		c[i] = ei[0] * ki->w_double[0] + (per == 2 ? ei[1] * ki->w_double[1] : 0.0);
		for (int j = 0; j < n; j++) {
			const double *ej = edge[j % per];
			double G[4];
			delassus_block(scene, ki, &ws->contacts[members[j / per]], G);
			double e1i = per == 2 ? ei[1] : 0.0, e1j = per == 2 ? ej[1] : 0.0;
			H[i * n + j] = ei[0] * (G[0] * ej[0] + G[1] * e1j) + e1i * (G[2] * ej[0] + G[3] * e1j);
		}
		lambda[i] = passive[i] = 0.0;
	}
	double scale = 0.0;
	for (int i = 0; i < n; i++)
		scale = fmax(scale, fabs(c[i]));
	double tolerance = 1e-12 * scale;
	int p = 0;
	bool converged = false;
	for (int iteration = 0; iteration < 4 * n + 8; iteration++) {
		int best = -1;
		for (int j = 0; j < n; j++) {
			double g = -c[j];
			for (int i = 0; i < n; i++)
				g -= H[j * n + i] * lambda[i];
			gradient[j] = g;
			if (passive[j] == 0.0 && g > tolerance && (best < 0 || g > gradient[best]))
				best = j;
		}
		if (best < 0) {
			converged = true;
			break;
		}
		passive[best] = 1.0;
		for (int inner = 0; inner <= n; inner++) {
			p = 0;
			for (int j = 0; j < n; j++)
				if (passive[j] != 0.0)
					index[p++] = j;
			for (int r = 0; r < p; r++)
				for (int q = 0; q < p; q++)
					A[r * p + q] = H[index[r] * n + index[q]];
			if (!cholesky(A, p, L))
				return false;
			for (int r = 0; r < p; r++)
				rhs[r] = -c[index[r]];
			cholesky_solve(L, p, rhs);
			/* step towards the unconstrained optimum until a multiplier hits 0 */
			double alpha = 1.0;
			int blocking = -1;
			for (int r = 0; r < p; r++) {
				if (rhs[r] > 0.0)
					continue;
				double limit = lambda[index[r]] / (lambda[index[r]] - rhs[r]);
				if (limit < alpha) {
					alpha = limit;
					blocking = index[r];
				}
			}
			if (blocking < 0) {
				for (int r = 0; r < p; r++)
					lambda[index[r]] = rhs[r];
				break;
			}
			for (int r = 0; r < p; r++)
				lambda[index[r]] += alpha * (rhs[r] - lambda[index[r]]);
			lambda[blocking] = 0.0;
			for (int r = 0; r < p; r++)
				if (lambda[index[r]] <= 0.0) {
					lambda[index[r]] = 0.0;
					passive[index[r]] = 0.0;
				}
		}
	}
	if (!converged)
		return false;

	/* f̃_k = κ_k·E·λ_k, and ∂f̃_k/∂w_l = −κ_k·E_P H_PP⁻¹ E_Pᵀ restricted to (k, l) */
	p = 0;
	for (int j = 0; j < n; j++)
		if (passive[j] != 0.0)
			index[p++] = j;
	for (int r = 0; r < p; r++)
		for (int q = 0; q < p; q++)
			A[r * p + q] = H[index[r] * n + index[q]];
	if (p > 0 && !cholesky(A, p, L))
		return false;
	if (!cl_grow(&ws->couplings, &ws->coupling_capacity, (size_t)*coupling_count + (size_t)count * (size_t)count,
				 sizeof *ws->couplings))
		return !(ws->out_of_memory = true);
	for (int k = 0; k < count; k++) {
		ConvexContact *ck = &ws->contacts[members[k]];
		double f[2] = {0.0, 0.0};
		for (int g = 0; g < per; g++) {
			f[0] += lambda[per * k + g] * edge[g][0];
			f[1] += per == 2 ? lambda[per * k + g] * edge[g][1] : 0.0;
		}
		ck->f[0] = cl_arith_round(&rule->value, ck->kappa * f[0]);
		ck->f[1] = cl_arith_round(&rule->value, ck->kappa * f[1]);
		ck->coupling_begin = *coupling_count;
		ck->coupling_count = count;
		for (int l = 0; l < count; l++) {
			ConvexCoupling *coupling = &ws->couplings[(*coupling_count)++];
			coupling->contact = members[l];
			memset(coupling->F, 0, sizeof coupling->F);
			for (int col = 0; col < 2 && p > 0; col++) {
				/* rhs = H_PP⁻¹·(E_Pᵀ e_{l,col}) */
				for (int r = 0; r < p; r++) {
					int j = index[r];
					rhs[r] = j / per == l ? (col == 0 ? edge[j % per][0] : (per == 2 ? edge[j % per][1] : 0.0))
										  : 0.0;
				}
				cholesky_solve(L, p, rhs);
				for (int r = 0; r < p; r++) {
					int j = index[r];
					if (j / per != k)
						continue;
					coupling->F[col] -= ck->kappa * edge[j % per][0] * rhs[r];
					coupling->F[2 + col] -= per == 2 ? ck->kappa * edge[j % per][1] * rhs[r] : 0.0;
				}
			}
		}
	}
	if (!rule->params)
		return true;
	/* θ: the friction (with friction generators), then each ball's mass once */
	int begin = ws->derivative_count;
	if (per == 2 && !coupled_derivative(ws, scene, rule, members, count, per, p, index, L, lambda, rhs, -1))
		return false;
	for (int k = 0; k < count; k++) {
		const ConvexContact *ck = &ws->contacts[members[k]];
		int balls[2] = {ck->a, ck->b};
		for (int side = 0; side < 2; side++) {
			bool seen = balls[side] < 0;
			for (int e = 0; e < k && !seen; e++)
				seen = ws->contacts[members[e]].a == balls[side] || ws->contacts[members[e]].b == balls[side];
			if (!seen &&
				!coupled_derivative(ws, scene, rule, members, count, per, p, index, L, lambda, rhs, balls[side]))
				return false;
		}
	}
	for (int k = 0; k < count; k++) {
		ws->contacts[members[k]].derivative_begin = begin;
		ws->contacts[members[k]].derivative_count = ws->derivative_count - begin;
	}
	return true;
}

/* A contact alone in its component: the closed-form cone projection of
 * p = −w, F = ∂f̃/∂w = −Q. False when out of memory. */
static bool solve_single(ConvexWorkspace *ws, const ConvexRule *rule, int k, int *coupling_count)
{
	ConvexContact *c = &ws->contacts[k];
	double p[2] = {-c->w[0], -c->w[1]}, f[2], Q[4];
	cone_projection(rule->mu, p, f, Q);
	c->f[0] = cl_arith_round(&rule->value, f[0]);
	c->f[1] = cl_arith_round(&rule->value, f[1]);
	if (!cl_grow(&ws->couplings, &ws->coupling_capacity, (size_t)*coupling_count + 1, sizeof *ws->couplings))
		return !(ws->out_of_memory = true);
	ConvexCoupling *coupling = &ws->couplings[*coupling_count];
	coupling->contact = k;
	for (int i = 0; i < 4; i++)
		coupling->F[i] = -Q[i];
	c->coupling_begin = (*coupling_count)++;
	c->coupling_count = 1;
	c->derivative_begin = ws->derivative_count;
	c->derivative_count = 0;
	if (rule->params) {
		/* f̃ = Π_K(−w) does not depend on the masses: only the friction */
		ConvexDerivative *d = next_derivative(ws);
		if (!d)
			return false;
		d->contact = k;
		d->param = CL_PHYS_FRICTION;
		cone_projection_mu(rule->mu, p, d->df);
		c->derivative_count = 1;
	}
	return true;
}

/* Contact k's blocks: ball i (coefficient α = ±share) gets v-rows
 * α(1+e)·J_kᵀ·F_kl·J_l·σ_l(j) for every coupled contact l and its balls j;
 * with TOI the x-rows get the shift times that, plus α·Δv_rel ⊗ ∂shift. */
static void record_contact(ClTape *tape, const ConvexWorkspace *ws, const ConvexRule *rule, const ConvexContact *k,
						   const double dv_rel[2])
{
	int balls[2] = {k->a, k->b};
	double alpha[2] = {k->share[0], -k->share[1]};
	for (int q = 0; q < 2; q++) {
		int i = balls[q];
		if (i < 0)
			continue;
		for (int e = 0; e < k->coupling_count; e++) {
			const ConvexCoupling *coupling = &ws->couplings[k->coupling_begin + e];
			const ConvexContact *l = &ws->contacts[coupling->contact];
			const double *F = coupling->F;
			double M[4];
			for (int r = 0; r < 2; r++) {
				double JF0 = k->n[r] * F[0] + k->t[r] * F[2], JF1 = k->n[r] * F[1] + k->t[r] * F[3];
				for (int c = 0; c < 2; c++)
					M[2 * r + c] = JF0 * l->n[c] + JF1 * l->t[c];
			}
			int columns[2] = {l->a, l->b};
			for (int side = 0; side < 2; side++) {
				int j = columns[side];
				if (j < 0)
					continue;
				double scale = rule->elastic * alpha[q] * (side == 0 ? 1.0 : -1.0);
				double *block = cl_tape_a(tape, i, j);
				for (int r = 0; r < 2; r++)
					for (int c = 0; c < 2; c++) {
						double d = scale * M[2 * r + c];
						block[CL_A(2 + r, 2 + c)] = d;
						if (rule->toi)
							block[CL_A(r, 2 + c)] = k->shift.v * d;
					}
			}
		}
		if (!rule->toi)
			continue;
		for (int side = 0; side < 2; side++) {
			int j = balls[side];
			if (j < 0)
				continue;
			double *block = cl_tape_a(tape, i, j);
			for (int r = 0; r < 2; r++)
				for (int c = 0; c < 4; c++)
					block[CL_A(r, c)] = alpha[q] * dv_rel[r] * k->shift.d[4 * side + c];
		}
	}
}

/* Ball row's parameter column: Δx and Δv of the ball (x' and v' take them as they are). */
static void add_column(ClTape *tape, int row, int param, const double dx[2], const double dv[2])
{
	double *c = cl_tape_c(tape, row, param);
	c[0] = dx[0];
	c[1] = dx[1];
	c[2] = dv[0];
	c[3] = dv[1];
}

/* Contact k's parameter columns: ball i gets ±share·(Δv_rel, shift·Δv_rel)
 * with Δv_rel = (1+e)·Jᵀf̃, so along e ±share·Jᵀf̃ (impulse), along the
 * friction and the masses (1+e)·Jᵀ∂f̃ (ConvexDerivative), along the masses
 * also ∂share, and along the geometry and dt (TOI) ±share·Δv_rel·∂shift. */
static void record_contact_params(ClTape *tape, const ClScene *scene, const ConvexWorkspace *ws,
								  const ConvexRule *rule, const ConvexContact *k, const double impulse[2],
								  const double dv_rel[2])
{
	int balls[2] = {k->a, k->b};
	double total = k->b >= 0 ? scene->balls[k->a].mass + scene->balls[k->b].mass : 1.0;
	double shift = rule->toi ? k->shift.v : 0.0;
	for (int q = 0; q < 2; q++) {
		int i = balls[q];
		if (i < 0)
			continue;
		double alpha = (q == 0 ? 1.0 : -1.0) * k->share[q], dx[2], dv[2];
		for (int r = 0; r < 2; r++) {
			dv[r] = alpha * impulse[r];
			dx[r] = shift * dv[r];
		}
		add_column(tape, i, CL_PHYS_ELASTICITY, dx, dv);
		for (int e = 0; e < k->derivative_count; e++) {
			const ConvexDerivative *d = &ws->derivatives[k->derivative_begin + e];
			if (d->contact != k - ws->contacts)
				continue;
			for (int r = 0; r < 2; r++) {
				dv[r] = alpha * rule->elastic * (k->n[r] * d->df[0] + k->t[r] * d->df[1]);
				dx[r] = shift * dv[r];
			}
			add_column(tape, i, d->param, dx, dv);
		}
		if (k->b >= 0) /* share_a = m_b/(m_a + m_b), share_b = m_a/(m_a + m_b) */
			for (int side = 0; side < 2; side++) {
				double dshare = (side == q ? -1.0 : 1.0) * scene->balls[balls[1 - side]].mass / (total * total);
				for (int r = 0; r < 2; r++) {
					dv[r] = (q == 0 ? 1.0 : -1.0) * dshare * dv_rel[r];
					dx[r] = shift * dv[r];
				}
				add_column(tape, i, cl_phys_mass(balls[side]), dx, dv);
			}
		if (!rule->toi)
			continue;
		int phys[S_SLOTS] = {cl_phys_radius(k->a), -1, -1, -1, CL_PHYS_DURATION};
		for (int w = 0; w < 3 && k->b < 0; w++)
			phys[S_POINT_X + w] = cl_phys_wall(scene, k->wall, w);
		if (k->b >= 0)
			phys[S_OTHER_RADIUS] = cl_phys_radius(k->b);
		for (int slot = 0; slot < S_SLOTS; slot++) {
			if (phys[slot] < 0)
				continue;
			double scale = slot == S_DT ? 1.0 / scene->steps : 1.0; /* dt = T/N */
			for (int r = 0; r < 2; r++) {
				dv[r] = 0.0;
				dx[r] = scale * alpha * dv_rel[r] * k->shift_params.d[slot];
			}
			add_column(tape, i, phys[slot], dx, dv);
		}
	}
}

/* NULL when out of memory */
static ConvexContact *next_contact(ConvexWorkspace *ws, int count)
{
	if (!cl_grow(&ws->contacts, &ws->contact_capacity, (size_t)count + 1, sizeof *ws->contacts)) {
		ws->out_of_memory = true;
		return NULL;
	}
	ConvexContact *c = &ws->contacts[count];
	memset(c, 0, sizeof *c);
	c->component = count;
	return c;
}

/* Finds the approaching contacts of the start-of-step state (stops early when out of memory). */
static int detect_contacts(ClStepContext *ctx, ConvexWorkspace *ws, const ConvexRule *rule)
{
	const ClScene *scene = ctx->scene;
	const ClArith *tangent = ctx->tape && rule->toi ? &rule->tangent : NULL;
	double time = ctx->step * ctx->dt;
	int count = 0;
	for (int a = 0; a < scene->ball_count; a++) {
		const ClBall *ball = &scene->balls[a];
		double radius = cl_round(rule->value.f32, ball->radius);
		const double *state = ws->state + CL_BALL_STATE * a;
		for (int w = 0; w < scene->wall_count; w++) {
			if (!cl_wall_may_touch(state, rule->dt, &scene->walls[w], radius))
				continue;
			ConvexContact *c = next_contact(ws, count);
			if (!c)
				return count;
			if (!wall_contact(&rule->value, rule, state, radius, &scene->walls[w], c))
				continue;
			if (tangent)
				wall_contact(tangent, rule, state, radius, &scene->walls[w], c);
			if (rule->toi && rule->params)
				c->shift_params = wall_shift_params(rule, state, radius, &scene->walls[w]);
			c->a = a;
			c->b = -1;
			c->wall = w;
			c->kappa = 1.0 / ball->mass;
			c->share[0] = 1.0;
			count++;
			cl_step_contact(ctx, time, a, -1 - w);
		}
	}
	for (int a = 0; a < scene->ball_count; a++) {
		for (int b = a + 1; b < scene->ball_count; b++) {
			const ClBall *ball_a = &scene->balls[a], *ball_b = &scene->balls[b];
			bool f32 = rule->value.f32;
			double reach = cl_round(f32, cl_round(f32, ball_a->radius) + cl_round(f32, ball_b->radius));
			const double *state_a = ws->state + CL_BALL_STATE * a, *state_b = ws->state + CL_BALL_STATE * b;
			if (!cl_pair_may_touch(state_a, state_b, rule->dt, reach))
				continue;
			ConvexContact *c = next_contact(ws, count);
			if (!c)
				return count;
			if (!pair_contact(&rule->value, rule, state_a, state_b, reach, c))
				continue;
			if (tangent)
				pair_contact(tangent, rule, state_a, state_b, reach, c);
			if (rule->toi && rule->params)
				c->shift_params = pair_shift_params(rule, state_a, state_b, cl_round(f32, ball_a->radius),
													cl_round(f32, ball_b->radius));
			double total = ball_a->mass + ball_b->mass;
			c->a = a;
			c->b = b;
			c->wall = -1;
			c->kappa = 1.0 / ball_a->mass + 1.0 / ball_b->mass;
			c->share[0] = cl_round(f32, ball_b->mass / total);
			c->share[1] = cl_round(f32, ball_a->mass / total);
			count++;
			cl_step_contact(ctx, time, a, b);
		}
	}
	return count;
}

static bool share_ball(const ConvexContact *k, const ConvexContact *l)
{
	return k->a == l->a || k->a == l->b || (k->b >= 0 && (k->b == l->a || k->b == l->b));
}

/* Solves the QP of every group of interacting contacts. */
static bool solve_contacts(ClStepContext *ctx, ConvexWorkspace *ws, const ConvexRule *rule, int count)
{
	ConvexContact *contacts = ws->contacts;
	for (int k = 0; k < count; k++)
		for (int l = k + 1; l < count; l++)
			if (share_ball(&contacts[k], &contacts[l]) &&
				contacts_coupled(ctx->scene, rule->mu, &contacts[k], &contacts[l]))
				contacts[find_root(contacts, l)].component = find_root(contacts, k);
	if (!cl_grow(&ws->members, &ws->member_capacity, 3 * (size_t)count, sizeof *ws->members))
		ws->out_of_memory = true;
	int couplings = 0;
	for (int root = 0; root < count && !ws->out_of_memory; root++) {
		if (find_root(contacts, root) != root)
			continue;
		int members = 0;
		for (int k = 0; k < count; k++)
			if (find_root(contacts, k) == root)
				ws->members[members++] = k;
		if (members == 1)
			solve_single(ws, rule, root, &couplings);
		else if (!solve_coupled(ws, ctx->scene, rule, ws->members, members, &couplings) && !ws->out_of_memory) {
			cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED,
						 "the contact QP of %d simultaneous contacts (ball \"%s\") has no bounded solution "
						 "at step %d",
						 members, ctx->scene->balls[contacts[root].a].id, ctx->step);
			return false;
		}
	}
	if (ws->out_of_memory) {
		cl_step_out_of_memory(ctx, "the contact QP's workspace");
		return false;
	}
	return true;
}

static void convex_step(ClStepContext *ctx, const double *s, const double *u, double *s_next, bool toi)
{
	const ClScene *scene = ctx->scene;
	ConvexWorkspace *ws = ctx->workspace;
	bool f32 = cl_param_value(ctx, PARAM_PRECISION) == CL_PRECISION_FLOAT32;
	ConvexRule rule = {
		.value = {f32, 0},
		.tangent = {f32, CL_CONTACT_SLOTS},
		.toi = toi,
		.dt = cl_round(f32, ctx->dt),
		.clamp = toi ? cl_round(f32, -cl_param_value(ctx, PARAM_TOI_CLAMP)) : 0.0,
		.elastic = cl_round(f32, 1.0 + cl_round(f32, scene->elasticity)),
		.mu = cl_round(f32, scene->friction),
		.params = ctx->tape && ctx->tape->record_params,
	};
	const ClArith *m = &rule.value;
	int nb = scene->ball_count;
	for (int i = 0; i < CL_BALL_STATE * nb; i++)
		s_next[i] = ws->state[i] = cl_round(f32, s[i]);
	memset(ws->impulse, 0, sizeof(double) * 4 * (size_t)nb);
	ws->out_of_memory = false;
	ws->derivative_count = 0;
	int count = detect_contacts(ctx, ws, &rule);
	if (!solve_contacts(ctx, ws, &rule, count))
		return;
	ClTape *tape = ctx->tape;
	if (tape)
		cl_tape_factor(tape);

	/* Δv_rel = (1+e)·Jᵀf̃, Δx_rel = shift·Δv_rel; ball a gets +share, ball b −share */
	for (int k = 0; k < count; k++) {
		const ConvexContact *c = &ws->contacts[k];
		double dv_rel[2], dx_rel[2], impulse[2];
		for (int r = 0; r < 2; r++) {
			impulse[r] = cl_arith_round(m, cl_arith_round(m, c->n[r] * c->f[0]) + cl_arith_round(m, c->t[r] * c->f[1]));
			dv_rel[r] = cl_arith_round(m, rule.elastic * impulse[r]);
			dx_rel[r] = toi ? cl_arith_round(m, c->shift.v * dv_rel[r]) : 0.0;
		}
		int balls[2] = {c->a, c->b};
		for (int q = 0; q < 2; q++) {
			if (balls[q] < 0)
				continue;
			double *impulse = ws->impulse + 4 * balls[q];
			double sign = q == 0 ? 1.0 : -1.0;
			for (int r = 0; r < 2; r++) {
				impulse[2 + r] = cl_arith_round(m, impulse[2 + r] + sign * cl_arith_round(m, c->share[q] * dv_rel[r]));
				impulse[r] = cl_arith_round(m, impulse[r] + sign * cl_arith_round(m, c->share[q] * dx_rel[r]));
			}
		}
		if (tape)
			record_contact(tape, ws, &rule, c, dv_rel);
		if (rule.params)
			record_contact_params(tape, scene, ws, &rule, c, impulse, dv_rel);
	}

	/* advance: v' = ((v + Δv) + (u/m)·dt) + g·dt; x' = (x + v·dt) [+ Δx] */
	double gravity_dt[2] = {cl_round(f32, cl_round(f32, scene->gravity.x) * rule.dt),
							cl_round(f32, cl_round(f32, scene->gravity.y) * rule.dt)};
	for (int i = 0; i < nb; i++) {
		const double *x = ws->state + CL_BALL_STATE * i, *impulse = ws->impulse + 4 * i;
		double *next = s_next + CL_BALL_STATE * i;
		double mass = cl_round(f32, scene->balls[i].mass);
		for (int k = 0; k < 2; k++) {
			double acceleration = cl_round(f32, cl_round(f32, u[2 * i + k]) / mass);
			double v = cl_round(f32, cl_round(f32, x[2 + k] + impulse[2 + k]) + cl_round(f32, acceleration * rule.dt));
			double p = cl_round(f32, x[k] + cl_round(f32, x[2 + k] * rule.dt));
			next[k] = toi ? cl_round(f32, p + impulse[k]) : p;
			next[2 + k] = cl_round(f32, v + gravity_dt[k]);
		}
		if (tape) {
			double *a = cl_tape_a_identity(tape, i), *bu = cl_tape_b(tape, i, i);
			a[CL_A(0, 2)] = a[CL_A(1, 3)] = rule.dt;
			bu[4] = bu[7] = rule.dt / mass;
			if (rule.params) {
				/* ∂/∂dt: x' gains the old v, v' gains u/m + g */
				double *c = cl_tape_c(tape, i, CL_PHYS_DURATION);
				for (int k = 0; k < 2; k++) {
					c[k] = x[2 + k] / scene->steps;
					c[2 + k] = (u[2 * i + k] / scene->balls[i].mass + (k == 0 ? scene->gravity.x : scene->gravity.y)) /
							   scene->steps;
				}
			}
		}
	}
}

static void convex_toi_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	convex_step(ctx, s, u, s_next, true);
}

static void convex_plain_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	convex_step(ctx, s, u, s_next, false);
}

static const ClParamDesc convex_toi_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
	 "arithmetic of the forward pass (the peer ran torch in float32)", cl_precision_choices},
	{"toi_clamp", CL_PARAM_KIND_REAL, 1e-3, 0, 1, "m/s",
	 "TOI denominator clamp: tau = gap / min(-clamp, n.v) (DiffCoSim: 1e-3)", NULL},
};

static const ClParamDesc convex_params[] = {
	{"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT32, 0, 1, "",
	 "arithmetic of the forward pass (the peer ran torch in float32)", cl_precision_choices},
};

#define CONVEX_SUMMARY_COMMON                                                                                        \
	"Convex (maximum-dissipation) contact QP as in the DiffCoSim scripts, solved exactly instead of with the "     \
	"original's SCS conic solver: every contact approaching (s = n.v < 0) with its predicted gap (x + v*dt) "      \
	"below the radius gets the impulse f solving min 1/2 f'Gf + f'w, f in the Coulomb cone |f_t| <= mu*f_n, "     \
	"w = J*v_rel, G = J*inv(M)*J', J = (normal; tangent); dv = (1+e)*inv(M)*J'f. A lone contact uses the "         \
	"closed-form cone projection (stick, separate, slide); contacts sharing a ball that interact in G (a corner " \
	"with friction, a ball pressed by two balls) are solved together by an exact active-set method, and "        \
	"contacts that do not interact (orthogonal walls without friction) separate. Any wall normal and any "        \
	"number of balls (one test per ball pair); unequal masses split a ball-ball impulse m_other/(m_a + m_b), "   \
	"1/2 for the paper's equal masses. v' = v + dv + (u/m)*dt + g*dt, but x' = x + v*dt with the OLD velocity "   \
	"(forward Euler, as the script's 'symplectic' branch really does). The gradient is the peer's autodiff "     \
	"with the QP differentiated implicitly on its active set: J is a constant (the ball-ball J is built from "   \
	"the detached normal, so the impulse has no gradient through its direction or the positions: with "          \
	"ball-ball contacts the gradient is NOT the derivative of the forward map and differs from finite "          \
	"differences; with walls only it is), branches are constants. Float32 by default; the QP itself is solved " \
	"in double, as SCS does. Degenerate contacts pass silently (status ok; the peer reports nothing): a "      \
	"tangential (grazing) pass whose predicted gap dips below the radius is a contact, so a ball that only "      \
	"touches a wall bounces off it; simultaneous contacts (a corner, three balls at once) are one QP, so no "      \
	"order enters (three balls in a row end as in Newton's cradle); in resting contact (Zeno) gravity is added " \
	"after the impulse and x moves with the old velocity, so a resting ball sinks into the surface at about "    \
	"|g|dt/(1+e) and never rests; a ball starting in contact (at t = 0) is an ordinary first-step contact. "      \
	"With respect to the scene's numbers the gradient is the same autodiff: elasticity and friction are leaf "   \
	"tensors (the friction through the QP's implicit derivative on its active set; at friction 0 the one from "   \
	"above for a contact solved alone, 0 for contacts solved together, whose QP then has no friction "          \
	"generators), the masses through G and the ball-ball split, gravity and the duration through the "         \
	"update (and dt in tau); radii and wall poses only through tau (zero without TOI): J, built from the wall's " \
	"normal like the ball-ball J from the detached one, is a constant, so d/d(wall angle) is not the "         \
	"derivative of the forward map either. "

/* e and μ are leaf tensors of the peer; the geometry enters through τ only */
#define CONVEX_PARAM_ADJOINTS                                                                                       \
	(1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_FRICTION | 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION |    \
	 1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS | 1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE)

const ClBackend cl_backend_convex_toi = {
	.info = {
		.id = "convex-toi",
		.label = "Convex QP + TOI",
		.family = "convex",
		.mirrors = "DiffCoSim",
		.toi = true,
		.twin = "convex",
		.gradient_is_derivative = false,
		.intro = "Finds contact impulses by a small optimisation each step (like DiffCoSim) and corrects the step for when the impact really happened.",
		.summary = CONVEX_SUMMARY_COMMON
		"With TOI the position is shifted by min(tau - dt, 0)*dv, tau = (gap - r)/min(-clamp, s); with the "
		"old-velocity position update this leaves an offset of -dt*dv after every impact and Task 1's "
		"d(final height)/d(initial velocity) is -(N-2)*dt = -0.9958, not -1. Like every TOI scheme it misses "
		"the saltation's acceleration term (Task 2's d/dvy0, Task 3). Its toi_clamp has no adjoint: in "
		"DiffCoSim it is a Python constant, not a differentiated input.",
		.params = convex_toi_params,
		.param_count = 2,
	},
	.create = convex_create,
	.destroy = convex_destroy,
	.step = convex_toi_step,
	.tape_blocks_per_ball = true,
	.param_adjoints = CONVEX_PARAM_ADJOINTS,
	.accel_form = true,
};

const ClBackend cl_backend_convex = {
	.info = {
		.id = "convex",
		.label = "Convex QP",
		.family = "convex",
		.mirrors = "DiffCoSim",
		.toi = false,
		.twin = "convex-toi",
		.gradient_is_derivative = false,
		.intro = "Finds contact impulses by a small optimisation each step (like DiffCoSim), without correcting for when in the step the impact happened.",
		.summary = CONVEX_SUMMARY_COMMON
		"Without TOI no position correction: Task 1's d(final height)/d(initial height) is +1 instead of -1 "
		"and gradients through an impact are those of a step-quantised collision time.",
		.params = convex_params,
		.param_count = 1,
	},
	.create = convex_create,
	.destroy = convex_destroy,
	.step = convex_plain_step,
	.tape_blocks_per_ball = true,
	.param_adjoints = CONVEX_PARAM_ADJOINTS,
	.accel_form = true,
};
