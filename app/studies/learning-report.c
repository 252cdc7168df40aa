#include "learning-report.h"

#include "backend-style.h"
#include "figures.h"
#include "numbers.h"

#include <math.h>

void cl_learning_trace_clear(ClLearningTrace *t)
{
	g_free(t->loss);
	g_free(t->tracked);
	g_free(t->values);
}

void cl_learning_traces_free(ClLearningTrace *traces, int count)
{
	for (int i = 0; traces && i < count; i++)
		cl_learning_trace_clear(&traces[i]);
	g_free(traces);
}

static double *iteration_axis(int count)
{
	double *x = g_new(double, (gsize)MAX(count, 1));
	for (int i = 0; i < count; i++)
		x[i] = i;
	return x;
}

/* The first controlled ball among the optimized parameters, −1 if none. */
static int controlled_ball(const ClParam *params, int count)
{
	for (int k = 0; k < count; k++)
		if (params[k].target == CL_PARAM_CONTROL)
			return params[k].ball;
	return -1;
}

/* The middle of every control interval. */
static double *control_times(const ClScene *scene)
{
	double dt = cl_scene_dt(scene);
	double *t = g_new(double, (gsize)MAX(scene->steps, 1));
	for (int n = 0; n < scene->steps; n++)
		t[n] = (n + 0.5) * dt;
	return t;
}

/* ux[n]: the trace's learned x control of ball at interval n, NAN where it is not optimized. */
static void control_profile(const ClParam *params, int count, int ball, const ClLearningTrace *trace, int steps,
							double *ux)
{
	for (int n = 0; n < steps; n++)
		ux[n] = NAN;
	for (int k = 0; k < count && k < trace->value_count; k++)
		if (params[k].target == CL_PARAM_CONTROL && params[k].ball == ball && params[k].axis == 0)
			ux[params[k].step] = trace->values[k];
}

