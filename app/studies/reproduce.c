/* Evaluation of the paper's reference rows. */
#include "reproduce.h"

#include "contactlab/sim.h"
#include "numbers.h"
#include "scene-file.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { COL_TABLE, COL_SCENE, COL_BACKEND, COL_QUANTITY, COL_PAPER, COL_EXPECTED, COL_TOLERANCE, COL_NOTE, COLS };

static const char *const header[COLS] = {"table", "scene", "backend", "quantity",
										 "paper", "expected", "tolerance", "note"};

static gboolean parse_optional_number(const char *text, double *out)
{
	if (!text[0]) {
		*out = NAN;
		return TRUE;
	}
	char *end;
	*out = g_ascii_strtod(text, &end);
	return *end == '\0' && isfinite(*out);
}

ClReproTable *cl_repro_load(const char *path, GError **error)
{
	char *text;
	if (!g_file_get_contents(path, &text, NULL, error))
		return NULL;
	char ***rows = cl_csv_parse(text);
	g_free(text);
	ClReproTable *table = g_new0(ClReproTable, 1);
	gboolean ok = rows[0] != NULL;
	for (int c = 0; ok && c < COLS; c++)
		ok = rows[0][c] && strcmp(rows[0][c], header[c]) == 0;
	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: the header must be %s,%s,%s,%s,%s,%s,%s,%s", path,
					header[0], header[1], header[2], header[3], header[4], header[5], header[6], header[7]);
	int n = 0;
	while (rows[n])
		n++;
	table->rows = g_new0(ClReproRow, (gsize)n);
	for (int r = 1; ok && r < n; r++) {
		char **f = rows[r];
		if (g_strv_length(f) == 1 && !f[0][0])
			continue; /* blank line */
		if (g_strv_length(f) != COLS) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: line %d: %u fields instead of %d", path, r + 1,
						g_strv_length(f), COLS);
			ok = FALSE;
			break;
		}
		ClReproRow *row = &table->rows[table->count++];
		row->table = g_strdup(f[COL_TABLE]);
		row->scene = g_strdup(f[COL_SCENE]);
		row->backend = g_strdup(f[COL_BACKEND]);
		row->quantity = g_strdup(f[COL_QUANTITY]);
		row->paper = g_strdup(f[COL_PAPER]);
		row->note = g_strdup(f[COL_NOTE]);
		if (!parse_optional_number(f[COL_EXPECTED], &row->expected) ||
			!parse_optional_number(f[COL_TOLERANCE], &row->tolerance) ||
			isnan(row->expected) != isnan(row->tolerance)) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
						"%s: line %d: expected and tolerance must both be numbers or both be empty", path, r + 1);
			ok = FALSE;
		}
		row->judged = !isnan(row->expected);
		row->ours = row->ours_under_exact = NAN;
	}
	cl_csv_free(rows);
	if (!ok) {
		cl_repro_free(table);
		return NULL;
	}
	return table;
}

ClReproTable *cl_repro_load_default(GError **error)
{
	char *path = g_build_filename(cl_data_dir(), "reference", "paper-tables.csv", NULL);
	ClReproTable *table = cl_repro_load(path, error);
	g_free(path);
	return table;
}

void cl_repro_free(ClReproTable *table)
{
	if (!table)
		return;
	for (int i = 0; i < table->count; i++) {
		ClReproRow *row = &table->rows[i];
		g_free(row->table);
		g_free(row->scene);
		g_free(row->backend);
		g_free(row->quantity);
		g_free(row->paper);
		g_free(row->note);
		g_free(row->message);
	}
	g_free(table->rows);
	g_free(table);
}

gboolean cl_repro_row_selected(const ClReproRow *row, const char *filter)
{
	return !filter || strcmp(filter, "all") == 0 || strcmp(filter, row->table) == 0;
}

/* ------------------------------------------------------------ evaluation */

typedef struct {
	const char *scene_id, *backend_id;
	GPtrArray *rows; /* ClReproRow*, all of this (scene, backend) */
} Group;

