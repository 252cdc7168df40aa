/* Nimble Physics 0.7.2 (the paper's "LCP (with TOI)" rows), after
 * shared/reference/backend-nimble.md.
 *
 * Forward, per control interval (World::step with Nimble's defaults):
 *   v_f = v + dt (u/m + g)                       unconstrained velocity
 *   contacts detected at the pre-step positions, 0 ≤ depth ≤ clipping depth
 *   LCP  Q x = b + w  on the contact rows, b_n = −a_nᵀ v_f (+ min(e·b_n, cap)
 *        when e·b_n exceeds the bouncing threshold), b_t = −a_tᵀ v_f,
 *        friction rows boxed by ±μ x_n (ODE's Dantzig with friction index)
 *   v' = v_f + M⁻¹ A x,   p' = p + dt v          explicit ("parallel") update
 *
 * Backward: Nimble's hand-written Jacobians (BackpropSnapshot), not the
 * derivative of the map above: velocity rows are the frozen-active-set LCP
 * derivative (friction rows at their bound enter as "upper bound" rows),
 * position rows are the bounce approximation X, the matrix nearest to I with
 * aᵢᵀ X aᵢ = −eᵢ for every bouncing contact column aᵢ. */
#include "../core.h"
#include "../lcp.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

enum {
	PARAM_PRECISION,
	PARAM_CLIPPING_DEPTH,
	PARAM_BOUNCE_THRESHOLD,
	PARAM_MAX_BOUNCE_VELOCITY,
	PARAM_COUNT
};

/* DART constants (dart/constraint/ContactConstraint.cpp, LCPUtils) */
#define RESTITUTION_THRESHOLD 1e-3 /* below: the contact is inelastic */
#define FRICTION_THRESHOLD 1e-3    /* below: the contact is frictionless (1-D) */
#define LCP_VALID_TOLERANCE 1e-5   /* isLCPSolutionValid */
#define FALLBACK_CFM 1e-4          /* diagonal regularisation once the primary solve fails */
/* Nimble's row classes (ConstrainedGroupGradientMatrices) */
#define CLAMPING_THRESHOLD 1e-6 /* |x| below: a zero impulse */
#define BOUND_TIE_BREAK 1e-5    /* closer than this to a bound: at the bound */
#define ILLEGAL_MARGIN 1e-2     /* further outside its bounds: "illegal", treated as clamping */
#define UPPER_BOUND_NORMAL 1e-9 /* an upper-bound row needs a normal impulse above this */

typedef struct Contact {
	int ball;
	int other;          /* a ball index, or −1 − wall */
	double n[2];        /* unit normal towards `ball`: column a_n = (n on ball, −n on other) */
	double t[2];        /* normalize(Z × n), column a_t likewise */
	double distance;    /* between the centres: the ball-ball normal's gradient */
	double b_n, b_t;    /* LCP offsets */
	double restitution; /* e when the contact bounced, else 0 (bounce diagonal − 1) */
	double restitution_rate; /* ∂b_n/∂e: the approach speed while the target bounces below its cap, else 0 */
	double x_n, x_t;    /* impulses */
	double bound_t;     /* friction box ±μ x_n */
	double cfm;         /* diagonal regularisation its group's LCP needed (0: none) */
} Contact;

typedef enum RowClass { ROW_NOT_CLAMPING, ROW_CLAMPING, ROW_UPPER_BOUND } RowClass;

/* A contact row of a group in the gradient. */
typedef struct Row {
	const Contact *contact;
	bool tangent;
	RowClass kind;
	double sign; /* upper-bound rows: +1 at hi, −1 at lo (Nimble's E = ±μ) */
	int parent;  /* upper-bound rows: index of their normal among the clamping rows */
	double impulse, offset, restitution;
} Row;

typedef struct Workspace {
	Contact *contacts;
	int contact_count, contact_capacity;
	/* constrained groups: balls linked by ball-ball contacts, bucketed by root */
	int *root, *local, *group_ball, *ball_first, *fill;
	int *group_contact, *contact_first;
	int group_contact_capacity;
	double *v_f, *impulse, *inverse_mass;
	double *state, *control; /* float32-rounded inputs */
	double *scratch;
	int scratch_capacity;
	Row *rows;
	int row_capacity;
	int *indices; /* friction indices of an LCP, bouncing rows of a gradient */
	int index_capacity;
	ClLcpWorkspace lcp;
} Workspace;

static void nimble_destroy(void *workspace);

static void *nimble_create(const ClScene *scene, const double *params)
{
	(void)params;
	size_t nb = (size_t)scene->ball_count;
	Workspace *ws = cl_calloc(1, sizeof *ws);
	if (!ws)
		return NULL;
	ws->root = cl_calloc(nb, sizeof(int));
	ws->local = cl_calloc(nb, sizeof(int));
	ws->group_ball = cl_calloc(nb, sizeof(int));
	ws->ball_first = cl_calloc(nb + 1, sizeof(int));
	ws->contact_first = cl_calloc(nb + 1, sizeof(int));
	ws->fill = cl_calloc(2 * nb, sizeof(int));
	ws->v_f = cl_calloc(2 * nb, sizeof(double));
	ws->impulse = cl_calloc(2 * nb, sizeof(double));
	ws->state = cl_calloc(CL_BALL_STATE * nb, sizeof(double));
	ws->control = cl_calloc(2 * nb, sizeof(double));
	ws->inverse_mass = cl_calloc(nb, sizeof(double));
	if (!ws->root || !ws->local || !ws->group_ball || !ws->ball_first || !ws->contact_first || !ws->fill ||
		!ws->v_f || !ws->impulse || !ws->state || !ws->control || !ws->inverse_mass) {
		nimble_destroy(ws);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++)
		ws->inverse_mass[i] = 1.0 / scene->balls[i].mass;
	return ws;
}

static void nimble_destroy(void *workspace)
{
	Workspace *ws = workspace;
	free(ws->contacts);
	free(ws->root);
	free(ws->local);
	free(ws->group_ball);
	free(ws->ball_first);
	free(ws->contact_first);
	free(ws->fill);
	free(ws->group_contact);
	free(ws->v_f);
	free(ws->inverse_mass);
	free(ws->scratch);
	free(ws->rows);
	free(ws->indices);
	free(ws->impulse);
	free(ws->state);
	free(ws->control);
	cl_lcp_workspace_release(&ws->lcp);
	free(ws);
}

