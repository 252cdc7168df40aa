/* Ready-made figures: heatmap small multiples and the paper's Figures 2, 4, 5. */
#include "figures.h"

#include "backend-style.h"
#include "contacts.h"
#include "numbers.h"
#include "scene-figure.h"
#include "scene-file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *param_label(const ClScene *scene, const ClParam *param)
{
	char name[CL_NAME_MAX];
	cl_param_name(scene, param, name, sizeof name);
	return g_markup_escape_text(name, -1);
}

/* ---------------------------------------------------------------- heatmap */

static bool measured_against_exact(ClSweepQuantity q)
{
	return q == CL_SWEEP_ANGLE_ERROR || q == CL_SWEEP_SIGN_AGREEMENT;
}

static bool slot_shown(ClSweepQuantity q, int exact_slot, int slot)
{
	return !(measured_against_exact(q) && slot == exact_slot);
}

static double cell_quantity(const ClSweepDef *def, const ClSweepCell *cells, ClSweepQuantity q, int exact_slot,
							int slot, int ix, int iy)
{
	const ClSweepCell *exact = exact_slot >= 0 ? &cells[cl_sweep_index(def, exact_slot, ix, iy)] : NULL;
	return cl_sweep_quantity(q, &cells[cl_sweep_index(def, slot, ix, iy)], exact);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of the finite values (NAN when there are none). */
static double quantile(GArray *values, double q)
{
	if (values->len == 0)
		return NAN;
	g_array_sort(values, compare_doubles);
	guint i = (guint)lround(q * (values->len - 1));
	return g_array_index(values, double, MIN(i, values->len - 1));
}

static void axis_edges(const ClSweepAxis *axis, double *lo, double *hi)
{
	if (axis->count <= 1) {
		double half = fmax(0.5, 0.05 * fabs(axis->min));
		*lo = axis->min - half;
		*hi = axis->min + half;
		return;
	}
	double half = 0.5 * (axis->max - axis->min) / (axis->count - 1);
	*lo = fmin(axis->min, axis->max) - fabs(half);
	*hi = fmax(axis->min, axis->max) + fabs(half);
}

ClPlotFigure *cl_figure_heatmap(const ClScene *scene, const ClSweepDef *def, const ClSweepCell *cells,
								ClSweepQuantity quantity, int exact_slot)
{
	int shown = 0;
	for (int b = 0; b < def->backend_count; b++)
		shown += slot_shown(quantity, exact_slot, b);
	shown = MAX(shown, 1);
	int cols = shown <= 3 ? shown : shown <= 4 ? 2 : shown <= 6 ? 3 : shown <= 8 ? 4 : 5;
	int rows = (shown + cols - 1) / cols;
	ClPlotFigure *f = cl_plot_figure_new(rows, cols);
	cl_plot_figure_share_axes(f, true, true);
	int nx = def->x.count, ny = def->y.count;
	double x_lo, x_hi, y_lo, y_hi;
	axis_edges(&def->x, &x_lo, &x_hi);
	axis_edges(&def->y, &y_lo, &y_hi);
	/* cells run from min to max; a reversed axis is drawn increasing */
	bool flip_x = def->x.max < def->x.min, flip_y = def->y.max < def->y.min;
	char *x_name = param_label(scene, &def->x.param), *y_name = param_label(scene, &def->y.param);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(double));
	double *values = g_new(double, (gsize)nx * (gsize)ny);
	int panel = 0;
	for (int b = 0; b < def->backend_count; b++) {
		if (!slot_shown(quantity, exact_slot, b))
			continue;
		ClPlotPanel *p = cl_plot_figure_panel(f, panel / cols, panel % cols);
		panel++;
		for (int iy = 0; iy < ny; iy++)
			for (int ix = 0; ix < nx; ix++) {
				double v = measured_against_exact(quantity) && exact_slot < 0
							   ? NAN
							   : cell_quantity(def, cells, quantity, exact_slot, b, ix, iy);
				values[(flip_y ? ny - 1 - iy : iy) * nx + (flip_x ? nx - 1 - ix : ix)] = v;
				if (isfinite(v))
					g_array_append_val(all, v);
			}
		cl_plot_panel_add_heatmap(p, nx, ny, values, x_lo, x_hi, y_lo, y_hi);
		if (quantity == CL_SWEEP_LOSS || quantity == CL_SWEEP_SMOOTHED_LOSS) {
			/* the descent direction on a coarse grid: where gradient descent would go (on the
			 * smoothed loss: along ZoBG) */
			int step_x = MAX(1, (nx + 11) / 12), step_y = MAX(1, (ny + 11) / 12);
			GArray *qx = g_array_new(FALSE, FALSE, sizeof(double)), *qy = g_array_new(FALSE, FALSE, sizeof(double));
			GArray *qu = g_array_new(FALSE, FALSE, sizeof(double)), *qv = g_array_new(FALSE, FALSE, sizeof(double));
			for (int iy = step_y / 2; iy < ny; iy += step_y)
				for (int ix = step_x / 2; ix < nx; ix += step_x) {
					const ClSweepCell *c = &cells[cl_sweep_index(def, b, ix, iy)];
					double x = cl_sweep_axis_value(&def->x, ix), y = cl_sweep_axis_value(&def->y, iy);
					bool smoothed = quantity == CL_SWEEP_SMOOTHED_LOSS;
					double u = smoothed ? -c->zobg_x : -c->grad_x, v = smoothed ? -c->zobg_y : -c->grad_y;
					g_array_append_val(qx, x);
					g_array_append_val(qy, y);
					g_array_append_val(qu, u);
					g_array_append_val(qv, v);
				}
			ClPlotQuiver *q = cl_plot_panel_add_quiver(p, (int)qx->len, (double *)qx->data, (double *)qy->data,
													   (double *)qu->data, (double *)qv->data);
			cl_plot_quiver_set_normalize(q, true);
			cl_plot_quiver_set_color(q, (ClPlotColor){1, 1, 1, 0.85});
			g_array_free(qx, TRUE);
			g_array_free(qy, TRUE);
			g_array_free(qu, TRUE);
			g_array_free(qv, TRUE);
		}
		if (cl_param_fits(scene, &def->x.param) && cl_param_fits(scene, &def->y.param)) {
			ClPlotSeries *m = cl_plot_panel_add_marker(p, cl_param_get(scene, &def->x.param),
													   cl_param_get(scene, &def->y.param), CL_PLOT_MARKER_STAR, NULL);
			cl_plot_series_set_color(m, (ClPlotColor){1, 1, 1, 1});
		}
		cl_plot_panel_set_title(p, cl_backend_info(def->backends[b])->id);
		cl_plot_panel_set_group(p, cl_backend_info(def->backends[b])->id); /* hidden with its backend */
		cl_plot_panel_set_x_axis(p, x_name, CL_PLOT_SCALE_LINEAR);
		cl_plot_panel_set_y_axis(p, y_name, CL_PLOT_SCALE_LINEAR);
	}
	for (; panel < rows * cols; panel++)
		cl_plot_panel_set_visible(cl_plot_figure_panel(f, panel / cols, panel % cols), false);

	/* one colour scale for every panel, robust to the spikes at contact
	 * boundaries: they saturate instead of washing out the rest */
	char *label = NULL;
	bool along_x = quantity == CL_SWEEP_GRAD_X || quantity == CL_SWEEP_ZOBG_X || quantity == CL_SWEEP_FOBG_X ||
				   quantity == CL_SWEEP_FOBG_BIAS_X;
	switch (quantity) {
	case CL_SWEEP_LOSS:
	case CL_SWEEP_SMOOTHED_LOSS: {
		double lo = quantile(all, 0.0), hi = quantile(all, 0.99);
		bool log_scale = lo > 0 && hi / lo > 100;
		cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_VIRIDIS, lo, hi,
									   log_scale ? CL_PLOT_SCALE_LOG : CL_PLOT_SCALE_LINEAR,
									   quantity == CL_SWEEP_LOSS ? "loss" : "smoothed loss F<sub>σ</sub>");
		break;
	}
	case CL_SWEEP_GRAD_X:
	case CL_SWEEP_GRAD_Y:
	case CL_SWEEP_ZOBG_X:
	case CL_SWEEP_ZOBG_Y:
	case CL_SWEEP_FOBG_X:
	case CL_SWEEP_FOBG_Y:
	case CL_SWEEP_FOBG_BIAS_X:
	case CL_SWEEP_FOBG_BIAS_Y: {
		for (guint i = 0; i < all->len; i++)
			g_array_index(all, double, i) = fabs(g_array_index(all, double, i));
		double m = quantile(all, 0.98);
		const char *name = along_x ? x_name : y_name;
		if (quantity == CL_SWEEP_GRAD_X || quantity == CL_SWEEP_GRAD_Y)
			label = g_strdup_printf("∂L/∂%s", name);
		else if (quantity == CL_SWEEP_FOBG_BIAS_X || quantity == CL_SWEEP_FOBG_BIAS_Y)
			label = g_strdup_printf("FoBG − ∂F<sub>σ</sub>/∂%s (exact's ZoBG)", name);
		else
			label = g_strdup_printf("%s ∂F<sub>σ</sub>/∂%s",
									quantity == CL_SWEEP_ZOBG_X || quantity == CL_SWEEP_ZOBG_Y ? "ZoBG" : "FoBG", name);
		cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_COOLWARM, isfinite(m) && m > 0 ? -m : NAN,
									   isfinite(m) && m > 0 ? m : NAN, CL_PLOT_SCALE_LINEAR, label);
		break;
	}
	case CL_SWEEP_ANGLE_ERROR:
		cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_VIRIDIS, 0, 180, CL_PLOT_SCALE_LINEAR,
									   "angle error vs exact (°)");
		break;
	case CL_SWEEP_SIGN_AGREEMENT:
	default:
		cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_VIRIDIS, 0, 1, CL_PLOT_SCALE_LINEAR,
									   "sign agreement with exact (0.5: one of the two signs wrong)");
		break;
	}
	char *scene_name = g_markup_escape_text(scene->name, -1);
	char *title = g_strdup_printf("%s: %s", scene_name, cl_sweep_quantity_name(quantity));
	cl_plot_figure_set_title(f, title);
	g_free(title);
	g_free(scene_name);
	g_free(label);
	g_free(values);
	g_array_free(all, TRUE);
	g_free(x_name);
	g_free(y_name);
	return f;
}

