/* Dojo's nonlinear-complementarity contact (backend-dojo.md), reduced to the
 * plane for frictionless balls: the impact model. Every ball–wall and
 * ball–ball pair is a contact at every step (no detection, no active set):
 *
 *   R_v = m (v₊ − v) − dt (m g + u) − Σ ∇d(x₊)ᵀ γ     (implicit Euler, x₊ = x + dt v₊)
 *   R_d = d(x₊) − s,    R_c = γ s − κ,    γ, s > 0
 *
 * with d the signed distance at the next configuration: an active contact
 * ends the step on the surface with zero approach velocity, so impacts are
 * inelastic whatever the scene's elasticity. The solver is either the
 * relaxed system at a fixed κ solved to convergence, or Dojo's Mehrotra
 * predictor–corrector with its options (§4), which stops wherever γs < 1e-4
 * first holds. The gradient is the implicit-function theorem at the last
 * iterate (§6), complete, or as coded in Dojo (no child-ball terms).
 *
 * The per-contact rows are eliminated exactly (Δs = dt ∇d Δv − r_d, Δγ =
 * (r_c − γ Δs)/s), so every linear solve is one dense 2·balls system, and
 * every step's tape one dense factor (tape_dense), with a C column for
 * each physical parameter (its −∂F/∂θ through the same factor). A contact event for the
 * UI is a pair whose free motion would end the step inside. Friction
 * (Dojo's second-order cone, with spin) is not implemented: unsupported. */
#include "../core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PARAM_SOLVER, PARAM_KAPPA, PARAM_GRADIENT };
enum { SOLVER_FIXED_KAPPA, SOLVER_DOJO_DEFAULT };
enum { GRADIENT_FULL, GRADIENT_AS_CODED };

/* SolverOptions and the solver's constants (§7) */
#define DOJO_RTOL 1e-6
#define DOJO_BTOL 1e-4
#define DOJO_LS_SCALE 0.5
#define DOJO_MAX_ITER 50
#define DOJO_MAX_LS 10
#define DOJO_NO_PROGRESS_MAX 3
#define DOJO_NO_PROGRESS_UNDERCUT 10.0
#define DOJO_REG 1e-10
#define DOJO_CENTRING_EXPONENT 3
#define DOJO_AFFINE_BOUNDARY 0.95
#define DOJO_START 1.5 /* γ = s after initialising from the neutral vector */

/* The fixed-κ solve: Newton to these residuals (a bound on the gradient's
 * error, which is the derivative of the converged map), with a
 * fraction-to-boundary step and halving on the residual. */
#define FIXED_BOUNDARY 0.99
#define FIXED_MAX_ITER 200
#define FIXED_MAX_HALVINGS 40
#define FIXED_EQ_TOL 1e-13
#define FIXED_COMP_TOL 1e-10 /* relative to κ */

/* Every pair: ball a (Dojo's parent), and ball b (the child) or wall −1 − b. */
typedef struct DojoContact {
	int a, b;
	double s, gamma;
	/* at the iterate's x₊: gap, unit normal (child → parent), centre distance */
	double d, n[2], length;
	double trial_s, trial_gamma, ds, dgamma, ds_affine, dgamma_affine;
	bool active; /* the free motion ended inside in the last step */
} DojoContact;

typedef struct DojoWorkspace {
	int balls, count;
	DojoContact *contacts;
	double *v, *trial_v, *dv, *dv_affine; /* v₊, 2 per ball */
	double *residual;                     /* R_v, 2 per ball */
	double *K;                            /* the reduced Newton matrix, (2·balls)² */
	int *pivot, *index; /* index: 0 … balls − 1, the dense factor's balls */
	double *rhs;
	double *jac; /* d v₊ / d (x, v, u): 2·balls × 6·balls */
	double *A, *B;
} DojoWorkspace;

static void dojo_destroy(void *workspace)
{
	DojoWorkspace *ws = workspace;
	free(ws->contacts);
	free(ws->v);
	free(ws->trial_v);
	free(ws->dv);
	free(ws->dv_affine);
	free(ws->residual);
	free(ws->K);
	free(ws->pivot);
	free(ws->index);
	free(ws->rhs);
	free(ws->jac);
	free(ws->A);
	free(ws->B);
	free(ws);
}

static size_t contact_count(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count;
	return nb * (size_t)scene->wall_count + nb * (nb > 0 ? nb - 1 : 0) / 2;
}

/* The dense rows: K, the Jacobian and the step's A and B (4·balls rows). */
static size_t dojo_workspace_bytes(const ClScene *scene)
{
	size_t nb = (size_t)scene->ball_count;
	return sizeof(double) * (4 * nb * nb + 12 * nb * nb + 16 * nb * nb + 8 * nb * nb) +
		   sizeof(DojoContact) * contact_count(scene);
}