/* Zeroed doubles from the workspace; valid until the next call. NULL when out of memory. */
static double *scratch(Workspace *ws, int doubles)
{
	if (!cl_grow(&ws->scratch, &ws->scratch_capacity, (size_t)doubles, sizeof(double)))
		return NULL;
	memset(ws->scratch, 0, sizeof(double) * (size_t)doubles);
	return ws->scratch;
}

static double *take(double **cursor, int doubles)
{
	double *p = *cursor;
	*cursor += doubles;
	return p;
}

static Contact *add_contact(Workspace *ws)
{
	if (!cl_grow(&ws->contacts, &ws->contact_capacity, (size_t)ws->contact_count + 1, sizeof *ws->contacts))
		return NULL;
	Contact *c = &ws->contacts[ws->contact_count++];
	memset(c, 0, sizeof *c);
	return c;
}

/* DART's detectors on the pre-step positions: no margin, no sweep; a contact
 * exists only while the shapes touch, and deeper ones are clipped away.
 * False when out of memory. */
static bool detect(Workspace *ws, const ClScene *scene, const double *s, double clipping_depth)
{
	ws->contact_count = 0;
	for (int i = 0; i < scene->ball_count; i++) {
		const double *p = s + CL_BALL_STATE * i;
		double r = scene->balls[i].radius;
		for (int w = 0; w < scene->wall_count; w++) {
			const ClWall *wall = &scene->walls[w];
			double distance = wall->normal.x * (p[0] - wall->point.x) + wall->normal.y * (p[1] - wall->point.y);
			double depth = r - distance;
			if (!(depth >= 0.0 && depth <= clipping_depth))
				continue;
			Contact *c = add_contact(ws);
			if (!c)
				return false;
			c->ball = i;
			c->other = -1 - w;
			c->n[0] = wall->normal.x;
			c->n[1] = wall->normal.y;
		}
		for (int j = i + 1; j < scene->ball_count; j++) {
			const double *q = s + CL_BALL_STATE * j;
			double dx = p[0] - q[0], dy = p[1] - q[1];
			double distance = sqrt(dx * dx + dy * dy);
			double depth = r + scene->balls[j].radius - distance;
			if (!(depth >= 0.0 && depth <= clipping_depth && distance > 0.0))
				continue;
			Contact *c = add_contact(ws);
			if (!c)
				return false;
			c->ball = i;
			c->other = j;
			c->n[0] = dx / distance;
			c->n[1] = dy / distance;
			c->distance = distance;
		}
	}
	/* the first friction direction is Z, so the in-plane tangent is Z × n */
	for (int k = 0; k < ws->contact_count; k++) {
		Contact *c = &ws->contacts[k];
		c->t[0] = -c->n[1];
		c->t[1] = c->n[0];
	}
	return true;
}

/* aᵀ v for a contact column along direction d (its n or t). */
static double column_dot(const Contact *c, const double *d, const double *v)
{
	double s = d[0] * v[2 * c->ball] + d[1] * v[2 * c->ball + 1];
	if (c->other >= 0)
		s -= d[0] * v[2 * c->other] + d[1] * v[2 * c->other + 1];
	return s;
}

/* a_cᵀ M⁻¹ a_d between two contact columns. */
static double column_product(const Contact *c, const double *dc, const Contact *d, const double *dd,
							 const double *inverse_mass)
{
	double s = 0.0;
	int cb[2] = {c->ball, c->other}, db[2] = {d->ball, d->other};
	for (int p = 0; p < 2; p++)
		for (int q = 0; q < 2; q++)
			if (cb[p] >= 0 && db[q] == cb[p])
				s += (p == q ? 1.0 : -1.0) * (dc[0] * dd[0] + dc[1] * dd[1]) * inverse_mass[cb[p]];
	return s;
}

/* getInformation: the offsets, with the restitution target on the normal. */
static void offsets(Contact *c, const double *v_f, double e, bool friction, const double *params)
{
	c->b_n = -column_dot(c, c->n, v_f);
	c->restitution = c->restitution_rate = 0.0;
	if (e > RESTITUTION_THRESHOLD) {
		double bounce = e * c->b_n;
		if (bounce > params[PARAM_BOUNCE_THRESHOLD]) {
			c->restitution_rate = c->b_n;
			if (bounce > params[PARAM_MAX_BOUNCE_VELOCITY]) {
				bounce = params[PARAM_MAX_BOUNCE_VELOCITY];
				c->restitution_rate = 0.0;
			}
			c->b_n += bounce;
			c->restitution = e;
		}
	}
	c->b_t = friction ? -column_dot(c, c->t, v_f) : 0.0;
}

static int find_root(int *root, int i)
{
	while (root[i] != i) {
		root[i] = root[root[i]];
		i = root[i];
	}
	return i;
}

/* After it, group g (a root ball index) has balls group_ball[ball_first[g] ..
 * ball_first[g + 1]) and contacts group_contact[contact_first[g] .. ), in order. */
static bool build_groups(Workspace *ws, int nb)
{
	for (int i = 0; i < nb; i++)
		ws->root[i] = i;
	for (int k = 0; k < ws->contact_count; k++) {
		const Contact *c = &ws->contacts[k];
		if (c->other < 0)
			continue;
		int a = find_root(ws->root, c->ball), b = find_root(ws->root, c->other);
		if (a != b)
			ws->root[a > b ? a : b] = a < b ? a : b;
	}
	memset(ws->ball_first, 0, sizeof(int) * ((size_t)nb + 1));
	memset(ws->contact_first, 0, sizeof(int) * ((size_t)nb + 1));
	for (int i = 0; i < nb; i++)
		ws->ball_first[find_root(ws->root, i) + 1]++;
	for (int k = 0; k < ws->contact_count; k++)
		ws->contact_first[find_root(ws->root, ws->contacts[k].ball) + 1]++;
	for (int i = 0; i < nb; i++) {
		ws->ball_first[i + 1] += ws->ball_first[i];
		ws->contact_first[i + 1] += ws->contact_first[i];
	}
	if (!cl_grow(&ws->group_contact, &ws->group_contact_capacity, (size_t)ws->contact_count, sizeof(int)))
		return false;
	int *ball_fill = ws->fill, *contact_fill = ws->fill + nb;
	memcpy(ball_fill, ws->ball_first, sizeof(int) * (size_t)nb);
	memcpy(contact_fill, ws->contact_first, sizeof(int) * (size_t)nb);
	for (int i = 0; i < nb; i++) {
		int r = find_root(ws->root, i);
		ws->local[i] = ball_fill[r] - ws->ball_first[r];
		ws->group_ball[ball_fill[r]++] = i;
	}
	for (int k = 0; k < ws->contact_count; k++)
		ws->group_contact[contact_fill[find_root(ws->root, ws->contacts[k].ball)]++] = k;
	return true;
}

