/* The recorded linearisation of a rollout and its forward/adjoint sweeps. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

bool cl_tape_init(ClTape *tape, int ball_count, const double *inverse_mass, int steps, ClMemoryAccount *account)
{
	memset(tape, 0, sizeof *tape);
	tape->ball_count = ball_count;
	tape->inverse_mass = inverse_mass;
	tape->account = account;
	tape->step_count = steps;
	tape->step_begin = cl_calloc((size_t)steps + 1, sizeof *tape->step_begin);
	return tape->step_begin != NULL;
}

size_t cl_tape_bytes(int steps, size_t blocks)
{
	return (size_t)steps * (sizeof(ClFactor) + blocks * (sizeof(ClBlockA) + sizeof(ClBlockB)));
}

bool cl_tape_reserve(ClTape *tape, int steps, size_t blocks_per_step)
{
	size_t blocks = (size_t)steps * blocks_per_step;
	return cl_memory_reserve(tape->account, &tape->factors, &tape->factor_capacity, (size_t)steps,
							 sizeof *tape->factors) &&
		   (!blocks || (cl_memory_reserve(tape->account, &tape->a, &tape->a_capacity, blocks, sizeof *tape->a) &&
						cl_memory_reserve(tape->account, &tape->b, &tape->b_capacity, blocks, sizeof *tape->b)));
}

void cl_tape_release(ClTape *tape)
{
	free(tape->factors);
	free(tape->a);
	free(tape->b);
	free(tape->c);
	free(tape->step_begin);
	memset(tape, 0, sizeof *tape);
}

void cl_tape_reset(ClTape *tape)
{
	tape->failed = false;
	tape->factor_count = 0;
	tape->a_count = 0;
	tape->b_count = 0;
	tape->c_count = 0;
}

void cl_tape_begin_step(ClTape *tape, int step)
{
	tape->step_begin[step] = tape->factor_count;
}

void cl_tape_end_step(ClTape *tape, int step)
{
	tape->step_begin[step + 1] = tape->factor_count;
}

/* Makes room for one more item; after a failure the tape takes nothing more. */
static bool room(ClTape *tape, void *array, int *capacity, int count, size_t item)
{
	if (count < *capacity) /* nearly always: the contact-free part is reserved */
		return !tape->failed;
	if (!tape->failed && !cl_memory_grow(tape->account, array, capacity, (size_t)count + 1, item))
		tape->failed = true;
	return !tape->failed;
}

static void push_factor(ClTape *tape, ClFactorKind kind, double tau)
{
	if (!room(tape, &tape->factors, &tape->factor_capacity, tape->factor_count, sizeof *tape->factors))
		return;
	tape->factors[tape->factor_count++] =
		(ClFactor){.kind = kind, .tau = tau, .a_begin = tape->a_count, .b_begin = tape->b_count};
}

void cl_tape_factor(ClTape *tape)
{
	push_factor(tape, CL_FACTOR_BLOCKS, 0.0);
}

double *cl_tape_a(ClTape *tape, int row, int col)
{
	if (!room(tape, &tape->a, &tape->a_capacity, tape->a_count, sizeof *tape->a)) {
		memset(&tape->sink_a, 0, sizeof tape->sink_a);
		return tape->sink_a.m;
	}
	ClBlockA *block = &tape->a[tape->a_count++];
	memset(block, 0, sizeof *block);
	block->row = row;
	block->col = col;
	tape->factors[tape->factor_count - 1].a_count++;
	return block->m;
}

double *cl_tape_b(ClTape *tape, int row, int col)
{
	if (!room(tape, &tape->b, &tape->b_capacity, tape->b_count, sizeof *tape->b)) {
		memset(&tape->sink_b, 0, sizeof tape->sink_b);
		return tape->sink_b.m;
	}
	ClBlockB *block = &tape->b[tape->b_count++];
	memset(block, 0, sizeof *block);
	block->row = row;
	block->col = col;
	tape->factors[tape->factor_count - 1].b_count++;
	return block->m;
}