static void *dojo_create(const ClScene *scene, const double *params)
{
	(void)params;
	DojoWorkspace *ws = cl_calloc(1, sizeof *ws);
	if (!ws)
		return NULL;
	size_t nb = (size_t)scene->ball_count, count = contact_count(scene);
	ws->balls = (int)nb;
	ws->count = (int)count;
	ws->contacts = cl_calloc(count ? count : 1, sizeof *ws->contacts);
	ws->v = cl_calloc(2 * nb, sizeof(double));
	ws->trial_v = cl_calloc(2 * nb, sizeof(double));
	ws->dv = cl_calloc(2 * nb, sizeof(double));
	ws->dv_affine = cl_calloc(2 * nb, sizeof(double));
	ws->residual = cl_calloc(2 * nb, sizeof(double));
	ws->K = cl_calloc(4 * nb * nb, sizeof(double));
	ws->pivot = cl_calloc(2 * nb, sizeof(int));
	ws->index = cl_calloc(nb ? nb : 1, sizeof(int));
	ws->rhs = cl_calloc(2 * nb, sizeof(double));
	ws->jac = cl_calloc(12 * nb * nb, sizeof(double));
	ws->A = cl_calloc(16 * nb * nb, sizeof(double));
	ws->B = cl_calloc(8 * nb * nb, sizeof(double));
	if (!ws->contacts || !ws->v || !ws->trial_v || !ws->dv || !ws->dv_affine || !ws->residual || !ws->K ||
		!ws->pivot || !ws->index || !ws->rhs || !ws->jac || !ws->A || !ws->B) {
		dojo_destroy(ws);
		return NULL;
	}
	int k = 0;
	for (int i = 0; i < scene->ball_count; i++) {
		ws->index[i] = i;
		for (int w = 0; w < scene->wall_count; w++)
			ws->contacts[k++] = (DojoContact){.a = i, .b = -1 - w};
		for (int j = i + 1; j < scene->ball_count; j++)
			ws->contacts[k++] = (DojoContact){.a = i, .b = j};
	}
	return ws;
}

/* ------------------------------------------------------------ linear algebra */

/* LU with partial pivoting of the n×n row-major K in place; false when singular. */
static bool lu_factor(double *K, int *pivot, int n)
{
	for (int c = 0; c < n; c++) {
		int p = c;
		for (int r = c + 1; r < n; r++)
			if (fabs(K[r * n + c]) > fabs(K[p * n + c]))
				p = r;
		pivot[c] = p;
		if (!(fabs(K[p * n + c]) > 0.0))
			return false;
		if (p != c)
			for (int k = 0; k < n; k++) {
				double t = K[c * n + k];
				K[c * n + k] = K[p * n + k];
				K[p * n + k] = t;
			}
		for (int r = c + 1; r < n; r++) {
			double f = K[r * n + c] /= K[c * n + c];
			for (int k = c + 1; k < n; k++)
				K[r * n + k] -= f * K[c * n + k];
		}
	}
	return true;
}

/* lu_factor swaps whole rows, its multipliers too: so every swap comes
 * before the forward substitution (P K = L U). */
static void lu_solve(const double *K, const int *pivot, int n, double *x)
{
	for (int c = 0; c < n; c++) {
		double t = x[c];
		x[c] = x[pivot[c]];
		x[pivot[c]] = t;
	}
	for (int c = 0; c < n; c++)
		for (int r = c + 1; r < n; r++)
			x[r] -= K[r * n + c] * x[c];
	for (int r = n - 1; r >= 0; r--) {
		for (int k = r + 1; k < n; k++)
			x[r] -= K[r * n + k] * x[k];
		x[r] /= K[r * n + r];
	}
}

/* ------------------------------------------------------------------ the step */

typedef struct DojoStep {
	const ClScene *scene;
	const double *s, *u;
	double dt, kappa;
	DojoWorkspace *ws;
} DojoStep;

/* The contact's gap and normal at x₊ = x + dt v₊; false when two centres coincide. */
static bool contact_geometry(const DojoStep *st, const double *v, DojoContact *c)
{
	const double *x = st->s + CL_BALL_STATE * c->a;
	double pa[2] = {x[0] + st->dt * v[2 * c->a], x[1] + st->dt * v[2 * c->a + 1]};
	double ra = st->scene->balls[c->a].radius;
	if (c->b < 0) {
		const ClWall *w = &st->scene->walls[-1 - c->b];
		c->n[0] = w->normal.x;
		c->n[1] = w->normal.y;
		c->d = w->normal.x * (pa[0] - w->point.x) + w->normal.y * (pa[1] - w->point.y) - ra;
		return true;
	}
	const double *y = st->s + CL_BALL_STATE * c->b;
	double delta[2] = {pa[0] - (y[0] + st->dt * v[2 * c->b]), pa[1] - (y[1] + st->dt * v[2 * c->b + 1])};
	c->length = hypot(delta[0], delta[1]);
	if (!(c->length > 0.0))
		return false;
	c->n[0] = delta[0] / c->length;
	c->n[1] = delta[1] / c->length;
	c->d = c->length - ra - st->scene->balls[c->b].radius;
	return true;
}

/* Residual of the iterate (v, the contacts' s and γ, from the trial fields
 * when trial): R_v into ws->residual; rvio over the equality rows, bvio the
 * largest γs. False when a pair's normal is undefined. */
