/* contactlab optimize: gradient descent on the scene's optimization problem. */
#include "cli-common.h"
#include "figures.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	const ClParam *params;
	int count;
	GArray *scalars;   /* indices of the parameters that are not controls */
	GArray *history;   /* scalars->len values per iteration, at which its loss was taken */
	double *current;   /* the values the next iteration's loss is taken at */
} Recorder;

static bool record_iteration(int iteration, double loss, const double *parameters, void *user)
{
	(void)iteration;
	(void)loss;
	Recorder *rec = user;
	g_array_append_vals(rec->history, rec->current, rec->scalars->len);
	for (guint k = 0; k < rec->scalars->len; k++)
		rec->current[k] = parameters[g_array_index(rec->scalars, int, k)];
	return true;
}

static double loss_under(const ClScene *scene, int backend, ClStatus *status)
{
	ClRollout *rollout = cl_rollout_new(scene, backend);
	cl_rollout_run(rollout, NULL, NULL, false);
	double loss = cl_rollout_loss(rollout);
	*status = *cl_rollout_status(rollout);
	cl_rollout_free(rollout);
	return loss;
}

static void print_loss(const char *label, double loss, const ClStatus *status)
{
	char *text = cl_status_text(status);
	printf("%-40s %s%s%s\n", label, cl_format_number(loss).text, status->code == CL_STATUS_OK ? "" : "  ",
		   status->code == CL_STATUS_OK ? "" : text);
	g_free(text);
}

/* The controlled balls' final controls: step,ux,uy (ball,step,ux,uy for several). */
static GString *controls_csv(const ClScene *scene, const ClParam *params, int count, const double *values)
{
	GArray *balls = g_array_new(FALSE, FALSE, sizeof(int));
	for (int k = 0; k < count; k++)
		if (params[k].target == CL_PARAM_CONTROL) {
			gboolean seen = FALSE;
			for (guint i = 0; i < balls->len; i++)
				seen |= g_array_index(balls, int, i) == params[k].ball;
			if (!seen)
				g_array_append_val(balls, params[k].ball);
		}
	double *u = g_new0(double, (gsize)2 * (gsize)scene->steps * (gsize)scene->ball_count + 1);
	for (int k = 0; k < count; k++)
		if (params[k].target == CL_PARAM_CONTROL)
			u[2 * ((gsize)params[k].step * (gsize)scene->ball_count + (gsize)params[k].ball) + (gsize)params[k].axis] =
				values[k];
	GString *out = g_string_new(balls->len > 1 ? "ball,step,ux,uy\n" : "step,ux,uy\n");
	for (guint i = 0; i < balls->len; i++) {
		int ball = g_array_index(balls, int, i);
		for (int n = 0; n < scene->steps; n++) {
			const double *f = u + 2 * ((gsize)n * (gsize)scene->ball_count + (gsize)ball);
			if (balls->len > 1)
				g_string_append_printf(out, "%s,", scene->balls[ball].id);
			g_string_append_printf(out, "%d,%s,", n, cl_format_number(f[0]).text);
			g_string_append_printf(out, "%s\n", cl_format_number(f[1]).text);
		}
	}
	g_free(u);
	g_array_free(balls, TRUE);
	return out;
}

