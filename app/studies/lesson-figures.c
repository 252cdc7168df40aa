/* Figures and CSV of the convergence view and of lesson steps. */
#include "lesson-figures.h"

#include "backend-style.h"
#include "figures.h"
#include "numbers.h"
#include "perturbation-figure.h"
#include "scene-figure.h"

#include <math.h>
#include <string.h>

static gboolean in_list(const GArray *backends, int backend)
{
	for (guint i = 0; backends && i < backends->len; i++)
		if (g_array_index(backends, int, i) == backend)
			return TRUE;
	return FALSE;
}

/* The backend's style; with highlights, the highlighted ones wider and the
 * others lighter (exact, the reference, always stays as it is). */
static void style(ClPlotSeries *series, int backend, const GArray *highlight)
{
	cl_backend_style_series(series, backend, false);
	if (!highlight || highlight->len == 0 || cl_backend_is_reference(backend))
		return;
	if (in_list(highlight, backend)) {
		cl_plot_series_set_width(series, 2.6);
	} else {
		ClPlotColor c = cl_backend_plot_color(backend);
		c.a = 0.4;
		cl_plot_series_set_color(series, c);
	}
}

static GArray *highlighted_backends(const ClLessonStep *step)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
	for (guint i = 0; i < step->highlights->len; i++) {
		int b = g_array_index(step->highlights, ClLessonHighlight, i).backend;
		if (!in_list(out, b))
			g_array_append_val(out, b);
	}
	return out;
}

static char *markup(const char *text)
{
	return g_markup_escape_text(text, -1);
}

/* ------------------------------------------------------------ convergence */

ClPlotFigure *cl_figure_convergence(const ClConvergenceRun *run, const GArray *highlight)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	char *name = markup(run->parameter);
	char *label = g_strdup_printf("dL / d %s", name);
	cl_plot_panel_set_x_axis(p, "steps N (dt = T / N)", CL_PLOT_SCALE_LOG);
	cl_plot_panel_set_y_axis(p, label, CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_grid(p, true);
	cl_plot_panel_set_legend(p, CL_PLOT_LEGEND_AUTO);
	guint n = run->steps->len;
	double *x = g_new(double, n), *y = g_new(double, n);
	for (guint k = 0; k < n; k++)
		x[k] = g_array_index(run->steps, int, k);
	for (guint b = 0; b < run->backends->len; b++) {
		int backend = g_array_index(run->backends, int, b);
		for (guint k = 0; k < n; k++)
			y[k] = cl_convergence_run_point(run, b, k)->value;
		ClPlotSeries *s = cl_plot_panel_add_line(p, cl_backend_info(backend)->id, x, y, (int)n);
		style(s, backend, highlight);
		/* exact is the reference line; the others show where they were computed */
		if (!cl_backend_is_reference(backend))
			cl_plot_series_set_marker(s, CL_PLOT_MARKER_CIRCLE, 5, 1);
	}
	g_free(x);
	g_free(y);
	g_free(label);
	g_free(name);
	return f;
}

/* ------------------------------------------------------------ trajectories */

/* Each backend's run from scene, as the canvas draws them. */
static ClPlotFigure *trajectories_figure(const ClLessonResult *r)
{
	const ClLessonStep *step = r->step;
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_title(p, "Trajectories");
	g_autoptr(ClRunData) data =
		cl_figure_runs(step->scene, (const int *)step->backends->data, NULL, NULL, (int)r->backend_count);
	cl_scene_panel_set(p, step->scene, data, TRUE);
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	return f;
}

/* ------------------------------------------------------------ heatmap */

