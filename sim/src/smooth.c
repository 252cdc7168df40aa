/* Smoothed gradients: ZoBG, FoBG and AoBG of F_σ(θ) = E f(θ + w), and the
 * quadrature ground truth, for any backends and scalar parameters, across
 * threads. Every run's result is stored at its index and reduced in index
 * order afterwards, so no number depends on the thread count. */
#include "core.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define SMOOTH_SAMPLES_MAX 1000000
#define SMOOTH_THREADS_MAX 64
#define SMOOTH_CHUNK 16                     /* runs per work item */
#define SMOOTH_GAMMA_FLOOR 1e-6
#define SQRT_2PI 2.5066282746310002

/* ------------------------------------------------------------ the α rule */

const char *cl_smooth_alpha_rule_name(ClSmoothAlphaRule rule)
{
	static const char *const names[CL_SMOOTH_ALPHA_RULE_COUNT] = {
		[CL_SMOOTH_ALPHA_ZOBG] = "eps>gamma",
		[CL_SMOOTH_ALPHA_OPTIMUM] = "optimum",
		[CL_SMOOTH_ALPHA_CONSTRAINT] = "constraint",
		[CL_SMOOTH_ALPHA_NO_FOBG] = "no-fobg",
	};
	return rule >= 0 && rule < CL_SMOOTH_ALPHA_RULE_COUNT ? names[rule] : "unknown";
}

double cl_smooth_auto_gamma(double zobg_norm)
{
	return isfinite(zobg_norm) ? fmax(0.1 * zobg_norm, SMOOTH_GAMMA_FLOOR) : SMOOTH_GAMMA_FLOOR;
}

void cl_smooth_alpha(ClSmoothAlpha *a)
{
	double log_term = log((a->dimension + 1.0) / a->delta);
	double n = a->terms;
	a->epsilon = a->terms >= 1 ? sqrt(2.0 * a->zobg_variance * log_term / n) + 2.0 * a->bound * log_term / (3.0 * n)
							   : NAN;
	a->alpha = 0.0;
	if (!isfinite(a->fobg_variance) || !isfinite(a->gap)) {
		a->rule = CL_SMOOTH_ALPHA_NO_FOBG;
		return;
	}
	/* an ε that cannot be computed certifies nothing either */
	if (!(a->epsilon <= a->gamma)) {
		a->rule = CL_SMOOTH_ALPHA_ZOBG;
		return;
	}
	double total = a->zobg_variance + a->fobg_variance;
	double weight = a->fobg_variance > 0.0 ? a->zobg_variance / total : 1.0;
	if (weight * a->gap <= a->gamma - a->epsilon) {
		a->alpha = weight;
		a->rule = CL_SMOOTH_ALPHA_OPTIMUM;
	} else {
		a->alpha = (a->gamma - a->epsilon) / a->gap;
		a->rule = CL_SMOOTH_ALPHA_CONSTRAINT;
	}
}

/* Mean and sample variance (divisor n − 1) of each column over the rows
 * that are ok; returns n. NAN where there are too few rows. */
static int moments(const double *x, const bool *ok, int rows, int d, double *mean, double *var)
{
	int n = 0;
	for (int k = 0; k < d; k++)
		mean[k] = var[k] = 0.0;
	for (int t = 0; t < rows; t++)
		if (ok[t]) {
			n++;
			for (int k = 0; k < d; k++)
				mean[k] += x[(size_t)t * (size_t)d + (size_t)k];
		}
	for (int k = 0; k < d; k++)
		mean[k] = n ? mean[k] / n : NAN;
	for (int t = 0; t < rows; t++)
		if (ok[t])
			for (int k = 0; k < d; k++) {
				double e = x[(size_t)t * (size_t)d + (size_t)k] - mean[k];
				var[k] += e * e;
			}
	for (int k = 0; k < d; k++)
		var[k] = n >= 2 ? var[k] / (n - 1) : NAN;
	return n;
}

static double norm(const double *x, int d)
{
	double s = 0.0;
	for (int k = 0; k < d; k++)
		s += x[k] * x[k];
	return sqrt(s);
}

static double trace(const double *var, int d)
{
	double s = 0.0;
	for (int k = 0; k < d; k++)
		s += var[k];
	return s;
}

/* The rule's inputs from the two batches' moments (fobg_mean NULL: FoBG
 * not available), then the rule. */
static ClSmoothAlpha alpha_from_terms(int d, int rows, const double *z, const bool *z_ok, int z_terms,
									  const double *z_mean, const double *z_var, const double *fobg_mean,
									  const double *fobg_var, double gamma, double delta)
{
	ClSmoothAlpha a = {.dimension = d, .terms = z_terms, .delta = delta, .fobg_variance = NAN, .gap = NAN};
	a.zobg_variance = trace(z_var, d);
	a.bound = 0.0;
	for (int t = 0; t < rows; t++)
		if (z_ok[t])
			a.bound = fmax(a.bound, norm(z + (size_t)t * (size_t)d, d));
	a.gamma = gamma > 0.0 ? gamma : cl_smooth_auto_gamma(norm(z_mean, d));
	if (fobg_mean) {
		a.fobg_variance = trace(fobg_var, d);
		double gap = 0.0;
		for (int k = 0; k < d; k++)
			gap += (fobg_mean[k] - z_mean[k]) * (fobg_mean[k] - z_mean[k]);
		a.gap = sqrt(gap);
	}
	cl_smooth_alpha(&a);
	return a;
}