double *cl_tape_c(ClTape *tape, int row, int param)
{
	if (!tape->record_params || tape->factor_count == 0 ||
		!room(tape, &tape->c, &tape->c_capacity, tape->c_count, sizeof *tape->c)) {
		memset(&tape->sink_c, 0, sizeof tape->sink_c);
		return tape->sink_c.m;
	}
	ClBlockC *block = &tape->c[tape->c_count++];
	memset(block, 0, sizeof *block);
	block->factor = tape->factor_count - 1;
	block->row = row;
	block->param = param;
	return block->m;
}

double *cl_tape_a_identity(ClTape *tape, int ball)
{
	double *m = cl_tape_a(tape, ball, ball);
	for (int k = 0; k < CL_BALL_STATE; k++)
		m[CL_A(k, k)] = 1.0;
	return m;
}

void cl_tape_drift(ClTape *tape, double tau)
{
	push_factor(tape, CL_FACTOR_DRIFT, tau);
}

static bool all_zero(const double *m, int n)
{
	for (int i = 0; i < n; i++)
		if (m[i] != 0.0)
			return false;
	return true;
}

void cl_tape_dense(ClTape *tape, const int *balls, int k, const double *A, const double *B)
{
	enum { N = CL_BALL_STATE };
	cl_tape_factor(tape);
	int stride_a = N * k, stride_b = 2 * k;
	for (int i = 0; i < k; i++) {
		for (int j = 0; j < k; j++) {
			double m[N * N];
			for (int r = 0; r < N; r++)
				for (int c = 0; c < N; c++)
					m[CL_A(r, c)] = A[(N * i + r) * stride_a + N * j + c];
			if (i == j || !all_zero(m, N * N))
				memcpy(cl_tape_a(tape, balls[i], balls[j]), m, sizeof m);
			if (!B)
				continue;
			double mb[2 * N];
			for (int r = 0; r < N; r++)
				for (int c = 0; c < 2; c++)
					mb[2 * r + c] = B[(N * i + r) * stride_b + 2 * j + c];
			if (!all_zero(mb, 2 * N))
				memcpy(cl_tape_b(tape, balls[i], balls[j]), mb, sizeof mb);
		}
	}
}

/* Σ_r m[r·stride]·x[r] over a ball's state, summed in index order. */
static double ball_dot(const double *m, int stride, const double *x)
{
	double sum = m[0] * x[0];
	for (int r = 1; r < CL_BALL_STATE; r++)
		sum += m[r * stride] * x[r];
	return sum;
}

/* scratch: the state size in doubles */
static void adjoint_factor(const ClTape *tape, const ClFactor *f, double *lambda, double *g_u, double *scratch)
{
	enum { N = CL_BALL_STATE };
	int n = tape->ball_count;
	if (f->kind == CL_FACTOR_DRIFT) {
		double tau = f->tau;
		for (int i = 0; i < n; i++) {
			double *l = lambda + N * i;
			double w = tape->inverse_mass[i];
			g_u[2 * i] += (0.5 * tau * tau * l[0] + tau * l[2]) * w;
			g_u[2 * i + 1] += (0.5 * tau * tau * l[1] + tau * l[3]) * w;
			l[2] += tau * l[0];
			l[3] += tau * l[1];
		}
		return;
	}
	for (int k = 0; k < f->b_count; k++) {
		const ClBlockB *b = &tape->b[f->b_begin + k];
		const double *l = lambda + N * b->row;
		for (int c = 0; c < 2; c++)
			g_u[2 * b->col + c] += ball_dot(b->m + c, 2, l);
	}
	if (f->a_count == 0)
		return;
	/* λ_in = λ_out on untouched rows; touched rows get only Aᵀλ_out. */
	double *out = scratch;
	memcpy(out, lambda, sizeof(double) * N * (size_t)n);
	for (int k = 0; k < f->a_count; k++) {
		int row = tape->a[f->a_begin + k].row;
		memset(lambda + N * row, 0, sizeof(double) * N);
	}
	for (int k = 0; k < f->a_count; k++) {
		const ClBlockA *a = &tape->a[f->a_begin + k];
		const double *l = out + N * a->row;
		double *t = lambda + N * a->col;
		for (int c = 0; c < N; c++)
			t[c] += ball_dot(a->m + c, N, l);
	}
}