static int run(ClScene *scene, int backend, const ClOptimizeDef *def, const char *csv, const char *controls_path,
			   const ClCliFigureFiles *figures)
{
	char message[CL_MESSAGE_MAX];
	int count;
	ClParam *params = cl_optimize_expand(scene, def, &count, message, sizeof message);
	if (!params)
		return cl_cli_fail(CL_EXIT_BAD_INPUT, "%s: %s", scene->name, message);
	if (!cl_optimize_check(scene, backend, def, message, sizeof message)) {
		g_free(params);
		return cl_cli_fail(CL_EXIT_BAD_INPUT, "%s: %s", scene->name, message);
	}
	Recorder rec = {.params = params, .count = count};
	rec.scalars = g_array_new(FALSE, FALSE, sizeof(int));
	gboolean has_controls = FALSE;
	for (int k = 0; k < count; k++) {
		if (params[k].target == CL_PARAM_CONTROL)
			has_controls = TRUE;
		else
			g_array_append_val(rec.scalars, k);
	}
	if (controls_path && !has_controls) {
		g_array_free(rec.scalars, TRUE);
		g_free(params);
		return cl_cli_fail(CL_EXIT_BAD_INPUT, "--controls-csv: the scene optimizes no control sequence");
	}
	rec.history = g_array_new(FALSE, FALSE, sizeof(double));
	rec.current = g_new0(double, rec.scalars->len + 1);
	/* the values the first loss is taken at, stored as the backend stores them */
	gboolean f32 = cl_backend_is_float32(scene, backend);
	for (guint k = 0; k < rec.scalars->len; k++) {
		double x = cl_param_get(scene, &params[g_array_index(rec.scalars, int, k)]);
		rec.current[k] = f32 ? (double)(float)x : x;
	}
	const char *id = cl_backend_info(backend)->id;
	printf("%s: optimize %d parameter%s with %s, %s, learning rate %s, %d iterations", scene->name, count,
		   count == 1 ? "" : "s", id, def->optimizer == CL_OPTIMIZER_ADAM ? "Adam" : "gradient descent",
		   cl_format_number(def->learning_rate).text, def->iterations);
	if (def->gradient == CL_GRADIENT_FD)
		printf(", along central differences of its loss");
	else if (def->gradient != CL_GRADIENT_ADJOINT)
		printf(", along %s of the loss smoothed with σ = %s (%d samples, seed %" G_GUINT64_FORMAT " + iteration)",
			   cl_gradient_estimator_name(def->gradient), cl_format_number(def->sigma).text, def->samples,
			   (guint64)def->seed);
	printf("\n");
	ClOptimizeResult result;
	gboolean ok = cl_optimize(scene, backend, def, record_iteration, &rec, &result);
	int status = CL_EXIT_OK;
	if (!ok) {
		char *text = cl_status_text(&result.status);
		status = cl_cli_fail(CL_EXIT_FAILED, "%s: optimization stopped after %d iterations: %s", id,
							 result.iterations_done, text);
		g_free(text);
		goto out;
	}
	if (result.status.code != CL_STATUS_OK) {
		char *text = cl_status_text(&result.status);
		cl_cli_message("warning: %s: %s", id, text);
		g_free(text);
	}
	ClScene *final = cl_scene_copy(scene);
	cl_optimize_apply(final, params, count, result.parameters);
	ClStatus own_status, exact_status;
	double own = loss_under(final, backend, &own_status);
	double exact = cl_backend_reference() >= 0 ? loss_under(final, cl_backend_reference(), &exact_status) : NAN;
	if (result.iterations_done > 0) {
		printf("%-40s %s\n", "loss at iteration 0", cl_format_number(result.loss[0]).text);
		char label[64];
		snprintf(label, sizeof label, "loss at iteration %d", result.iterations_done - 1);
		printf("%-40s %s\n", label, cl_format_number(result.loss[result.iterations_done - 1]).text);
	}
	char label[96];
	snprintf(label, sizeof label, "final loss (%s)", id);
	print_loss(label, own, &own_status);
	print_loss("final parameters' loss under exact", exact, &exact_status);
	for (guint k = 0; k < rec.scalars->len; k++) {
		char name[CL_NAME_MAX];
		cl_param_name(scene, &params[g_array_index(rec.scalars, int, k)], name, sizeof name);
		printf("%-40s %s\n", name, cl_format_number(rec.current[k]).text);
	}
	if (has_controls) {
		for (int k = 0; k < count; k++)
			if (params[k].target == CL_PARAM_CONTROL && params[k].axis == 0 &&
				(params[k].step == 0 || params[k].step == scene->steps - 1)) {
				char name[CL_NAME_MAX];
				snprintf(name, sizeof name, "%s.control[%d]", scene->balls[params[k].ball].id, params[k].step);
				printf("%-40s (%s, ", name, cl_format_number(result.parameters[k]).text);
				printf("%s)\n", cl_format_number(result.parameters[k + 1]).text);
			}
		if (!controls_path)
			printf("(all %d controls: --controls-csv FILE)\n", scene->steps);
	}
	if (csv) {
		GString *out = g_string_new("iteration,loss");
		for (guint k = 0; k < rec.scalars->len; k++) {
			char name[CL_NAME_MAX];
			cl_param_name(scene, &params[g_array_index(rec.scalars, int, k)], name, sizeof name);
			g_string_append_printf(out, ",%s", name);
		}
		g_string_append_c(out, '\n');
		/* one row per iteration (its loss and the values it was taken at), then the final values */
		for (int it = 0; it <= result.iterations_done; it++) {
			double loss = it < result.iterations_done ? result.loss[it] : own;
			const double *values = it < result.iterations_done
									   ? &g_array_index(rec.history, double, (gsize)it * rec.scalars->len)
									   : rec.current;
			g_string_append_printf(out, "%d,%s", it, cl_format_number(loss).text);
			for (guint k = 0; k < rec.scalars->len; k++)
				g_string_append_printf(out, ",%s", cl_format_number(values[k]).text);
			g_string_append_c(out, '\n');
		}
		GError *error = NULL;
		if (!cl_write_output(csv, out, &error)) {
			status = cl_cli_fail(CL_EXIT_FAILED, "%s", error->message);
			g_error_free(error);
		}
		g_string_free(out, TRUE);
	}
	if (controls_path) {
		GString *out = controls_csv(scene, params, count, result.parameters);
		GError *error = NULL;
		if (!cl_write_output(controls_path, out, &error)) {
			status = cl_cli_fail(CL_EXIT_FAILED, "%s", error->message);
			g_error_free(error);
		}
		g_string_free(out, TRUE);
	}
	if (cl_cli_figure_files_wanted(figures)) {
		ClLearningCurve curve = {.backend = backend, .iterations = result.iterations_done, .loss = result.loss};
		ClPlotFigure *plot = cl_figure_learning(scene, &curve, 1);
		GError *error = NULL;
		if (!cl_cli_figure_files_write(figures, plot, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT, &error)) {
			status = cl_cli_fail(CL_EXIT_FAILED, "%s", error->message);
			g_error_free(error);
		}
		cl_plot_figure_free(plot);
	}
	cl_scene_free(final);
out:
	cl_optimize_result_clear(&result);
	g_free(rec.current);
	g_array_free(rec.history, TRUE);
	g_array_free(rec.scalars, TRUE);
	g_free(params);
	return status;
}