static bool row_finite(const double *x, int d)
{
	for (int k = 0; k < d; k++)
		if (!isfinite(x[k]))
			return false;
	return true;
}

ClSmoothAlpha cl_smooth_alpha_batch(int d, int n, const double *z, const double *y, double gamma, double delta)
{
	bool *z_ok = cl_calloc((size_t)n, sizeof(bool)), *y_ok = cl_calloc((size_t)n, sizeof(bool));
	double *m = cl_calloc(4 * (size_t)d, sizeof(double));
	if (!z_ok || !y_ok || !m) { /* out of memory: no α */
		free(m);
		free(z_ok);
		free(y_ok);
		ClSmoothAlpha none = {.dimension = d, .delta = delta, .alpha = NAN};
		return none;
	}
	for (int t = 0; t < n; t++) {
		z_ok[t] = row_finite(z + (size_t)t * (size_t)d, d);
		y_ok[t] = row_finite(y + (size_t)t * (size_t)d, d);
	}
	int nz = moments(z, z_ok, n, d, m, m + d);
	int ny = moments(y, y_ok, n, d, m + 2 * d, m + 3 * d);
	ClSmoothAlpha a = alpha_from_terms(d, n, z, z_ok, nz, m, m + d, ny >= 2 ? m + 2 * d : NULL, m + 3 * d, gamma,
									   delta);
	free(m);
	free(z_ok);
	free(y_ok);
	return a;
}

/* ------------------------------------------------------------ evaluation */

/* One backend's loss and adjoint at θ + w. */
typedef struct Evaluator {
	const ClScene *scene;
	int backend;
	const ClParam *params;
	int d;
	bool record;   /* gradients wanted and some parameter has an adjoint */
	bool physical; /* recorded with parameter columns: a physical parameter's adjoint */
	bool in_state; /* every parameter sits in (s0, u): one rollout, reused */
	double *theta;
	ClRollout *rollout;
	ClScene *copy; /* otherwise: a scene whose parameters are set for every run */
	double *s0, *u, *g_s0, *g_u;
	double **at, **grad_at; /* in_state: each parameter's entry of (s0, u), (g_s0, g_u) */
} Evaluator;

static void evaluator_clear(Evaluator *e);

/* False when out of memory (e cleared). */
static bool evaluator_init(Evaluator *e, const ClScene *scene, int backend, const ClParam *params, int d,
						   bool gradients)
{
	*e = (Evaluator){.scene = scene, .backend = backend, .params = params, .d = d, .in_state = true};
	bool any_adjoint = false;
	for (int k = 0; k < d; k++) {
		bool adjoint = cl_param_has_adjoint(&params[k]), own = cl_backend_has_param_adjoint(backend, &params[k]);
		any_adjoint |= own;
		e->physical |= own && !adjoint;
		e->in_state &= adjoint;
	}
	e->record = gradients && any_adjoint;
	e->physical &= e->record;
	e->theta = cl_calloc((size_t)d, sizeof(double));
	e->g_s0 = cl_calloc((size_t)cl_state_size(scene), sizeof(double));
	e->g_u = cl_calloc((size_t)cl_control_size(scene), sizeof(double));
	if (!e->theta || !e->g_s0 || !e->g_u) {
		evaluator_clear(e);
		return false;
	}
	if (!e->in_state) {
		e->copy = cl_scene_copy(scene);
		for (int k = 0; k < d; k++)
			e->theta[k] = cl_param_get(scene, &params[k]);
		if (!e->copy)
			evaluator_clear(e);
		return e->copy != NULL;
	}
	e->s0 = cl_calloc((size_t)cl_state_size(scene), sizeof(double));
	e->u = cl_calloc((size_t)cl_control_size(scene), sizeof(double));
	e->at = cl_calloc((size_t)d, sizeof(double *));
	e->grad_at = cl_calloc((size_t)d, sizeof(double *));
	if (!e->s0 || !e->u || !e->at || !e->grad_at || !(e->rollout = cl_rollout_new(scene, backend))) {
		evaluator_clear(e);
		return false;
	}
	cl_scene_initial_state(scene, e->s0);
	cl_scene_controls(scene, e->u);
	for (int k = 0; k < d; k++) {
		e->at[k] = cl_param_slot(scene, &params[k], e->s0, e->u);
		e->grad_at[k] = cl_param_slot(scene, &params[k], e->g_s0, e->g_u);
		e->theta[k] = *e->at[k];
	}
	return true;
}

static void evaluator_clear(Evaluator *e)
{
	if (!e->theta && !e->rollout && !e->copy)
		return; /* never made, or cleared */
	cl_rollout_free(e->rollout);
	cl_scene_free(e->copy);
	free(e->theta);
	free(e->s0);
	free(e->u);
	free(e->g_s0);
	free(e->g_u);
	free(e->at);
	free(e->grad_at);
	*e = (Evaluator){0};
}

