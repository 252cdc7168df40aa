/* Dantzig pivoting for the boxed LCP, following the structure of ODE's
 * dSolveLCP (the solver DART and so Nimble call): rows enter one at a time;
 * the entering variable is driven until its own complementarity holds,
 * while clamped variables (w = 0) hit bounds and bounded ones (x at lo/hi)
 * release, one pivot per event. Written from the algorithm's description,
 * without ODE's incremental LDLᵀ: the clamped block is refactored per pivot,
 * which is cheap for the handful of rows a contact group has. */
#include "lcp.h"
#include "memory.h"

#include <math.h>
#include <stdlib.h>

enum RowState {
	ROW_PENDING, /* not reached yet: x = 0 */
	ROW_CLAMPED, /* w = 0, x free within its bounds */
	ROW_AT_LO,
	ROW_AT_HI,
};

void cl_lcp_workspace_release(ClLcpWorkspace *ws)
{
	free(ws->buffer);
	free(ws->indices);
	*ws = (ClLcpWorkspace){0};
}

const char *cl_lcp_result_name(ClLcpResult result)
{
	switch (result) {
	case CL_LCP_OK:
		return "ok";
	case CL_LCP_SINGULAR:
		return "singular clamped block";
	case CL_LCP_UNBOUNDED:
		return "unbounded pivot (no solution)";
	case CL_LCP_STALLED:
		return "pivoting stalled";
	case CL_LCP_INVALID:
		return "solution fails complementarity";
	case CL_LCP_OUT_OF_MEMORY:
		return "out of memory";
	}
	return "unknown";
}

/* Cholesky solve of the k×k block M (row-major, overwritten by its factor). */
static bool cholesky_solve(double *M, int k, double *rhs)
{
	for (int j = 0; j < k; j++) {
		double d = M[j * k + j];
		for (int p = 0; p < j; p++)
			d -= M[j * k + p] * M[j * k + p];
		if (!(d > 1e-14 * fabs(M[j * k + j])) || d <= 0.0)
			return false;
		d = sqrt(d);
		M[j * k + j] = d;
		for (int i = j + 1; i < k; i++) {
			double s = M[i * k + j];
			for (int p = 0; p < j; p++)
				s -= M[i * k + p] * M[j * k + p];
			M[i * k + j] = s / d;
		}
	}
	for (int i = 0; i < k; i++) {
		double s = rhs[i];
		for (int p = 0; p < i; p++)
			s -= M[i * k + p] * rhs[p];
		rhs[i] = s / M[i * k + i];
	}
	for (int i = k - 1; i >= 0; i--) {
		double s = rhs[i];
		for (int p = i + 1; p < k; p++)
			s -= M[p * k + i] * rhs[p];
		rhs[i] = s / M[i * k + i];
	}
	return true;
}

static bool is_valid(const ClLcp *lcp, const double *x, const double *w, const double *lo, const double *hi,
					 double tolerance)
{
	for (int i = 0; i < lcp->n; i++) {
		if (!isfinite(x[i]) || x[i] < lo[i] - tolerance || x[i] > hi[i] + tolerance)
			return false;
		bool at_lo = x[i] <= lo[i] + tolerance, at_hi = x[i] >= hi[i] - tolerance;
		bool ok = fabs(w[i]) <= tolerance || (at_lo && w[i] >= -tolerance) || (at_hi && w[i] <= tolerance);
		if (!ok)
			return false;
	}
	return true;
}