static void set_message(ClReproRow *row, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void set_message(ClReproRow *row, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	g_free(row->message);
	row->message = g_strdup_vprintf(format, args);
	va_end(args);
}

static void fail_all(Group *g, const char *message)
{
	for (guint i = 0; i < g->rows->len; i++)
		set_message(g->rows->pdata[i], "%s", message);
}

static char *status_text(const char *backend, const ClStatus *status)
{
	if (status->step >= 0)
		return g_strdup_printf("%s: %s at step %d: %s", backend, cl_status_name(status->code), status->step,
							   status->message);
	return g_strdup_printf("%s: %s: %s", backend, cl_status_name(status->code), status->message);
}

/* The scene as the paper ran it for this backend: Brax held each control
 * for two 1/480 s sub-steps, so its rows use half the steps and substeps 2.
 * A backend column "ID NAME=VALUE …" (ncp-dojo's solver) sets the backend's
 * parameters as ID.NAME=VALUE. */
static ClScene *scene_for(const char *scene_id, char **backend_words, GError **error)
{
	const char *backend_id = backend_words[0];
	ClScene *scene = cl_preset_load(scene_id, error);
	for (char **w = backend_words + 1; scene && *w; w++) {
		char *setting = g_strdup_printf("%s.%s", backend_id, *w);
		if (!cl_scene_apply_setting(scene, setting, error))
			g_clear_pointer(&scene, cl_scene_free);
		g_free(setting);
	}
	if (!scene || !g_str_has_suffix(backend_id, "-brax"))
		return scene;
	char *steps = g_strdup_printf("steps=%d", scene->steps / 2);
	char *substeps = g_strdup_printf("%s.substeps=2", backend_id);
	gboolean ok = cl_scene_apply_setting(scene, steps, error) && cl_scene_apply_setting(scene, substeps, error);
	g_free(steps);
	g_free(substeps);
	if (!ok) {
		cl_scene_free(scene);
		return NULL;
	}
	return scene;
}

typedef struct {
	gboolean done, ran;
	ClStatus status;
	double *g_s0, *g_u;
} Gradient;

static void compute_gradient(const ClScene *scene, int backend, Gradient *g)
{
	g->done = TRUE;
	g->g_s0 = g_new0(double, (gsize)cl_state_size(scene) + 1);
	g->g_u = g_new0(double, (gsize)cl_control_size(scene) + 1);
	ClRollout *rollout = cl_rollout_new(scene, backend);
	cl_rollout_run(rollout, NULL, NULL, true);
	g->status = *cl_rollout_status(rollout);
	g->ran = cl_rollout_steps_done(rollout) == scene->steps;
	cl_rollout_gradient(rollout, g->g_s0, g->g_u);
	cl_rollout_free(rollout);
}

static void derivative_row(const ClScene *scene, const Gradient *g, const char *backend_id, ClReproRow *row)
{
	const char *name = row->quantity + 2;
	ClParam param;
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, name, &param, message, sizeof message)) {
		set_message(row, "%s", message);
		return;
	}
	if (!cl_param_has_adjoint(&param)) {
		set_message(row, "%s has no adjoint derivative", name);
		return;
	}
	if (!g->ran) {
		char *text = status_text(backend_id, &g->status);
		set_message(row, "%s", text);
		g_free(text);
		return;
	}
	row->ours = *cl_param_slot(scene, &param, g->g_s0, g->g_u);
	if (g->status.code != CL_STATUS_OK) {
		char *text = status_text(backend_id, &g->status);
		set_message(row, "warning: %s", text);
		g_free(text);
	}
}

typedef struct {
	gboolean done, ok;
	ClOptimizeResult result;
	ClParam *params;
	int count;
	double under_exact;
	char *message;
} Optimization;

static void compute_optimization(const ClScene *scene, int backend, Optimization *o)
{
	o->done = TRUE;
	o->under_exact = NAN;
	const char *backend_id = cl_backend_info(backend)->id;
	char message[CL_MESSAGE_MAX];
	o->params = cl_optimize_expand(scene, &scene->optimize, &o->count, message, sizeof message);
	if (!o->params) {
		o->message = g_strdup(message);
		return;
	}
	o->ok = cl_optimize(scene, backend, NULL, NULL, NULL, &o->result);
	if (!o->ok) {
		char *text = status_text(backend_id, &o->result.status);
		o->message = g_strdup_printf("optimization stopped after %d iterations: %s", o->result.iterations_done, text);
		g_free(text);
		return;
	}
	/* a backend can look good only under its own biased dynamics */
	int exact = cl_backend_reference();
	ClScene *learned = cl_scene_copy(scene);
	cl_optimize_apply(learned, o->params, o->count, o->result.parameters);
	ClRollout *rollout = cl_rollout_new(learned, exact);
	cl_rollout_run(rollout, NULL, NULL, false);
	if (cl_rollout_steps_done(rollout) == learned->steps)
		o->under_exact = cl_rollout_loss(rollout);
	cl_rollout_free(rollout);
	cl_scene_free(learned);
}

static void optimized_row(const ClScene *scene, const Optimization *o, ClReproRow *row)
{
	const char *name = row->quantity + strlen("optimized ");
	if (!o->ok) {
		set_message(row, "%s", o->message);
		return;
	}
	for (int k = 0; k < o->count; k++) {
		char param[CL_NAME_MAX];
		cl_param_name(scene, &o->params[k], param, sizeof param);
		if (strcmp(param, name) == 0) {
			row->ours = o->result.parameters[k];
			return;
		}
	}
	set_message(row, "the scene's optimization does not change %s", name);
}