/* The loss (NAN when the run stopped) and, with grad, the adjoint's entry
 * of each parameter (NAN without one) at θ + w. */
static const ClStatus *evaluate(Evaluator *e, const double *w, double *loss, double *grad)
{
	const ClScene *scene = e->scene;
	if (e->in_state) {
		for (int k = 0; k < e->d; k++)
			*e->at[k] = e->theta[k] + w[k];
		cl_rollout_run(e->rollout, e->s0, e->u, e->record);
	} else {
		for (int k = 0; k < e->d; k++)
			cl_param_set(e->copy, &e->params[k], e->theta[k] + w[k]);
		/* a changed mass, radius or duration is part of the backend's setup */
		cl_rollout_free(e->rollout);
		static const ClStatus no_rollout = {.code = CL_STATUS_MEMORY_LIMIT, .step = -1, .message = "out of memory"};
		if (!(e->rollout = cl_rollout_new(e->copy, e->backend))) {
			*loss = NAN;
			for (int k = 0; grad && k < e->d; k++)
				grad[k] = NAN;
			return &no_rollout;
		}
		cl_rollout_record_params(e->rollout, e->physical);
		cl_rollout_run(e->rollout, NULL, NULL, e->record);
		scene = e->copy;
	}
	*loss = cl_rollout_loss(e->rollout);
	if (grad) {
		if (e->record)
			cl_rollout_gradient(e->rollout, e->g_s0, e->g_u);
		for (int k = 0; k < e->d; k++) {
			const double *g = e->in_state							  ? e->grad_at[k]
							  : cl_param_has_adjoint(&e->params[k]) ? cl_param_slot(scene, &e->params[k], e->g_s0, e->g_u)
																	: NULL;
			grad[k] = e->record && g ? *g : NAN;
			if (e->physical && !g)
				cl_rollout_param_gradient(e->rollout, &e->params[k], 1, &grad[k]);
		}
	}
	return cl_rollout_status(e->rollout);
}

/* Every backend at θ + w for each row w of a table, row 0 being θ itself. */
typedef struct Batch {
	const ClScene *scene;
	const ClParam *params;
	int d;
	const int *backends;
	int backend_count;
	bool gradients;
	int rows;
	const double *w;       /* rows × d */
	double *loss;          /* backend_count × rows */
	unsigned char *status; /* backend_count × rows, ClStatusCode */
	double *grad;          /* backend_count × rows × d, with gradients */
	ClStatus *baseline;    /* per backend: row 0's status */
	ClStatus *problem;     /* per backend: the first other row that was not ok */
	int *problem_row;      /* −1 if none */
	int threads;
	ClSmoothProgress progress;
	void *user;
	const _Atomic int *cancel;
	atomic_int next;
	atomic_bool out_of_memory; /* the batch stopped for want of memory (or of a lock) */
	mtx_t lock;
	int done, total; /* runs */
} Batch;

typedef struct BatchWorker {
	Batch *batch;
	Evaluator *evaluators; /* per backend, made on first use */
	bool *ready;
	ClStatus *problem;
	int *problem_row;
} BatchWorker;

static int batch_worker(void *data)
{
	BatchWorker *bw = data;
	Batch *b = bw->batch;
	int chunks = (b->rows + SMOOTH_CHUNK - 1) / SMOOTH_CHUNK;
	int items = chunks * b->backend_count;
	for (;;) {
		if ((b->cancel && atomic_load(b->cancel)) || atomic_load(&b->out_of_memory))
			break;
		int item = atomic_fetch_add(&b->next, 1);
		if (item >= items)
			break;
		/* chunk by chunk, every backend before the next: all progress together */
		int chunk = item / b->backend_count, slot = item % b->backend_count;
		Evaluator *e = &bw->evaluators[slot];
		if (!bw->ready[slot]) {
			if (!evaluator_init(e, b->scene, b->backends[slot], b->params, b->d, b->gradients)) {
				atomic_store(&b->out_of_memory, true);
				break;
			}
			bw->ready[slot] = true;
		}
		int first = chunk * SMOOTH_CHUNK, end = first + SMOOTH_CHUNK < b->rows ? first + SMOOTH_CHUNK : b->rows;
		for (int r = first; r < end; r++) {
			size_t at = (size_t)slot * (size_t)b->rows + (size_t)r;
			const ClStatus *s = evaluate(e, b->w + (size_t)r * (size_t)b->d, &b->loss[at],
										 b->gradients ? b->grad + at * (size_t)b->d : NULL);
			b->status[at] = (unsigned char)s->code;
			if (r == 0)
				b->baseline[slot] = *s;
			else if (s->code != CL_STATUS_OK && bw->problem_row[slot] < 0) {
				bw->problem_row[slot] = r; /* a worker's rows of a slot come in increasing order */
				bw->problem[slot] = *s;
			}
		}
		mtx_lock(&b->lock);
		b->done += end - first;
		if (b->progress)
			b->progress(b->done, b->total, b->user);
		mtx_unlock(&b->lock);
	}
	return 0;
}

