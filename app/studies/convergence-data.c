/* The convergence view's data: step lists, runs, CSV. */
#include "convergence-data.h"

#include "numbers.h"

#include <gio/gio.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define CONVERGENCE_STEP_LIST_MAX 256

GArray *cl_convergence_default_steps(void)
{
	GArray *steps = g_array_new(FALSE, FALSE, sizeof(int));
	for (int n = 60; n <= 7680; n *= 2)
		g_array_append_val(steps, n);
	return steps;
}

GArray *cl_convergence_parse_steps(const char *text, const char *field, GError **error)
{
	GArray *steps = g_array_new(FALSE, FALSE, sizeof(int));
	char **parts = g_strsplit(text, ",", -1);
	for (char **p = parts; *p; p++) {
		char *entry = g_strstrip(*p), *end = NULL;
		errno = 0;
		long n = strtol(entry, &end, 10);
		if (!*entry || *end || errno || n < 1 || n > CL_MAX_STEPS) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						"%s: \"%s\" is not a step count (a whole number from 1 to %d)", field, entry, CL_MAX_STEPS);
			goto fail;
		}
		int value = (int)n;
		g_array_append_val(steps, value);
	}
	if (steps->len == 0 || steps->len > CONVERGENCE_STEP_LIST_MAX) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: give 1 to %d step counts", field,
					CONVERGENCE_STEP_LIST_MAX);
		goto fail;
	}
	g_strfreev(parts);
	return steps;
fail:
	g_strfreev(parts);
	g_array_free(steps, TRUE);
	return NULL;
}

static GArray *copy_ints(const GArray *a)
{
	GArray *copy = g_array_sized_new(FALSE, FALSE, sizeof(int), a->len);
	g_array_append_vals(copy, a->data, a->len);
	return copy;
}

ClConvergenceRun *cl_convergence_run_prepare(const ClScene *scene, const char *parameter, const GArray *steps,
											 const GArray *backends, GError **error)
{
	char message[CL_MESSAGE_MAX];
	ClParam param;
	if (!cl_param_parse(scene, parameter, &param, message, sizeof message)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--param %s: %s", parameter, message);
		return NULL;
	}
	ClConvergenceRun *run = g_new0(ClConvergenceRun, 1);
	g_strlcpy(run->parameter, parameter, sizeof run->parameter);
	run->param = param;
	run->duration = scene->duration;
	run->steps = copy_ints(steps);
	run->backends = copy_ints(backends);
	run->points = g_new0(ClConvergencePoint, (gsize)steps->len * backends->len + 1);
	for (guint i = 0; i < steps->len * backends->len; i++)
		run->points[i] = (ClConvergencePoint){NAN, NAN, CL_STATUS_CANCELLED};
	return run;
}

gboolean cl_convergence_run_compute(ClConvergenceRun *run, const ClScene *scene, int threads,
									ClConvergenceProgress progress, void *user, const _Atomic int *cancel,
									GError **error)
{
	ClConvergenceDef def = {
		.param = run->param,
		.steps = (const int *)(const void *)run->steps->data,
		.step_count = (int)run->steps->len,
		.backends = (const int *)(const void *)run->backends->data,
		.backend_count = (int)run->backends->len,
		.threads = MAX(threads, 1),
		.progress = progress,
		.user = user,
		.cancel = cancel,
	};
	if (cl_convergence(scene, &def, run->points, &run->status))
		return TRUE;
	g_set_error(error, G_IO_ERROR,
				run->status.code == CL_STATUS_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_INVALID_ARGUMENT, "%s",
				run->status.message);
	return FALSE;
}

ClConvergenceRun *cl_convergence_run_new(const ClScene *scene, const char *parameter, const GArray *steps,
										 const GArray *backends, ClConvergenceProgress progress, void *user,
										 const _Atomic int *cancel, GError **error)
{
	ClConvergenceRun *run = cl_convergence_run_prepare(scene, parameter, steps, backends, error);
	if (run && !cl_convergence_run_compute(run, scene, (int)g_get_num_processors(), progress, user, cancel, error)) {
		cl_convergence_run_free(run);
		return NULL;
	}
	return run;
}

void cl_convergence_run_free(ClConvergenceRun *run)
{
	if (!run)
		return;
	g_array_free(run->steps, TRUE);
	g_array_free(run->backends, TRUE);
	g_free(run->points);
	g_free(run);
}

GString *cl_convergence_csv(const ClConvergenceRun *run)
{
	GString *out = g_string_new("backend,steps,dt,value\n");
	for (guint b = 0; b < run->backends->len; b++)
		for (guint k = 0; k < run->steps->len; k++) {
			int n = g_array_index(run->steps, int, k);
			const ClConvergencePoint *p = cl_convergence_run_point(run, b, k);
			g_string_append_printf(out, "%s,%d,%s,", cl_backend_info(g_array_index(run->backends, int, b))->id, n,
								   cl_format_number(run->duration / n).text);
			g_string_append_printf(out, "%s\n", cl_format_number(p->value).text);
		}
	return out;
}