static void add_control_panel(ClPlotPanel *p, const ClScene *scene, const ClParam *params, int count, int ball,
							  const ClLearningTrace *traces, int trace_count, ClLearningCurves *curves)
{
	char *title = g_markup_printf_escaped("learned control of %s", scene->balls[ball].id);
	cl_plot_panel_set_title(p, title);
	g_free(title);
	cl_plot_panel_set_x_axis(p, "time (s)", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(p, "u<sub>x</sub> (N)", CL_PLOT_SCALE_LINEAR);
	int steps = scene->steps;
	double *t = control_times(scene), *ux = g_new(double, (gsize)steps);
	for (int c = 0; c < trace_count; c++) {
		control_profile(params, count, ball, &traces[c], steps, ux);
		ClPlotSeries *s = cl_plot_panel_add_line(p, NULL, t, ux, steps);
		cl_backend_style_series(s, traces[c].backend, false);
		if (curves)
			curves[c].second = s;
	}
	double *u = g_new(double, 2 * (gsize)steps);
	if (cl_two_ball_optimal_control(scene, u)) {
		for (int n = 0; n < steps; n++)
			ux[n] = u[2 * n];
		ClPlotSeries *s = cl_plot_panel_add_line(p, "analytic optimal control", t, ux, steps);
		cl_plot_series_set_color(s, (ClPlotColor){0, 0, 0, 1});
		cl_plot_series_set_width(s, 2.2);
		cl_plot_series_set_dash(s, CL_PLOT_DASH_DOTTED);
	}
	g_free(u);
	g_free(t);
	g_free(ux);
}

static void add_tracked_panel(ClPlotPanel *p, const ClScene *scene, const ClParam *tracked,
							  const ClLearningTrace *traces, int trace_count, ClLearningCurves *curves)
{
	char name[CL_NAME_MAX];
	cl_param_name(scene, tracked, name, sizeof name);
	char *escaped = g_markup_escape_text(name, -1);
	cl_plot_panel_set_title(p, escaped);
	cl_plot_panel_set_x_axis(p, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(p, escaped, CL_PLOT_SCALE_LINEAR);
	g_free(escaped);
	for (int c = 0; c < trace_count; c++) {
		if (!traces[c].tracked || traces[c].iterations == 0)
			continue;
		/* tracked[i] is the value iteration i's loss was taken at; i = iterations: the result */
		int points = traces[c].iterations + 1;
		double *x = iteration_axis(points);
		ClPlotSeries *s = cl_plot_panel_add_line(p, NULL, x, traces[c].tracked, points);
		cl_backend_style_series(s, traces[c].backend, false);
		if (curves)
			curves[c].second = s;
		g_free(x);
	}
}

ClPlotFigure *cl_learning_figure(const ClScene *scene, const ClParam *params, int count, int tracked,
								 const ClLearningTrace *traces, int trace_count, gboolean log_loss, double reference,
								 const char *reference_label, ClLearningCurves *curves)
{
	for (int c = 0; curves && c < trace_count; c++)
		curves[c] = (ClLearningCurves){NULL, NULL, traces[c].iterations};
	int ball = controlled_ball(params, count);
	gboolean second = ball >= 0 || tracked >= 0;
	ClPlotFigure *f = cl_plot_figure_new(1, second ? 2 : 1);
	const ClOptimizeDef *def = &scene->optimize;
	char *name = g_markup_escape_text(scene->name, -1);
	char *title = g_strdup_printf("%s: %s, learning rate %s", name,
								  def->optimizer == CL_OPTIMIZER_ADAM ? "Adam" : "gradient descent",
								  cl_format_number(def->learning_rate).text);
	cl_plot_figure_set_title(f, title);
	g_free(title);
	g_free(name);
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	ClPlotPanel *loss = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_title(loss, "loss");
	cl_plot_panel_set_x_axis(loss, "iteration", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(loss, "loss", log_loss ? CL_PLOT_SCALE_LOG : CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_x_range(loss, 0, MAX(def->iterations - 1, 1));
	for (int c = 0; c < trace_count; c++) {
		if (traces[c].iterations == 0)
			continue;
		double *x = iteration_axis(traces[c].iterations);
		ClPlotSeries *s = cl_plot_panel_add_line(loss, cl_backend_info(traces[c].backend)->id, x, traces[c].loss,
												 traces[c].iterations);
		cl_backend_style_series(s, traces[c].backend, false);
		if (curves)
			curves[c].loss = s;
		g_free(x);
	}
	if (isfinite(reference) && (!log_loss || reference > 0)) {
		char *label = g_markup_escape_text(reference_label ? reference_label : "reference", -1);
		ClPlotSeries *h = cl_plot_panel_add_hline(loss, reference, label);
		cl_plot_series_set_color(h, (ClPlotColor){0.35, 0.35, 0.35, 1});
		cl_plot_series_set_dash(h, CL_PLOT_DASH_DASH_DOT);
		g_free(label);
	}
	if (second) {
		ClPlotPanel *p = cl_plot_figure_panel(f, 0, 1);
		if (ball >= 0)
			add_control_panel(p, scene, params, count, ball, traces, trace_count, curves);
		else
			add_tracked_panel(p, scene, &params[tracked], traces, trace_count, curves);
		cl_plot_panel_set_legend(p, CL_PLOT_LEGEND_NONE);
	}
	cl_plot_panel_set_legend(loss, CL_PLOT_LEGEND_NONE);
	return f;
}

gboolean cl_learning_figure_grow(const ClScene *scene, const ClParam *params, int count, int tracked,
								  const ClLearningTrace *traces, int trace_count, ClLearningCurves *curves)
{
	int ball = controlled_ball(params, count);
	gboolean tracking = ball < 0 && tracked >= 0;
	int most = 0;
	for (int c = 0; c < trace_count; c++) {
		const ClLearningTrace *t = &traces[c];
		/* a curve that does not exist yet would change the order of the
		 * lines and the legend: only a rebuild puts it in its place */
		if (t->iterations < curves[c].points || (t->iterations > 0 && !curves[c].loss) ||
			(t->iterations > 0 && tracking && t->tracked && !curves[c].second))
			return FALSE;
		most = MAX(most, t->iterations - curves[c].points + 1);
	}
	double *x = g_new(double, (gsize)most + 1), *t = NULL, *ux = NULL;
	if (ball >= 0) {
		t = control_times(scene);
		ux = g_new(double, (gsize)MAX(scene->steps, 1));
	}
	for (int c = 0; c < trace_count; c++) {
		const ClLearningTrace *trace = &traces[c];
		ClLearningCurves *k = &curves[c];
		int from = k->points, added = trace->iterations - from;
		if (added == 0)
			continue;
		for (int i = 0; i <= added; i++)
			x[i] = from + i;
		cl_plot_series_append(k->loss, x, trace->loss + from, added);
		if (ball >= 0) {
			control_profile(params, count, ball, trace, scene->steps, ux);
			cl_plot_series_set_points(k->second, t, ux, scene->steps);
		} else if (k->second) {
			/* tracked[i] goes with loss i; tracked[iterations]: after the last update */
			for (int i = 0; i < added; i++)
				x[i] = from + 1 + i;
			cl_plot_series_append(k->second, x, trace->tracked + from + 1, added);
		}
		k->points = trace->iterations;
	}
	g_free(x);
	g_free(t);
	g_free(ux);
	return TRUE;
}

char *cl_learning_mode_label(const ClScene *scene, const ClLearningTrace *trace, const char *separator)
{
	if (scene->wall_count == 0 || !trace->finished)
		return NULL;
	if (trace->walls_touched == 0)
		return g_strdup("no contact");
	GString *label = g_string_new(NULL);
	for (int i = 0; i < trace->walls_touched; i++)
		g_string_append_printf(label, "%s%s", i ? separator : "", scene->walls[trace->wall_order[i]].id);
	if (trace->walls_touched == 1 && scene->wall_count > 1)
		g_string_append(label, " only");
	return g_string_free(label, FALSE);
}

GString *cl_learning_curves_csv(const ClLearningTrace *traces, int count)
{
	GString *out = g_string_new("backend,iteration,loss\n");
	for (int c = 0; c < count; c++) {
		const char *id = cl_backend_info(traces[c].backend)->id;
		for (int i = 0; i < traces[c].iterations; i++)
			g_string_append_printf(out, "%s,%d,%s\n", id, i, cl_format_number(traces[c].loss[i]).text);
		if (traces[c].finished)
			g_string_append_printf(out, "%s,%d,%s\n", id, traces[c].iterations,
								   cl_format_number(traces[c].final_loss).text);
	}
	return out;
}

GString *cl_learning_parameters_csv(const ClScene *scene, const ClParam *params, int param_count,
									const ClLearningTrace *traces, int count)
{
	GString *out = g_string_new("backend,parameter,value\n");
	for (int c = 0; c < count; c++)
		for (int k = 0; k < param_count && k < traces[c].value_count; k++) {
			char name[CL_NAME_MAX];
			cl_param_name(scene, &params[k], name, sizeof name);
			g_string_append_printf(out, "%s,", cl_backend_info(traces[c].backend)->id);
			cl_csv_append_field(out, name);
			g_string_append_printf(out, ",%s\n", cl_format_number(traces[c].values[k]).text);
		}
	return out;
}

GString *cl_learning_summary_csv(const ClScene *scene, const ClLearningTrace *traces, int count)
{
	GString *out = g_string_new("backend,status,iterations,final_loss,exact_dynamics_loss,walls_reached\n");
	for (int c = 0; c < count; c++) {
		const ClLearningTrace *t = &traces[c];
		g_string_append_printf(out, "%s,%s,%d,%s,", cl_backend_info(t->backend)->id,
							   t->finished ? cl_status_name(t->status.code) : "running", t->iterations,
							   cl_format_number(t->final_loss).text);
		g_string_append_printf(out, "%s,", cl_format_number(t->exact_loss).text);
		char *mode = cl_learning_mode_label(scene, t, " then ");
		cl_csv_append_field(out, mode ? mode : "");
		g_string_append_c(out, '\n');
		g_free(mode);
	}
	return out;
}