/* The batch of a definition's backends and parameters at the rows of w. */
static Batch batch_of(const ClScene *scene, const ClSmoothDef *def, int rows, const double *w, bool gradients)
{
	return (Batch){
		.scene = scene,
		.params = def->params,
		.d = def->param_count,
		.backends = def->backends,
		.backend_count = def->backend_count,
		.gradients = gradients,
		.rows = rows,
		.w = w,
		.threads = def->threads,
		.progress = def->progress,
		.user = def->user,
		.cancel = def->cancel,
	};
}

static void free_worker(BatchWorker *w)
{
	free(w->evaluators);
	free(w->ready);
	free(w->problem);
	free(w->problem_row);
}

/* Runs the batch; false when cancelled or out of memory (b->out_of_memory). */
static bool batch_run(Batch *b)
{
	int n = b->backend_count;
	size_t runs = (size_t)n * (size_t)b->rows;
	b->loss = cl_calloc(runs, sizeof(double));
	b->status = cl_calloc(runs, 1);
	b->grad = b->gradients ? cl_calloc(runs * (size_t)b->d, sizeof(double)) : NULL;
	b->baseline = cl_calloc((size_t)n, sizeof(ClStatus));
	b->problem = cl_calloc((size_t)n, sizeof(ClStatus));
	b->problem_row = cl_calloc((size_t)n, sizeof(int));
	b->total = (int)runs;
	atomic_init(&b->next, 0);
	atomic_init(&b->out_of_memory, false);
	int chunks = (b->rows + SMOOTH_CHUNK - 1) / SMOOTH_CHUNK;
	int threads = b->threads < 1 ? 1 : b->threads > SMOOTH_THREADS_MAX ? SMOOTH_THREADS_MAX : b->threads;
	if (threads > chunks * n)
		threads = chunks * n;
	/* each worker holds a rollout per backend: they share the scene's memory budget */
	ClScene shared = *b->scene;
	shared.memory_budget /= (size_t)threads * (size_t)n;
	const ClScene *scene = b->scene;
	b->scene = &shared;
	BatchWorker *workers = cl_calloc((size_t)threads, sizeof *workers);
	thrd_t *ids = cl_calloc((size_t)threads, sizeof *ids);
	bool *running = cl_calloc((size_t)threads, sizeof *running);
	int ready = 0; /* workers with their arrays */
	if (b->loss && b->status && (b->grad || !b->gradients) && b->baseline && b->problem && b->problem_row &&
		workers && ids && running && mtx_init(&b->lock, mtx_plain) == thrd_success) {
		for (; ready < threads; ready++) {
			BatchWorker *w = &workers[ready];
			w->batch = b;
			w->evaluators = cl_calloc((size_t)n, sizeof *w->evaluators);
			w->ready = cl_calloc((size_t)n, sizeof *w->ready);
			w->problem = cl_calloc((size_t)n, sizeof *w->problem);
			w->problem_row = cl_calloc((size_t)n, sizeof *w->problem_row);
			if (!w->evaluators || !w->ready || !w->problem || !w->problem_row) {
				free_worker(w);
				break;
			}
			for (int s = 0; s < n; s++)
				w->problem_row[s] = -1;
		}
		if (ready == 0)
			mtx_destroy(&b->lock);
	}
	if (ready == 0) {
		atomic_store(&b->out_of_memory, true);
		free(workers);
		free(ids);
		free(running);
		b->scene = scene;
		return false;
	}
	/* the calling thread is worker 0; if a thread cannot start, the others do its share */
	for (int t = 1; t < ready; t++)
		running[t] = thrd_create(&ids[t], batch_worker, &workers[t]) == thrd_success;
	threads = ready;
	batch_worker(&workers[0]);
	for (int t = 1; t < threads; t++)
		if (running[t])
			thrd_join(ids[t], NULL);
	for (int s = 0; s < n; s++)
		b->problem_row[s] = -1;
	for (int t = 0; t < threads; t++) {
		BatchWorker *w = &workers[t];
		for (int s = 0; s < n; s++) {
			if (w->problem_row[s] >= 0 && (b->problem_row[s] < 0 || w->problem_row[s] < b->problem_row[s])) {
				b->problem_row[s] = w->problem_row[s];
				b->problem[s] = w->problem[s];
			}
			if (w->ready[s])
				evaluator_clear(&w->evaluators[s]);
		}
		free_worker(w);
	}
	free(workers);
	free(ids);
	free(running);
	mtx_destroy(&b->lock);
	b->scene = scene;
	return b->done == b->total && !atomic_load(&b->out_of_memory);
}

/* The status of a batch that did not finish. */
static bool batch_failed(const Batch *b, ClStatus *status)
{
	if (atomic_load(&b->out_of_memory))
		return cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "smooth: out of memory");
	return cl_status_fail(status, CL_STATUS_CANCELLED, "smooth: cancelled");
}

static void batch_clear(Batch *b)
{
	free(b->loss);
	free(b->status);
	free(b->grad);
	free(b->baseline);
	free(b->problem);
	free(b->problem_row);
}

/* ------------------------------------------------------------ checks */

static bool same_param(const ClParam *a, const ClParam *b)
{
	return cl_param_equal(a, b);
}

/* The first parameter that repeats an earlier one, −1 if none. Those with an
 * adjoint are told apart by their entry of (s0, u): an optimization's
 * thousand controls stay linear. */