void cl_figure_heatmap_size(const ClPlotFigure *figure, double *width, double *height)
{
	int rows = cl_plot_figure_rows(figure), cols = cl_plot_figure_cols(figure);
	*width = MAX(CL_FIGURE_WIDTH, 150.0 * cols + 110.0);
	*height = MAX(0.6 * CL_FIGURE_WIDTH, 150.0 * rows + 70.0);
}

GString *cl_figure_heatmap_csv(const ClSweepDef *def, const ClSweepCell *cells, ClSweepQuantity quantity,
							   int exact_slot)
{
	GString *out = g_string_new("x,y,backend,quantity,value\n");
	const char *name = cl_sweep_quantity_name(quantity);
	/* shortest round-trip text is costly: each axis value once */
	char **xs = g_new(char *, (gsize)def->x.count), **ys = g_new(char *, (gsize)def->y.count);
	for (int ix = 0; ix < def->x.count; ix++)
		xs[ix] = g_strdup(cl_format_number(cl_sweep_axis_value(&def->x, ix)).text);
	for (int iy = 0; iy < def->y.count; iy++)
		ys[iy] = g_strdup(cl_format_number(cl_sweep_axis_value(&def->y, iy)).text);
	for (int b = 0; b < def->backend_count; b++) {
		if (!slot_shown(quantity, exact_slot, b))
			continue;
		for (int iy = 0; iy < def->y.count; iy++)
			for (int ix = 0; ix < def->x.count; ix++) {
				double v = measured_against_exact(quantity) && exact_slot < 0
							   ? NAN
							   : cell_quantity(def, cells, quantity, exact_slot, b, ix, iy);
				g_string_append_printf(out, "%s,%s,%s,%s,%s\n", xs[ix], ys[iy], cl_backend_info(def->backends[b])->id,
									   name, cl_format_number(v).text);
			}
	}
	for (int ix = 0; ix < def->x.count; ix++)
		g_free(xs[ix]);
	for (int iy = 0; iy < def->y.count; iy++)
		g_free(ys[iy]);
	g_free(xs);
	g_free(ys);
	return out;
}

