/* Every backend on the degenerate contacts the exact backend reports by name
 * (tests/test-exact.c checks that part): grazing, a corner, three balls at
 * once, Zeno, starting in contact. Whatever a backend does there, its result
 * is finite or its status says why; and its help text says what its peer
 * would do in these cases. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

/* A backend whose file is still the placeholder reports so on every scene. */
static bool is_placeholder(int backend)
{
	return strcmp(cl_backend_info(backend)->summary, "not implemented yet") == 0;
}

static void test_finite_or_reported(gconstpointer data)
{
	int backend = GPOINTER_TO_INT(data);
	const char *id = cl_backend_info(backend)->id;
	for (int which = 0; which < CL_TEST_DEGENERATE_COUNT; which++) {
		ClScene *s = cl_test_degenerate((ClTestDegenerate)which);
		size_t ns = (size_t)cl_state_size(s), nu = (size_t)cl_control_size(s);
		ClRollout *r = cl_rollout_new(s, backend);
		cl_rollout_run(r, NULL, NULL, true);
		const ClStatus *status = cl_rollout_status(r);
		double *ds0 = g_new(double, ns), *du = g_new(double, nu);
		cl_rollout_gradient(r, ds0, du);
		int done = cl_rollout_steps_done(r);
		g_test_message("%s on %s: %s%s%s", id, s->name, cl_status_name(status->code), status->message[0] ? ": " : "",
					   status->message);
		if (!all_finite(cl_rollout_states(r), ns * (size_t)(done + 1)))
			g_error("%s on %s: a kept state is not finite", id, s->name);
		if (status->code == CL_STATUS_OK) {
			if (done != s->steps || !isfinite(cl_rollout_loss(r)) || !all_finite(ds0, ns) || !all_finite(du, nu))
				g_error("%s on %s: status ok, but the loss or a gradient is not finite", id, s->name);
		} else if (status->message[0] == '\0') {
			g_error("%s on %s: status %s without a message", id, s->name, cl_status_name(status->code));
		}
		g_free(ds0);
		g_free(du);
		cl_rollout_free(r);
		cl_scene_free(s);
	}
}

/* The summary (the GUI's and `contactlab backends`' help text) covers each
 * degenerate case: each entry lists words of which one must appear. */
static void test_summary_documents(gconstpointer data)
{
	int backend = GPOINTER_TO_INT(data);
	const ClBackendInfo *info = cl_backend_info(backend);
	if (is_placeholder(backend)) {
		g_test_skip("the backend is still a placeholder");
		return;
	}
	static const struct {
		const char *topic;
		const char *words[4]; /* NULL-terminated */
	} topics[] = {
		{"grazing contact", {"graz", "tangential", NULL}},
		{"simultaneous impacts (corner, three balls)", {"simultaneous", "corner", "at once", NULL}},
		{"resting contact / Zeno", {"zeno", "resting", NULL}},
		{"contact at t = 0", {"t = 0", "starting in contact", "starts in contact", NULL}},
	};
	char *summary = g_ascii_strdown(info->summary, -1);
	GString *missing = g_string_new(NULL);
	for (size_t k = 0; k < G_N_ELEMENTS(topics); k++) {
		bool found = false;
		for (int w = 0; topics[k].words[w] && !found; w++)
			found = strstr(summary, topics[k].words[w]) != NULL;
		if (!found)
			g_string_append_printf(missing, "%s%s", missing->len ? ", " : "", topics[k].topic);
	}
	if (missing->len)
		g_test_fail_printf("%s: its summary does not say what the peer does for %s", info->id, missing->str);
	g_string_free(missing, TRUE);
	g_free(summary);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (int b = 0; b < cl_backend_count(); b++) {
		char *path = g_strdup_printf("/degenerate/%s/finite-or-reported", cl_backend_info(b)->id);
		g_test_add_data_func(path, GINT_TO_POINTER(b), test_finite_or_reported);
		g_free(path);
		path = g_strdup_printf("/degenerate/%s/documented", cl_backend_info(b)->id);
		g_test_add_data_func(path, GINT_TO_POINTER(b), test_summary_documents);
		g_free(path);
	}
	return g_test_run();
}
