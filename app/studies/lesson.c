/* Applying a lesson step: the view's data and every cited number. */
#include "lesson.h"

#include "contacts.h"
#include "numbers.h"

#include <gio/gio.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

int cl_lesson_step_backend_slot(const ClLessonStep *step, int backend)
{
	for (guint i = 0; i < step->backends->len; i++)
		if (g_array_index(step->backends, int, i) == backend)
			return (int)i;
	return -1;
}

int cl_lesson_result_column(const ClLessonResult *result, const char *parameter)
{
	for (guint i = 0; i < result->columns->len; i++)
		if (strcmp(g_ptr_array_index(result->columns, i), parameter) == 0)
			return (int)i;
	return -1;
}

char *cl_lesson_format_number(const char *format, double value)
{
	if (!isfinite(value))
		return g_strdup("n/a");
	char buffer[64];
	g_ascii_formatd(buffer, sizeof buffer, format, value);
	/* "-0.0000" reads as a sign that is not there */
	gboolean zero = TRUE;
	for (const char *c = buffer; *c && *c != 'e'; c++)
		if (*c >= '1' && *c <= '9')
			zero = FALSE;
	const char *text = zero && buffer[0] == '-' ? buffer + 1 : buffer;
	GString *out = g_string_new(NULL);
	for (const char *c = text; *c; c++)
		if (*c == '-')
			g_string_append(out, "\u2212");
		else
			g_string_append_c(out, *c);
	return g_string_free(out, FALSE);
}

/* ------------------------------------------------------------- gradients */

static void add_column(GPtrArray *columns, const char *name)
{
	for (guint i = 0; i < columns->len; i++)
		if (strcmp(g_ptr_array_index(columns, i), name) == 0)
			return;
	g_ptr_array_add(columns, g_strdup(name));
}

/* The gradients view's default columns, as `contactlab gradients`. */
static void add_default_columns(GPtrArray *columns, const ClScene *scene)
{
	static const ClParamTarget targets[] = {CL_PARAM_POSITION, CL_PARAM_VELOCITY, CL_PARAM_CONTROL};
	for (int i = 0; i < scene->ball_count; i++)
		for (size_t t = 0; t < G_N_ELEMENTS(targets); t++)
			for (int axis = 0; axis < 2; axis++) {
				ClParam p = {.target = targets[t], .ball = i, .step = 0, .axis = axis};
				char name[CL_NAME_MAX];
				cl_param_name(scene, &p, name, sizeof name);
				add_column(columns, name);
			}
}

static void compute_gradients(ClLessonResult *r, guint slot, int backend)
{
	const ClScene *scene = r->step->scene;
	guint cols = r->columns->len;
	ClParam *params = g_new0(ClParam, cols + 1);
	for (guint c = 0; c < cols; c++)
		cl_param_parse(scene, g_ptr_array_index(r->columns, c), &params[c], NULL, 0);
	/* the gradient table's row: adjoints (a physical parameter's where the
	 * backend has one) and the backend's own central differences */
	ClGradientRow row;
	cl_gradient_row_compute(&row, scene, backend, params, (int)cols, CL_FD_ALL);
	r->status[slot] = row.status;
	r->loss[slot] = row.loss;
	for (guint c = 0; c < cols; c++) {
		double fd = (int)c < row.count ? row.cells[c].fd : NAN;
		double adjoint = (int)c < row.count ? row.cells[c].adjoint : NAN;
		r->fd[slot * cols + c] = fd;
		/* no adjoint (Nimble's elasticity, …): the central difference stands in */
		r->gradient[slot * cols + c] = !row.complete ? NAN : cl_backend_has_param_adjoint(backend, &params[c]) ? adjoint : fd;
	}
	cl_gradient_row_clear(&row);
	g_free(params);
}

/* ------------------------------------------------------------- learning */

typedef struct {
	ClLessonLearning *learning;
	int x_index, y_index; /* of the heatmap's parameters among the optimized scalars, −1 */
	const _Atomic int *cancel;
} LearningProbe;