static bool evaluate(const DojoStep *st, bool trial, double *rvio, double *bvio)
{
	DojoWorkspace *ws = st->ws;
	const ClScene *scene = st->scene;
	const double *v = trial ? ws->trial_v : ws->v;
	for (int i = 0; i < ws->balls; i++) {
		double m = scene->balls[i].mass;
		const double *vi = st->s + CL_BALL_STATE * i + 2;
		ws->residual[2 * i] = m * (v[2 * i] - vi[0]) - st->dt * (m * scene->gravity.x + st->u[2 * i]);
		ws->residual[2 * i + 1] = m * (v[2 * i + 1] - vi[1]) - st->dt * (m * scene->gravity.y + st->u[2 * i + 1]);
	}
	*rvio = *bvio = 0.0;
	for (int k = 0; k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		if (!contact_geometry(st, v, c))
			return false;
		double s = trial ? c->trial_s : c->s, gamma = trial ? c->trial_gamma : c->gamma;
		ws->residual[2 * c->a] -= c->n[0] * gamma;
		ws->residual[2 * c->a + 1] -= c->n[1] * gamma;
		if (c->b >= 0) {
			ws->residual[2 * c->b] += c->n[0] * gamma;
			ws->residual[2 * c->b + 1] += c->n[1] * gamma;
		}
		*rvio = fmax(*rvio, fabs(c->d - s));
		*bvio = fmax(*bvio, fabs(gamma * s));
	}
	for (int k = 0; k < 2 * ws->balls; k++)
		*rvio = fmax(*rvio, fabs(ws->residual[k]));
	return true;
}

/* Adds w·M to K's (2×2) block (p, q) of balls. */
static void add_block(double *K, int n, int p, int q, double w, const double M[4])
{
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++)
			K[(2 * p + r) * n + 2 * q + c] += w * M[2 * r + c];
}

/* The Newton matrix at the current iterate, contact rows eliminated:
 * diag(m + reg) + Σ dt (γ+reg)/(s+reg) ∇dᵀ∇d − Σ γ dt ∇²d, the last
 * without its parent–child blocks unless cross (Dojo's system graph has no
 * body–body edge through a contact). Factored in place. */
static bool assemble(const DojoStep *st, double reg, bool cross)
{
	DojoWorkspace *ws = st->ws;
	int n = 2 * ws->balls;
	memset(ws->K, 0, sizeof(double) * (size_t)(n * n));
	for (int i = 0; i < ws->balls; i++)
		ws->K[(2 * i) * n + 2 * i] = ws->K[(2 * i + 1) * n + 2 * i + 1] = st->scene->balls[i].mass + reg;
	for (int k = 0; k < ws->count; k++) {
		const DojoContact *c = &ws->contacts[k];
		double nn[4] = {c->n[0] * c->n[0], c->n[0] * c->n[1], c->n[1] * c->n[0], c->n[1] * c->n[1]};
		double w = st->dt * (c->gamma + reg) / (c->s + reg);
		add_block(ws->K, n, c->a, c->a, w, nn);
		if (c->b < 0)
			continue;
		add_block(ws->K, n, c->b, c->b, w, nn);
		add_block(ws->K, n, c->a, c->b, -w, nn);
		add_block(ws->K, n, c->b, c->a, -w, nn);
		/* the normal's rotation: d n / d x_a = P = (I − nnᵀ)/|Δ| */
		double P[4] = {(1 - nn[0]) / c->length, -nn[1] / c->length, -nn[2] / c->length, (1 - nn[3]) / c->length};
		double g = st->dt * c->gamma;
		add_block(ws->K, n, c->a, c->a, -g, P);
		add_block(ws->K, n, c->b, c->b, -g, P);
		if (cross) {
			add_block(ws->K, n, c->a, c->b, g, P);
			add_block(ws->K, n, c->b, c->a, g, P);
		}
	}
	return lu_factor(ws->K, ws->pivot, n);
}

/* One Newton direction from the factored K: the body rows' right-hand side
 * is −R_v, each contact's (r_d, r_c) = (−R_d, −R_c + extra) with extra
 * from corrector (−Δs_a Δγ_a + κ_c, or 0). Writes dv and each c->ds, dgamma. */
static void direction(const DojoStep *st, double reg, bool corrector, double kappa_c, double *dv)
{
	DojoWorkspace *ws = st->ws;
	int n = 2 * ws->balls;
	for (int k = 0; k < n; k++)
		dv[k] = -ws->residual[k];
	for (int k = 0; k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		double r_d = -(c->d - c->s), r_c = -(c->gamma * c->s - st->kappa);
		if (corrector)
			r_c += -c->ds_affine * c->dgamma_affine + kappa_c;
		double f = (r_c + (c->gamma + reg) * r_d) / (c->s + reg);
		dv[2 * c->a] += c->n[0] * f;
		dv[2 * c->a + 1] += c->n[1] * f;
		if (c->b >= 0) {
			dv[2 * c->b] -= c->n[0] * f;
			dv[2 * c->b + 1] -= c->n[1] * f;
		}
		c->ds = r_c; /* kept until dv is known */
		c->dgamma = r_d;
	}
	lu_solve(ws->K, ws->pivot, n, dv);
	for (int k = 0; k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		double r_c = c->ds, r_d = c->dgamma;
		double jv = c->n[0] * dv[2 * c->a] + c->n[1] * dv[2 * c->a + 1];
		if (c->b >= 0)
			jv -= c->n[0] * dv[2 * c->b] + c->n[1] * dv[2 * c->b + 1];
		c->ds = st->dt * jv - r_d;
		c->dgamma = (r_c - (c->gamma + reg) * c->ds) / (c->s + reg);
	}
}