static void learning_row(const ClScene *scene, const Optimization *o, ClReproRow *row)
{
	int iteration;
	char lr[32];
	if (sscanf(row->quantity, "loss at iteration %d (lr %31[^)])", &iteration, lr) != 2) {
		set_message(row, "cannot read the quantity \"%s\"", row->quantity);
		return;
	}
	if (g_ascii_strtod(lr, NULL) != scene->optimize.learning_rate) {
		set_message(row, "the preset's learning rate is %s, the row's %s",
					cl_format_number(scene->optimize.learning_rate).text, lr);
		return;
	}
	if (!o->ok) {
		set_message(row, "%s", o->message);
		return;
	}
	if (iteration < 0 || iteration >= o->result.iterations_done) {
		set_message(row, "the optimization ran %d iterations, not %d", o->result.iterations_done, iteration + 1);
		return;
	}
	row->ours = o->result.loss[iteration];
	row->ours_under_exact = o->under_exact;
}

/* The continuous optimum of the scene's two-ball problem (Hu et al.'s closed form). */
static void optimum_row(const ClScene *scene, ClReproRow *row)
{
	double collision_time;
	row->ours = cl_two_ball_optimum(scene, &collision_time);
	if (isnan(row->ours))
		set_message(row, "the scene is not the two-ball problem the closed form solves");
}

static void evaluate_group(gpointer data, gpointer user)
{
	(void)user;
	Group *g = data;
	GError *error = NULL;
	char **words = g_strsplit(g->backend_id, " ", -1);
	int backend = words[0] ? cl_backend_find(words[0]) : -1;
	ClScene *scene = backend >= 0 ? scene_for(g->scene_id, words, &error) : NULL;
	g_strfreev(words);
	if (backend < 0) {
		fail_all(g, "no such backend");
	} else if (!scene) {
		fail_all(g, error->message);
		g_error_free(error);
	}
	Gradient gradient = {0};
	Optimization optimization = {0};
	for (guint i = 0; scene && i < g->rows->len; i++) {
		ClReproRow *row = g->rows->pdata[i];
		if (g_str_has_prefix(row->quantity, "d/")) {
			if (!gradient.done)
				compute_gradient(scene, backend, &gradient);
			derivative_row(scene, &gradient, g->backend_id, row);
		} else if (g_str_has_prefix(row->quantity, "optimized ") ||
				   g_str_has_prefix(row->quantity, "loss at iteration ")) {
			if (!optimization.done)
				compute_optimization(scene, backend, &optimization);
			if (row->quantity[0] == 'o')
				optimized_row(scene, &optimization, row);
			else
				learning_row(scene, &optimization, row);
		} else if (strcmp(row->quantity, "optimal loss") == 0) {
			optimum_row(scene, row);
		} else {
			set_message(row, "unknown quantity \"%s\"", row->quantity);
		}
	}
	for (guint i = 0; i < g->rows->len; i++) {
		ClReproRow *row = g->rows->pdata[i];
		row->evaluated = TRUE;
		row->ok = row->judged && isfinite(row->ours) && fabs(row->ours - row->expected) <= row->tolerance;
	}
	g_free(gradient.g_s0);
	g_free(gradient.g_u);
	cl_optimize_result_clear(&optimization.result);
	g_free(optimization.params);
	g_free(optimization.message);
	cl_scene_free(scene);
}

void cl_repro_evaluate(ClReproTable *table, const char *filter, int threads)
{
	GPtrArray *groups = g_ptr_array_new();
	for (int i = 0; i < table->count; i++) {
		ClReproRow *row = &table->rows[i];
		if (!cl_repro_row_selected(row, filter))
			continue;
		g_clear_pointer(&row->message, g_free);
		row->ours = row->ours_under_exact = NAN;
		row->evaluated = row->ok = FALSE;
		Group *group = NULL;
		for (guint k = 0; k < groups->len && !group; k++) {
			Group *candidate = groups->pdata[k];
			if (strcmp(candidate->scene_id, row->scene) == 0 && strcmp(candidate->backend_id, row->backend) == 0)
				group = candidate;
		}
		if (!group) {
			group = g_new0(Group, 1);
			group->scene_id = row->scene;
			group->backend_id = row->backend;
			group->rows = g_ptr_array_new();
			g_ptr_array_add(groups, group);
		}
		g_ptr_array_add(group->rows, row);
	}
	if (threads > 1 && groups->len > 1) {
		GThreadPool *pool = g_thread_pool_new(evaluate_group, NULL, threads, FALSE, NULL);
		for (guint k = 0; k < groups->len; k++)
			g_thread_pool_push(pool, groups->pdata[k], NULL);
		g_thread_pool_free(pool, FALSE, TRUE);
	} else {
		for (guint k = 0; k < groups->len; k++)
			evaluate_group(groups->pdata[k], NULL);
	}
	for (guint k = 0; k < groups->len; k++) {
		Group *group = groups->pdata[k];
		g_ptr_array_free(group->rows, TRUE);
		g_free(group);
	}
	g_ptr_array_free(groups, TRUE);
}
