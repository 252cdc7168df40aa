/* contactlab bench: gradient and optimization timings on Task 3, and the
 * whole reproduction. A benchmark, not a test: it only reports. */
#include "cli-common.h"
#include "numbers.h"
#include "reproduce.h"
#include "scene-file.h"

#include <math.h>
#include <stdio.h>

/* Mean µs of a full gradient (forward with recording + adjoint for every
 * control), repeated for at least min_seconds; NAN when the backend fails. */
static double gradient_microseconds(const ClScene *scene, int backend, double min_seconds, ClStatus *status,
									 gboolean *ran)
{
	ClRollout *rollout = cl_rollout_new(scene, backend);
	double *g_s0 = g_new(double, (gsize)cl_state_size(scene));
	double *g_u = g_new(double, (gsize)cl_control_size(scene));
	cl_rollout_run(rollout, NULL, NULL, true); /* warm-up */
	*status = *cl_rollout_status(rollout);
	*ran = cl_rollout_steps_done(rollout) == scene->steps;
	double result = NAN;
	if (*ran) {
		gint64 start = g_get_monotonic_time(), now;
		int reps = 0;
		do {
			cl_rollout_run(rollout, NULL, NULL, true);
			cl_rollout_gradient(rollout, g_s0, g_u);
			reps++;
			now = g_get_monotonic_time();
		} while (reps < 5 || (double)(now - start) < min_seconds * 1e6);
		result = (double)(now - start) / reps;
	}
	g_free(g_s0);
	g_free(g_u);
	cl_rollout_free(rollout);
	return result;
}

/* Samples per second of `smooth task2-ground-wall` over the initial
 * velocity (every estimate: a recorded run and its adjoint per sample), on
 * one thread and on two. */
static gboolean smoothing_bench(const GArray *backends, GError **error)
{
	ClScene *scene = cl_preset_load("task2-ground-wall", error);
	if (!scene)
		return FALSE;
	ClParam params[2];
	cl_param_parse(scene, "ball.velocity.x", &params[0], NULL, 0);
	cl_param_parse(scene, "ball.velocity.y", &params[1], NULL, 0);
	double sigma[2] = {0.25, 0.25};
	ClSmoothDef def = cl_smooth_default_def();
	def.params = params;
	def.sigma = sigma;
	def.param_count = 2;
	def.samples = 1000;
	def.backends = (const int *)backends->data;
	def.backend_count = (int)backends->len;
	ClSmoothResult *results = g_new0(ClSmoothResult, backends->len);
	printf("smooth task2-ground-wall, ball.velocity.x and .y, σ = 0.25, N = %d, %d backends:\n", def.samples,
		   def.backend_count);
	for (int threads = 1; threads <= 2; threads++) {
		def.threads = threads;
		ClStatus status;
		gint64 start = g_get_monotonic_time();
		gboolean ok = cl_smooth(scene, &def, results, &status);
		double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
		if (!ok) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "bench: %s", status.message);
			g_free(results);
			cl_scene_free(scene);
			return FALSE;
		}
		int runs = def.backend_count * (def.samples + 1);
		printf("  %d thread%s: %.3f s, %.0f samples/s (%.1f µs per sample and backend)\n", threads,
			   threads == 1 ? " " : "s", seconds, runs / seconds, 1e6 * seconds / runs);
		fflush(stdout);
		for (int b = 0; b < def.backend_count; b++)
			cl_smooth_result_clear(&results[b]);
	}
	g_free(results);
	cl_scene_free(scene);
	return TRUE;
}

int cl_cmd_bench(int argc, char **argv, gboolean check_only)
{
	char **backend_ids = NULL;
	GOptionEntry entries[] = {
		{"backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backend_ids, "A backend (repeatable; default: all)", "ID"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	GArray *backends = NULL;
	ClScene *scene = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("bench", NULL,
							  "Per backend: microseconds per full Task 3 gradient (forward + adjoint, all control\n"
							  "derivatives) and the time of its 1000-iteration optimization; the samples per second\n"
							  "of `contactlab smooth` on Task 2 (1 and 2 threads); then the time of\n"
							  "`contactlab reproduce --table all`.",
							  entries, argc, argv, &positional, &error) ||
		!(backends = cl_cli_backends(backend_ids, &error)) || !(scene = cl_preset_load("task3-two-balls", &error)))
		goto out;
	if (positional[0]) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "bench: takes no arguments");
		goto out;
	}
	status = CL_EXIT_OK;
	if (check_only)
		goto out;
	printf("Task 3 (%d steps, %d balls): full gradient and %d-iteration optimization\n", scene->steps,
		   scene->ball_count, scene->optimize.iterations);
	printf("%-16s %16s %16s  %s\n", "backend", "µs / gradient", "optimization s", "status");
	for (guint k = 0; k < backends->len; k++) {
		int backend = g_array_index(backends, int, k);
		ClStatus run_status;
		gboolean ran;
		double us = gradient_microseconds(scene, backend, 0.3, &run_status, &ran);
		double seconds = NAN;
		if (ran) {
			ClOptimizeResult result;
			gint64 start = g_get_monotonic_time();
			cl_optimize(scene, backend, NULL, NULL, NULL, &result);
			seconds = (double)(g_get_monotonic_time() - start) / 1e6;
			if (run_status.code == CL_STATUS_OK)
				run_status = result.status;
			cl_optimize_result_clear(&result);
		}
		char *text = cl_status_text(&run_status);
		printf("%-16s %16.1f %16.3f  %s\n", cl_backend_info(backend)->id, us, seconds, text);
		fflush(stdout);
		g_free(text);
	}
	if (!smoothing_bench(backends, &error)) {
		status = CL_EXIT_FAILED;
		goto out;
	}
	ClReproTable *table = cl_repro_load_default(&error);
	if (!table) {
		status = CL_EXIT_FAILED;
		goto out;
	}
	gint64 start = g_get_monotonic_time();
	cl_repro_evaluate(table, "all", 2);
	double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	int passed = 0, judged = 0;
	for (int i = 0; i < table->count; i++)
		if (table->rows[i].judged) {
			judged++;
			passed += table->rows[i].ok;
		}
	printf("reproduce --table all: %.2f s on 2 threads (%d rows, %d of %d judged within tolerance)\n", seconds,
		   table->count, passed, judged);
	cl_repro_free(table);
out:
	cl_cli_report(error, status == CL_EXIT_OK ? CL_EXIT_FAILED : status);
	if (backends)
		g_array_free(backends, TRUE);
	cl_scene_free(scene);
	g_strfreev(positional);
	g_strfreev(backend_ids);
	return status;
}