int cl_cmd_optimize(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL, **settings = NULL, *csv = NULL, *controls = NULL, *lr_text = NULL, *iters_text = NULL;
	char *gradient = NULL, **param_names = NULL;
	ClCliSampling sampling = CL_CLI_SAMPLING_INIT;
	ClCliFigureFiles figures = CL_CLI_FIGURE_FILES_INIT;
	GOptionEntry entries[] = {
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "The backend (required)", "ID"},
		{"lr", 0, 0, G_OPTION_ARG_STRING, &lr_text, "Learning rate (default: the scene's)", "X"},
		{"iters", 0, 0, G_OPTION_ARG_STRING, &iters_text, "Iterations (default: the scene's)", "N"},
		{"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &param_names,
		 "Optimize this parameter instead of the scene's optimize.parameters (repeatable; e.g. elasticity, "
		 "ball.radius, wall.angle, ball.velocity)",
		 "NAME"},
		{"gradient", 0, 0, G_OPTION_ARG_STRING, &gradient,
		 "Descend along the adjoint, a smoothed estimate or central differences (default: the scene's "
		 "optimize.gradient)",
		 "adjoint|zobg|fobg|aobg|fd"},
		CL_CLI_SAMPLING_OPTIONS(sampling),
		{"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "Write iteration,loss,PARAM… (- for stdout)", "FILE"},
		{"controls-csv", 0, 0, G_OPTION_ARG_FILENAME, &controls, "Write the learned controls step,ux,uy", "FILE"},
		CL_CLI_FIGURE_OPTIONS(figures, "the learning curve"),
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &settings, "Override a scene value (repeatable)", "KEY=VALUE"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClScene *scene = NULL;
	GArray *backends = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("optimize", "SCENE",
							  "Runs the scene's optimization (optimize.parameters) with one backend and prints the\n"
							  "final loss and parameters, and the final parameters' loss under the exact dynamics;\n"
							  "--png, --svg and/or --pdf draw the learning curve (loss per iteration). With\n"
							  "--gradient zobg|fobg|aobg it descends along an estimate of the gradient of the loss\n"
							  "smoothed with σ (--sigma), from --samples fresh samples per iteration; with\n"
							  "--gradient fd along central differences of the backend's own loss. Physical\n"
							  "parameters (elasticity, friction, ball.radius, ball.mass, wall.angle, …) are\n"
							  "projected back to their valid range after each step.",
							  entries, argc, argv, &positional, &error))
		goto out;
	if (!cl_cli_one_scene("optimize", positional, &error))
		goto out;
	if (!backend_ids) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "optimize: --backend ID is required");
		goto out;
	}
	if (!(backends = cl_cli_backends(backend_ids, &error)))
		goto out;
	if (backends->len != 1) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "optimize: give exactly one --backend");
		goto out;
	}
	if (!(scene = cl_cli_load_scene(positional[0], settings, &error)))
		goto out;
	ClOptimizeDef def = scene->optimize;
	if (!cl_cli_real_option("--lr", lr_text, 0, TRUE, 1e9, &def.learning_rate, &error) ||
		!cl_cli_whole_option("--iters", iters_text, 0, 1000000, &def.iterations, &error))
		goto out;
	if (param_names) {
		def.parameter_count = 0;
		for (int k = 0; param_names[k]; k++) {
			if (k >= CL_OPTIMIZE_PARAMS_MAX) {
				g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
							"--param: at most %d parameters", CL_OPTIMIZE_PARAMS_MAX);
				goto out;
			}
			if (strlen(param_names[k]) >= sizeof def.parameters[k]) {
				g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--param %s: name too long",
							param_names[k]);
				goto out;
			}
			g_strlcpy(def.parameters[k], param_names[k], sizeof def.parameters[k]);
			def.parameter_count = k + 1;
		}
	}
	if (gradient) {
		static const char *const estimators[] = {"adjoint", "zobg", "fobg", "aobg", "fd", NULL};
		if (!cl_cli_check_choice("--gradient", gradient, estimators, &error))
			goto out;
		def.gradient = (ClGradientEstimator)cl_gradient_estimator_find(gradient);
	}
	if (!cl_cli_sampling_check(&sampling, &error))
		goto out;
	if (sampling.sigma && !cl_cli_sampling_sigma(&sampling, 1, &def.sigma, &error))
		goto out;
	if (sampling.samples != -1)
		def.samples = sampling.samples;
	if (sampling.seed != -1)
		def.seed = (uint64_t)sampling.seed;
	if ((def.gradient == CL_GRADIENT_ADJOINT || def.gradient == CL_GRADIENT_FD) && cl_cli_sampling_given(&sampling)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--%s: only --gradient zobg, fobg or aobg samples (the gradient is %s)",
					sampling.sigma ? "sigma" : sampling.samples != -1 ? "samples" : "seed",
					cl_gradient_estimator_name(def.gradient));
		goto out;
	}
	if (def.gradient != CL_GRADIENT_ADJOINT && def.gradient != CL_GRADIENT_FD && !(def.sigma > 0)) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
					"optimize: --gradient %s needs --sigma S (or optimize.sigma in the scene)",
					cl_gradient_estimator_name(def.gradient));
		goto out;
	}
	if (def.parameter_count == 0) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
					"%s: the scene has nothing to optimize (its optimize.parameters is empty)", positional[0]);
		goto out;
	}
	if (!cl_cli_figure_files_check(&figures, &error))
		goto out;
	status = check_only ? CL_EXIT_OK : run(scene, g_array_index(backends, int, 0), &def, csv, controls, &figures);
out:
	cl_cli_report(error, CL_EXIT_BAD_INPUT);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	g_strfreev(settings);
	g_strfreev(param_names);
	g_free(csv);
	g_free(controls);
	g_free(lr_text);
	g_free(iters_text);
	g_free(gradient);
	cl_cli_sampling_clear(&sampling);
	cl_cli_figure_files_clear(&figures);
	return status;
}