/* One group's LCP into its contacts' impulses: the closed form for a single
 * contact, Dantzig pivoting (normals first, then friction rows) otherwise.
 * Redundant contacts (a pile: more rows than the balls have dofs) make the
 * clamped block singular; Nimble then adds CFM 1e-4 to the diagonal and runs
 * PGS, here the regularised LCP is solved exactly by the same pivoting. An
 * unbounded pivot means the LCP has no solution (contradicting restitution
 * targets); Nimble would return an unconverged PGS iterate, this reports it.
 * Nimble's first try, reusing the previous step's active set, is not
 * modelled: when its guess passes the validity check it is this solution. */
static ClLcpResult solve_group(Workspace *ws, const int *contacts, int count, bool friction, double mu)
{
	const double *im = ws->inverse_mass;
	if (count == 1) {
		Contact *c = &ws->contacts[contacts[0]];
		double a_nn = column_product(c, c->n, c, c->n, im);
		double a_tt = column_product(c, c->t, c, c->t, im);
		cl_lcp_single_contact(a_nn, c->b_n, a_tt, c->b_t, friction ? mu : 0.0, &c->x_n, &c->x_t);
		c->bound_t = friction ? fabs(mu * c->x_n) : 0.0;
		return CL_LCP_OK;
	}
	int n = friction ? 2 * count : count;
	double *cursor = scratch(ws, n * n + 8 * n);
	if (!cursor || !cl_grow(&ws->indices, &ws->index_capacity, (size_t)n, sizeof(int)))
		return CL_LCP_OUT_OF_MEMORY;
	double *A = take(&cursor, n * n), *b = take(&cursor, n), *lo = take(&cursor, n), *hi = take(&cursor, n);
	double *x = take(&cursor, n), *w = take(&cursor, n), *lo_out = take(&cursor, n), *hi_out = take(&cursor, n);
	for (int r = 0; r < n; r++) {
		const Contact *c = &ws->contacts[contacts[r % count]];
		const double *dr = r < count ? c->n : c->t;
		for (int s = 0; s < n; s++) {
			const Contact *d = &ws->contacts[contacts[s % count]];
			A[r * n + s] = column_product(c, dr, d, s < count ? d->n : d->t, im);
		}
		b[r] = r < count ? c->b_n : c->b_t;
		lo[r] = r < count ? 0.0 : -mu;
		hi[r] = r < count ? INFINITY : mu;
		ws->indices[r] = r < count ? -1 : r - count;
	}
	ClLcp lcp = {.n = n, .A = A, .b = b, .lo = lo, .hi = hi, .findex = friction ? ws->indices : NULL};
	ClLcpResult result = cl_lcp_solve(&lcp, LCP_VALID_TOLERANCE, &ws->lcp, x, w, lo_out, hi_out);
	double cfm = 0.0;
	if (result == CL_LCP_SINGULAR || result == CL_LCP_STALLED || result == CL_LCP_INVALID) {
		cfm = FALLBACK_CFM;
		for (int r = 0; r < n; r++)
			A[r * n + r] += cfm;
		result = cl_lcp_solve(&lcp, LCP_VALID_TOLERANCE, &ws->lcp, x, w, lo_out, hi_out);
	}
	if (result != CL_LCP_OK)
		return result;
	for (int k = 0; k < count; k++) {
		Contact *c = &ws->contacts[contacts[k]];
		c->cfm = cfm;
		c->x_n = x[k];
		c->x_t = friction ? x[count + k] : 0.0;
		c->bound_t = friction ? hi_out[count + k] : 0.0;
	}
	return CL_LCP_OK;
}

/* ------------------------------------------------------------ gradients */

/* Moore–Penrose pseudo-inverse of a rows×cols matrix by one-sided Jacobi
 * SVD (what Eigen's complete orthogonal decomposition solves with); out is
 * cols×rows. work: rows·cols + cols·cols doubles. */
static void pseudo_inverse(const double *M, int rows, int cols, double *out, double *work)
{
	double *U = work, *V = work + rows * cols;
	memcpy(U, M, sizeof(double) * (size_t)(rows * cols));
	for (int i = 0; i < cols; i++)
		for (int j = 0; j < cols; j++)
			V[i * cols + j] = i == j ? 1.0 : 0.0;
	for (int sweep = 0; sweep < 60; sweep++) {
		bool rotated = false;
		for (int p = 0; p < cols; p++) {
			for (int q = p + 1; q < cols; q++) {
				double alpha = 0.0, beta = 0.0, gamma = 0.0;
				for (int r = 0; r < rows; r++) {
					double up = U[r * cols + p], uq = U[r * cols + q];
					alpha += up * up;
					beta += uq * uq;
					gamma += up * uq;
				}
				if (gamma == 0.0 || fabs(gamma) <= DBL_EPSILON * sqrt(alpha * beta))
					continue;
				rotated = true;
				double zeta = (beta - alpha) / (2.0 * gamma);
				double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
				double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
				for (int r = 0; r < rows; r++) {
					double up = U[r * cols + p], uq = U[r * cols + q];
					U[r * cols + p] = c * up - s * uq;
					U[r * cols + q] = s * up + c * uq;
				}
				for (int r = 0; r < cols; r++) {
					double vp = V[r * cols + p], vq = V[r * cols + q];
					V[r * cols + p] = c * vp - s * vq;
					V[r * cols + q] = s * vp + c * vq;
				}
			}
		}
		if (!rotated)
			break;
	}
	double sigma_max = 0.0;
	for (int j = 0; j < cols; j++) {
		double s = 0.0;
		for (int r = 0; r < rows; r++)
			s += U[r * cols + j] * U[r * cols + j];
		if (sqrt(s) > sigma_max)
			sigma_max = sqrt(s);
	}
	double cutoff = sigma_max * DBL_EPSILON * (rows > cols ? rows : cols);
	memset(out, 0, sizeof(double) * (size_t)(rows * cols));
	for (int j = 0; j < cols; j++) {
		double s = 0.0;
		for (int r = 0; r < rows; r++)
			s += U[r * cols + j] * U[r * cols + j];
		if (sqrt(s) <= cutoff || s == 0.0)
			continue;
		/* column j = σ û: contributes v_j ûᵀ / σ = v_j uᵀ / σ² */
		for (int i = 0; i < cols; i++)
			for (int r = 0; r < rows; r++)
				out[i * rows + r] += V[i * cols + j] * U[r * cols + j] / s;
	}
}