static bool learning_progress(int iteration, double loss, const double *parameters, void *user)
{
	(void)loss;
	LearningProbe *probe = user;
	ClLessonLearning *l = probe->learning;
	if (l->path_x) {
		l->path_x[iteration + 1] = parameters[probe->x_index];
		l->path_y[iteration + 1] = parameters[probe->y_index];
	}
	return !(probe->cancel && atomic_load(probe->cancel));
}

static int scalar_index(const ClScene *scene, const ClParam *params, int count, const char *name)
{
	ClParam p;
	if (!cl_param_parse(scene, name, &p, NULL, 0))
		return -1;
	for (int i = 0; i < count; i++)
		if (cl_param_equal(&params[i], &p))
			return i;
	return -1;
}

static double loss_under(const ClScene *scene, int backend, ClStatus *status, char **contacts)
{
	ClRollout *rollout = cl_rollout_new(scene, backend);
	cl_rollout_run(rollout, NULL, NULL, false);
	*status = *cl_rollout_status(rollout);
	double loss = cl_rollout_steps_done(rollout) == scene->steps ? cl_rollout_loss(rollout) : NAN;
	if (contacts)
		*contacts = cl_contacts_text(scene, cl_rollout_events(rollout), cl_rollout_event_count(rollout));
	cl_rollout_free(rollout);
	return loss;
}

static gboolean compute_learning(const ClLessonStep *step, int backend, ClLessonLearning *l, const _Atomic int *cancel)
{
	const ClScene *scene = step->scene;
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, NULL, 0);
	LearningProbe probe = {.learning = l, .x_index = -1, .y_index = -1, .cancel = cancel};
	if (step->view.kind == CL_LESSON_VIEW_HEATMAP) {
		probe.x_index = scalar_index(scene, params, count, step->view.x.parameter);
		probe.y_index = scalar_index(scene, params, count, step->view.y.parameter);
	}
	gboolean f32 = cl_backend_is_float32(scene, backend);
	if (probe.x_index >= 0 && probe.y_index >= 0) {
		l->path_x = g_new0(double, (gsize)scene->optimize.iterations + 1);
		l->path_y = g_new0(double, (gsize)scene->optimize.iterations + 1);
		/* the start as the backend stores it (float32 backends round it) */
		double x0 = cl_param_get(scene, &params[probe.x_index]), y0 = cl_param_get(scene, &params[probe.y_index]);
		l->path_x[0] = f32 ? (double)(float)x0 : x0;
		l->path_y[0] = f32 ? (double)(float)y0 : y0;
	}
	ClOptimizeResult result;
	bool ok = cl_optimize(scene, backend, NULL, learning_progress, &probe, &result);
	gboolean cancelled = cancel && atomic_load(cancel);
	l->iterations = result.iterations_done;
	l->loss = g_memdup2(result.loss, sizeof(double) * (gsize)result.iterations_done);
	l->value_count = result.parameter_count;
	l->values = g_memdup2(result.parameters, sizeof(double) * (gsize)result.parameter_count);
	l->status = result.status;
	l->final_loss = l->exact_loss = NAN;
	if (ok && !cancelled) {
		ClScene *learned = cl_scene_copy(scene);
		cl_optimize_apply(learned, params, count, result.parameters);
		ClStatus status;
		l->final_loss = loss_under(learned, backend, &status, &l->contacts);
		l->exact_loss = loss_under(learned, cl_backend_reference(), &status, NULL);
		cl_scene_free(learned);
	}
	cl_optimize_result_clear(&result);
	free(params);
	return !cancelled;
}

/* ------------------------------------------------------------- views */

static gboolean cancelled(const _Atomic int *cancel)
{
	return cancel && atomic_load(cancel);
}