/* The largest α ≤ 1 with λ + αΔ ≥ (1 − τ)λ over every s and γ. */
static double orthant_step(const DojoWorkspace *ws, double tau, bool affine)
{
	double alpha = 1.0;
	for (int k = 0; k < ws->count; k++) {
		const DojoContact *c = &ws->contacts[k];
		double ds = affine ? c->ds_affine : c->ds, dg = affine ? c->dgamma_affine : c->dgamma;
		if (ds < 0)
			alpha = fmin(alpha, -tau * c->s / ds);
		if (dg < 0)
			alpha = fmin(alpha, -tau * c->gamma / dg);
	}
	return alpha;
}

static void set_trial(DojoWorkspace *ws, const double *dv, double alpha)
{
	for (int k = 0; k < 2 * ws->balls; k++)
		ws->trial_v[k] = ws->v[k] + alpha * dv[k];
	for (int k = 0; k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		c->trial_s = c->s + alpha * c->ds;
		c->trial_gamma = c->gamma + alpha * c->dgamma;
	}
}

static void accept_trial(DojoWorkspace *ws)
{
	memcpy(ws->v, ws->trial_v, sizeof(double) * (size_t)(2 * ws->balls));
	for (int k = 0; k < ws->count; k++) {
		ws->contacts[k].s = ws->contacts[k].trial_s;
		ws->contacts[k].gamma = ws->contacts[k].trial_gamma;
	}
}

static const char *const geometry_failure = "two balls' centres coincide at the next configuration: no contact normal";

/* Dojo's Mehrotra predictor–corrector (§4) from the reset iterate. */
static bool solve_dojo(ClStepContext *ctx, DojoStep *st)
{
	DojoWorkspace *ws = st->ws;
	double rvio, bvio, undercut = INFINITY;
	int no_progress = 0;
	st->kappa = 0.0;
	if (!evaluate(st, false, &rvio, &bvio) || !assemble(st, DOJO_REG, false))
		goto singular;
	for (int iter = 1; iter <= DOJO_MAX_ITER; iter++) {
		if (rvio < DOJO_RTOL && bvio < DOJO_BTOL)
			break;
		/* predictor: −F still holds the previous κ */
		direction(st, DOJO_REG, false, 0.0, ws->dv_affine);
		for (int k = 0; k < ws->count; k++) {
			ws->contacts[k].ds_affine = ws->contacts[k].ds;
			ws->contacts[k].dgamma_affine = ws->contacts[k].dgamma;
		}
		double alpha = orthant_step(ws, DOJO_AFFINE_BOUNDARY, true);
		double nu = 0.0, nu_affine = 0.0;
		for (int k = 0; k < ws->count; k++) {
			const DojoContact *c = &ws->contacts[k];
			nu += c->s * c->gamma;
			nu_affine += (c->s + alpha * c->ds_affine) * (c->gamma + alpha * c->dgamma_affine);
		}
		nu /= ws->count;
		nu_affine /= ws->count;
		double sigma = pow(fmin(fmax(nu_affine / (nu + 1e-20), 0.0), 1.0), DOJO_CENTRING_EXPONENT);
		double kappa = fmax(sigma * nu, DOJO_BTOL / undercut);
		/* corrector with the same matrix; then κ is the current one */
		direction(st, DOJO_REG, true, kappa, ws->dv);
		st->kappa = kappa;
		double tau = fmax(0.95, 1.0 - pow(fmax(rvio, bvio), 2));
		alpha = orthant_step(ws, tau, false);
		double rvio_trial = 0.0, bvio_trial = 0.0;
		for (int ls = 0; ls < DOJO_MAX_LS; ls++, alpha *= DOJO_LS_SCALE) {
			set_trial(ws, ws->dv, alpha);
			if (!evaluate(st, true, &rvio_trial, &bvio_trial))
				goto singular;
			if (!(rvio_trial > rvio && bvio_trial > bvio))
				break;
		}
		bool made = (rvio_trial >= DOJO_RTOL && rvio_trial < 0.8 * rvio) ||
					(bvio_trial >= DOJO_BTOL && bvio_trial < 0.8 * bvio);
		no_progress = made ? (no_progress > 0 ? no_progress - 1 : 0) : no_progress + 1;
		if (no_progress >= DOJO_NO_PROGRESS_MAX)
			undercut *= DOJO_NO_PROGRESS_UNDERCUT;
		accept_trial(ws);
		if (!evaluate(st, false, &rvio, &bvio) || !assemble(st, DOJO_REG, false))
			goto singular;
	}
	return true;
singular:
	cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED, "ncp-dojo: %s", geometry_failure);
	return false;
}

/* The fixed-κ solve's violation in units of its tolerances, as a 2-norm
 * over every row (the Newton direction descends along any such norm): ≤ 1
 * is converged. R_v must be in ws->residual (evaluate). */
static double fixed_merit(const DojoStep *st, bool trial)
{
	const DojoWorkspace *ws = st->ws;
	double sum = 0.0;
	for (int k = 0; k < 2 * ws->balls; k++)
		sum += pow(ws->residual[k] / FIXED_EQ_TOL, 2);
	for (int k = 0; k < ws->count; k++) {
		const DojoContact *c = &ws->contacts[k];
		double s = trial ? c->trial_s : c->s, gamma = trial ? c->trial_gamma : c->gamma;
		sum += pow((c->d - s) / FIXED_EQ_TOL, 2) + pow((gamma * s - st->kappa) / (FIXED_COMP_TOL * st->kappa), 2);
	}
	return sqrt(sum);
}