/* ------------------------------------------------------- learning curves */

typedef struct Recorder {
	ClLearningCurve *curve;
	int tracked_index; /* among the optimized parameters, −1: none */
} Recorder;

static bool record(int iteration, double loss, const double *parameters, void *user)
{
	Recorder *rec = user;
	(void)loss;
	/* parameters are after this iteration's update: they belong to the next loss */
	if (rec->curve->tracked)
		rec->curve->tracked[iteration + 1] = parameters[rec->tracked_index];
	return true;
}

void cl_figure_learn(const ClScene *scene, int backend, const ClParam *tracked, ClLearningCurve *curve)
{
	memset(curve, 0, sizeof *curve);
	curve->backend = backend;
	Recorder rec = {curve, -1};
	int count = 0;
	char message[CL_MESSAGE_MAX];
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, message, sizeof message);
	for (int k = 0; tracked && k < count; k++)
		if (cl_param_equal(&params[k], tracked))
			rec.tracked_index = k;
	free(params);
	if (rec.tracked_index >= 0) {
		curve->tracked = g_new0(double, (gsize)scene->optimize.iterations + 2);
		double x = cl_param_get(scene, tracked);
		/* a float32 backend starts from the rounded value, as it stores it */
		bool f32 = cl_backend_is_float32(scene, backend);
		curve->tracked[0] = f32 ? (double)(float)x : x;
	}
	ClOptimizeResult result;
	cl_optimize(scene, backend, NULL, record, &rec, &result);
	curve->iterations = result.iterations_done;
	curve->loss = g_memdup2(result.loss, sizeof(double) * (gsize)MAX(result.iterations_done, 1));
	curve->value_count = result.parameter_count;
	curve->values = g_memdup2(result.parameters, sizeof(double) * (gsize)MAX(result.parameter_count, 1));
	curve->status = result.status;
	cl_optimize_result_clear(&result);
}