static int repeated_param(const ClScene *scene, const ClParam *params, int count)
{
	size_t ns = (size_t)cl_state_size(scene), nu = (size_t)cl_control_size(scene);
	double *s0 = cl_calloc(ns, sizeof(double)), *u = cl_calloc(nu, sizeof(double));
	bool *seen = cl_calloc(ns + nu, sizeof(bool));
	int repeat = s0 && u && seen ? -1 : -2;
	for (int k = 0; k < count && repeat == -1; k++) {
		const double *at = cl_param_has_adjoint(&params[k]) ? cl_param_slot(scene, &params[k], s0, u) : NULL;
		if (at) {
			size_t index = at >= s0 && at < s0 + ns ? (size_t)(at - s0) : ns + (size_t)(at - u);
			if (seen[index])
				repeat = k;
			seen[index] = true;
			continue;
		}
		for (int j = 0; j < k && repeat == -1; j++)
			if (same_param(&params[j], &params[k]))
				repeat = k;
	}
	free(seen);
	free(s0);
	free(u);
	return repeat;
}

/* What both cl_smooth and the quadrature need of a definition. */
static bool check_common(const ClScene *scene, const ClSmoothDef *def, ClStatus *status)
{
	if (def->param_count < 1 || !def->params || !def->sigma)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: no parameter");
	for (int k = 0; k < def->param_count; k++) {
		char name[CL_NAME_MAX];
		if (!cl_param_fits(scene, &def->params[k]))
			return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: parameter %d does not exist in this scene",
								  k + 1);
		cl_param_name(scene, &def->params[k], name, sizeof name);
		if (!(isfinite(def->sigma[k]) && def->sigma[k] > 0.0))
			return cl_status_fail(status, CL_STATUS_UNSUPPORTED,
								  "smooth: sigma of %s must be positive and finite (got %g)", name, def->sigma[k]);
	}
	/* a repeat would be perturbed twice over, with two noise scales */
	int repeat = repeated_param(scene, def->params, def->param_count);
	if (repeat == -2)
		return cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "smooth: out of memory");
	if (repeat >= 0) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, &def->params[repeat], name, sizeof name);
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: %s is given twice", name);
	}
	if (def->backend_count < 1 || !def->backends)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: no backend");
	for (int b = 0; b < def->backend_count; b++)
		if (!cl_backend_info(def->backends[b]))
			return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: unknown backend %d", def->backends[b]);
	return true;
}

/* Bytes a batch of rows holds, against the scene's memory budget. */
static bool check_memory(const ClScene *scene, const ClSmoothDef *def, size_t rows, size_t extra_per_row,
						 ClStatus *status)
{
	size_t d = (size_t)def->param_count, n = (size_t)def->backend_count;
	double bytes = (double)rows * (8.0 * (double)d + (double)n * (9.0 + 8.0 * (double)d) + (double)extra_per_row);
	char what[128];
	snprintf(what, sizeof what, "smooth: %zu runs × %d backends × %d parameters", rows, def->backend_count,
			 def->param_count);
	return cl_memory_fits(scene, bytes < (double)SIZE_MAX ? (size_t)bytes : SIZE_MAX, what, status);
}

/* ------------------------------------------------------------ sampling */

ClSmoothDef cl_smooth_default_def(void)
{
	return (ClSmoothDef){.samples = 100, .seed = 1, .gamma = NAN, .delta = 0.05, .threads = 1};
}

void cl_smooth_result_clear(ClSmoothResult *result)
{
	free(result->gradient);
	free(result->zobg_values);
	free(result->fobg_values);
	memset(result, 0, sizeof *result);
}

/* One backend's per-term values (ZoBG, no-baseline ZoBG, FoBG, loss) and
 * which terms each estimate may use. */
typedef struct Terms {
	double *z, *plain, *y, *loss; /* terms × d (loss: terms) */
	bool *z_ok, *plain_ok, *y_ok;
} Terms;

/* False when out of memory (terms_clear frees what was had). */
static bool terms_init(Terms *t, int terms, int d)
{
	size_t n = (size_t)terms;
	t->z = cl_calloc(n * (size_t)d, sizeof(double));
	t->plain = cl_calloc(n * (size_t)d, sizeof(double));
	t->y = cl_calloc(n * (size_t)d, sizeof(double));
	t->loss = cl_calloc(n, sizeof(double));
	t->z_ok = cl_calloc(n, sizeof(bool));
	t->plain_ok = cl_calloc(n, sizeof(bool));
	t->y_ok = cl_calloc(n, sizeof(bool));
	return t->z && t->plain && t->y && t->loss && t->z_ok && t->plain_ok && t->y_ok;
}

static void terms_clear(Terms *t)
{
	free(t->z);
	free(t->plain);
	free(t->y);
	free(t->loss);
	free(t->z_ok);
	free(t->plain_ok);
	free(t->y_ok);
}

/* Slot s's terms from its runs: z_t = (f(θ+w) − f(θ)) ε/σ, or with pairs
 * (f(θ+w) − f(θ−w)) ε/(2σ); y_t = ∇f(θ+w) (pairs: the mean of both). */