/* The perturbation view's study, as the window's Run computes it. */
static gboolean compute_perturbation_run(ClLessonResult *r, const _Atomic int *cancel)
{
	const ClLessonStep *step = r->step;
	const ClScene *scene = step->scene;
	r->run = cl_run_data_new(scene, (const int *)step->backends->data, (int)r->backend_count, NULL, 0);
	GError *error = NULL;
	/* the lesson file's check already refused any other parameter */
	if (!cl_run_data_set_perturbation(r->run, scene, step->view.parameter, step->view.delta, &error)) {
		g_ptr_array_add(r->problems, g_strdup_printf("perturbation: %s", error->message));
		g_error_free(error);
		return TRUE;
	}
	for (guint b = 0; b < r->backend_count; b++) {
		if (cancelled(cancel))
			return FALSE;
		cl_run_data_compute_backend(r->run, scene, (int)b);
		cl_run_data_compute_perturbation(r->run, scene, (int)b, cancel);
	}
	if (cancelled(cancel))
		return FALSE;
	cl_run_data_set_ready(r->run);
	return TRUE;
}

static gboolean compute_sweep(ClLessonResult *r, const _Atomic int *cancel)
{
	const ClLessonStep *step = r->step;
	const ClLessonView *v = &step->view;
	ClSweepDef *def = &r->sweep;
	cl_param_parse(step->scene, v->x.parameter, &def->x.param, NULL, 0);
	cl_param_parse(step->scene, v->y.parameter, &def->y.param, NULL, 0);
	def->x.min = v->x.min;
	def->x.max = v->x.max;
	def->x.count = v->x.count;
	def->y.min = v->y.min;
	def->y.max = v->y.max;
	def->y.count = v->y.count;
	def->backends = (const int *)step->backends->data;
	def->backend_count = (int)step->backends->len;
	def->threads = (int)g_get_num_processors();
	def->cancel = cancel;
	r->cells = g_new0(ClSweepCell, cl_sweep_cell_count(def));
	ClStatus status;
	if (!cl_sweep(step->scene, def, r->cells, &status)) {
		if (status.code == CL_STATUS_CANCELLED)
			return FALSE;
		g_ptr_array_add(r->problems, g_strdup_printf("heatmap: %s", status.message));
	}
	return TRUE;
}

/* The step's smoothing for every enabled backend, with the per-sample terms. */
static gboolean compute_smoothing(ClLessonResult *r, const _Atomic int *cancel)
{
	const ClLessonStep *step = r->step;
	const ClLessonSmoothing *sm = &step->smoothing;
	int d = (int)g_strv_length(sm->parameters);
	ClParam *params = g_new0(ClParam, d);
	for (int k = 0; k < d; k++)
		cl_param_parse(step->scene, sm->parameters[k], &params[k], NULL, 0);
	ClSmoothDef def = cl_smooth_default_def();
	def.params = params;
	def.sigma = sm->sigma;
	def.param_count = d;
	def.samples = sm->samples;
	def.seed = sm->seed;
	def.antithetic = sm->antithetic;
	def.gamma = sm->gamma;
	def.keep_terms = TRUE;
	def.backends = (const int *)step->backends->data;
	def.backend_count = (int)step->backends->len;
	def.threads = (int)g_get_num_processors();
	def.cancel = cancel;
	r->smoothing = g_new0(ClSmoothResult, r->backend_count);
	ClStatus status;
	gboolean ok = cl_smooth(step->scene, &def, r->smoothing, &status);
	if (!ok && status.code != CL_STATUS_CANCELLED)
		g_ptr_array_add(r->problems, g_strdup_printf("smoothing: %s", status.message));
	if (!ok) {
		g_free(r->smoothing);
		r->smoothing = NULL;
	}
	g_free(params);
	return ok || status.code != CL_STATUS_CANCELLED;
}