void cl_learning_curve_clear(ClLearningCurve *curve)
{
	g_free(curve->loss);
	g_free(curve->tracked);
	g_free(curve->values);
	memset(curve, 0, sizeof *curve);
}

static double *iteration_axis(int count)
{
	double *x = g_new(double, (gsize)MAX(count, 1));
	for (int i = 0; i < count; i++)
		x[i] = i;
	return x;
}

static void add_learning_curves(ClPlotPanel *p, const ClLearningCurve *curves, int count, bool tracked)
{
	for (int c = 0; c < count; c++) {
		const ClLearningCurve *curve = &curves[c];
		if (curve->iterations == 0 || (tracked && !curve->tracked))
			continue;
		double *x = iteration_axis(curve->iterations);
		ClPlotSeries *s = cl_plot_panel_add_line(p, cl_backend_info(curve->backend)->id, x,
												 tracked ? curve->tracked : curve->loss, curve->iterations);
		cl_backend_style_series(s, curve->backend, false);
		g_free(x);
	}
}

/* ---------------------------------------------------------------- figure 2 */

ClScene *cl_figure_learned_scene(const ClScene *scene, const double *values, int value_count)
{
	ClScene *copy = cl_scene_copy(scene);
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, NULL, 0);
	if (params && count == value_count)
		cl_optimize_apply(copy, params, count, values);
	free(params);
	return copy;
}

ClScene *cl_figure_start_scene(const ClScene *scene)
{
	ClScene *copy = cl_scene_copy(scene);
	for (int i = 0; i < copy->ball_count; i++)
		copy->balls[i].velocity = (ClVec2){0, 0};
	return copy;
}

ClRunData *cl_figure_runs(const ClScene *scene, const int *backends, const double *const *values,
						  const int *value_counts, int count)
{
	ClRunData *data = cl_run_data_new(scene, backends, count, NULL, 0);
	for (int k = 0; k < count; k++) {
		ClScene *start = values ? cl_figure_learned_scene(scene, values[k], value_counts[k]) : cl_scene_copy(scene);
		cl_run_data_compute_backend(data, start, k);
		cl_scene_free(start);
	}
	cl_run_data_set_ready(data);
	return data;
}