static ClPlotFigure *heatmap_figure(const ClLessonResult *r, const GArray *highlight)
{
	const ClLessonStep *step = r->step;
	ClSweepQuantity quantity = (ClSweepQuantity)cl_sweep_quantity_find(step->view.quantity);
	int exact_slot = cl_lesson_step_backend_slot(step, cl_backend_reference());
	ClPlotFigure *f = cl_figure_heatmap(step->scene, &r->sweep, r->cells, quantity, exact_slot);
	if (!r->learning)
		return f;
	/* the descent paths, one per backend panel (every slot has a panel for the loss and gradients) */
	int cols = cl_plot_figure_cols(f);
	gboolean against_exact = quantity == CL_SWEEP_ANGLE_ERROR || quantity == CL_SWEEP_SIGN_AGREEMENT;
	int panel = 0;
	for (guint b = 0; b < r->backend_count; b++) {
		if (against_exact && (int)b == exact_slot)
			continue;
		const ClLessonLearning *l = &r->learning[b];
		ClPlotPanel *p = cl_plot_figure_panel(f, panel / cols, panel % cols);
		panel++;
		if (!l->path_x)
			continue;
		int count = l->iterations + 1;
		ClPlotSeries *halo = cl_plot_panel_add_line(p, NULL, l->path_x, l->path_y, count);
		cl_plot_series_set_color(halo, (ClPlotColor){1, 1, 1, 0.9});
		cl_plot_series_set_width(halo, 3.4);
		ClPlotSeries *s = cl_plot_panel_add_line(p, NULL, l->path_x, l->path_y, count);
		cl_plot_series_set_color(s, (ClPlotColor){0.85, 0.1, 0.1, 1});
		cl_plot_series_set_width(s, in_list(highlight, g_array_index(step->backends, int, b)) ? 2.0 : 1.4);
		ClPlotSeries *end = cl_plot_panel_add_marker(p, l->path_x[count - 1], l->path_y[count - 1],
													 CL_PLOT_MARKER_STAR, NULL);
		cl_plot_series_set_marker(end, CL_PLOT_MARKER_STAR, 9, 1);
		cl_plot_series_set_color(end, (ClPlotColor){0.85, 0.1, 0.1, 1});
	}
	return f;
}

/* ------------------------------------------------------------ learning */

static double *iterations_axis(int count)
{
	double *x = g_new(double, (gsize)MAX(count, 1));
	for (int i = 0; i < count; i++)
		x[i] = i;
	return x;
}

static gboolean optimizes_controls(const ClScene *scene, int *ball)
{
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, NULL, 0);
	gboolean found = FALSE;
	for (int i = 0; i < count && !found; i++)
		if (params[i].target == CL_PARAM_CONTROL) {
			*ball = params[i].ball;
			found = TRUE;
		}
	free(params);
	return found;
}