/* A {smooth …} value; the α rule's name goes to *text. */
static double smooth_value(const ClLessonStep *step, const ClSmoothResult *r, const ClCite *cite, char **text)
{
	int k = 0;
	for (char **p = step->smoothing.parameters; *p && strcmp(*p, cite->parameter) != 0; p++)
		k++;
	const ClSmoothGradient *g = cite->index < CL_SMOOTH_CITE_LOSS ? &r->gradient[k] : NULL;
	int d = (int)g_strv_length(step->smoothing.parameters);
	switch ((ClSmoothCite)cite->index) {
	case CL_SMOOTH_CITE_POINT:
		return g->point;
	case CL_SMOOTH_CITE_ZOBG:
		return g->zobg.mean;
	case CL_SMOOTH_CITE_ZOBG_SE:
		return g->zobg.se;
	case CL_SMOOTH_CITE_ZOBG_NOBASELINE:
		return g->zobg_nobaseline.mean;
	case CL_SMOOTH_CITE_ZOBG_NOBASELINE_SE:
		return g->zobg_nobaseline.se;
	case CL_SMOOTH_CITE_FOBG:
		return g->fobg.mean;
	case CL_SMOOTH_CITE_FOBG_SE:
		return g->fobg.se;
	case CL_SMOOTH_CITE_AOBG:
		return g->aobg.mean;
	case CL_SMOOTH_CITE_AOBG_SE:
		return g->aobg.se;
	case CL_SMOOTH_CITE_FOBG_BIAS:
		return g->fobg_bias.mean;
	case CL_SMOOTH_CITE_FOBG_BIAS_SE:
		return g->fobg_bias.se;
	case CL_SMOOTH_CITE_FOBG_MIN:
	case CL_SMOOTH_CITE_FOBG_MAX:
	case CL_SMOOTH_CITE_FOBG_NEGATIVE: {
		double lo = INFINITY, hi = -INFINITY;
		int negative = 0, n = 0;
		for (int t = 0; t < r->terms; t++) {
			double y = r->fobg_values[(gsize)t * (gsize)d + (gsize)k];
			if (!isfinite(y))
				continue;
			n++;
			lo = fmin(lo, y);
			hi = fmax(hi, y);
			negative += y < 0;
		}
		if (!n)
			return NAN;
		return cite->index == CL_SMOOTH_CITE_FOBG_MIN ? lo : cite->index == CL_SMOOTH_CITE_FOBG_MAX ? hi
																								 : 100.0 * negative / n;
	}
	case CL_SMOOTH_CITE_LOSS:
		return r->loss;
	case CL_SMOOTH_CITE_SMOOTHED_LOSS:
		return r->smoothed_loss.mean;
	case CL_SMOOTH_CITE_SMOOTHED_LOSS_SE:
		return r->smoothed_loss.se;
	case CL_SMOOTH_CITE_ALPHA:
		return r->alpha.alpha;
	case CL_SMOOTH_CITE_ALPHA_RULE:
		*text = g_strdup(cl_smooth_alpha_rule_name(r->alpha.rule));
		return NAN;
	case CL_SMOOTH_CITE_EPSILON:
		return r->alpha.epsilon;
	case CL_SMOOTH_CITE_GAMMA:
		return r->alpha.gamma;
	case CL_SMOOTH_CITE_NOT_OK:
		return r->not_ok;
	case CL_SMOOTH_CITE_COUNT:
		break;
	}
	return NAN;
}

/* ------------------------------------------------------------- cites */