/* The runs of curves[members[k]]'s backends from scene, or from their learned starts. */
static ClRunData *curve_runs(const ClScene *scene, const ClLearningCurve *curves, GArray *members, bool learned)
{
	int n = (int)members->len, *backends = g_new(int, n + 1), *counts = g_new(int, n + 1);
	const double **values = g_new(const double *, n + 1);
	for (int k = 0; k < n; k++) {
		const ClLearningCurve *curve = &curves[g_array_index(members, int, k)];
		backends[k] = curve->backend;
		values[k] = curve->values;
		counts[k] = curve->value_count;
	}
	ClRunData *data = cl_figure_runs(scene, backends, learned ? values : NULL, counts, n);
	g_free(backends);
	g_free(values);
	g_free(counts);
	return data;
}

ClPlotFigure *cl_figure_task2(const ClScene *scene, const ClLearningCurve *curves, int count)
{
	ClPlotFigure *f = cl_plot_figure_new(2, 3);
	cl_plot_figure_set_title(f, "Task 2: trajectories and learning curves");
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	cl_plot_figure_set_row_weight(f, 0, 0.6); /* the scenes are wide and flat */
	static const char *const titles[] = {"(a) initial trajectories", "(b) optimized: ground, then wall",
										 "(c) optimized: ground only"};
	for (int c = 0; c < 3; c++)
		cl_plot_panel_set_title(cl_plot_figure_panel(f, 0, c), titles[c]);
	/* (a) every backend from the preset; (b), (c) each from its own learned start, by the mode it found */
	GArray *all = g_array_new(FALSE, FALSE, sizeof(int)), *optimized = g_array_new(FALSE, FALSE, sizeof(int));
	GArray *modes[2] = {g_array_new(FALSE, FALSE, sizeof(int)), g_array_new(FALSE, FALSE, sizeof(int))};
	for (int c = 0; c < count; c++) {
		g_array_append_val(all, c);
		if (curves[c].iterations > 0)
			g_array_append_val(optimized, c);
	}
	g_autoptr(ClRunData) initial = curve_runs(scene, curves, all, false);
	g_autoptr(ClRunData) learned = curve_runs(scene, curves, optimized, true);
	for (guint k = 0; k < optimized->len; k++) {
		const ClRunBackend *run = &learned->backends[k];
		bool both = cl_contacts_walls(scene, run->events, run->event_count) == scene->wall_count;
		g_array_append_val(modes[both ? 0 : 1], g_array_index(optimized, int, k));
	}
	cl_scene_panel_set(cl_plot_figure_panel(f, 0, 0), scene, initial, FALSE);
	ClScene *shown = cl_figure_start_scene(scene);
	for (int m = 0; m < 2; m++) {
		g_autoptr(ClRunData) mode = curve_runs(scene, curves, modes[m], true);
		cl_scene_panel_set(cl_plot_figure_panel(f, 0, m + 1), shown, mode, FALSE);
		g_array_free(modes[m], TRUE);
	}
	cl_scene_free(shown);
	g_array_free(all, TRUE);
	g_array_free(optimized, TRUE);

	ClPlotPanel *loss = cl_plot_figure_panel(f, 1, 0), *vx = cl_plot_figure_panel(f, 1, 1);
	ClPlotPanel *final = cl_plot_figure_panel(f, 1, 2);
	cl_plot_panel_set_title(loss, "(d) loss");
	cl_plot_panel_set_x_axis(loss, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(loss, "loss", CL_PLOT_SCALE_LOG);
	add_learning_curves(loss, curves, count, false);
	cl_plot_panel_set_title(vx, "(e) initial horizontal velocity");
	cl_plot_panel_set_x_axis(vx, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(vx, "v<sub>x,0</sub> (m/s)", CL_PLOT_SCALE_LINEAR);
	add_learning_curves(vx, curves, count, true);
	cl_plot_panel_set_title(final, "(f) optimized v<sub>0</sub>");
	cl_plot_panel_set_x_axis(final, "v<sub>x,0</sub> (m/s)", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(final, "v<sub>y,0</sub> (m/s)", CL_PLOT_SCALE_LINEAR);
	ClPlotSeries *start = cl_plot_panel_add_marker(final, scene->balls[0].velocity.x, scene->balls[0].velocity.y,
												   CL_PLOT_MARKER_SQUARE, "initial v<sub>0</sub>");
	cl_plot_series_set_color(start, (ClPlotColor){0.45, 0.45, 0.45, 1});
	/* the optimized values of ball 0's initial velocity */
	int expanded = 0;
	char message[CL_MESSAGE_MAX];
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &expanded, message, sizeof message);
	for (int c = 0; c < count; c++) {
		double v[2] = {NAN, NAN};
		for (int k = 0; params && k < expanded && k < curves[c].value_count; k++)
			if (params[k].target == CL_PARAM_VELOCITY && params[k].ball == 0)
				v[params[k].axis] = curves[c].values[k];
		if (curves[c].iterations == 0 || !isfinite(v[0]) || !isfinite(v[1]))
			continue;
		ClPlotSeries *m = cl_plot_panel_add_marker(final, v[0], v[1], CL_PLOT_MARKER_CIRCLE, NULL);
		cl_plot_series_set_color(m, cl_backend_plot_color(curves[c].backend));
	}
	free(params);
	for (int c = 0; c < 3; c++)
		cl_plot_panel_set_legend(cl_plot_figure_panel(f, 1, c), CL_PLOT_LEGEND_NONE);
	return f;
}

/* ---------------------------------------------------------------- figure 4 */

static char *optimum_label(double value)
{
	return g_strdup_printf("analytic optimum (%.4f)", value);
}

/* Loss over iterations and, where the scene has one, the analytic optimum. */
static void add_loss_panel(ClPlotPanel *p, const ClScene *scene, const ClLearningCurve *curves, int count,
						   ClPlotScale scale)
{
	cl_plot_panel_set_x_axis(p, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(p, "loss", scale);
	add_learning_curves(p, curves, count, false);
	double optimum = cl_two_ball_optimum(scene, NULL);
	if (isfinite(optimum) && (scale != CL_PLOT_SCALE_LOG || optimum > 0)) {
		char *label = optimum_label(optimum);
		ClPlotSeries *h = cl_plot_panel_add_hline(p, optimum, label);
		cl_plot_series_set_color(h, (ClPlotColor){0.35, 0.35, 0.35, 1});
		g_free(label);
	}
}

ClPlotFigure *cl_figure_learning(const ClScene *scene, const ClLearningCurve *curves, int count)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	char *name = g_markup_escape_text(scene->name, -1);
	char *title = g_strdup_printf("%s: learning curve%s", name, count == 1 ? "" : "s");
	cl_plot_figure_set_title(f, title);
	g_free(title);
	g_free(name);
	/* a loss spanning decades reads on a log axis, which only positive values allow */
	bool positive = true;
	for (int c = 0; c < count; c++)
		for (int i = 0; i < curves[c].iterations; i++)
			positive &= curves[c].loss[i] > 0;
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	add_loss_panel(p, scene, curves, count, positive ? CL_PLOT_SCALE_LOG : CL_PLOT_SCALE_LINEAR);
	return f;
}

/* The x component of the first controlled ball's optimized controls. */
static bool control_profile(const ClScene *scene, const ClLearningCurve *curve, double *ux, int *ball)
{
	int count = 0;
	char message[CL_MESSAGE_MAX];
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, message, sizeof message);
	bool any = false;
	*ball = -1;
	for (int k = 0; params && k < count && k < curve->value_count; k++)
		if (params[k].target == CL_PARAM_CONTROL && params[k].axis == 0 && (*ball < 0 || params[k].ball == *ball)) {
			*ball = params[k].ball;
			ux[params[k].step] = curve->values[k];
			any = true;
		}
	free(params);
	return any;
}

ClPlotFigure *cl_figure_task3(const ClScene *scene, const ClLearningCurve *curves, int count)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	cl_plot_figure_set_title(f, "Task 3: learning curves and learned controls");
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_RIGHT);
	ClPlotPanel *loss = cl_plot_figure_panel(f, 0, 0), *control = cl_plot_figure_panel(f, 0, 1);
	cl_plot_panel_set_title(loss, "learning curves");
	add_loss_panel(loss, scene, curves, count, CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_title(control, "learned control profiles");
	cl_plot_panel_set_x_axis(control, "time (s)", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(control, "u<sub>x</sub> (N)", CL_PLOT_SCALE_LINEAR);
	int steps = scene->steps;
	double dt = cl_scene_dt(scene);
	double *t = g_new(double, (gsize)steps), *ux = g_new(double, (gsize)steps);
	for (int n = 0; n < steps; n++)
		t[n] = (n + 0.5) * dt;
	for (int c = 0; c < count; c++) {
		int ball;
		for (int n = 0; n < steps; n++)
			ux[n] = NAN;
		if (curves[c].iterations == 0 || !control_profile(scene, &curves[c], ux, &ball))
			continue;
		ClPlotSeries *s = cl_plot_panel_add_line(control, NULL, t, ux, steps);
		cl_backend_style_series(s, curves[c].backend, false);
	}
	double *u = g_new(double, 2 * (gsize)steps);
	if (cl_two_ball_optimal_control(scene, u)) {
		for (int n = 0; n < steps; n++)
			ux[n] = u[2 * n];
		ClPlotSeries *s = cl_plot_panel_add_line(control, "analytic optimal control", t, ux, steps);
		cl_plot_series_set_color(s, (ClPlotColor){0, 0, 0, 1});
		cl_plot_series_set_width(s, 2.2);
		cl_plot_series_set_dash(s, CL_PLOT_DASH_DOTTED);
	}
	g_free(u);
	g_free(t);
	g_free(ux);
	return f;
}

/* ---------------------------------------------------------------- figure 5 */

ClPlotFigure *cl_figure_parameter_study(const ClScene *scene, const char *parameter, const double *values,
										const ClLearningCurve *curves, int count)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	const char *id = count > 0 ? cl_backend_info(curves[0].backend)->id : "";
	char *title = g_strdup_printf("%s: %s learning curves by %s", scene->name, id, parameter);
	char *escaped = g_markup_escape_text(title, -1);
	cl_plot_figure_set_title(f, escaped);
	g_free(escaped);
	g_free(title);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_x_axis(p, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(p, "loss", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_legend(p, CL_PLOT_LEGEND_UPPER_RIGHT);
	for (int c = 0; c < count; c++) {
		if (curves[c].iterations == 0)
			continue;
		char value[96];
		ClPlotTicks decade = {.step = 1};
		if (values[c] > 0 && fabs(log10(values[c]) - round(log10(values[c]))) < 1e-12)
			cl_plot_format_tick(values[c], &decade, CL_PLOT_SCALE_LOG, value, sizeof value);
		else
			g_strlcpy(value, cl_format_number(values[c]).text, sizeof value);
		char *label = g_strdup_printf("%s = %s", parameter, value);
		double *x = iteration_axis(curves[c].iterations);
		ClPlotSeries *s = cl_plot_panel_add_line(p, label, x, curves[c].loss, curves[c].iterations);
		cl_plot_series_set_width(s, 1.4);
		g_free(label);
		g_free(x);
	}
	double optimum = cl_two_ball_optimum(scene, NULL);
	if (isfinite(optimum)) {
		char *label = optimum_label(optimum);
		ClPlotSeries *h = cl_plot_panel_add_hline(p, optimum, label);
		cl_plot_series_set_color(h, (ClPlotColor){0.35, 0.35, 0.35, 1});
		g_free(label);
	}
	return f;
}

/* ------------------------------------------------------------- the paper */

typedef struct LearnJob {
	const ClScene *scene;
	int backend;
	const ClParam *tracked;
	ClLearningCurve *curve;
} LearnJob;

static void learn_job(gpointer data, gpointer user)
{
	(void)user;
	LearnJob *job = data;
	cl_figure_learn(job->scene, job->backend, job->tracked, job->curve);
}

/* Learns jobs in parallel, one backend (or parameter value) per job. */
static void learn_all(LearnJob *jobs, int count)
{
	GThreadPool *pool = g_thread_pool_new(learn_job, NULL, (int)MAX(1u, g_get_num_processors()), TRUE, NULL);
	for (int i = 0; i < count; i++)
		g_thread_pool_push(pool, &jobs[i], NULL);
	g_thread_pool_free(pool, FALSE, TRUE);
}

/* Backends that can run the scene at all (placeholders report unsupported). */
static GArray *runnable_backends(const ClScene *scene)
{
	GArray *backends = g_array_new(FALSE, FALSE, sizeof(int));
	for (int b = 0; b < cl_backend_count(); b++) {
		ClRollout *r = cl_rollout_new(scene, b);
		cl_rollout_run(r, NULL, NULL, false);
		if (cl_rollout_status(r)->code != CL_STATUS_UNSUPPORTED)
			g_array_append_val(backends, b);
		cl_rollout_free(r);
	}
	return backends;
}

ClPlotFigure *cl_figure_paper(int number, GError **error)
{
	if (number != 2 && number != 4 && number != 5) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"figure %d: the paper's ready-made figures are 2, 4 and 5", number);
		return NULL;
	}
	ClScene *scene = cl_preset_load(number == 2 ? "task2-ground-wall" : "task3-two-balls", error);
	if (!scene)
		return NULL;
	ClPlotFigure *figure = NULL;
	if (number == 5) {
		static const double stiffness[] = {1e2, 1e3, 1e4, 1e5};
		int backend = cl_backend_find("compliant-warp");
		enum { COUNT = G_N_ELEMENTS(stiffness) };
		ClScene *scenes[COUNT];
		ClLearningCurve curves[COUNT];
		LearnJob jobs[COUNT];
		for (int i = 0; i < COUNT; i++) {
			scenes[i] = cl_scene_copy(scene);
			char message[CL_MESSAGE_MAX];
			if (!cl_scene_set_backend_param(scenes[i], backend, "stiffness", stiffness[i], message, sizeof message))
				g_warning("%s", message);
			jobs[i] = (LearnJob){scenes[i], backend, NULL, &curves[i]};
		}
		learn_all(jobs, COUNT);
		figure = cl_figure_parameter_study(scene, "k<sub>n</sub>", stiffness, curves, COUNT);
		cl_plot_figure_set_title(figure, "Task 3: compliant-warp learning curves by spring stiffness k<sub>n</sub>");
		for (int i = 0; i < COUNT; i++) {
			cl_learning_curve_clear(&curves[i]);
			cl_scene_free(scenes[i]);
		}
	} else {
		GArray *backends = runnable_backends(scene);
		int count = (int)backends->len;
		ClLearningCurve *curves = g_new0(ClLearningCurve, (gsize)MAX(count, 1));
		LearnJob *jobs = g_new0(LearnJob, (gsize)MAX(count, 1));
		ClParam vx;
		char message[CL_MESSAGE_MAX];
		bool have_vx = number == 2 && cl_param_parse(scene, "ball.velocity.x", &vx, message, sizeof message);
		for (int i = 0; i < count; i++)
			jobs[i] = (LearnJob){scene, g_array_index(backends, int, i), have_vx ? &vx : NULL, &curves[i]};
		learn_all(jobs, count);
		figure = number == 2 ? cl_figure_task2(scene, curves, count) : cl_figure_task3(scene, curves, count);
		for (int i = 0; i < count; i++)
			cl_learning_curve_clear(&curves[i]);
		g_free(curves);
		g_free(jobs);
		g_array_free(backends, TRUE);
	}
	cl_scene_free(scene);
	return figure;
}