/* Nimble's classes, checked in its order. (The out-of-plane tangent t2, an
 * identically zero column for planar balls and so never clamping, is not
 * built at all.) */
static RowClass classify(const Contact *c, bool tangent, double *sign)
{
	double x = tangent ? c->x_t : c->x_n;
	double lo = tangent ? -c->bound_t : 0.0, hi = tangent ? c->bound_t : INFINITY;
	*sign = 0.0;
	if (fabs(x) < CLAMPING_THRESHOLD)
		return tangent && fabs(c->x_n) >= CLAMPING_THRESHOLD ? ROW_CLAMPING : ROW_NOT_CLAMPING;
	if ((x > lo + BOUND_TIE_BREAK && x < hi - BOUND_TIE_BREAK) || x < lo - ILLEGAL_MARGIN || x > hi + ILLEGAL_MARGIN)
		return ROW_CLAMPING;
	double unused;
	if (tangent && c->x_n > UPPER_BOUND_NORMAL && classify(c, false, &unused) == ROW_CLAMPING) {
		*sign = x > 0.0 ? 1.0 : -1.0;
		return ROW_UPPER_BOUND;
	}
	return ROW_NOT_CLAMPING;
}

/* Adds factor × a row's column (group dofs, 2 per group ball) to a column
 * of a row-major matrix whose rows are `stride` apart. */
static void add_column(const Workspace *ws, const Row *row, double factor, double *column, int stride)
{
	const Contact *c = row->contact;
	const double *d = row->tangent ? c->t : c->n;
	int i = ws->local[c->ball];
	column[2 * i * stride] += factor * d[0];
	column[(2 * i + 1) * stride] += factor * d[1];
	if (c->other >= 0) {
		int j = ws->local[c->other];
		column[2 * j * stride] -= factor * d[0];
		column[(2 * j + 1) * stride] -= factor * d[1];
	}
}

/* The same for d(column)/d(group dof q). Only ball-ball columns move with the
 * positions (getContactNormalGradient, and the tangent basis t = R n):
 * dn/dp_ball = (I − n nᵀ)/d = −dn/dp_other. Returns whether it is nonzero. */
static bool add_column_derivative(const Workspace *ws, const Row *row, int q, double factor, double *column,
								  int stride)
{
	const Contact *c = row->contact;
	if (c->other < 0)
		return false;
	int i = ws->local[c->ball], j = ws->local[c->other];
	int body = q / 2, axis = q % 2;
	if (body != i && body != j)
		return false;
	double sign = body == i ? 1.0 : -1.0;
	double dn[2] = {((axis == 0) - c->n[0] * c->n[axis]) * sign / c->distance,
					((axis == 1) - c->n[1] * c->n[axis]) * sign / c->distance};
	double d[2] = {row->tangent ? -dn[1] : dn[0], row->tangent ? dn[0] : dn[1]};
	column[2 * i * stride] += factor * d[0];
	column[(2 * i + 1) * stride] += factor * d[1];
	column[2 * j * stride] -= factor * d[0];
	column[(2 * j + 1) * stride] -= factor * d[1];
	return true;
}

/* Σ a[i·stride_a] b[i·stride_b]: rows or columns of row-major matrices. */
static double dot_strided(const double *a, int stride_a, const double *b, int stride_b, int count)
{
	double s = 0.0;
	for (int i = 0; i < count; i++)
		s += a[i * stride_a] * b[i * stride_b];
	return s;
}

/* A ball's pre-step velocity v and acceleration u/m + g (the rates of p and
 * v_f in dt), from the step's (float32-rounded) inputs. */
static void rates(const ClStepContext *ctx, const double *s, const double *u, int ball, double *v, double *a)
{
	const ClScene *scene = ctx->scene;
	double m = scene->balls[ball].mass;
	v[0] = s[CL_BALL_STATE * ball + 2];
	v[1] = s[CL_BALL_STATE * ball + 3];
	a[0] = (u[2 * ball] + m * scene->gravity.x) / m;
	a[1] = (u[2 * ball + 1] + m * scene->gravity.y) / m;
}

/* Blocks of a ball that no clamping contact touches: p' = p + dt v, v' = v + dt u/m;
 * the duration T = N dt moves them by (v, u/m + g)/N. */
static void record_free(ClStepContext *ctx, int ball, const double *s, const double *u, double inverse_mass)
{
	ClTape *tape = ctx->tape;
	double *a = cl_tape_a_identity(tape, ball);
	a[CL_A(0, 2)] = a[CL_A(1, 3)] = ctx->dt;
	double *b = cl_tape_b(tape, ball, ball);
	b[4] = b[7] = ctx->dt * inverse_mass;
	if (tape->record_params) {
		double *c = cl_tape_c(tape, ball, CL_PHYS_DURATION);
		rates(ctx, s, u, ball, c, c + 2);
		for (int k = 0; k < CL_BALL_STATE; k++)
			c[k] /= ctx->scene->steps;
	}
}

/* A group's parameter columns in Nimble's convention: the duration moves
 * the positions by X v/N (its position rows: dt v through the bounce
 * approximation) and the velocities by VV (u/m + g)/N (v_f's rate through the
 * frozen LCP). */