ClLcpResult cl_lcp_solve(const ClLcp *lcp, double tolerance, ClLcpWorkspace *ws, double *x, double *w, double *lo,
						 double *hi)
{
	int n = lcp->n;
	const double *A = lcp->A, *b = lcp->b;
	/* buffer: dx, dw, clamped block, its right-hand side */
	if (!cl_grow(&ws->buffer, &ws->capacity, 3 * (size_t)n + (size_t)n * (size_t)n, sizeof(double)) ||
		!cl_grow(&ws->indices, &ws->index_capacity, 2 * (size_t)n, sizeof(int)))
		return CL_LCP_OUT_OF_MEMORY;
	double *dx = ws->buffer, *dw = dx + n, *rhs = dw + n, *block = rhs + n;
	int *state = ws->indices, *clamped = state + n;
	int clamped_count = 0;
	for (int i = 0; i < n; i++) {
		x[i] = 0.0;
		w[i] = -b[i];
		state[i] = ROW_PENDING;
		lo[i] = lcp->lo[i];
		hi[i] = lcp->hi[i];
	}
	bool friction_bounds_set = false;
	int pivots = 0, pivot_limit = 32 + 8 * n * n;
	for (int i = 0; i < n; i++) {
		if (!friction_bounds_set && lcp->findex && lcp->findex[i] >= 0) {
			/* the normal impulses are known now: friction cones become boxes */
			for (int j = i; j < n; j++) {
				double normal = x[lcp->findex[j]];
				hi[j] = normal == 0.0 ? 0.0 : fabs(lcp->hi[j] * normal);
				lo[j] = -hi[j];
			}
			friction_bounds_set = true;
		}
		double wi = -b[i];
		for (int j = 0; j < i; j++)
			wi += A[i * n + j] * x[j];
		w[i] = wi;
		if (lo[i] == 0.0 && wi >= 0.0) {
			state[i] = ROW_AT_LO;
			continue;
		}
		if (hi[i] == 0.0 && wi <= 0.0) {
			state[i] = ROW_AT_HI;
			continue;
		}
		if (wi == 0.0) {
			state[i] = ROW_CLAMPED;
			clamped[clamped_count++] = i;
			continue;
		}
		for (;;) {
			if (++pivots > pivot_limit)
				return CL_LCP_STALLED;
			double dir = w[i] <= 0.0 ? 1.0 : -1.0;
			/* keep w_C = 0: A_CC dx_C = −A_Ci dir */
			for (int p = 0; p < clamped_count; p++) {
				int cp = clamped[p];
				rhs[p] = -A[cp * n + i] * dir;
				for (int q = 0; q < clamped_count; q++)
					block[p * clamped_count + q] = A[cp * n + clamped[q]];
			}
			if (clamped_count && !cholesky_solve(block, clamped_count, rhs))
				return CL_LCP_SINGULAR;
			for (int j = 0; j < n; j++)
				dx[j] = 0.0;
			for (int p = 0; p < clamped_count; p++)
				dx[clamped[p]] = rhs[p];
			dx[i] = dir;
			for (int j = 0; j <= i; j++) {
				if (state[j] == ROW_CLAMPED)
					continue;
				double s = 0.0;
				for (int p = 0; p < clamped_count; p++)
					s += A[j * n + clamped[p]] * dx[clamped[p]];
				dw[j] = s + A[j * n + i] * dir;
			}
			/* the largest step before some variable leaves its valid region */
			enum { DONE_CLAMP, DONE_LO, DONE_HI, N_TO_C, C_TO_LO, C_TO_HI } event = DONE_CLAMP;
			int which = i;
			double step = -w[i] / dw[i];
			if (!(step > 0.0))
				step = INFINITY; /* w_i cannot reach 0 in this direction */
			if (dir > 0.0 && hi[i] < INFINITY && (hi[i] - x[i]) < step) {
				step = hi[i] - x[i];
				event = DONE_HI;
			}
			if (dir < 0.0 && lo[i] > -INFINITY && (x[i] - lo[i]) < step) {
				step = x[i] - lo[i];
				event = DONE_LO;
			}
			for (int j = 0; j < i; j++) {
				if ((state[j] == ROW_AT_LO && dw[j] < 0.0) || (state[j] == ROW_AT_HI && dw[j] > 0.0)) {
					if (lo[j] == 0.0 && hi[j] == 0.0)
						continue; /* a friction row of a zero normal impulse stays at 0 */
					double s = -w[j] / dw[j];
					if (s < step) {
						step = s;
						event = N_TO_C;
						which = j;
					}
				}
			}
			for (int p = 0; p < clamped_count; p++) {
				int j = clamped[p];
				if (dx[j] < 0.0 && lo[j] > -INFINITY) {
					double s = (lo[j] - x[j]) / dx[j];
					if (s < step) {
						step = s;
						event = C_TO_LO;
						which = j;
					}
				}
				if (dx[j] > 0.0 && hi[j] < INFINITY) {
					double s = (hi[j] - x[j]) / dx[j];
					if (s < step) {
						step = s;
						event = C_TO_HI;
						which = j;
					}
				}
			}
			if (step == INFINITY)
				return CL_LCP_UNBOUNDED;
			if (!(step > 0.0))
				return CL_LCP_STALLED;
			for (int j = 0; j <= i; j++) {
				if (state[j] == ROW_CLAMPED || j == i)
					x[j] += step * dx[j];
				if (state[j] != ROW_CLAMPED)
					w[j] += step * dw[j];
			}
			bool entered = false;
			switch (event) {
			case DONE_CLAMP:
				w[i] = 0.0;
				state[i] = ROW_CLAMPED;
				clamped[clamped_count++] = i;
				entered = true;
				break;
			case DONE_LO:
				x[i] = lo[i];
				state[i] = ROW_AT_LO;
				entered = true;
				break;
			case DONE_HI:
				x[i] = hi[i];
				state[i] = ROW_AT_HI;
				entered = true;
				break;
			case N_TO_C:
				w[which] = 0.0;
				state[which] = ROW_CLAMPED;
				clamped[clamped_count++] = which;
				break;
			case C_TO_LO:
			case C_TO_HI: {
				x[which] = event == C_TO_LO ? lo[which] : hi[which];
				state[which] = event == C_TO_LO ? ROW_AT_LO : ROW_AT_HI;
				int p = 0;
				while (clamped[p] != which)
					p++;
				for (; p + 1 < clamped_count; p++)
					clamped[p] = clamped[p + 1];
				clamped_count--;
				break;
			}
			}
			if (entered)
				break;
		}
	}
	for (int i = 0; i < n; i++) {
		double s = -b[i];
		for (int j = 0; j < n; j++)
			s += A[i * n + j] * x[j];
		w[i] = s;
	}
	return is_valid(lcp, x, w, lo, hi, tolerance) ? CL_LCP_OK : CL_LCP_INVALID;
}

void cl_lcp_single_contact(double a_nn, double b_n, double a_tt, double b_t, double mu, double *x_n, double *x_t)
{
	*x_n = b_n > 0.0 ? b_n / a_nn : 0.0;
	double bound = *x_n == 0.0 ? 0.0 : fabs(mu * *x_n);
	double free_slip = b_t / a_tt;
	if (mu <= 0.0 || bound == 0.0 || b_t == 0.0)
		*x_t = 0.0;
	else
		*x_t = free_slip > bound ? bound : free_slip < -bound ? -bound : free_slip;
}