const char *cl_figure_heatmap_key(ClSweepQuantity quantity)
{
	switch (quantity) {
	case CL_SWEEP_LOSS:
		return "Colour: the loss L (dark low, yellow high). Arrows: −∇L, the way gradient descent would step from "
			   "each point, by that panel's own gradient. ☆: the scene's current values.";
	case CL_SWEEP_GRAD_X:
	case CL_SWEEP_GRAD_Y:
		return "Colour: the derivative (blue negative, grey zero, red positive). ☆: the scene's current values.";
	case CL_SWEEP_ANGLE_ERROR:
		return "Colour: degrees between the panel's gradient and exact's (0° points the same way, 180° opposite). "
			   "☆: the scene's current values.";
	case CL_SWEEP_SIGN_AGREEMENT:
		return "Colour: 1 when both components of the gradient have exact's sign, 0.5 when one of the two has the "
			   "wrong sign, 0 when both do. ☆: the scene's current values.";
	case CL_SWEEP_SMOOTHED_LOSS:
		return "Colour: the smoothed loss F_σ, the mean loss over the random samples around each point. ☆: the "
			   "scene's current values.";
	case CL_SWEEP_FOBG_BIAS_X:
	case CL_SWEEP_FOBG_BIAS_Y:
		return "Colour: the first-order estimate minus exact's zeroth-order one (grey: none), how far the mean "
			   "gradient is from the smoothed derivative. ☆: the scene's current values.";
	default:
		return "Colour: an estimate of the smoothed derivative (blue negative, grey zero, red positive). ☆: the "
			   "scene's current values.";
	}
}