/* Newton on the relaxed system at the fixed κ from the current iterate;
 * false with *merit when it did not converge. */
static bool newton_fixed(DojoStep *st, double *merit, bool *singular)
{
	DojoWorkspace *ws = st->ws;
	double rvio, bvio;
	*singular = false;
	for (int iter = 0; iter < FIXED_MAX_ITER; iter++) {
		if (!evaluate(st, false, &rvio, &bvio) || !assemble(st, 0.0, true)) {
			*singular = true;
			return false;
		}
		if ((*merit = fixed_merit(st, false)) <= 1.0)
			return true;
		direction(st, 0.0, false, 0.0, ws->dv);
		double alpha = orthant_step(ws, FIXED_BOUNDARY, false);
		for (int h = 0; h < FIXED_MAX_HALVINGS; h++, alpha *= 0.5) {
			set_trial(ws, ws->dv, alpha);
			double r, b;
			if (evaluate(st, true, &r, &b) && fixed_merit(st, true) < *merit)
				break;
		}
		accept_trial(ws);
	}
	return false;
}

/* The relaxed system at the fixed κ, by Newton to convergence from Dojo's
 * reset iterate (v₊ = v, γ = s = 1.5). In a rack of close balls those
 * impulses throw everything apart and the damped Newton crawls; then it
 * starts again on the target's complementarity: s = the gap of the
 * unchanged velocity (at least √(κ dt), a contact's gap), γ = κ/s. */
static bool solve_fixed(ClStepContext *ctx, DojoStep *st)
{
	DojoWorkspace *ws = st->ws;
	double merit;
	bool singular;
	if (newton_fixed(st, &merit, &singular))
		return true;
	double floor = sqrt(st->kappa * st->dt);
	for (int i = 0; !singular && i < ws->balls; i++) {
		ws->v[2 * i] = st->s[CL_BALL_STATE * i + 2];
		ws->v[2 * i + 1] = st->s[CL_BALL_STATE * i + 3];
	}
	for (int k = 0; !singular && k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		singular = !contact_geometry(st, ws->v, c);
		c->s = fmax(c->d, floor);
		c->gamma = st->kappa / c->s;
	}
	if (!singular && newton_fixed(st, &merit, &singular))
		return true;
	if (singular)
		cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED, "ncp-dojo: %s", geometry_failure);
	else
		cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED,
					 "ncp-dojo: the relaxed system at kappa %g did not converge in %d Newton steps from either "
					 "start (%.3g times the tolerance)",
					 st->kappa, FIXED_MAX_ITER, merit);
	return false;
}

/* −∂F/∂x of one contact for column (ball, axis) into the body rows (rhs)
 * and its gap row (returned r_d): the distance's ∇d, and for a pair the
 * normal's rotation γ·∂n/∂x. as_coded keeps the parent's entries only. */
/* A contact's gap data r_d (the column's derivative of its gap) condensed into the velocity
 * rows: the eliminated complementarity rows give (γ + reg)/(s + reg)·r_d
 * along the normal, opposite on the other ball. */
static void add_contact_data(double *rhs, const DojoContact *c, double r_d, double reg)
{
	double f = (c->gamma + reg) * r_d / (c->s + reg);
	rhs[2 * c->a] += c->n[0] * f;
	rhs[2 * c->a + 1] += c->n[1] * f;
	if (c->b >= 0) {
		rhs[2 * c->b] -= c->n[0] * f;
		rhs[2 * c->b + 1] -= c->n[1] * f;
	}
}

static double position_data(const DojoContact *c, int ball, int axis, bool as_coded, double *rhs)
{
	double sign = ball == c->a ? 1.0 : -1.0; /* ∂d/∂x_b = sign · n */
	if (c->b < 0)
		return -c->n[axis];
	if (as_coded && ball != c->a)
		return 0.0;
	/* the axis column of P = (I − nnᵀ)/|Δ| */
	double P[2] = {((axis == 0) - c->n[0] * c->n[axis]) / c->length, ((axis == 1) - c->n[1] * c->n[axis]) / c->length};
	double g = sign * c->gamma;
	for (int r = 0; r < 2; r++) {
		rhs[2 * c->a + r] += g * P[r];
		if (!as_coded)
			rhs[2 * c->b + r] -= g * P[r];
	}
	return -sign * c->n[axis];
}

/* d v₊ / d (x, v, u) by the implicit-function theorem at the iterate, into
 * ws->jac (row k of v₊, columns: x of every ball, then v, then u). The
 * matrix is Dojo's Newton matrix there, with its REG for both solvers, as
 * the spec's numbers have it: at κ = 1e-8 a far wall's γ ≈ 5e-9, so REG
 * moves its weight (γ + REG)/(s + REG) by 2% and the gradient of Task 2 by
 * 1.4% from the relaxed map's own derivative (its central differences). */