static void make_terms(const Batch *b, int slot, const ClSmoothDef *def, const double *eps, int terms, Terms *t)
{
	int d = def->param_count;
	size_t base = (size_t)slot * (size_t)b->rows;
	const double *loss = b->loss + base;
	const unsigned char *status = b->status + base;
	double f0 = loss[0];
	int per_term = def->antithetic ? 2 : 1;
	for (int j = 0; j < terms; j++) {
		int r = 1 + per_term * j;
		const double *e = eps + (size_t)j * (size_t)d;
		double *z = t->z + (size_t)j * (size_t)d, *plain = t->plain + (size_t)j * (size_t)d;
		double *y = t->y + (size_t)j * (size_t)d;
		double fp = loss[r], fm = def->antithetic ? loss[r + 1] : f0;
		bool finite = isfinite(fp) && (!def->antithetic || isfinite(fm));
		t->plain_ok[j] = finite;
		t->z_ok[j] = finite && isfinite(fm);
		t->loss[j] = def->antithetic ? 0.5 * (fp + fm) : fp;
		for (int k = 0; k < d; k++) {
			double scaled = e[k] / def->sigma[k];
			z[k] = def->antithetic ? 0.5 * (fp - fm) * scaled : (fp - fm) * scaled;
			plain[k] = def->antithetic ? z[k] : fp * scaled;
		}
		bool ok = b->gradients && status[r] == CL_STATUS_OK && (!def->antithetic || status[r + 1] == CL_STATUS_OK);
		for (int k = 0; k < d; k++) {
			const double *g = b->grad ? b->grad + (base + (size_t)r) * (size_t)d : NULL;
			y[k] = !g ? NAN : def->antithetic ? 0.5 * (g[k] + g[d + k]) : g[k];
			ok &= isfinite(y[k]) || !cl_backend_has_param_adjoint(b->backends[slot], &def->params[k]);
		}
		t->y_ok[j] = ok;
		if (!t->z_ok[j])
			for (int k = 0; k < d; k++)
				z[k] = NAN;
		if (!finite)
			for (int k = 0; k < d; k++)
				plain[k] = NAN;
		if (!ok)
			for (int k = 0; k < d; k++)
				y[k] = NAN;
	}
}

static ClSmoothEstimate estimate(double mean, double var, int n)
{
	return (ClSmoothEstimate){.mean = mean, .se = n >= 2 ? sqrt(var / n) : NAN};
}

/* Mean and standard error of a·x_t + b·y_t over the terms where both are ok. */
static ClSmoothEstimate combination(const double *x, const bool *x_ok, double a, const double *y, const bool *y_ok,
									double c, int terms, int d, int k)
{
	double sum = 0.0, sq = 0.0;
	int n = 0;
	for (int t = 0; t < terms; t++)
		if (x_ok[t] && y_ok[t]) {
			n++;
			sum += a * x[(size_t)t * (size_t)d + (size_t)k] + c * y[(size_t)t * (size_t)d + (size_t)k];
		}
	double mean = n ? sum / n : NAN;
	for (int t = 0; t < terms; t++)
		if (x_ok[t] && y_ok[t]) {
			double e = a * x[(size_t)t * (size_t)d + (size_t)k] + c * y[(size_t)t * (size_t)d + (size_t)k] - mean;
			sq += e * e;
		}
	return estimate(mean, n >= 2 ? sq / (n - 1) : NAN, n);
}

/* False when out of memory. */
static bool reduce(const Batch *b, const ClSmoothDef *def, int terms, const Terms *t, const Terms *exact,
				   ClSmoothResult *out)
{
	int d = def->param_count;
	double *m = cl_calloc(6 * (size_t)d, sizeof(double));
	if (!m)
		return false;
	double *zm = m, *zv = m + d, *pm = m + 2 * d, *pv = m + 3 * d, *ym = m + 4 * d, *yv = m + 5 * d;
	out->zobg_terms = moments(t->z, t->z_ok, terms, d, zm, zv);
	int plain_terms = moments(t->plain, t->plain_ok, terms, d, pm, pv);
	out->fobg_terms = b->gradients ? moments(t->y, t->y_ok, terms, d, ym, yv) : 0;
	double lm, lv;
	int loss_terms = moments(t->loss, t->plain_ok, terms, 1, &lm, &lv);
	out->smoothed_loss = estimate(lm, lv, loss_terms);
	bool fobg = b->gradients && out->fobg_terms >= 2;
	for (int k = 0; k < d; k++)
		fobg &= cl_backend_has_param_adjoint(out->backend, &def->params[k]);
	out->alpha = alpha_from_terms(d, terms, t->z, t->z_ok, out->zobg_terms, zm, zv, fobg ? ym : NULL, yv, def->gamma,
								  def->delta);
	double alpha = out->alpha.alpha;
	for (int k = 0; k < d; k++) {
		ClSmoothGradient *g = &out->gradient[k];
		g->has_adjoint = cl_backend_has_param_adjoint(out->backend, &def->params[k]);
		g->zobg = estimate(zm[k], zv[k], out->zobg_terms);
		g->zobg_nobaseline = estimate(pm[k], pv[k], plain_terms);
		g->fobg = b->gradients && g->has_adjoint ? estimate(ym[k], yv[k], out->fobg_terms)
												 : (ClSmoothEstimate){NAN, NAN};
		g->aobg = alpha == 0.0 ? g->zobg
				  : alpha == 1.0
					  ? g->fobg
					  : combination(t->y, t->y_ok, alpha, t->z, t->z_ok, 1.0 - alpha, terms, d, k);
		g->fobg_bias = exact && g->has_adjoint && b->gradients
						   ? combination(t->y, t->y_ok, 1.0, exact->z, exact->z_ok, -1.0, terms, d, k)
						   : (ClSmoothEstimate){NAN, NAN};
	}
	free(m);
	if (def->keep_terms) {
		out->zobg_values = cl_calloc((size_t)terms * (size_t)d, sizeof(double));
		out->fobg_values = cl_calloc((size_t)terms * (size_t)d, sizeof(double));
		if (!out->zobg_values || !out->fobg_values)
			return false;
		memcpy(out->zobg_values, t->z, sizeof(double) * (size_t)terms * (size_t)d);
		memcpy(out->fobg_values, t->y, sizeof(double) * (size_t)terms * (size_t)d);
	}
	return true;
}