static void forward_factor(const ClTape *tape, const ClFactor *f, double *ds, const double *du, double *scratch)
{
	enum { N = CL_BALL_STATE };
	int n = tape->ball_count;
	if (f->kind == CL_FACTOR_DRIFT) {
		double tau = f->tau;
		for (int i = 0; i < n; i++) {
			double *d = ds + N * i;
			double w = tape->inverse_mass[i];
			double ax = du ? du[2 * i] * w : 0.0, ay = du ? du[2 * i + 1] * w : 0.0;
			d[0] += tau * d[2] + 0.5 * tau * tau * ax;
			d[1] += tau * d[3] + 0.5 * tau * tau * ay;
			d[2] += tau * ax;
			d[3] += tau * ay;
		}
		return;
	}
	double *in = scratch;
	memcpy(in, ds, sizeof(double) * N * (size_t)n);
	for (int k = 0; k < f->a_count; k++)
		memset(ds + N * tape->a[f->a_begin + k].row, 0, sizeof(double) * N);
	for (int k = 0; k < f->a_count; k++) {
		const ClBlockA *a = &tape->a[f->a_begin + k];
		const double *x = in + N * a->col;
		double *y = ds + N * a->row;
		for (int r = 0; r < N; r++) {
			const double *m = a->m + N * r;
			double sum = m[0] * x[0];
			for (int c = 1; c < N; c++)
				sum += m[c] * x[c];
			y[r] += sum;
		}
	}
	if (!du)
		return;
	for (int k = 0; k < f->b_count; k++) {
		const ClBlockB *b = &tape->b[f->b_begin + k];
		const double *x = du + 2 * b->col;
		double *y = ds + N * b->row;
		for (int r = 0; r < N; r++)
			y[r] += b->m[2 * r] * x[0] + b->m[2 * r + 1] * x[1];
	}
}

void cl_tape_adjoint_step(const ClTape *tape, int step, double *lambda, double *g_u, double *scratch)
{
	for (int k = tape->step_begin[step + 1] - 1; k >= tape->step_begin[step]; k--)
		adjoint_factor(tape, &tape->factors[k], lambda, g_u, scratch);
}

/* The first C block of a factor at or after factor k. */
static int first_c_from(const ClTape *tape, int k)
{
	int lo = 0, hi = tape->c_count;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (tape->c[mid].factor < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void cl_tape_adjoint_step_params(const ClTape *tape, int step, double *lambda, double *g_u, double *g_theta,
								 double *scratch)
{
	int c = g_theta ? first_c_from(tape, tape->step_begin[step + 1]) - 1 : -1;
	for (int k = tape->step_begin[step + 1] - 1; k >= tape->step_begin[step]; k--) {
		/* Cᵀλ with λ after the factor, before it is pulled back */
		for (; c >= 0 && tape->c[c].factor == k; c--) {
			const ClBlockC *b = &tape->c[c];
			g_theta[b->param] += ball_dot(b->m, 1, lambda + CL_BALL_STATE * b->row);
		}
		adjoint_factor(tape, &tape->factors[k], lambda, g_u, scratch);
	}
}

void cl_tape_forward_step(const ClTape *tape, int step, double *ds, const double *du, double *scratch)
{
	for (int k = tape->step_begin[step]; k < tape->step_begin[step + 1]; k++)
		forward_factor(tape, &tape->factors[k], ds, du, scratch);
}

void cl_tape_forward_step_param(const ClTape *tape, int step, double *ds, const double *du, int param, double *scratch)
{
	int c = param >= 0 ? first_c_from(tape, tape->step_begin[step]) : tape->c_count;
	for (int k = tape->step_begin[step]; k < tape->step_begin[step + 1]; k++) {
		forward_factor(tape, &tape->factors[k], ds, du, scratch);
		for (; c < tape->c_count && tape->c[c].factor == k; c++)
			if (tape->c[c].param == param)
				for (int r = 0; r < CL_BALL_STATE; r++)
					ds[CL_BALL_STATE * tape->c[c].row + r] += tape->c[c].m[r];
	}
}