static bool gradient(const DojoStep *st, bool as_coded)
{
	const double reg = DOJO_REG;
	DojoWorkspace *ws = st->ws;
	int nb = ws->balls, n = 2 * nb, cols = 3 * n;
	if (!assemble(st, reg, !as_coded))
		return false;
	for (int col = 0; col < cols; col++) {
		int kind = col / n, ball = (col % n) / 2, axis = col % 2;
		double *rhs = ws->rhs;
		memset(rhs, 0, sizeof(double) * (size_t)n);
		if (kind == 1)
			rhs[col % n] = st->scene->balls[ball].mass;
		else if (kind == 2)
			rhs[col % n] = st->dt;
		else
			for (int k = 0; k < ws->count; k++) {
				const DojoContact *c = &ws->contacts[k];
				if (c->a != ball && c->b != ball)
					continue;
				add_contact_data(rhs, c, position_data(c, ball, axis, as_coded, rhs), reg);
			}
		lu_solve(ws->K, ws->pivot, n, rhs);
		for (int r = 0; r < n; r++)
			ws->jac[r * cols + col] = rhs[r];
	}
	return true;
}

/* The step's A and B from ws->jac: x₊ = x + dt v₊, v_next = v₊. */
static void record(ClTape *tape, const DojoStep *st)
{
	DojoWorkspace *ws = st->ws;
	int nb = ws->balls, n = 2 * nb, cols = 3 * n, ns = CL_BALL_STATE * nb;
	memset(ws->A, 0, sizeof(double) * (size_t)(ns * ns));
	memset(ws->B, 0, sizeof(double) * (size_t)(ns * n));
	for (int i = 0; i < nb; i++)
		for (int k = 0; k < 2; k++) {
			const double *row = ws->jac + (2 * i + k) * cols;
			double *pos = ws->A + (CL_BALL_STATE * i + k) * ns, *vel = ws->A + (CL_BALL_STATE * i + 2 + k) * ns;
			for (int j = 0; j < nb; j++)
				for (int a = 0; a < 2; a++) {
					double dx = row[2 * j + a], dv = row[n + 2 * j + a], du = row[2 * n + 2 * j + a];
					vel[CL_BALL_STATE * j + a] = dx;
					vel[CL_BALL_STATE * j + 2 + a] = dv;
					pos[CL_BALL_STATE * j + a] = (i == j && a == k) + st->dt * dx;
					pos[CL_BALL_STATE * j + 2 + a] = st->dt * dv;
					ws->B[(CL_BALL_STATE * i + k) * n + 2 * j + a] = st->dt * du;
					ws->B[(CL_BALL_STATE * i + 2 + k) * n + 2 * j + a] = du;
				}
		}
	cl_tape_dense(tape, ws->index, nb, ws->A, ws->B);
}

/* −∂F/∂θ of one contact at the iterate for the physical parameter phys
 * (the time step dt for CL_PHYS_DURATION): its body rows into rhs, its gap
 * row returned. as_coded leaves out the child ball's rows of the normal's
 * rotation, as position_data does. */
static double contact_param_data(const DojoStep *st, const DojoContact *c, int phys, bool as_coded, double *rhs)
{
	const double rad = 3.14159265358979323846 / 180.0;
	const double *v = st->ws->v;
	if (phys == CL_PHYS_DURATION) {
		/* x₊ = x + dt v₊: the gap moves by ∇d·v₊, a pair's normal turns by P (v₊_a − v₊_b) */
		double rel[2] = {v[2 * c->a], v[2 * c->a + 1]};
		if (c->b >= 0) {
			rel[0] -= v[2 * c->b];
			rel[1] -= v[2 * c->b + 1];
			double along = c->n[0] * rel[0] + c->n[1] * rel[1];
			for (int r = 0; r < 2; r++) {
				double turn = c->gamma * (rel[r] - c->n[r] * along) / c->length;
				rhs[2 * c->a + r] += turn;
				if (!as_coded)
					rhs[2 * c->b + r] -= turn;
			}
		}
		return -(c->n[0] * rel[0] + c->n[1] * rel[1]);
	}
	if (phys == cl_phys_radius(c->a) || (c->b >= 0 && phys == cl_phys_radius(c->b)))
		return 1.0; /* d = … − r */
	if (c->b >= 0)
		return 0.0;
	int w = -1 - c->b;
	const ClWall *wall = &st->scene->walls[w];
	if (phys == cl_phys_wall(st->scene, w, 0) || phys == cl_phys_wall(st->scene, w, 1))
		return c->n[phys - cl_phys_wall(st->scene, w, 0)]; /* d = n·(x₊ − p₀) − r */
	if (phys != cl_phys_wall(st->scene, w, 2))
		return 0.0;
	/* n = (cos θ, sin θ) about the fixed point: dn/dθ = t·rad; the impulse n γ turns with it */
	double t[2] = {-c->n[1] * rad, c->n[0] * rad};
	const double *x = st->s + CL_BALL_STATE * c->a;
	double rx = x[0] + st->dt * v[2 * c->a] - wall->point.x, ry = x[1] + st->dt * v[2 * c->a + 1] - wall->point.y;
	rhs[2 * c->a] += c->gamma * t[0];
	rhs[2 * c->a + 1] += c->gamma * t[1];
	return -(t[0] * rx + t[1] * ry);
}

/* The step's parameter columns (C) from the factored Newton matrix of
 * gradient(): dt, every ball's radius and mass, every wall's point and
 * angle. Gravity and the controls' part of the masses are accel_form's;
 * the elasticity has no column (Dojo does not use it). */