static void record_group_params(ClStepContext *ctx, const double *s, const double *u, const int *balls, int k,
								const double *X, const double *VV)
{
	int n = 2 * k;
	double v[2], a[2];
	for (int bi = 0; bi < k; bi++) {
		double *c = cl_tape_c(ctx->tape, balls[bi], CL_PHYS_DURATION);
		for (int r = 0; r < 2; r++) {
			int row = 2 * bi + r;
			for (int bj = 0; bj < k; bj++) {
				rates(ctx, s, u, balls[bj], v, a);
				for (int q = 0; q < 2; q++) {
					c[r] += X[row * n + 2 * bj + q] * v[q];
					c[2 + r] += VV[row * n + 2 * bj + q] * a[q];
				}
			}
		}
		for (int r = 0; r < CL_BALL_STATE; r++)
			c[r] /= ctx->scene->steps;
	}
}

/* Ball bi's velocity rows of a parameter column dv (group dofs), when nonzero. */
static void record_velocity_column(ClTape *tape, int ball, int bi, int param, const double *dv)
{
	if (dv[2 * bi] == 0.0 && dv[2 * bi + 1] == 0.0)
		return;
	double *c = cl_tape_c(tape, ball, param);
	c[2] = dv[2 * bi];
	c[3] = dv[2 * bi + 1];
}

/* The impulse's parameters on the frozen active set, v' = v_f + M⁻¹ Ã f with
 * Q f = b_c, Q = A_cᵀ M⁻¹ Ã (+ CFM): the elasticity through the restitution
 * target, δb_c = (approach speed) δe, so δf = Q⁺ δb_c; a mass m_j through
 * its inverse w_j, δM⁻¹ = D_j δw_j (D_j: ball j's dofs), so δf = −Q⁺ A_cᵀ D_j Ã f
 * and δv' = (D_j Ã f + M⁻¹ Ã δf) δw_j, δw_j = −w_j² δm_j. Positions move with
 * neither (p' = p + dt v, and Nimble's X has no parameter). work: 3n + 2kc. */
static void record_impulse_params(ClTape *tape, const int *balls, int k, const Row *ordered, int kc, const double *Ac,
								  const double *At, const double *Qp, const double *fc, const double *minv,
								  double *work)
{
	int n = 2 * k;
	double *y = work, *dv = work + n, *r = work + 2 * n, *df = work + 2 * n + kc;
	for (int i = 0; i < n; i++)
		y[i] = dot_strided(At + i * kc, 1, fc, 1, kc);
	for (int param = -1; param < k; param++) {
		/* param −1: the elasticity; else the mass of group ball `param` */
		for (int c = 0; c < kc; c++) {
			if (param < 0)
				r[c] = ordered[c].tangent ? 0.0 : ordered[c].contact->restitution_rate;
			else
				r[c] = -(Ac[2 * param * kc + c] * y[2 * param] + Ac[(2 * param + 1) * kc + c] * y[2 * param + 1]);
		}
		for (int c = 0; c < kc; c++)
			df[c] = dot_strided(Qp + c * kc, 1, r, 1, kc);
		for (int i = 0; i < n; i++) {
			dv[i] = minv[i] * dot_strided(At + i * kc, 1, df, 1, kc);
			if (param >= 0 && i / 2 == param)
				dv[i] += y[i];
		}
		if (param >= 0)
			for (int i = 0; i < n; i++)
				dv[i] *= -minv[2 * param] * minv[2 * param];
		for (int bi = 0; bi < k; bi++)
			record_velocity_column(tape, balls[bi], bi, param < 0 ? CL_PHYS_ELASTICITY : cl_phys_mass(balls[param]),
								   dv);
	}
}

/* Nimble's Jacobians for one group with clamping rows, in group dofs:
 *   PP = X, VP = dt X, VV = I + M⁻¹Ã dF/dv, FV = VV dt M⁻¹, PV through dA/dp,
 * with Ã = A_c + A_ub E, Q = A_cᵀ M⁻¹ Ã, dF/dv = −Q⁺ diag(1+e) A_cᵀ.
 * False when out of memory. */