bool cl_smooth(const ClScene *scene, const ClSmoothDef *def, ClSmoothResult *results, ClStatus *status)
{
	if (status)
		*status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	if (!check_common(scene, def, status))
		return false;
	if (def->samples < 2 || def->samples > SMOOTH_SAMPLES_MAX)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: %d samples (2 to %d allowed)", def->samples,
							  SMOOTH_SAMPLES_MAX);
	if (def->antithetic && def->samples % 2)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED,
							  "smooth: antithetic sampling needs an even number of samples (got %d)", def->samples);
	if (!(def->delta > 0.0 && def->delta < 1.0))
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: delta must be in (0, 1) (got %g)", def->delta);
	if (!(isnan(def->gamma) || isfinite(def->gamma)))
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "smooth: gamma must be finite");
	int d = def->param_count, terms = def->antithetic ? def->samples / 2 : def->samples;
	int rows = 1 + def->samples;
	/* per row besides the batch: eps, and three term values per backend */
	if (!check_memory(scene, def, (size_t)rows, 8 * (size_t)d * (1 + 3 * (size_t)def->backend_count), status))
		return false;

	/* the samples, drawn once for every backend: ε_j from stream (seed, j) */
	double *eps = cl_calloc((size_t)terms * (size_t)d, sizeof(double));
	double *w = cl_calloc((size_t)rows * (size_t)d, sizeof(double));
	if (!eps || !w) {
		free(eps);
		free(w);
		return cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "smooth: out of memory");
	}
	for (int j = 0; j < terms; j++) {
		ClRandom random = cl_random_stream(def->seed, (uint64_t)j);
		for (int k = 0; k < d; k++)
			eps[(size_t)j * (size_t)d + (size_t)k] = cl_random_gaussian(&random);
	}
	for (int r = 1; r < rows; r++) {
		int j = def->antithetic ? (r - 1) / 2 : r - 1;
		double sign = def->antithetic && (r - 1) % 2 ? -1.0 : 1.0;
		for (int k = 0; k < d; k++)
			w[(size_t)r * (size_t)d + (size_t)k] = sign * def->sigma[k] * eps[(size_t)j * (size_t)d + (size_t)k];
	}
	Batch b = batch_of(scene, def, rows, w, !def->zeroth_order_only);
	bool ok = batch_run(&b) || batch_failed(&b, status);
	Terms *t = ok ? cl_calloc((size_t)def->backend_count, sizeof *t) : NULL;
	for (int s = 0; t && s < def->backend_count; s++)
		if (!terms_init(&t[s], terms, d))
			ok = false;
	if (ok && !t)
		ok = false;
	bool made = ok; /* results[] hold something to clear */
	if (ok) {
		int exact_slot = -1;
		for (int s = 0; s < def->backend_count; s++)
			if (def->backends[s] == cl_backend_reference())
				exact_slot = s;
		for (int s = 0; s < def->backend_count; s++)
			make_terms(&b, s, def, eps, terms, &t[s]);
		for (int s = 0; s < def->backend_count; s++)
			results[s] = (ClSmoothResult){.backend = def->backends[s]};
		for (int s = 0; ok && s < def->backend_count; s++) {
			ClSmoothResult *r = &results[s];
			size_t base = (size_t)s * (size_t)rows;
			*r = (ClSmoothResult){.backend = def->backends[s], .status = b.baseline[s], .loss = b.loss[base],
								  .terms = terms};
			r->gradient = cl_calloc((size_t)d, sizeof *r->gradient);
			if (!r->gradient || !reduce(&b, def, terms, &t[s], exact_slot >= 0 ? &t[exact_slot] : NULL, r)) {
				ok = false;
				break;
			}
			for (int row = 1; row < rows; row++)
				r->not_ok += b.status[base + (size_t)row] != CL_STATUS_OK;
			r->first_problem = b.problem_row[s] >= 0 ? b.problem[s] : (ClStatus){.code = CL_STATUS_OK, .step = -1};
			for (int k = 0; k < d; k++) {
				ClSmoothGradient *g = &r->gradient[k];
				if (g->has_adjoint)
					g->point = b.gradients ? b.grad[base * (size_t)d + (size_t)k] : NAN;
				else if (b.gradients && isfinite(r->loss))
					g->point = cl_finite_difference(scene, def->backends[s], &def->params[k],
													cl_fd_step(scene, def->backends[s], &def->params[k]), NULL);
				else
					g->point = NAN;
			}
		}
	}
	if (!ok && (!status || status->code == CL_STATUS_OK))
		cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "smooth: out of memory");
	for (int s = 0; !ok && made && s < def->backend_count; s++)
		cl_smooth_result_clear(&results[s]);
	for (int s = 0; t && s < def->backend_count; s++)
		terms_clear(&t[s]);
	free(t);
	batch_clear(&b);
	free(eps);
	free(w);
	return ok;
}

