/* Boxed LCP with friction indices, solved by Dantzig principal pivoting in
 * the way ODE's dSolveLCP (used by DART and Nimble) does. Not installed. */
#pragma once

#include <stdbool.h>

/* Problem: A x = b + w, lo ≤ x ≤ hi, and for every row
 *   x_i = lo_i ⇒ w_i ≥ 0,  x_i = hi_i ⇒ w_i ≤ 0,  lo_i < x_i < hi_i ⇒ w_i = 0.
 * A is n×n row-major, symmetric positive definite on the rows that end up
 * clamped (A = Jᵀ M⁻¹ J of independent constraint columns).
 *
 * Friction rows: findex[i] ≥ 0 names the normal row whose impulse scales the
 * bound; hi[i] then holds the coefficient μ. As in ODE, all friction rows
 * must come after every row without a friction index, and their bounds
 * become ±|μ·x_findex| when the first friction row is reached, from the
 * normal impulses solved so far. findex may be NULL (no friction rows). */
typedef struct ClLcp {
	int n;
	const double *A;
	const double *b;
	const double *lo;
	const double *hi;
	const int *findex;
} ClLcp;

/* Grown on demand, reusable across solves; zero-initialise before first use. */
typedef struct ClLcpWorkspace {
	double *buffer;
	int capacity;
	int *indices;
	int index_capacity;
} ClLcpWorkspace;

void cl_lcp_workspace_release(ClLcpWorkspace *ws);

/* Why a solve failed. */
typedef enum ClLcpResult {
	CL_LCP_OK,
	CL_LCP_SINGULAR,    /* the clamped block became singular (redundant contacts) */
	CL_LCP_UNBOUNDED,   /* no pivot bounds the step: no solution exists */
	CL_LCP_STALLED,     /* a step of size ≤ 0 (ODE's "s <= 0"), or too many pivots */
	CL_LCP_INVALID,     /* the result fails the complementarity check */
	CL_LCP_OUT_OF_MEMORY, /* its workspace could not grow */
} ClLcpResult;

const char *cl_lcp_result_name(ClLcpResult result);

/* Solves into x (n) and w (n), and the effective bounds into lo_out/hi_out
 * (n each; friction rows get ±μ·x_n). Deterministic: rows are processed in
 * order. The result is accepted when every condition holds to `tolerance`
 * (DART's isLCPSolutionValid uses 1e-5). */
ClLcpResult cl_lcp_solve(const ClLcp *lcp, double tolerance, ClLcpWorkspace *ws, double *x, double *w, double *lo_out,
						 double *hi_out);

/* The closed form for one contact (its normal row and, with μ > 0, one
 * tangent row orthogonal to it in the mass metric: A_nt = 0): what the
 * pivoting solver returns for that case. */
void cl_lcp_single_contact(double a_nn, double b_n, double a_tt, double b_t, double mu, double *x_n, double *x_t);