static bool record_group(ClStepContext *ctx, Workspace *ws, const double *s, const double *u, const int *balls, int k,
						 const int *contacts, int count, bool friction, double mu)
{
	double dt = ctx->dt;
	int n = 2 * k, total = friction ? 2 * count : count;
	if (!cl_grow(&ws->rows, &ws->row_capacity, 2 * (size_t)total, sizeof(Row)))
		return false;
	Row *ordered = ws->rows + total; /* clamping rows, then upper-bound rows */
	int kc = 0, ku = 0, kb = 0;
	for (int r = 0; r < total; r++) {
		Row *row = &ws->rows[r];
		const Contact *c = &ws->contacts[contacts[r % count]];
		*row = (Row){.contact = c, .tangent = r >= count};
		row->kind = classify(c, row->tangent, &row->sign);
		row->impulse = row->tangent ? c->x_t : c->x_n;
		row->offset = row->tangent ? c->b_t : c->b_n;
		row->restitution = row->tangent ? 0.0 : c->restitution;
		if (row->kind == ROW_CLAMPING) {
			ordered[kc++] = *row;
			kb += row->restitution > 0.0;
		}
	}
	for (int r = 0; r < total; r++) {
		if (ws->rows[r].kind != ROW_UPPER_BOUND)
			continue;
		Row *row = &ordered[kc + ku++];
		*row = ws->rows[r];
		for (int p = 0; p < kc; p++)
			if (ordered[p].contact == row->contact && !ordered[p].tangent)
				row->parent = p;
	}
	if (kc == 0) {
		for (int i = 0; i < k; i++)
			record_free(ctx, balls[i], s, u, ws->inverse_mass[balls[i]]);
		return true;
	}
	int kmax = kc > kb ? kc : kb;
	double *cursor = scratch(ws, 3 * n * n + 6 * n * kc + 2 * kc * kc + 4 * kmax * kmax + 5 * n + 5 * kmax + 2 * kc);
	if (!cursor)
		return false;
	double *X = take(&cursor, n * n), *VV = take(&cursor, n * n), *PV = take(&cursor, n * n);
	double *Ac = take(&cursor, n * kc), *At = take(&cursor, n * kc), *MAt = take(&cursor, n * kc);
	double *dAc = take(&cursor, n * kc), *dAt = take(&cursor, n * kc), *K = take(&cursor, kc * n);
	double *Q = take(&cursor, kc * kc), *Qp = take(&cursor, kc * kc), *work = take(&cursor, 2 * kmax * kmax);
	double *G = take(&cursor, kmax * kmax), *Gp = take(&cursor, kmax * kmax);
	double *minv = take(&cursor, n), *vf = take(&cursor, n);
	double *fq = take(&cursor, kmax), *df = take(&cursor, kmax), *rhs = take(&cursor, kmax);
	double *fc = take(&cursor, kmax), *coefficient = take(&cursor, kmax), *param_work = take(&cursor, 3 * n + 2 * kc);
	for (int i = 0; i < k; i++) {
		minv[2 * i] = minv[2 * i + 1] = ws->inverse_mass[balls[i]];
		vf[2 * i] = ws->v_f[2 * balls[i]];
		vf[2 * i + 1] = ws->v_f[2 * balls[i] + 1];
	}
	for (int i = 0; i < n; i++)
		X[i * n + i] = VV[i * n + i] = 1.0;

	/* Ã: an upper-bound friction row rides on its normal's column with ±μ */
	for (int c = 0; c < kc; c++) {
		add_column(ws, &ordered[c], 1.0, Ac + c, kc);
		add_column(ws, &ordered[c], 1.0, At + c, kc);
		fc[c] = ordered[c].impulse;
	}
	for (int u = kc; u < kc + ku; u++)
		add_column(ws, &ordered[u], ordered[u].sign * mu, At + ordered[u].parent, kc);
	for (int i = 0; i < n; i++)
		for (int c = 0; c < kc; c++)
			MAt[i * kc + c] = minv[i] * At[i * kc + c];
	for (int r = 0; r < kc; r++)
		for (int c = 0; c < kc; c++)
			Q[r * kc + c] = dot_strided(Ac + r, kc, MAt + c, kc, n) + (r == c ? ordered[r].contact->cfm : 0.0);
	pseudo_inverse(Q, kc, kc, Qp, work);

	/* VV = I − M⁻¹Ã K with K = Q⁺ diag(1+e) A_cᵀ */
	for (int r = 0; r < kc; r++)
		for (int i = 0; i < n; i++) {
			double s = 0.0;
			for (int c = 0; c < kc; c++)
				s += Qp[r * kc + c] * (1.0 + ordered[c].restitution) * Ac[i * kc + c];
			K[r * n + i] = s;
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			VV[i * n + j] -= dot_strided(MAt + i * kc, 1, K + j, n, kc);

	/* PV = M⁻¹ (Ã dF/dp + δÃ f_c), dF/dp = Q⁺ (δb − δQ Q⁺b_c), δb = −diag(1+e) δA_cᵀ v_f */
	for (int r = 0; r < kc; r++) {
		fq[r] = 0.0;
		for (int c = 0; c < kc; c++)
			fq[r] += Qp[r * kc + c] * ordered[c].offset;
	}
	for (int q = 0; q < n; q++) {
		memset(dAc, 0, sizeof(double) * (size_t)(2 * n * kc)); /* dAc and dAt */
		bool moves = false;
		for (int c = 0; c < kc; c++) {
			moves |= add_column_derivative(ws, &ordered[c], q, 1.0, dAc + c, kc);
			add_column_derivative(ws, &ordered[c], q, 1.0, dAt + c, kc);
		}
		for (int u = kc; u < kc + ku; u++)
			moves |= add_column_derivative(ws, &ordered[u], q, ordered[u].sign * mu, dAt + ordered[u].parent, kc);
		if (!moves)
			continue;
		for (int r = 0; r < kc; r++) {
			double db = -(1.0 + ordered[r].restitution) * dot_strided(dAc + r, kc, vf, 1, n);
			double dq_f = 0.0;
			for (int c = 0; c < kc; c++) {
				double dq = 0.0;
				for (int i = 0; i < n; i++)
					dq += dAc[i * kc + r] * MAt[i * kc + c] + Ac[i * kc + r] * minv[i] * dAt[i * kc + c];
				dq_f += dq * fq[c];
			}
			rhs[r] = db - dq_f;
		}
		for (int r = 0; r < kc; r++)
			df[r] = dot_strided(Qp + r * kc, 1, rhs, 1, kc);
		for (int i = 0; i < n; i++)
			PV[i * n + q] = minv[i] * (dot_strided(At + i * kc, 1, df, 1, kc) + dot_strided(dAt + i * kc, 1, fc, 1, kc));
	}

	/* X = I − Σ cᵢ aᵢaᵢᵀ, G c = e + |a|², G_ij = (aᵢ·aⱼ)²: the least change of
	 * I (Frobenius) with aᵢᵀ X aᵢ = −eᵢ, over the bouncing normals' raw columns */
	if (kb > 0) {
		if (!cl_grow(&ws->indices, &ws->index_capacity, (size_t)kb, sizeof(int)))
			return false;
		int *bouncing = ws->indices;
		int m = 0;
		for (int c = 0; c < kc; c++)
			if (ordered[c].restitution > 0.0)
				bouncing[m++] = c;
		for (int p = 0; p < kb; p++) {
			for (int q = 0; q < kb; q++) {
				double d = dot_strided(Ac + bouncing[p], kc, Ac + bouncing[q], kc, n);
				G[p * kb + q] = d * d;
			}
			rhs[p] = ordered[bouncing[p]].restitution + dot_strided(Ac + bouncing[p], kc, Ac + bouncing[p], kc, n);
		}
		pseudo_inverse(G, kb, kb, Gp, work);
		for (int p = 0; p < kb; p++)
			coefficient[p] = dot_strided(Gp + p * kb, 1, rhs, 1, kb);
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				for (int p = 0; p < kb; p++)
					X[i * n + j] -= coefficient[p] * Ac[i * kc + bouncing[p]] * Ac[j * kc + bouncing[p]];
	}

	if (ctx->tape->record_params) {
		record_group_params(ctx, s, u, balls, k, X, VV);
		record_impulse_params(ctx->tape, balls, k, ordered, kc, Ac, At, Qp, fc, minv, param_work);
	}

	for (int bi = 0; bi < k; bi++) {
		for (int bj = 0; bj < k; bj++) {
			double a[CL_BALL_STATE * CL_BALL_STATE] = {0}, b[2 * CL_BALL_STATE] = {0};
			bool any_a = false, any_b = false;
			for (int r = 0; r < 2; r++) {
				for (int c = 0; c < 2; c++) {
					int row = 2 * bi + r, col = 2 * bj + c;
					a[CL_A(r, c)] = X[row * n + col];
					a[CL_A(r, c + 2)] = dt * X[row * n + col];
					a[CL_A(r + 2, c)] = PV[row * n + col];
					a[CL_A(r + 2, c + 2)] = VV[row * n + col];
					b[2 * (r + 2) + c] = VV[row * n + col] * dt * minv[col];
				}
			}
			for (size_t e = 0; e < sizeof a / sizeof *a; e++)
				any_a |= a[e] != 0.0;
			for (size_t e = 0; e < sizeof b / sizeof *b; e++)
				any_b |= b[e] != 0.0;
			if (any_a || bi == bj)
				memcpy(cl_tape_a(ctx->tape, balls[bi], balls[bj]), a, sizeof a);
			if (any_b)
				memcpy(cl_tape_b(ctx->tape, balls[bi], balls[bj]), b, sizeof b);
		}
	}
	return true;
}

/* ---------------------------------------------------------------- step */

static void nimble_step(ClStepContext *ctx, const double *s_in, const double *u_in, double *s_next)
{
	const ClScene *scene = ctx->scene;
	Workspace *ws = ctx->workspace;
	const double *params = ctx->params;
	int nb = scene->ball_count;
	double dt = ctx->dt;
	/* float32: the paper's scripts handed Nimble float32 tensors (initial
	 * state, controls); the engine itself always computes in float64 */
	bool f32 = params[PARAM_PRECISION] == CL_PRECISION_FLOAT32;
	const double *s = s_in, *u = u_in;
	if (f32) {
		if (ctx->step == 0) {
			for (int i = 0; i < CL_BALL_STATE * nb; i++)
				ws->state[i] = cl_round(true, s_in[i]);
			s = ws->state;
		}
		for (int i = 0; i < 2 * nb; i++)
			ws->control[i] = cl_round(true, u_in[i]);
		u = ws->control;
	}

	for (int i = 0; i < nb; i++) {
		const ClBall *ball = &scene->balls[i];
		const double *p = s + CL_BALL_STATE * i;
		ws->v_f[2 * i] = p[2] + dt * ((u[2 * i] + ball->mass * scene->gravity.x) / ball->mass);
		ws->v_f[2 * i + 1] = p[3] + dt * ((u[2 * i + 1] + ball->mass * scene->gravity.y) / ball->mass);
	}
	if (!detect(ws, scene, s, params[PARAM_CLIPPING_DEPTH])) {
		cl_step_out_of_memory(ctx, "the LCP's contact list");
		return;
	}
	double mu = scene->friction;
	bool friction = mu > FRICTION_THRESHOLD;
	for (int k = 0; k < ws->contact_count; k++)
		offsets(&ws->contacts[k], ws->v_f, scene->elasticity, friction, params);
	if (!build_groups(ws, nb)) {
		cl_step_out_of_memory(ctx, "the LCP's contact groups");
		return;
	}

	double *impulse = ws->impulse;
	memset(impulse, 0, sizeof(double) * 2 * (size_t)nb);
	for (int g = 0; g < nb; g++) {
		int first = ws->contact_first[g], count = ws->contact_first[g + 1] - first;
		if (count == 0)
			continue;
		ClLcpResult result = solve_group(ws, ws->group_contact + first, count, friction, mu);
		if (result == CL_LCP_OUT_OF_MEMORY) {
			cl_step_out_of_memory(ctx, "the LCP's workspace");
			return;
		}
		if (result != CL_LCP_OK) {
			cl_step_fail(ctx, CL_STATUS_SOLVER_FAILED,
						 "LCP of %d simultaneous contacts around ball \"%s\" at step %d (t = %g s): %s", count,
						 scene->balls[g].id, ctx->step, ctx->step * dt, cl_lcp_result_name(result));
			return;
		}
	}
	for (int k = 0; k < ws->contact_count; k++) {
		const Contact *c = &ws->contacts[k];
		double f[2] = {c->n[0] * c->x_n + c->t[0] * c->x_t, c->n[1] * c->x_n + c->t[1] * c->x_t};
		impulse[2 * c->ball] += f[0];
		impulse[2 * c->ball + 1] += f[1];
		if (c->other >= 0) {
			impulse[2 * c->other] -= f[0];
			impulse[2 * c->other + 1] -= f[1];
		}
		if (c->x_n > 0.0)
			cl_step_contact(ctx, ctx->step * dt, c->ball, c->other);
	}
	for (int i = 0; i < nb; i++) {
		const double *p = s + CL_BALL_STATE * i;
		double *q = s_next + CL_BALL_STATE * i;
		q[0] = p[0] + dt * p[2];
		q[1] = p[1] + dt * p[3];
		q[2] = ws->v_f[2 * i] + impulse[2 * i] * ws->inverse_mass[i];
		q[3] = ws->v_f[2 * i + 1] + impulse[2 * i + 1] * ws->inverse_mass[i];
	}

	if (!ctx->tape)
		return;
	cl_tape_factor(ctx->tape);
	for (int g = 0; g < nb; g++) {
		int first = ws->ball_first[g], k = ws->ball_first[g + 1] - first;
		if (k == 0)
			continue;
		int contacts = ws->contact_first[g], count = ws->contact_first[g + 1] - contacts;
		if (count == 0)
			record_free(ctx, g, s, u, ws->inverse_mass[g]);
		else if (!record_group(ctx, ws, s, u, ws->group_ball + first, k, ws->group_contact + contacts, count, friction, mu)) {
			cl_step_out_of_memory(ctx, "the LCP Jacobian's workspace");
			return;
		}
	}
}

static const ClParamDesc lcp_nimble_params[] = {
	[PARAM_PRECISION] = {"precision", CL_PARAM_KIND_CHOICE, CL_PRECISION_FLOAT64, 0, 1, "",
						 "float64 as Nimble; float32 rounds initial state, controls and optimized values like the "
						 "paper's torch tensors",
						 cl_precision_choices},
	[PARAM_CLIPPING_DEPTH] = {"contact_clipping_depth", CL_PARAM_KIND_REAL, 0.03, 0.0, 1.0, "m",
							  "contacts deeper than this are dropped (World default 0.03)", NULL},
	[PARAM_BOUNCE_THRESHOLD] = {"bouncing_velocity_threshold", CL_PARAM_KIND_REAL, 0.1, 0.0, 100.0, "m/s",
								"e·(approach speed) above this bounces, below it the contact is inelastic "
								"(DART_BOUNCING_VELOCITY_THRESHOLD)",
								NULL},
	[PARAM_MAX_BOUNCE_VELOCITY] = {"max_bouncing_velocity", CL_PARAM_KIND_REAL, 100.0, 0.0, 1e6, "m/s",
								   "cap on the restitution target e·(approach speed) (DART_MAX_BOUNCING_VELOCITY)",
								   NULL},
};

const ClBackend cl_backend_lcp_nimble = {
	.info = {
		.id = "lcp-nimble",
		.label = "LCP (Nimble)",
		.family = "lcp",
		.mirrors = "Nimble 0.7.2",
		.toi = true,
		.gradient_is_derivative = false,
		.intro = "Solves for contact forces at each time step (like Nimble) and uses a hand-made shortcut for the gradient, which can point the wrong way.",
		.summary = "Nimble 0.7.2 as the paper ran it, in float64. Forward: a velocity-level LCP per step. "
				   "v_f = v + dt (u/m + g); contacts are found at the pre-step positions only while the shapes "
				   "touch (0 <= depth <= 0.03 m; deeper ones are dropped, so a ball faster than 0.03/dt tunnels); "
				   "the restitution target -e (approach speed) applies only when e (approach speed) > 0.1 m/s; "
				   "Coulomb friction |x_t| <= mu x_n through ODE's boxed Dantzig (one in-plane tangent row); then "
				   "the explicit update p' = p + dt v with the pre-step velocity, so a bounce goes one step "
				   "deeper before it returns and there is no time of impact anywhere in the forward pass. "
				   "Gradient: Nimble's hand-written Jacobian, which is not the derivative of this forward map "
				   "(finite differences differ). Its velocity rows are the LCP derivative with the active set "
				   "frozen (a friction row at its bound adds mu (1+e) cross terms), but its position rows are "
				   "the 'bounce approximation' X, the matrix nearest to I with a^T X a = -e for every bouncing "
				   "contact column a; this is what the paper calls TOI. Against a fixed wall X is the "
				   "reflection, right while nothing accelerates the ball (Table 1); the impact time's effect "
				   "through gravity or controls is lost (Table 2: dL/dvy0 -0.319, exact -0.212); for two mobile "
				   "balls X = I - ((e+2)/4) a a^T instead of the swap, hence the 0.75/0.25 split of Table 3. "
				   "Generalised in Nimble's spirit: "
				   "walls with any normal act as box faces; any number of balls, masses and walls; touching "
				   "balls form one LCP (a single contact in closed form); redundant contacts (piles) get "
				   "Nimble's fallback CFM 1e-4, solved exactly by Dantzig where Nimble runs PGS; ball-ball "
				   "friction uses Nimble's formulas including the tangent's position gradient (not validated "
				   "against Nimble); an LCP without solution is reported as solver_failed where Nimble would "
				   "return an unconverged PGS iterate. float32 rounds the initial state, controls and optimized "
				   "values to float32 as the paper's torch scripts did. Degenerate contacts pass silently (status "
				   "ok; Nimble reports nothing): a tangential (grazing) pass within the contact band is a contact, "
				   "so a ball that only touches a wall bounces off it; simultaneous contacts (a corner, three balls "
				   "at once) are one LCP, so no order enters (three balls in a row end as in Newton's cradle); "
				   "resting contact (Zeno) turns plastic once e (approach speed) < 0.1 m/s, and the ball rests "
				   "about one step's travel inside the surface (2.9 mm for a 5 cm drop with e = 0.5, dt = 0.01); "
				   "a ball starting in contact (at t = 0) is found like any other contact. "
				   "Physical parameters, in Nimble's Jacobian convention (FD of the forward map in free flight, "
				   "not through contacts, as the rows above): gravity, dL/dg = sum_i m_i dL/du_i (g enters only "
				   "through u/m + g); the duration T = N dt, whose step columns are (X v, VV (u/m + g))/N, the "
				   "position rows through the bounce approximation X and the velocity rows through the frozen "
				   "LCP; the masses, through u/m and through the impulse on the frozen active set (v' = v_f + "
				   "M^-1 A f, Q f = b: dM^-1 moves both; 0 for a lone ball on a wall, whose velocity change is "
				   "mass-free); the elasticity through the restitution target, db_n/de = the approach speed "
				   "(0 once capped or below the threshold), into the velocities by the frozen LCP (positions: "
				   "p' = p + dt v does not move, nor does X). Mass and elasticity move nothing before an "
				   "impact, so without gravity and controls their velocity derivatives are the map's (checked "
				   "against FD). Friction, radius and walls have none yet.",
		.params = lcp_nimble_params,
		.param_count = PARAM_COUNT,
	},
	.create = nimble_create,
	.destroy = nimble_destroy,
	.step = nimble_step,
	.tape_blocks_per_ball = true,
	/* gravity and the masses' part in u/m through accel_form (v_f = v +
	 * dt·(u/m + g)); the duration, the masses in the impulses and the
	 * elasticity through C columns (record_free, record_group_params,
	 * record_impulse_params) */
	.param_adjoints = 1u << CL_PARAM_GRAVITY | 1u << CL_PARAM_DURATION | 1u << CL_PARAM_MASS | 1u << CL_PARAM_ELASTICITY,
	.accel_form = true,
};