static void record_param_columns(ClTape *tape, const DojoStep *st, bool as_coded)
{
	const double reg = DOJO_REG;
	DojoWorkspace *ws = st->ws;
	const ClScene *scene = st->scene;
	int nb = ws->balls, n = 2 * nb;
	int last = cl_phys_wall(scene, scene->wall_count, 0);
	/* the duration, then the balls' and the walls' numbers */
	for (int param = CL_PHYS_DURATION; param < last; param++) {
		double *rhs = ws->rhs;
		memset(rhs, 0, sizeof(double) * (size_t)n);
		for (int i = 0; i < nb; i++) {
			double m = scene->balls[i].mass;
			const double *u = st->u + 2 * i, *vi = st->s + CL_BALL_STATE * i + 2, *vp = ws->v + 2 * i;
			double g[2] = {scene->gravity.x, scene->gravity.y};
			for (int k = 0; k < 2; k++) {
				if (param == CL_PHYS_DURATION) /* R_v ∋ −dt (m g + u) */
					rhs[2 * i + k] += m * g[k] + u[k];
				else if (param == cl_phys_mass(i)) /* R_v = m (v₊ − v − dt (g + u/m)) − …, a held */
					rhs[2 * i + k] -= vp[k] - vi[k] - st->dt * (g[k] + u[k] / m);
			}
		}
		for (int k = 0; k < ws->count; k++) {
			const DojoContact *c = &ws->contacts[k];
			add_contact_data(rhs, c, contact_param_data(st, c, param, as_coded, rhs), reg);
		}
		lu_solve(ws->K, ws->pivot, n, rhs);
		/* x_next = x + dt v₊, dt = T/N */
		double ddt = param == CL_PHYS_DURATION ? 1.0 / scene->steps : 1.0;
		for (int i = 0; i < nb; i++) {
			double *col = cl_tape_c(tape, i, param);
			for (int k = 0; k < 2; k++) {
				double dv = ddt * rhs[2 * i + k];
				col[2 + k] = dv;
				col[k] = st->dt * dv + (param == CL_PHYS_DURATION ? ddt * ws->v[2 * i + k] : 0.0);
			}
		}
	}
}

static bool dojo_can_run(const ClScene *scene, char *why, size_t size)
{
	if (scene->friction > 0.0) {
		snprintf(why, size, "friction (Dojo's second-order cone with spin) is not implemented; only the "
							"impact model (friction 0) is");
		return false;
	}
	return true;
}

static void dojo_step(ClStepContext *ctx, const double *s, const double *u, double *s_next)
{
	const ClScene *scene = ctx->scene;
	DojoWorkspace *ws = ctx->workspace;
	int solver = (int)cl_param_value(ctx, PARAM_SOLVER);
	bool as_coded = (int)cl_param_value(ctx, PARAM_GRADIENT) == GRADIENT_AS_CODED;
	DojoStep st = {scene, s, u, ctx->dt, cl_param_value(ctx, PARAM_KAPPA), ws};
	char why[CL_MESSAGE_MAX];
	if (!dojo_can_run(scene, why, sizeof why)) {
		cl_step_fail(ctx, CL_STATUS_UNSUPPORTED, "%s", why);
		return;
	}
	/* a contact for the UI where the free motion would end inside, once
	 * per approach (every pair is always in the problem) */
	double time = ctx->step * ctx->dt;
	for (int i = 0; i < ws->balls; i++)
		for (int k = 0; k < 2; k++)
			ws->trial_v[2 * i + k] = s[CL_BALL_STATE * i + 2 + k] +
									 ctx->dt * ((k ? scene->gravity.y : scene->gravity.x) + u[2 * i + k] / scene->balls[i].mass);
	for (int k = 0; k < ws->count; k++) {
		DojoContact *c = &ws->contacts[k];
		bool was = ctx->step > 0 && c->active;
		c->active = contact_geometry(&st, ws->trial_v, c) && c->d < 0.0;
		if (c->active && !was)
			cl_step_contact(ctx, time, c->a, c->b);
	}
	/* reset (§4.1): v₊ = v, every contact at the initialised neutral vector */
	for (int i = 0; i < ws->balls; i++) {
		ws->v[2 * i] = s[CL_BALL_STATE * i + 2];
		ws->v[2 * i + 1] = s[CL_BALL_STATE * i + 3];
	}
	for (int k = 0; k < ws->count; k++)
		ws->contacts[k].s = ws->contacts[k].gamma = DOJO_START;
	bool dojo = solver == SOLVER_DOJO_DEFAULT;
	if (!(dojo ? solve_dojo(ctx, &st) : solve_fixed(ctx, &st)))
		return;
	double rvio, bvio;
	evaluate(&st, false, &rvio, &bvio); /* the geometry at the final iterate */
	for (int i = 0; i < ws->balls; i++) {
		const double *x = s + CL_BALL_STATE * i;
		double *next = s_next + CL_BALL_STATE * i;
		for (int k = 0; k < 2; k++) {
			next[2 + k] = ws->v[2 * i + k];
			next[k] = x[k] + ctx->dt * next[2 + k];
		}
	}
	if (!ctx->tape)
		return;
	if (!gradient(&st, as_coded)) {
		cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED, "ncp-dojo: the Newton matrix at the last iterate is singular");
		return;
	}
	record(ctx->tape, &st);
	if (ctx->tape->record_params)
		record_param_columns(ctx->tape, &st, as_coded);
}

static const char *const solver_choices[] = {"fixed-kappa", "dojo-default", NULL};
static const char *const gradient_choices[] = {"full", "as-coded", NULL};