static ClPlotFigure *learning_figure(const ClLessonResult *r, const GArray *highlight)
{
	const ClLessonStep *step = r->step;
	const ClScene *scene = step->scene;
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	ClPlotPanel *lp = cl_plot_figure_panel(f, 0, 0);
	const ClOptimizeDef *od = &scene->optimize;
	char sigma[32];
	g_ascii_formatd(sigma, sizeof sigma, "%g", od->sigma); /* the window's locale must not change the figure */
	char *title = od->gradient == CL_GRADIENT_ADJOINT ? g_strdup("Loss during gradient descent")
				  : od->gradient == CL_GRADIENT_FD	  ? g_strdup("Loss during descent along central differences")
													  : g_strdup_printf("Loss during descent along %s (σ = %s)",
										od->gradient == CL_GRADIENT_ZOBG   ? "ZoBG"
										: od->gradient == CL_GRADIENT_FOBG ? "FoBG"
																		   : "AoBG",
										sigma);
	cl_plot_panel_set_title(lp, title);
	g_free(title);
	cl_plot_panel_set_x_axis(lp, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(lp, "loss", step->view.log_scale ? CL_PLOT_SCALE_LOG : CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_grid(lp, true);
	for (guint b = 0; b < r->backend_count; b++) {
		int backend = g_array_index(step->backends, int, b);
		const ClLessonLearning *l = &r->learning[b];
		if (l->iterations == 0)
			continue;
		double *x = iterations_axis(l->iterations);
		ClPlotSeries *s = cl_plot_panel_add_line(lp, cl_backend_info(backend)->id, x, l->loss, l->iterations);
		style(s, backend, highlight);
		g_free(x);
	}
	double optimum = cl_two_ball_optimum(scene, NULL);
	if (step->view.show_optimum && isfinite(optimum)) {
		char *label = g_strdup_printf("analytic optimum %.5f", optimum);
		cl_plot_panel_add_hline(lp, optimum, label);
		g_free(label);
	}

	ClPlotPanel *rp = cl_plot_figure_panel(f, 0, 1);
	int ball = -1;
	if (optimizes_controls(scene, &ball)) {
		/* the learned control profiles (x component), with the analytic optimum */
		cl_plot_panel_set_title(rp, "Learned control (x)");
		cl_plot_panel_set_x_axis(rp, "t (s)", CL_PLOT_SCALE_LINEAR);
		cl_plot_panel_set_y_axis(rp, "u<sub>x</sub> (N)", CL_PLOT_SCALE_LINEAR);
		cl_plot_panel_set_grid(rp, true);
		int n = scene->steps;
		double dt = cl_scene_dt(scene);
		double *t = g_new(double, (gsize)n), *ux = g_new(double, (gsize)n), *u = g_new0(double, 2 * (gsize)n);
		for (int k = 0; k < n; k++)
			t[k] = (k + 0.5) * dt;
		for (guint b = 0; b < r->backend_count; b++) {
			int backend = g_array_index(step->backends, int, b);
			if (!r->learning[b].values)
				continue;
			ClScene *learned = cl_figure_learned_scene(scene, r->learning[b].values, r->learning[b].value_count);
			for (int k = 0; k < n; k++)
				ux[k] = learned->balls[ball].control_kind == CL_CONTROL_SEQUENCE ? learned->balls[ball].control_sequence[k].x
																				 : learned->balls[ball].control_constant.x;
			ClPlotSeries *s = cl_plot_panel_add_line(rp, NULL, t, ux, n);
			style(s, backend, highlight);
			cl_scene_free(learned);
		}
		if (cl_two_ball_optimal_control(scene, u)) {
			for (int k = 0; k < n; k++)
				ux[k] = u[2 * k];
			ClPlotSeries *s = cl_plot_panel_add_line(rp, "analytic optimum", t, ux, n);
			cl_plot_series_set_color(s, (ClPlotColor){0.5, 0.5, 0.5, 1});
			cl_plot_series_set_dash(s, CL_PLOT_DASH_DOTTED);
			cl_plot_series_set_width(s, 1.6);
		}
		g_free(t);
		g_free(ux);
		g_free(u);
	} else {
		/* the learned trajectories, each from its backend's learned start: which mode each found */
		cl_plot_panel_set_title(rp, "Learned trajectories");
		int *backends = g_new(int, r->backend_count + 1), *counts = g_new(int, r->backend_count + 1), learned = 0;
		const double **values = g_new(const double *, r->backend_count + 1);
		for (guint b = 0; b < r->backend_count; b++)
			if (r->learning[b].values) {
				backends[learned] = g_array_index(step->backends, int, b);
				values[learned] = r->learning[b].values;
				counts[learned++] = r->learning[b].value_count;
			}
		g_autoptr(ClRunData) data = cl_figure_runs(scene, backends, values, counts, learned);
		ClScene *shown = cl_figure_start_scene(scene);
		cl_scene_panel_set(rp, shown, data, FALSE);
		cl_scene_free(shown);
		g_free(backends);
		g_free(values);
		g_free(counts);
	}
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	return f;
}

/* ------------------------------------------------------------ dispatch */

ClPlotFigure *cl_lesson_figure(const ClLessonResult *r)
{
	GArray *highlight = highlighted_backends(r->step);
	ClPlotFigure *f = NULL;
	switch (r->step->view.kind) {
	case CL_LESSON_VIEW_GRADIENTS:
		f = trajectories_figure(r);
		break;
	case CL_LESSON_VIEW_PERTURBATION:
		f = r->run && r->run->has_perturbation ? cl_perturbation_figure_new(r->step->scene, r->run) : NULL;
		break;
	case CL_LESSON_VIEW_HEATMAP:
		f = r->cells ? heatmap_figure(r, highlight) : NULL;
		break;
	case CL_LESSON_VIEW_LEARNING:
		f = learning_figure(r, highlight);
		break;
	case CL_LESSON_VIEW_CONVERGENCE:
		f = r->convergence ? cl_figure_convergence(r->convergence, highlight) : NULL;
		break;
	case CL_LESSON_VIEW_COUNT:
		break;
	}
	g_array_free(highlight, TRUE);
	if (!f) {
		/* the computation failed: an empty panel says so (the problems list says why) */
		f = cl_plot_figure_new(1, 1);
		cl_plot_panel_add_text(cl_plot_figure_panel(f, 0, 0), 0.5, 0.5, CL_PLOT_ANCHOR_CENTER, "not computed");
	}
	return f;
}

void cl_lesson_figure_size(const ClLessonResult *r, const ClPlotFigure *figure, double *width, double *height)
{
	if (r->step->view.kind == CL_LESSON_VIEW_HEATMAP && r->cells) {
		cl_figure_heatmap_size(figure, width, height);
		return;
	}
	*width = CL_FIGURE_WIDTH;
	*height = r->step->view.kind == CL_LESSON_VIEW_LEARNING || r->step->view.kind == CL_LESSON_VIEW_PERTURBATION
				  ? CL_FIGURE_HEIGHT * 0.8
				  : CL_FIGURE_HEIGHT;
}

/* ------------------------------------------------------------ CSV */

static void gradients_csv(GString *out, const ClLessonResult *r)
{
	g_string_append(out, "backend,parameter,value,fd\n");
	for (guint b = 0; b < r->backend_count; b++) {
		const char *id = cl_backend_info(g_array_index(r->step->backends, int, b))->id;
		g_string_append_printf(out, "%s,loss,%s,\n", id, cl_format_number(r->loss[b]).text);
		for (guint c = 0; c < r->columns->len; c++) {
			g_string_append_printf(out, "%s,%s,", id, (const char *)g_ptr_array_index(r->columns, c));
			g_string_append_printf(out, "%s,", cl_format_number(r->gradient[b * r->columns->len + c]).text);
			g_string_append_printf(out, "%s\n", cl_format_number(r->fd[b * r->columns->len + c]).text);
		}
	}
}

static void learning_csv(GString *out, const ClLessonResult *r)
{
	g_string_append(out, "backend,iteration,loss\n");
	for (guint b = 0; b < r->backend_count; b++) {
		const char *id = cl_backend_info(g_array_index(r->step->backends, int, b))->id;
		const ClLessonLearning *l = &r->learning[b];
		for (int i = 0; i < l->iterations; i++)
			g_string_append_printf(out, "%s,%d,%s\n", id, i, cl_format_number(l->loss[i]).text);
	}
}

GString *cl_lesson_step_csv(const ClLessonResult *r)
{
	GString *out = g_string_new(NULL);
	switch (r->step->view.kind) {
	case CL_LESSON_VIEW_GRADIENTS:
		gradients_csv(out, r);
		break;
	case CL_LESSON_VIEW_PERTURBATION:
		if (r->run) {
			GString *csv = cl_run_data_perturbation_csv(r->run, r->step->scene);
			g_string_append_len(out, csv->str, (gssize)csv->len);
			g_string_free(csv, TRUE);
		}
		break;
	case CL_LESSON_VIEW_HEATMAP:
		if (r->cells) {
			int exact_slot = cl_lesson_step_backend_slot(r->step, cl_backend_reference());
			GString *csv = cl_figure_heatmap_csv(&r->sweep, r->cells,
												 (ClSweepQuantity)cl_sweep_quantity_find(r->step->view.quantity),
												 exact_slot);
			g_string_append_len(out, csv->str, (gssize)csv->len);
			g_string_free(csv, TRUE);
		}
		break;
	case CL_LESSON_VIEW_LEARNING:
		learning_csv(out, r);
		break;
	case CL_LESSON_VIEW_CONVERGENCE:
		if (r->convergence) {
			GString *csv = cl_convergence_csv(r->convergence);
			g_string_append_len(out, csv->str, (gssize)csv->len);
			g_string_free(csv, TRUE);
		}
		break;
	case CL_LESSON_VIEW_COUNT:
		break;
	}
	return out;
}