/* ------------------------------------------------------------ quadrature */

bool cl_smooth_quadrature(const ClScene *scene, const ClSmoothDef *def, int points, ClSmoothQuadrature *results,
						  ClStatus *status)
{
	if (status)
		*status = (ClStatus){.code = CL_STATUS_OK, .step = -1};
	if (!check_common(scene, def, status))
		return false;
	int d = def->param_count;
	if (d > 2)
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "quadrature: %d parameters (1 or 2 allowed)", d);
	int n = points > 0 ? points : d == 1 ? 2048 : 256;
	double reach = d == 1 ? 6.0 : 4.5;
	if (n < 3 || n > (d == 1 ? SMOOTH_SAMPLES_MAX : 2048))
		return cl_status_fail(status, CL_STATUS_UNSUPPORTED, "quadrature: %d points per axis (3 to %d allowed)", n,
							  d == 1 ? SMOOTH_SAMPLES_MAX : 2048);
	int grid = d == 1 ? n : n * n, rows = 1 + grid;
	if (!check_memory(scene, def, (size_t)rows, 8, status))
		return false;
	/* node i of an axis: −reach·σ … reach·σ, from both ends so the grid is symmetric */
	double *node = cl_calloc((size_t)n * (size_t)d, sizeof(double));
	double *w = cl_calloc((size_t)rows * (size_t)d, sizeof(double));
	double *weight = cl_calloc((size_t)rows, sizeof(double));
	if (!node || !w || !weight) {
		free(node);
		free(w);
		free(weight);
		return cl_status_fail(status, CL_STATUS_MEMORY_LIMIT, "quadrature: out of memory");
	}
	for (int k = 0; k < d; k++)
		for (int i = 0; i < n; i++) {
			double t = (double)i / (n - 1), span = 2.0 * reach * def->sigma[k];
			node[(size_t)k * (size_t)n + (size_t)i] =
				t < 0.5 ? -reach * def->sigma[k] + t * span : reach * def->sigma[k] - (1.0 - t) * span;
		}
	for (int g = 0; g < grid; g++) {
		int index[2] = {g % n, g / n};
		double c = 1.0;
		for (int k = 0; k < d; k++) {
			double x = node[(size_t)k * (size_t)n + (size_t)index[k]], s = def->sigma[k];
			w[(size_t)(g + 1) * (size_t)d + (size_t)k] = x;
			double h = 2.0 * reach * s / (n - 1), trapezoid = index[k] == 0 || index[k] == n - 1 ? 0.5 : 1.0;
			c *= trapezoid * h * exp(-0.5 * (x / s) * (x / s)) / (s * SQRT_2PI);
		}
		weight[g + 1] = c;
	}
	Batch b = batch_of(scene, def, rows, w, true);
	bool ok = batch_run(&b) || batch_failed(&b, status);
	for (int s = 0; ok && s < def->backend_count; s++) {
		ClSmoothQuadrature *q = &results[s];
		*q = (ClSmoothQuadrature){0};
		size_t base = (size_t)s * (size_t)rows;
		double f0 = b.loss[base], f_sum = 0.0, g[2] = {0, 0}, e[2] = {0, 0};
		for (int r = 1; r < rows; r++) {
			double f = b.loss[base + (size_t)r], c = weight[r];
			q->mass += c;
			if (!isfinite(f)) {
				q->failed++;
				continue;
			}
			f_sum += c * f;
			for (int k = 0; k < d; k++) {
				double x = w[(size_t)r * (size_t)d + (size_t)k], s2 = def->sigma[k] * def->sigma[k];
				/* the baseline f(θ) integrates to zero against w and keeps the sum small */
				g[k] += c * (f - f0) * x / s2;
				e[k] += c * b.grad[(base + (size_t)r) * (size_t)d + (size_t)k];
			}
		}
		bool usable = q->failed == 0 && isfinite(f0);
		q->smoothed_loss = usable ? f_sum / q->mass : NAN;
		for (int k = 0; k < 2; k++) {
			q->grad[k] = usable && k < d ? g[k] / q->mass : NAN;
			q->expected_grad[k] = usable && k < d && cl_backend_has_param_adjoint(def->backends[s], &def->params[k])
									  ? e[k] / q->mass
									  : NAN;
		}
	}
	batch_clear(&b);
	free(node);
	free(w);
	free(weight);
	return ok;
}