static const ClParamDesc dojo_params[] = {
	{"solver", CL_PARAM_KIND_CHOICE, SOLVER_FIXED_KAPPA, 0, 1, "",
	 "fixed-kappa: the relaxed system gamma*s = kappa solved to convergence (a smooth map); dojo-default: Dojo's "
	 "Mehrotra loop with its SolverOptions, stopping where gamma*s < 1e-4 first holds",
	 solver_choices},
	{"kappa", CL_PARAM_KIND_REAL, 1e-4, 1e-12, 1, "",
	 "relaxation of the fixed-kappa solver: larger is softer and smoother, smaller nearer hard inelastic contact",
	 NULL},
	{"gradient", CL_PARAM_KIND_CHOICE, GRADIENT_FULL, 0, 1, "",
	 "full: the complete implicit-function-theorem derivative; as-coded: Dojo's, without the child ball's terms "
	 "of a ball-ball contact",
	 gradient_choices},
};

const ClBackend cl_backend_ncp_dojo = {
	.info = {
		.id = "ncp-dojo",
		.label = "NCP, interior point (Dojo)",
		.family = "ncp",
		.mirrors = "Dojo be7b518",
		.toi = false,
		.twin = NULL,
		.gradient_is_derivative = true,
		.intro = "Keeps every ball exactly outside every surface at the end of each step and stops it there: "
				 "no bounce, whatever the scene's elasticity (like Dojo).",
		.summary =
			"Dojo's nonlinear complementarity contact, planar, frictionless (its impact model). Implicit Euler: "
			"m*(v+ - v) = dt*(m*g + u) + sum of grad d * gamma, x+ = x + dt*v+, with every ball-wall and "
			"ball-ball pair a contact at every step: gap d(x+) = s, gamma*s = kappa, gamma, s > 0. The distance "
			"is taken at the next configuration, so an active contact ends the step on the surface with no "
			"approach velocity: every impact is inelastic (see cannot express). The relaxation acts at a "
			"distance: a ball feels gamma = kappa/d from every wall and ball at every step, and about "
			"sqrt(kappa/dt) more than it needs in contact (Task 1 ends at y = 0.48 with kappa = 1e-4, not 0.1). "
			"solver fixed-kappa solves the relaxed system to convergence (a smooth map whose gradient equals "
			"its central differences); dojo-default runs Dojo's Mehrotra predictor-corrector (rtol 1e-6, btol "
			"1e-4, undercut infinite, reset to gamma = s = 1.5 every step) and stops wherever gamma*s < 1e-4 "
			"first holds, so its map is only piecewise smooth and FD does not match its gradient. No time of "
			"impact. The gradient is the implicit-function theorem at the last iterate (with Dojo's REG = 1e-10 in the "
			"Newton matrix, as the spec's numbers have it); gradient as-coded reproduces Dojo's omission of the child ball's "
			"terms in ball-ball contacts (wrong by an order of magnitude in Task 3). Float64. Friction (Dojo's "
			"second-order cone with spin) is not implemented. Degenerate contacts pass silently (status ok; "
			"Dojo reports nothing): a grazing (tangential) pass is smooth, the barrier acting at a distance with "
			"no event; simultaneous impacts (a corner, three balls in a row) are one solve of every contact at "
			"once; resting contact (Zeno) is the model's natural state, the ball held at the gap "
			"kappa/(m*g*dt) above the surface; a ball starting in contact, or inside, at t = 0 is put outside "
			"within the first step (d(x+) = s > 0). Centres that coincide at the next configuration have no "
			"normal: solver failed. Physical parameters: gravity through the acceleration (the controls and gravity "
			"enter only as dt*m*(g + u/m)); the duration (dt = T/N in x+ = x + dt*v+, in dt*(m*g + u) and in a pair "
			"normal's turn), radii and wall points (in the gaps), masses (in m*(v+ - v)) and wall angles (the gap "
			"and the impulse's direction), each one more right-hand side of the same implicit-function solve, so "
			"as exact as the state columns (fixed-kappa: equal to central FD to 1e-5, the REG's share); the "
			"elasticity's derivative is exactly 0 (not used); friction has none (not implemented). gradient "
			"as-coded solves them with Dojo's matrix and leaves out the child ball's rows of a pair normal's turn, "
			"as for the positions.",
		.cannot_express =
			"restitution. Dojo models hard contact as inelastic (no restitution): the elasticity of this scene "
			"is not used, so trajectories and gradients answer a different physical problem from exact. Compare "
			"it with an inelastic reference, not with the elastic one. Friction is not implemented here: a scene "
			"with friction leaves it out (asked for by name, it reports unsupported).",
		.params = dojo_params,
		.param_count = 3,
	},
	.create = dojo_create,
	.destroy = dojo_destroy,
	.step = dojo_step,
	.tape_blocks_per_ball = true,
	.tape_dense = true,
	/* R_v holds the controls and gravity only as dt·m·(g + u/m) */
	.param_adjoints = 1u << CL_PARAM_ELASTICITY | 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION |
					  1u << CL_PARAM_RADIUS | 1u << CL_PARAM_MASS | 1u << CL_PARAM_WALL_POINT | 1u << CL_PARAM_WALL_ANGLE,
	.accel_form = true,
	.workspace_bytes = dojo_workspace_bytes,
	.can_run = dojo_can_run,
};