static double cite_value(ClLessonResult *r, const ClCite *cite, char **text, char **problem)
{
	const ClLessonStep *step = r->step;
	int slot = cite->backend >= 0 ? cl_lesson_step_backend_slot(step, cite->backend) : -1;
	double value = NAN;
	const ClStatus *status = slot >= 0 ? &r->status[slot] : NULL;
	switch (cite->kind) {
	case CL_CITE_GRADIENT:
	case CL_CITE_FD: {
		int c = cl_lesson_result_column(r, cite->parameter);
		value = (cite->kind == CL_CITE_GRADIENT ? r->gradient : r->fd)[(gsize)slot * r->columns->len + (gsize)c];
		break;
	}
	case CL_CITE_LOSS:
		value = r->loss[slot];
		break;
	case CL_CITE_LEARNING_LOSS:
	case CL_CITE_LEARNING_FINAL:
	case CL_CITE_LEARNING_EXACT:
	case CL_CITE_LEARNING_PARAMETER:
	case CL_CITE_LEARNING_CONTACTS: {
		const ClLessonLearning *l = &r->learning[slot];
		status = &l->status;
		if (cite->kind == CL_CITE_LEARNING_LOSS)
			value = cite->index < l->iterations ? l->loss[cite->index] : NAN;
		else if (cite->kind == CL_CITE_LEARNING_FINAL)
			value = l->final_loss;
		else if (cite->kind == CL_CITE_LEARNING_EXACT)
			value = l->exact_loss;
		else if (cite->kind == CL_CITE_LEARNING_PARAMETER) {
			int count = 0;
			ClParam *params = cl_optimize_expand(step->scene, &step->scene->optimize, &count, NULL, 0);
			int k = scalar_index(step->scene, params, count, cite->parameter);
			value = k >= 0 && l->values && k < l->value_count && isfinite(l->final_loss) ? l->values[k] : NAN;
			free(params);
		} else {
			*text = g_strdup(l->contacts ? l->contacts : "n/a");
			if (!l->contacts)
				*problem = g_strdup_printf("{%s}: the learning run failed", cite->source);
			return NAN;
		}
		break;
	}
	case CL_CITE_CONVERGENCE:
		for (guint k = 0; k < r->convergence->steps->len; k++)
			if (g_array_index(r->convergence->steps, int, k) == cite->index) {
				const ClConvergencePoint *p = cl_convergence_run_point(r->convergence, (guint)slot, k);
				value = p->value;
			}
		break;
	case CL_CITE_OPTIMUM:
		value = cl_two_ball_optimum(step->scene, NULL);
		break;
	case CL_CITE_OPTIMUM_TIME:
		cl_two_ball_optimum(step->scene, &value);
		break;
	case CL_CITE_SMOOTH:
		if (!r->smoothing)
			break;
		status = &r->smoothing[slot].status;
		value = smooth_value(step, &r->smoothing[slot], cite, text);
		if (*text)
			return value;
		break;
	case CL_CITE_COUNT:
		break;
	}
	*text = cl_lesson_format_number(cite->format, value);
	if (!isfinite(value)) {
		char *why = status && status->code != CL_STATUS_OK ? cl_status_text(status) : g_strdup("not computed");
		*problem = g_strdup_printf("{%s}: %s", cite->source, why);
		g_free(why);
	}
	return value;
}

static char *render_text(const ClLessonStep *step, char **cite_texts)
{
	GString *out = g_string_new(NULL);
	gsize at = 0;
	const char *text = step->text;
	for (guint i = 0; i <= step->cites->len; i++) {
		gsize until = i < step->cites->len ? g_array_index(step->cites, ClCite, i).start : strlen(text);
		for (gsize c = at; c < until; c++) {
			g_string_append_c(out, text[c]);
			if ((text[c] == '{' || text[c] == '}') && text[c + 1] == text[c])
				c++; /* "{{" is a literal brace */
		}
		if (i < step->cites->len) {
			g_string_append(out, cite_texts[i]);
			at = g_array_index(step->cites, ClCite, i).end;
		}
	}
	return g_string_free(out, FALSE);
}

/* ------------------------------------------------------------- apply */


ClLessonResult *cl_lesson_step_apply(const ClLessonStep *step, const _Atomic int *cancel)
{
	ClLessonResult *r = g_new0(ClLessonResult, 1);
	r->step = step;
	r->backend_count = step->backends->len;
	r->problems = g_ptr_array_new_with_free_func(g_free);
	r->columns = g_ptr_array_new_with_free_func(g_free);
	if (step->view.kind == CL_LESSON_VIEW_GRADIENTS) {
		if (step->view.parameters)
			for (char **p = step->view.parameters; *p; p++)
				add_column(r->columns, *p);
		else
			add_default_columns(r->columns, step->scene);
	}
	if (step->view.kind == CL_LESSON_VIEW_PERTURBATION || step->view.kind == CL_LESSON_VIEW_CONVERGENCE)
		add_column(r->columns, step->view.parameter);
	for (guint i = 0; i < step->cites->len; i++) {
		const ClCite *cite = &g_array_index(step->cites, ClCite, i);
		if (cite->kind == CL_CITE_GRADIENT || cite->kind == CL_CITE_FD)
			add_column(r->columns, cite->parameter);
	}
	guint n = r->backend_count;
	r->loss = g_new0(double, n);
	r->status = g_new0(ClStatus, n);
	r->gradient = g_new0(double, (gsize)n * r->columns->len + 1);
	r->fd = g_new0(double, (gsize)n * r->columns->len + 1);
	for (guint b = 0; b < n; b++) {
		if (cancelled(cancel))
			goto cancel;
		compute_gradients(r, b, g_array_index(step->backends, int, b));
	}
	const ClLessonView *v = &step->view;
	if (v->kind == CL_LESSON_VIEW_LEARNING || (v->kind == CL_LESSON_VIEW_HEATMAP && v->paths)) {
		r->learning = g_new0(ClLessonLearning, n);
		for (guint b = 0; b < n; b++)
			if (!compute_learning(step, g_array_index(step->backends, int, b), &r->learning[b], cancel))
				goto cancel;
	}
	if (v->kind == CL_LESSON_VIEW_HEATMAP && !compute_sweep(r, cancel))
		goto cancel;
	if (v->kind == CL_LESSON_VIEW_PERTURBATION && !compute_perturbation_run(r, cancel))
		goto cancel;
	if (step->smoothing.parameters && !compute_smoothing(r, cancel))
		goto cancel;
	if (v->kind == CL_LESSON_VIEW_CONVERGENCE) {
		GError *error = NULL;
		r->convergence = cl_convergence_run_new(step->scene, v->parameter, v->steps, step->backends, NULL, NULL,
												cancel, &error);
		if (!r->convergence) {
			gboolean was_cancelled = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
			g_ptr_array_add(r->problems, g_strdup_printf("convergence: %s", error->message));
			g_error_free(error);
			if (was_cancelled)
				goto cancel;
		}
	}
	guint cites = step->cites->len;
	r->cite_values = g_new0(double, cites + 1);
	r->cite_texts = g_new0(char *, cites + 1);
	for (guint i = 0; i < cites; i++) {
		const ClCite *cite = &g_array_index(step->cites, ClCite, i);
		char *problem = NULL;
		if (cite->kind == CL_CITE_CONVERGENCE && !r->convergence) {
			r->cite_values[i] = NAN;
			r->cite_texts[i] = g_strdup("n/a");
			continue;
		}
		r->cite_values[i] = cite_value(r, cite, &r->cite_texts[i], &problem);
		if (problem)
			g_ptr_array_add(r->problems, problem);
	}
	r->text = render_text(step, r->cite_texts);
	return r;
cancel:
	cl_lesson_result_free(r);
	return NULL;
}

void cl_lesson_result_free(ClLessonResult *r)
{
	if (!r)
		return;
	g_free(r->loss);
	g_free(r->status);
	g_ptr_array_free(r->columns, TRUE);
	g_free(r->gradient);
	g_free(r->fd);
	if (r->learning)
		for (guint b = 0; b < r->backend_count; b++) {
			ClLessonLearning *l = &r->learning[b];
			g_free(l->loss);
			g_free(l->values);
			g_free(l->path_x);
			g_free(l->path_y);
			g_free(l->contacts);
		}
	g_free(r->learning);
	cl_convergence_run_free(r->convergence);
	g_free(r->cells);
	cl_run_data_unref(r->run);
	if (r->smoothing)
		for (guint b = 0; b < r->backend_count; b++)
			cl_smooth_result_clear(&r->smoothing[b]);
	g_free(r->smoothing);
	g_free(r->cite_values);
	g_strfreev(r->cite_texts);
	g_free(r->text);
	g_ptr_array_free(r->problems, TRUE);
	g_free(r);
}
