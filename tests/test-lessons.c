/* Lessons: every shipped lesson loads, every step applies headless, and
 * every number its text cites equals what the CLI computes for the step's
 * scene (`contactlab gradients`, `optimize`, `convergence`, `simulate`,
 * `reproduce`); bad lesson files get path-named messages; the handout PDF
 * has one page per step plus the cover. */
#include "agreement.h"
#include "cli-run.h"
#include "lesson-file.h"
#include "lesson.h"
#include "numbers.h"
#include "scene-file.h"

#include <cairo.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

static char *tmp_dir;
static GHashTable *cli_cache; /* command line → stdout */

/* Runs contactlab; returns the exit status. */
static int run(const char *const *args, char **out, char **err)
{
	return cl_test_run_cli(tmp_dir, args, out, err);
}

/* stdout of a command that must succeed, run once per distinct command line. */
static const char *cli(const char *const *args)
{
	char *key = g_strjoinv(" ", (char **)args);
	const char *cached = g_hash_table_lookup(cli_cache, key);
	if (cached) {
		g_free(key);
		return cached;
	}
	char *out = NULL, *err = NULL;
	int status = run(args, &out, &err);
	if (status != 0)
		g_error("%s: exit %d: %s", key, status, err);
	g_free(err);
	g_hash_table_insert(cli_cache, key, out);
	return out;
}

static char *read_file(const char *path)
{
	char *text = NULL;
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* The value of row (first column = a, second = b) in CSV text, column col. */
static double csv_lookup(const char *text, const char *a, const char *b, int col)
{
	char ***rows = cl_csv_parse(text);
	double value = NAN;
	gboolean found = FALSE;
	for (char ***row = rows + 1; *row && !found; row++)
		if (g_strv_length(*row) > (guint)col && strcmp((*row)[0], a) == 0 && (!b || strcmp((*row)[1], b) == 0)) {
			value = g_ascii_strtod((*row)[col], NULL);
			found = TRUE;
		}
	cl_csv_free(rows);
	if (!found)
		g_error("no row %s,%s in\n%s", a, b ? b : "*", text);
	return value;
}

/* "LABEL   VALUE" from optimize's summary. */
static double summary_value(const char *text, const char *label)
{
	char **lines = g_strsplit(text, "\n", -1);
	double value = NAN;
	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, label))
			value = g_ascii_strtod(g_strstrip(*l + strlen(label)), NULL);
	g_strfreev(lines);
	g_assert_false(isnan(value));
	return value;
}

/* The same double (within rounding of the shortest text), shown the same way. */
static void check_cite(const ClCite *cite, double computed, const char *shown, double expected)
{
	g_test_message("{%s}: lesson %.17g (\"%s\"), CLI %.17g", cite->source, computed, shown, expected);
	g_assert_true(isfinite(computed));
	g_assert_cmpfloat_with_epsilon(computed, expected, 1e-12 * fmax(1.0, fabs(expected)));
	char *expected_text = cl_lesson_format_number(cite->format, expected);
	g_assert_cmpstr(shown, ==, expected_text);
	g_free(expected_text);
}

/* ------------------------------------------------------------ contacts */

/* What a trajectory (simulate CSV) hits, in order, from its velocities: a
 * contact is an approach turning into a separation close to a wall or a
 * ball: independent of the backends' contact reports. */
static char *contacts_from_trajectory(const ClScene *scene, const char *csv)
{
	char ***rows = cl_csv_parse(csv);
	int balls = scene->ball_count, n = 0;
	for (char ***row = rows + 1; *row; row++)
		n = MAX(n, atoi((*row)[1]) + 1);
	double *s = g_new0(double, (gsize)n * 4 * (gsize)balls);
	for (char ***row = rows + 1; *row; row++) {
		int step = atoi((*row)[1]), ball = cl_scene_find_ball(scene, (*row)[3]);
		for (int c = 0; c < 4; c++)
			s[((gsize)step * (gsize)balls + (gsize)ball) * 4 + (gsize)c] = g_ascii_strtod((*row)[4 + c], NULL);
	}
	cl_csv_free(rows);
	double dt = cl_scene_dt(scene);
	GString *out = g_string_new(NULL);
	int last_a = -1, last_b = 0;
	for (int k = 0; k + 1 < n; k++)
		for (int i = 0; i < balls; i++) {
			const double *p0 = s + ((gsize)k * (gsize)balls + (gsize)i) * 4, *p1 = p0 + 4 * (gsize)balls;
			double r = scene->balls[i].radius;
			for (int w = 0; w < scene->wall_count; w++) {
				const ClWall *wall = &scene->walls[w];
				double v0 = wall->normal.x * p0[2] + wall->normal.y * p0[3];
				double v1 = wall->normal.x * p1[2] + wall->normal.y * p1[3];
				double gap = wall->normal.x * (p0[0] - wall->point.x) + wall->normal.y * (p0[1] - wall->point.y) - r;
				if (v0 < 0 && v1 > 0 && gap < fabs(v0) * dt + 1e-3 && !(last_a == i && last_b == -1 - w)) {
					g_string_append_printf(out, "%s%s%s%s", out->len ? " then " : "", balls > 1 ? scene->balls[i].id : "",
										   balls > 1 ? "–" : "", wall->id);
					last_a = i;
					last_b = -1 - w;
				}
			}
			for (int j = i + 1; j < balls; j++) {
				const double *q0 = s + ((gsize)k * (gsize)balls + (gsize)j) * 4, *q1 = q0 + 4 * (gsize)balls;
				double dx0 = q0[0] - p0[0], dy0 = q0[1] - p0[1], dx1 = q1[0] - p1[0], dy1 = q1[1] - p1[1];
				double a0 = dx0 * (q0[2] - p0[2]) + dy0 * (q0[3] - p0[3]);
				double a1 = dx1 * (q1[2] - p1[2]) + dy1 * (q1[3] - p1[3]);
				double gap = hypot(dx0, dy0) - r - scene->balls[j].radius;
				double speed = hypot(q0[2] - p0[2], q0[3] - p0[3]);
				if (a0 < 0 && a1 > 0 && gap < speed * dt + 1e-3 && !(last_a == i && last_b == j)) {
					g_string_append_printf(out, "%s%s–%s", out->len ? " then " : "", scene->balls[i].id,
										   scene->balls[j].id);
					last_a = i;
					last_b = j;
				}
			}
		}
	g_free(s);
	if (!out->len)
		g_string_append(out, "nothing");
	return g_string_free(out, FALSE);
}

/* The learned scene of an `optimize` run: scalars from its CSV's last row,
 * control sequences from its --controls-csv. */
static ClScene *learned_scene(const ClScene *scene, const char *csv, const char *controls_path)
{
	ClScene *learned = cl_scene_copy(scene);
	char ***rows = cl_csv_parse(csv);
	guint last = 0;
	while (rows[last + 1])
		last++;
	for (guint c = 2; rows[0][c]; c++) {
		ClParam p;
		g_assert_true(cl_param_parse(learned, rows[0][c], &p, NULL, 0));
		cl_param_set(learned, &p, g_ascii_strtod(rows[last][c], NULL));
	}
	cl_csv_free(rows);
	if (controls_path && g_file_test(controls_path, G_FILE_TEST_EXISTS)) {
		char *text = read_file(controls_path);
		char ***c = cl_csv_parse(text);
		/* step,ux,uy (one controlled ball) */
		g_assert_cmpstr(c[0][0], ==, "step");
		int ball = -1;
		for (int i = 0; i < learned->ball_count; i++)
			if (learned->balls[i].control_kind != CL_CONTROL_NONE)
				ball = i;
		g_assert_cmpint(ball, >=, 0);
		double *u = g_new0(double, 2 * (gsize)learned->steps);
		for (char ***row = c + 1; *row; row++) {
			int k = atoi((*row)[0]);
			u[2 * k] = g_ascii_strtod((*row)[1], NULL);
			u[2 * k + 1] = g_ascii_strtod((*row)[2], NULL);
		}
		cl_scene_set_control_sequence(learned, ball, u);
		g_free(u);
		cl_csv_free(c);
		g_free(text);
	}
	return learned;
}

/* ------------------------------------------------------------ smoothing */

/* `contactlab smooth` with the step's smoothing and backends; format csv or json. */
static const char *smooth_cli(const ClLessonStep *step, const char *scene_path, const char *format,
							  const char *terms_path)
{
	const ClLessonSmoothing *sm = &step->smoothing;
	GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(args, g_strdup("smooth"));
	g_ptr_array_add(args, g_strdup(scene_path));
	GString *sigma = g_string_new(NULL);
	for (guint k = 0; sm->parameters[k]; k++) {
		g_ptr_array_add(args, g_strdup("--param"));
		g_ptr_array_add(args, g_strdup(sm->parameters[k]));
		g_string_append_printf(sigma, "%s%s", k ? "," : "", cl_format_number(sm->sigma[k]).text);
	}
	g_ptr_array_add(args, g_strdup("--sigma"));
	g_ptr_array_add(args, g_string_free(sigma, FALSE));
	g_ptr_array_add(args, g_strdup("--samples"));
	g_ptr_array_add(args, g_strdup_printf("%d", sm->samples));
	g_ptr_array_add(args, g_strdup("--seed"));
	g_ptr_array_add(args, g_strdup_printf("%" G_GUINT64_FORMAT, sm->seed));
	if (sm->antithetic)
		g_ptr_array_add(args, g_strdup("--antithetic"));
	if (!isnan(sm->gamma)) {
		g_ptr_array_add(args, g_strdup("--gamma"));
		g_ptr_array_add(args, g_strdup(cl_format_number(sm->gamma).text));
	}
	for (guint b = 0; b < step->backends->len; b++) {
		g_ptr_array_add(args, g_strdup("--backend"));
		g_ptr_array_add(args, g_strdup(cl_backend_info(g_array_index(step->backends, int, b))->id));
	}
	g_ptr_array_add(args, g_strdup("--format"));
	g_ptr_array_add(args, g_strdup(format));
	if (terms_path) {
		g_ptr_array_add(args, g_strdup("--terms-csv"));
		g_ptr_array_add(args, g_strdup(terms_path));
	}
	g_ptr_array_add(args, NULL);
	const char *out = cli((const char *const *)args->pdata);
	g_ptr_array_free(args, TRUE);
	return out;
}

/* The mean (col 3) or stderr (col 4) of row backend,estimator,parameter of smooth's CSV. */
static double smooth_csv_value(const char *text, const char *backend, const char *estimator, const char *parameter,
							   int col)
{
	char ***rows = cl_csv_parse(text);
	double value = NAN;
	gboolean found = FALSE;
	for (char ***row = rows + 1; *row && !found; row++)
		if (strcmp((*row)[0], backend) == 0 && strcmp((*row)[1], estimator) == 0 && strcmp((*row)[2], parameter) == 0) {
			value = g_ascii_strtod((*row)[col], NULL);
			found = TRUE;
		}
	cl_csv_free(rows);
	if (!found)
		g_error("no row %s,%s,%s in\n%s", backend, estimator, parameter, text);
	return value;
}

/* A backend's member of smooth's JSON: "alpha" object's key, or the backend's own. */
static JsonNode *smooth_json_member(const char *text, const char *backend, const char *alpha_key, const char *key)
{
	JsonParser *parser = json_parser_new();
	g_assert_true(json_parser_load_from_data(parser, text, -1, NULL));
	JsonArray *backends = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "backends");
	JsonNode *found = NULL;
	for (guint i = 0; i < json_array_get_length(backends) && !found; i++) {
		JsonObject *b = json_array_get_object_element(backends, i);
		if (strcmp(json_object_get_string_member(b, "backend"), backend) == 0)
			found = json_node_copy(alpha_key ? json_object_get_member(json_object_get_object_member(b, "alpha"),
																	   alpha_key)
											 : json_object_get_member(b, key));
	}
	g_object_unref(parser);
	g_assert_nonnull(found);
	return found;
}

/* fobg-min, fobg-max and fobg-negative from the terms file smooth writes. */
static double terms_value(const char *path, const char *backend, const char *parameter, ClSmoothCite what)
{
	char *text = read_file(path);
	char ***rows = cl_csv_parse(text);
	double lo = INFINITY, hi = -INFINITY;
	int n = 0, negative = 0;
	for (char ***row = rows + 1; *row; row++)
		if (strcmp((*row)[0], backend) == 0 && strcmp((*row)[2], parameter) == 0 && (*row)[4][0]) {
			double y = g_ascii_strtod((*row)[4], NULL);
			lo = fmin(lo, y);
			hi = fmax(hi, y);
			negative += y < 0;
			n++;
		}
	cl_csv_free(rows);
	g_free(text);
	g_assert_cmpint(n, >, 0);
	return what == CL_SMOOTH_CITE_FOBG_MIN ? lo : what == CL_SMOOTH_CITE_FOBG_MAX ? hi : 100.0 * negative / n;
}

static void check_smooth_cite(const ClLessonStep *step, const ClCite *cite, const char *scene_path, double value,
							  const char *shown)
{
	const char *id = cl_backend_info(cite->backend)->id;
	ClSmoothCite what = (ClSmoothCite)cite->index;
	const char *name = cl_smooth_cite_name(what);
	switch (what) {
	case CL_SMOOTH_CITE_FOBG_MIN:
	case CL_SMOOTH_CITE_FOBG_MAX:
	case CL_SMOOTH_CITE_FOBG_NEGATIVE: {
		char *terms = g_strdup_printf("%s/terms-%p.csv", tmp_dir, (void *)step);
		smooth_cli(step, scene_path, "csv", terms);
		check_cite(cite, value, shown, terms_value(terms, id, cite->parameter, what));
		g_free(terms);
		break;
	}
	case CL_SMOOTH_CITE_ALPHA_RULE:
	case CL_SMOOTH_CITE_EPSILON:
	case CL_SMOOTH_CITE_GAMMA:
	case CL_SMOOTH_CITE_NOT_OK: {
		const char *json = smooth_cli(step, scene_path, "json", NULL);
		JsonNode *node = what == CL_SMOOTH_CITE_NOT_OK ? smooth_json_member(json, id, NULL, "not_ok")
						 : smooth_json_member(json, id, what == CL_SMOOTH_CITE_ALPHA_RULE ? "rule" : name, NULL);
		if (what == CL_SMOOTH_CITE_ALPHA_RULE) {
			g_test_message("{%s}: lesson \"%s\", CLI \"%s\"", cite->source, shown, json_node_get_string(node));
			g_assert_cmpstr(shown, ==, json_node_get_string(node));
		} else {
			check_cite(cite, value, shown, json_node_get_double(node));
		}
		json_node_unref(node);
		break;
	}
	default: {
		/* the CSV's estimator and column: "zobg-se" is the zobg row's stderr */
		gboolean se = g_str_has_suffix(name, "-se");
		char *estimator = se ? g_strndup(name, strlen(name) - 3) : g_strdup(name);
		const char *parameter = what < CL_SMOOTH_CITE_LOSS ? cite->parameter : "";
		const char *csv = smooth_cli(step, scene_path, "csv", NULL);
		check_cite(cite, value, shown, smooth_csv_value(csv, id, estimator, parameter, se ? 4 : 3));
		g_free(estimator);
		break;
	}
	}
}

/* ------------------------------------------------------------ the walk */

static gboolean gradients_has_column(const ClParam *p)
{
	return p->target == CL_PARAM_POSITION || p->target == CL_PARAM_VELOCITY ||
		   (p->target == CL_PARAM_CONTROL && p->step == 0);
}

static void check_step(const ClLesson *lesson, guint index)
{
	const ClLessonStep *step = g_ptr_array_index(lesson->steps, index);
	ClLessonResult *r = cl_lesson_step_apply(step, NULL);
	g_assert_nonnull(r);
	for (guint i = 0; i < r->problems->len; i++)
		g_test_message("problem: %s", (const char *)g_ptr_array_index(r->problems, i));
	g_assert_cmpuint(r->problems->len, ==, 0);
	g_assert_null(strchr(r->text, '{'));
	g_assert_cmpuint(step->cites->len, >, 0);

	char *name = g_strdup_printf("%s-%u.json", lesson->id, index + 1);
	char *scene_path = g_build_filename(tmp_dir, name, NULL);
	GError *error = NULL;
	g_assert_true(cl_scene_file_save(step->scene, scene_path, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < step->cites->len; i++) {
		const ClCite *cite = &g_array_index(step->cites, ClCite, i);
		const char *id = cite->backend >= 0 ? cl_backend_info(cite->backend)->id : NULL;
		double value = r->cite_values[i];
		const char *shown = r->cite_texts[i];
		ClParam p;
		switch (cite->kind) {
		case CL_CITE_GRADIENT:
		case CL_CITE_FD:
		case CL_CITE_LOSS: {
			g_assert_true(cite->kind == CL_CITE_LOSS || cl_param_parse(step->scene, cite->parameter, &p, NULL, 0));
			if (cite->kind == CL_CITE_GRADIENT && !gradients_has_column(&p)) {
				/* an added column (--param): the backend's adjoint, or where it
				 * has none (nan in the CSV) its own central difference */
				const char *args[] = {"gradients", scene_path, "--backend", id,	   "--param", cite->parameter,
									  "--fd",	   "all",	   "--format",	"csv", NULL};
				const char *out = cli(args);
				double expected = csv_lookup(out, id, cite->parameter, 2);
				if (isnan(expected)) {
					g_autofree char *fd_row = g_strdup_printf("fd:%s", cite->parameter);
					expected = csv_lookup(out, id, fd_row, 2);
				}
				check_cite(cite, value, shown, expected);
				break;
			}
			const char *args[] = {"gradients", scene_path, "--backend", id, "--format", "csv", NULL};
			char *row = cite->kind == CL_CITE_LOSS	   ? g_strdup("loss")
						: cite->kind == CL_CITE_FD ? g_strdup_printf("fd:%s", cite->parameter)
												   : g_strdup(cite->parameter);
			check_cite(cite, value, shown, csv_lookup(cli(args), id, row, 2));
			g_free(row);
			break;
		}
		case CL_CITE_LEARNING_LOSS:
		case CL_CITE_LEARNING_FINAL:
		case CL_CITE_LEARNING_EXACT:
		case CL_CITE_LEARNING_PARAMETER:
		case CL_CITE_LEARNING_CONTACTS: {
			char *csv_path = g_strdup_printf("%s/%s-%u-%s.csv", tmp_dir, lesson->id, index + 1, id);
			char *controls_path = g_strdup_printf("%s/%s-%u-%s-controls.csv", tmp_dir, lesson->id, index + 1, id);
			gboolean controls = FALSE;
			for (int k = 0; k < step->scene->optimize.parameter_count; k++)
				controls |= g_str_has_suffix(step->scene->optimize.parameters[k], ".control");
			const char *args[] = {"optimize",	 scene_path, "--backend", id, "--csv", csv_path,
								  controls ? "--controls-csv" : NULL, controls_path, NULL};
			const char *summary = cli(args);
			char *csv = read_file(csv_path);
			if (cite->kind == CL_CITE_LEARNING_LOSS) {
				char *k = g_strdup_printf("%d", cite->index);
				check_cite(cite, value, shown, csv_lookup(csv, k, NULL, 1));
				g_free(k);
			} else if (cite->kind == CL_CITE_LEARNING_FINAL) {
				char *label = g_strdup_printf("final loss (%s)", id);
				check_cite(cite, value, shown, summary_value(summary, label));
				g_free(label);
			} else if (cite->kind == CL_CITE_LEARNING_EXACT) {
				check_cite(cite, value, shown, summary_value(summary, "final parameters' loss under exact"));
			} else if (cite->kind == CL_CITE_LEARNING_PARAMETER) {
				char ***rows = cl_csv_parse(csv);
				guint last = 0, col = 0;
				while (rows[last + 1])
					last++;
				for (guint c = 0; rows[0][c]; c++)
					if (strcmp(rows[0][c], cite->parameter) == 0)
						col = c;
				g_assert_cmpuint(col, >, 1);
				check_cite(cite, value, shown, g_ascii_strtod(rows[last][col], NULL));
				cl_csv_free(rows);
			} else {
				/* simulate the learned parameters and read the contacts off the trajectory */
				ClScene *learned = learned_scene(step->scene, csv, controls ? controls_path : NULL);
				char *learned_path = g_strdup_printf("%s/%s-%u-%s-learned.json", tmp_dir, lesson->id, index + 1, id);
				g_assert_true(cl_scene_file_save(learned, learned_path, NULL));
				const char *sim[] = {"simulate", learned_path, "--backend", id, NULL};
				char *contacts = contacts_from_trajectory(learned, cli(sim));
				g_test_message("{%s}: lesson \"%s\", trajectory \"%s\"", cite->source, shown, contacts);
				g_assert_cmpstr(shown, ==, contacts);
				g_free(contacts);
				g_free(learned_path);
				cl_scene_free(learned);
			}
			g_free(csv);
			g_free(csv_path);
			g_free(controls_path);
			break;
		}
		case CL_CITE_CONVERGENCE: {
			char *steps = g_strdup_printf("%d", cite->index);
			const char *args[] = {"convergence", scene_path, "--param", step->view.parameter, "--steps", steps,
								  "--backend",   id,         "--csv",   "-",                  NULL};
			check_cite(cite, value, shown, csv_lookup(cli(args), id, steps, 3));
			g_free(steps);
			break;
		}
		case CL_CITE_OPTIMUM: {
			g_assert_nonnull(step->scene_preset);
			const char *args[] = {"reproduce", "--table", "3-learning", "--format", "csv", NULL};
			char ***rows = cl_csv_parse(cli(args));
			double expected = NAN;
			for (char ***row = rows + 1; *row; row++)
				if (strcmp((*row)[1], step->scene_preset) == 0 && strcmp((*row)[2], "exact") == 0 &&
					strcmp((*row)[3], "optimal loss") == 0)
					expected = g_ascii_strtod((*row)[6], NULL);
			cl_csv_free(rows);
			check_cite(cite, value, shown, expected);
			break;
		}
		case CL_CITE_OPTIMUM_TIME: {
			/* no command prints it: the exact simulation of the analytic
			 * optimal control must collide within a step of it */
			double *u = g_new0(double, (gsize)cl_control_size(step->scene));
			ClScene *optimal = cl_scene_copy(step->scene);
			int ball = 0;
			g_assert_true(cl_two_ball_optimal_control(step->scene, u));
			for (int b = 0; b < optimal->ball_count; b++)
				if (optimal->balls[b].control_kind != CL_CONTROL_NONE)
					ball = b;
			cl_scene_set_control_sequence(optimal, ball, u);
			ClRollout *rollout = cl_rollout_new(optimal, cl_backend_find("exact"));
			cl_rollout_run(rollout, NULL, NULL, false);
			g_assert_cmpint(cl_rollout_event_count(rollout), >=, 1);
			double t = cl_rollout_events(rollout)[0].time;
			g_test_message("{%s}: lesson %.9g, exact collision of the optimal control %.9g", cite->source, value, t);
			g_assert_cmpfloat(fabs(t - value), <, cl_scene_dt(step->scene));
			cl_rollout_free(rollout);
			cl_scene_free(optimal);
			g_free(u);
			break;
		}
		case CL_CITE_SMOOTH:
			check_smooth_cite(step, cite, scene_path, value, shown);
			break;
		case CL_CITE_COUNT:
			g_assert_not_reached();
		}
	}
	g_free(scene_path);
	g_free(name);
	cl_lesson_result_free(r);
}

static void test_lesson(gconstpointer data)
{
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_load(data, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(lesson->steps->len, >=, 2);
	for (guint i = 0; i < lesson->steps->len; i++)
		check_step(lesson, i);
	cl_lesson_free(lesson);
}

/* The lessons of issue 9 and of smoothing.md §7 ship, in order, and every one loads. */
static void test_shipped(void)
{
	GError *error = NULL;
	GPtrArray *lessons = cl_lessons_load_all(&error);
	g_assert_no_error(error);
	static const char *const required[] = {"time-of-impact", "projection", "two-answers",		 "toi-task3",
										   "learning-task3", "float32",	   "smoothed-gradients", "choosing-alpha"};
	g_assert_cmpuint(lessons->len, >=, G_N_ELEMENTS(required));
	for (size_t i = 0; i < G_N_ELEMENTS(required); i++)
		g_assert_cmpstr(((ClLesson *)g_ptr_array_index(lessons, i))->id, ==, required[i]);
	/* every view appears somewhere */
	gboolean seen[CL_LESSON_VIEW_COUNT] = {0};
	for (guint i = 0; i < lessons->len; i++) {
		const ClLesson *l = g_ptr_array_index(lessons, i);
		for (guint k = 0; k < l->steps->len; k++)
			seen[((ClLessonStep *)g_ptr_array_index(l->steps, k))->view.kind] = TRUE;
	}
	for (int v = 0; v < CL_LESSON_VIEW_COUNT; v++)
		g_assert_true(seen[v]);
	g_ptr_array_free(lessons, TRUE);
}

/* ------------------------------------------------------------ bad files */

typedef struct {
	const char *name;
	const char *json;
	const char *message; /* must appear in the error, after "bad.json: " */
} BadLesson;

#define HEAD "{\"contactlab_lesson\": 1, \"id\": \"bad\", \"title\": \"Bad\", \"steps\": ["
#define STEP(backends, view, text) \
	"{\"title\": \"s\", \"scene\": \"task1-bounce-once\", \"backends\": " backends ", \"view\": " view \
	", \"text\": \"" text "\"}]}"
#define GRAD "{\"type\": \"gradients\"}"

static const BadLesson bad_lessons[] = {
	{"syntax", "{\"contactlab_lesson\": 1,, }", "bad.json: line 1, column"},
	{"empty", "", "bad.json: not valid JSON: the file is empty"},
	{"version", "{\"contactlab_lesson\": 2, \"id\": \"bad\", \"title\": \"B\", \"steps\": []}",
	 "bad.json: contactlab_lesson: version 2 is newer"},
	{"no-steps", "{\"contactlab_lesson\": 1, \"id\": \"bad\", \"title\": \"B\"}", "bad.json: steps: missing"},
	{"bad-id", "{\"contactlab_lesson\": 1, \"id\": \"Bad One\", \"title\": \"B\", \"steps\": []}",
	 "bad.json: id: \"Bad One\": use lower-case"},
	{"unknown-key", HEAD "{\"title\": \"s\", \"colour\": 1}]}", "bad.json: steps[0].colour: unknown key"},
	{"no-preset", HEAD "{\"title\": \"s\", \"scene\": \"task9\", \"backends\": [\"exact\"], \"view\": " GRAD
					   ", \"text\": \"x {loss exact}\"}]}",
	 "bad.json: steps[0].scene: no preset \"task9\""},
	{"inline-scene",
	 HEAD "{\"title\": \"s\", \"scene\": {\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", "
		  "\"position\": [0, 0], \"radius\": -1}]}, \"backends\": [\"exact\"], \"view\": " GRAD
		  ", \"text\": \"{loss exact}\"}]}",
	 "bad.json: steps[0].scene: balls[0].radius: must be positive"},
	{"bad-set", HEAD "{\"title\": \"s\", \"scene\": \"task1-bounce-once\", \"set\": [\"steps=0\"], \"backends\": "
					 "[\"exact\"], \"view\": " GRAD ", \"text\": \"{loss exact}\"}]}",
	 "bad.json: steps[0].set[0]: steps=0: steps must be a whole number"},
	{"unknown-backend", HEAD STEP("[\"exact\", \"bullet\"]", GRAD, "{loss exact}"),
	 "bad.json: steps[0].backends[1]: unknown backend \"bullet\""},
	{"twice", HEAD STEP("[\"exact\", \"exact\"]", GRAD, "{loss exact}"),
	 "bad.json: steps[0].backends[1]: backend \"exact\" is listed twice"},
	{"backend-param",
	 HEAD STEP("[{\"id\": \"compliant-warp\", \"parameters\": {\"stiffnes\": 1}}]", GRAD, "{loss compliant-warp}"),
	 "bad.json: steps[0].backends[0].parameters.stiffnes: compliant-warp.stiffnes=1: backend \"compliant-warp\" has "
	 "no parameter"},
	{"backend-choice",
	 HEAD STEP("[{\"id\": \"impulse\", \"parameters\": {\"precision\": \"float16\"}}]", GRAD, "{loss impulse}"),
	 "bad.json: steps[0].backends[0].parameters.precision: impulse.precision=float16: \"float16\" is not one of"},
	{"view-type", HEAD STEP("[\"exact\"]", "{\"type\": \"table\"}", "{loss exact}"),
	 "bad.json: steps[0].view.type: \"table\" is not a view"},
	{"view-key", HEAD STEP("[\"exact\"]", "{\"type\": \"gradients\", \"steps\": [1]}", "{loss exact}"),
	 "bad.json: steps[0].view.steps: unknown key"},
	{"view-parameter",
	 HEAD STEP("[\"exact\"]", "{\"type\": \"convergence\", \"parameter\": \"ball.position.z\", \"steps\": [60]}",
			   "{loss exact}"),
	 "bad.json: steps[0].view.parameter: \"ball.position.z\" is not a parameter of this scene"},
	{"view-steps",
	 HEAD STEP("[\"exact\"]", "{\"type\": \"convergence\", \"parameter\": \"ball.position.y\", \"steps\": [60, 0]}",
			   "{loss exact}"),
	 "bad.json: steps[0].view.steps[1]: 0 is outside [1, 1000000]"},
	{"no-optimize", HEAD STEP("[\"exact\"]", "{\"type\": \"learning\"}", "{loss exact}"),
	 "bad.json: steps[0].view: the scene has no optimization problem"},
	{"heatmap-range",
	 HEAD STEP("[\"exact\"]",
			   "{\"type\": \"heatmap\", \"x\": {\"parameter\": \"ball.velocity.x\", \"min\": 1, \"max\": 1, \"count\": "
			   "4}, \"y\": {\"parameter\": \"ball.velocity.y\", \"min\": 0, \"max\": 1, \"count\": 4}}",
			   "{loss exact}"),
	 "bad.json: steps[0].view.x.max: must be greater than min"},
	{"perturb-unknown",
	 HEAD STEP("[\"exact\"]", "{\"type\": \"perturbation\", \"parameter\": \"ground.tilt\"}", "{loss exact}"),
	 "bad.json: steps[0].view.parameter: \"ground.tilt\" is not a parameter of this scene"},
	{"highlight", HEAD "{\"title\": \"s\", \"scene\": \"task1-bounce-once\", \"backends\": [\"exact\"], \"view\": " GRAD
					   ", \"highlight\": [{\"backend\": \"impulse\"}], \"text\": \"{loss exact}\"}]}",
	 "bad.json: steps[0].highlight[0].backend: backend \"impulse\" is not enabled in this step"},
#define SMOOTHING(body, text)                                                                                      \
	HEAD "{\"title\": \"s\", \"scene\": \"task1-bounce-once\", \"backends\": [\"exact\", \"impulse\"], \"view\": " GRAD   \
		 ", \"smoothing\": " body ", \"text\": \"" text "\"}]}"
#define SMOOTH_Y "{\"parameters\": [\"ball.position.y\", \"elasticity\"], \"sigma\": 0.05}"
	{"smooth-without-smoothing", HEAD STEP("[\"exact\"]", GRAD, "{smooth exact zobg ball.position.y}"),
	 "bad.json: steps[0].text: {smooth exact zobg ball.position.y}: smooth values need the step's \"smoothing\""},
	{"smooth-what", SMOOTHING(SMOOTH_Y, "{smooth exact zobg-sd ball.position.y}"),
	 "bad.json: steps[0].text: {smooth exact zobg-sd ball.position.y}: \"zobg-sd\" is not one of point, zobg"},
	{"smooth-parameter", SMOOTHING(SMOOTH_Y, "{smooth exact zobg ball.position.x}"),
	 "bad.json: steps[0].text: {smooth exact zobg ball.position.x}: \"ball.position.x\" is not one of the "
	 "smoothing's parameters"},
	{"smooth-no-adjoint", SMOOTHING(SMOOTH_Y, "{smooth impulse fobg elasticity}"),
	 "bad.json: steps[0].text: {smooth impulse fobg elasticity}: impulse has no adjoint of elasticity"},
	{"smooth-alpha-parameter", SMOOTHING(SMOOTH_Y, "{smooth impulse alpha ball.position.y}"),
	 "bad.json: steps[0].text: {smooth impulse alpha ball.position.y}: {smooth impulse alpha} takes no parameter"},
	{"smooth-sigma-count", SMOOTHING("{\"parameters\": [\"ball.position.y\"], \"sigma\": [0.05, 0.1]}", "{loss exact}"),
	 "bad.json: steps[0].smoothing.sigma: needs one value per parameter (1)"},
	{"smooth-sigma", SMOOTHING("{\"parameters\": [\"ball.position.y\"], \"sigma\": 0}", "{loss exact}"),
	 "bad.json: steps[0].smoothing.sigma: must be positive"},
	{"smooth-antithetic-odd",
	 SMOOTHING("{\"parameters\": [\"ball.position.y\"], \"sigma\": 0.05, \"samples\": 11, \"antithetic\": true}",
			   "{loss exact}"),
	 "bad.json: steps[0].smoothing.antithetic: antithetic sampling needs an even number of samples (got 11)"},
	{"smooth-key", SMOOTHING("{\"parameters\": [\"ball.position.y\"], \"sigma\": 0.05, \"N\": 10}", "{loss exact}"),
	 "bad.json: steps[0].smoothing.N: unknown key"},
	{"cite-kind", HEAD STEP("[\"exact\"]", GRAD, "h = {gradiant exact ball.position.y}"),
	 "bad.json: steps[0].text: {gradiant exact ball.position.y}: \"gradiant\" is not a placeholder kind"},
	{"cite-backend", HEAD STEP("[\"exact\"]", GRAD, "{gradient impulse ball.position.y}"),
	 "bad.json: steps[0].text: {gradient impulse ball.position.y}: backend \"impulse\" is not enabled"},
	{"cite-parameter", HEAD STEP("[\"exact\"]", GRAD, "{gradient exact ball.speed.y}"),
	 "bad.json: steps[0].text: {gradient exact ball.speed.y}: \"ball.speed.y\": parameter"},
	{"cite-format", HEAD STEP("[\"exact\"]", GRAD, "{loss exact .4x}"),
	 "bad.json: steps[0].text: {loss exact .4x}: \".4x\" is not a number format"},
	{"cite-learning", HEAD STEP("[\"exact\"]", GRAD, "{learning exact loss[3]}"),
	 "bad.json: steps[0].text: {learning exact loss[3]}: learning values need a learning view"},
	{"cite-convergence",
	 HEAD STEP("[\"exact\"]", "{\"type\": \"convergence\", \"parameter\": \"ball.position.y\", \"steps\": [60]}",
			   "{convergence exact 120}"),
	 "bad.json: steps[0].text: {convergence exact 120}: 120 is not one of the view's step counts"},
	{"cite-optimum", HEAD STEP("[\"exact\"]", GRAD, "{optimum}"),
	 "bad.json: steps[0].text: {optimum}: this scene is not the two-ball problem"},
	{"cite-unclosed", HEAD STEP("[\"exact\"]", GRAD, "the value {loss exact"),
	 "bad.json: steps[0].text: the placeholder at byte 10 has no closing"},
	{"cite-stray", HEAD STEP("[\"exact\"]", GRAD, "a } b"), "bad.json: steps[0].text: a \"}\" without"},
	{"cite-loss-index",
	 "{\"contactlab_lesson\": 1, \"id\": \"bad\", \"title\": \"Bad\", \"steps\": [{\"title\": \"s\", \"scene\": "
	 "\"task2-ground-wall\", \"backends\": [\"exact\"], \"view\": {\"type\": \"learning\", \"iterations\": 10}, "
	 "\"text\": \"{learning exact loss[10]}\"}]}",
	 "bad.json: steps[0].text: {learning exact loss[10]}: loss[10]: the view runs 10 iterations (0 … 9)"},
};

/* The CLI shows the loader's message for a bad lesson file, exit status 2. */
static void test_bad_file_cli(void)
{
	char *path = g_build_filename(tmp_dir, "bad.json", NULL);
	g_assert_true(g_file_set_contents(path, bad_lessons[G_N_ELEMENTS(bad_lessons) - 2].json, -1, NULL));
	const char *args[] = {"lesson", "show", path, NULL};
	char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 2);
	g_assert_nonnull(strstr(err, bad_lessons[G_N_ELEMENTS(bad_lessons) - 2].message));
	g_assert_cmpstr(out, ==, "");
	g_free(out);
	g_free(err);
	g_free(path);
}

static void test_bad_files(void)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_lessons); i++) {
		const BadLesson *b = &bad_lessons[i];
		GError *error = NULL;
		ClLesson *lesson = cl_lesson_file_parse(b->json, -1, "bad.json", &error);
		g_assert_null(lesson);
		g_assert_nonnull(error);
		g_test_message("%s: %s", b->name, error->message);
		if (!strstr(error->message, b->message))
			g_error("%s: expected \"%s\" in \"%s\"", b->name, b->message, error->message);
		g_error_free(error);
	}
}

/* A valid inline-scene lesson with a literal brace loads and renders. */
static void test_inline_and_braces(void)
{
	const char *json = HEAD "{\"title\": \"s\", \"scene\": {\"contactlab\": 1, \"duration\": 1, \"steps\": 100, "
							"\"gravity\": [0, -9.8], \"balls\": [{\"id\": \"a\", \"position\": [0, 1], \"radius\": "
							"0.1}], \"walls\": [{\"id\": \"floor\", \"point\": [0, 0], \"normal\": [0, 1]}], "
							"\"loss\": [{\"type\": \"final_coordinate\", \"ball\": \"a\", \"axis\": \"y\"}]}, "
							"\"backends\": [\"exact\"], \"view\": " GRAD
							", \"text\": \"{{set}} h = {loss exact .3f}, d = {gradient exact a.position.y +.2f}\"}]}";
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_file_parse(json, -1, "inline.json", &error);
	g_assert_no_error(error);
	const ClLessonStep *step = g_ptr_array_index(lesson->steps, 0);
	g_assert_null(step->scene_preset);
	ClLessonResult *r = cl_lesson_step_apply(step, NULL);
	g_assert_cmpuint(r->problems->len, ==, 0);
	g_assert_true(g_str_has_prefix(r->text, "{set} h = "));
	g_assert_nonnull(strstr(r->text, ", d = "));
	cl_lesson_result_free(r);
	cl_lesson_free(lesson);
}

/* The perturbation view takes a physical parameter as the window's does
 * (elasticity, a wall's angle, a radius): its ± δ runs are made, and a
 * placeholder citing its gradient is the gradient table's number. */
static void test_perturb_physical(void)
{
	static const char *const parameters[] = {"elasticity", "ground.angle", "ball.radius"};
	for (gsize i = 0; i < G_N_ELEMENTS(parameters); i++) {
		g_autofree char *json = g_strdup_printf(
			HEAD "{\"title\": \"s\", \"scene\": \"task1-bounce-once\", \"backends\": [\"exact\", \"impulse\"], "
				 "\"view\": {\"type\": \"perturbation\", \"parameter\": \"%s\", \"delta\": 0.01}, "
				 "\"text\": \"d = {gradient exact %s .9g}\"}]}",
			parameters[i], parameters[i]);
		GError *error = NULL;
		ClLesson *lesson = cl_lesson_file_parse(json, -1, "physical.json", &error);
		g_assert_no_error(error);
		const ClLessonStep *step = g_ptr_array_index(lesson->steps, 0);
		ClLessonResult *r = cl_lesson_step_apply(step, NULL);
		for (guint p = 0; p < r->problems->len; p++)
			g_test_message("%s: %s", parameters[i], (const char *)g_ptr_array_index(r->problems, p));
		g_assert_cmpuint(r->problems->len, ==, 0);
		g_assert_nonnull(r->run);
		g_assert_true(r->run->has_perturbation);
		ClParam param;
		g_assert_true(cl_param_parse(step->scene, parameters[i], &param, NULL, 0));
		g_assert_true(cl_param_equal(&r->run->perturb_param, &param));
		/* the ± δ runs differ: the parameter moved the ball */
		const ClRunBackend *exact = &r->run->backends[0];
		g_assert_nonnull(exact->plus_states);
		g_assert_nonnull(exact->minus_states);
		gsize last = (gsize)step->scene->steps * (gsize)cl_state_size(step->scene);
		g_assert_cmpfloat(fabs(exact->plus_states[last + 1] - exact->minus_states[last + 1]), >, 1e-6);
		/* the cited gradient is the one the CLI's --param column gives */
		ClGradientRow row;
		cl_gradient_row_compute(&row, step->scene, cl_backend_find("exact"), &param, 1, CL_FD_NONE);
		g_autofree char *expected = g_strdup_printf("d = %.9g", row.cells[0].adjoint);
		g_assert_true(isfinite(row.cells[0].adjoint));
		g_assert_cmpstr(r->text, ==, expected);
		cl_gradient_row_clear(&row);
		cl_lesson_result_free(r);
		cl_lesson_free(lesson);
	}
}

/* ------------------------------------------------------------ handout */

static int count_pages(const char *pdf, gsize length)
{
	/* "/Type /Page" objects, not "/Type /Pages"; the body holds NUL bytes */
	static const char key[] = "/Type /Page";
	int pages = 0;
	for (gsize i = 0; i + sizeof key < length; i++)
		if (memcmp(pdf + i, key, sizeof key - 1) == 0)
			pages += pdf[i + sizeof key - 1] != 's';
	return pages;
}

static void test_export(void)
{
	char *pdf_path = g_build_filename(tmp_dir, "handout.pdf", NULL);
	char *dir = g_build_filename(tmp_dir, "handout", NULL);
	const char *args[] = {"lesson", "export", "time-of-impact", "--pdf", pdf_path, "--dir", dir, NULL};
	char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_load("time-of-impact", &error);
	g_assert_no_error(error);
	int expected = (int)lesson->steps->len + 1; /* the cover, then one page per step */
	gsize length = 0;
	char *pdf = NULL;
	g_assert_true(g_file_get_contents(pdf_path, &pdf, &length, NULL));
	g_assert_true(g_str_has_prefix(pdf, "%PDF-"));
	/* the trailer (the body is binary: no string search across it) */
	g_assert_cmpuint(length, >, 16);
	g_assert_nonnull(g_strstr_len(pdf + length - 16, 16, "%%EOF"));
	g_assert_cmpint(count_pages(pdf, length), ==, expected);
	char *pdfinfo = g_find_program_in_path("pdfinfo");
	if (pdfinfo) {
		const char *info_args[] = {pdfinfo, pdf_path, NULL};
		char *info = NULL;
		int status;
		g_assert_true(g_spawn_sync(NULL, (char **)info_args, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &info, NULL,
								   &status, NULL));
		g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		const char *pages = strstr(info, "\nPages:");
		g_assert_nonnull(pages);
		g_assert_cmpint(atoi(pages + strlen("\nPages:")), ==, expected);
		g_free(info);
		g_free(pdfinfo);
	} else {
		g_test_message("pdfinfo not installed: page count from the PDF objects only");
	}
	/* the folder: every step's figure, data and text, listed in the manifest */
	char *manifest_path = g_build_filename(dir, "manifest.csv", NULL);
	char *manifest = read_file(manifest_path);
	char ***rows = cl_csv_parse(manifest);
	guint files = 0;
	for (char ***row = rows + 1; *row; row++, files++) {
		char *path = g_build_filename(dir, (*row)[2], NULL);
		char *content = NULL;
		gsize size = 0;
		g_assert_true(g_file_get_contents(path, &content, &size, NULL));
		g_assert_cmpuint(size, >, 0);
		if (g_str_has_suffix(path, ".png"))
			g_assert_cmpmem(content, 8, "\x89PNG\r\n\x1a\n", 8);
		g_free(content);
		g_free(path);
	}
	g_assert_cmpuint(files, ==, 4 * lesson->steps->len);
	cl_csv_free(rows);
	g_free(manifest);
	g_free(manifest_path);
	g_free(pdf);

	/* bad input: a message and exit 2; an unwritable target: exit 1, nothing left behind */
	const char *unknown[] = {"lesson", "export", "no-such-lesson", "--pdf", pdf_path, NULL};
	g_free(out);
	g_free(err);
	g_assert_cmpint(run(unknown, &out, &err), ==, 2);
	g_assert_nonnull(strstr(err, "no lesson \"no-such-lesson\" (lessons: "));
	g_free(out);
	g_free(err);
	const char *unwritable[] = {"lesson", "export", "float32", "--pdf", "/nonexistent-dir/handout.pdf", NULL};
	g_assert_cmpint(run(unwritable, &out, &err), ==, 1);
	g_assert_nonnull(strstr(err, "/nonexistent-dir/handout.pdf"));
	g_assert_false(g_file_test("/nonexistent-dir", G_FILE_TEST_EXISTS));
	g_free(out);
	g_free(err);
	cl_lesson_free(lesson);
	g_free(dir);
	g_free(pdf_path);
}

/* Words of a PDF page with their boxes, from pdftotext -bbox. */
typedef struct {
	double x0, y0;
	char *text;
} Word;

static GArray *page_words(const char *pdf, int page)
{
	g_autofree char *first = g_strdup_printf("%d", page);
	const char *argv[] = {"pdftotext", "-f", first, "-l", first, "-bbox", pdf, "-", NULL};
	g_autofree char *out = NULL;
	int status;
	g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
							   &out, NULL, &status, NULL));
	GArray *words = g_array_new(FALSE, FALSE, sizeof(Word));
	g_autoptr(GRegex) re = g_regex_new("<word xMin=\"([0-9.]+)\" yMin=\"([0-9.]+)\"[^>]*>([^<]*)</word>", 0, 0, NULL);
	g_autoptr(GMatchInfo) match = NULL;
	for (g_regex_match(re, out, 0, &match); g_match_info_matches(match); g_match_info_next(match, NULL)) {
		g_autofree char *x = g_match_info_fetch(match, 1), *y = g_match_info_fetch(match, 2);
		Word w = {g_ascii_strtod(x, NULL), g_ascii_strtod(y, NULL), g_match_info_fetch(match, 3)};
		g_array_append_val(words, w);
	}
	return words;
}

/* A cell's number as the handout prints it: a true minus sign. */
static double cell_number(const char *text)
{
	g_autofree char *ascii = g_strdup(text);
	if (g_str_has_prefix(text, "−")) {
		g_free(ascii);
		ascii = g_strconcat("-", text + strlen("−"), NULL);
	}
	return g_ascii_strtod(ascii, NULL);
}

/* The handout colours a gradient cell as the window does: by cl_agreement
 * of the adjoint against exact's, with its background (it coloured by sign
 * alone, so impulse's −0.155 against exact's −0.212, 27 % off, was green on
 * paper and orange on screen). The cells are found by their numbers' boxes
 * and the colour read from the page rendered at 72 dpi (1 px per point). */
static void test_handout_colours(void)
{
	g_autofree char *pdftotext = g_find_program_in_path("pdftotext"), *pdftoppm = g_find_program_in_path("pdftoppm");
	if (!pdftotext || !pdftoppm) {
		g_test_skip("pdftotext or pdftoppm is not installed");
		return;
	}
	g_autofree char *pdf = g_build_filename(tmp_dir, "colours.pdf", NULL);
	const char *args[] = {"lesson", "export", "two-answers", "--pdf", pdf, NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	g_autofree char *stem = g_build_filename(tmp_dir, "colours-page", NULL);
	const char *raster[] = {pdftoppm, "-f", "2", "-l", "2", "-r", "72", "-png", "-singlefile", pdf, stem, NULL};
	int status;
	g_assert_true(g_spawn_sync(NULL, (char **)raster, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status,
							   NULL));
	g_autofree char *png = g_strconcat(stem, ".png", NULL);
	cairo_surface_t *page = cairo_image_surface_create_from_png(png);
	g_assert_cmpint(cairo_surface_status(page), ==, CAIRO_STATUS_SUCCESS);
	g_autoptr(GArray) words = page_words(pdf, 2);
	/* the rows: the backend names in the table's first column (at the page
	 * margin, 40 pt; the figure's legend names them too); the cells: numbers
	 * on those rows right of the name column */
	double exact_y = NAN, impulse_y = NAN;
	for (guint i = 0; i < words->len; i++) {
		const Word *w = &g_array_index(words, Word, i);
		if (fabs(w->x0 - 40) > 1)
			continue;
		if (g_str_equal(w->text, "exact"))
			exact_y = w->y0;
		if (g_str_equal(w->text, "impulse"))
			impulse_y = w->y0;
	}
	g_assert_false(isnan(exact_y) || isnan(impulse_y));
	int compared = 0, not_good = 0;
	const unsigned char *data = cairo_image_surface_get_data(page);
	int stride = cairo_image_surface_get_stride(page);
	for (guint i = 0; i < words->len; i++) {
		const Word *cell = &g_array_index(words, Word, i);
		if (fabs(cell->y0 - impulse_y) > 1 || cell->x0 < 150)
			continue; /* the impulse row's numbers, past its name and loss columns */
		const Word *exact = NULL;
		for (guint k = 0; k < words->len && !exact; k++) {
			const Word *w = &g_array_index(words, Word, k);
			if (fabs(w->y0 - exact_y) < 1 && fabs(w->x0 - cell->x0) < 0.5)
				exact = w;
		}
		g_assert_nonnull(exact);
		ClAgreement a = cl_agreement(cell_number(cell->text), cell_number(exact->text), NULL);
		ClPlotColor want = cl_agreement_background(a);
		/* just left of the number, inside the cell's fill */
		const unsigned char *px = data + (int)(cell->y0 + 2) * stride + 4 * (int)(cell->x0 - 2);
		/* ARGB32, little endian: B G R A */
		g_assert_cmpint(abs(px[2] - (int)lround(255 * want.r)), <=, 2);
		g_assert_cmpint(abs(px[1] - (int)lround(255 * want.g)), <=, 2);
		g_assert_cmpint(abs(px[0] - (int)lround(255 * want.b)), <=, 2);
		compared++;
		not_good += a != CL_AGREEMENT_GOOD;
	}
	/* the impulse row's two derivatives, one of them off by tens of percent */
	g_assert_cmpint(compared, ==, 2);
	g_assert_cmpint(not_good, >=, 1);
	cairo_surface_destroy(page);
	/* and the window's legend is on the page */
	gboolean legend = FALSE;
	for (guint i = 0; i < words->len; i++)
		legend |= g_str_equal(g_array_index(words, Word, i).text, "wrong");
	g_assert_true(legend);
	for (guint i = 0; i < words->len; i++)
		g_free(g_array_index(words, Word, i).text);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("contactlab-lessons-XXXXXX", NULL);
	cli_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_test_add_func("/lessons/shipped", test_shipped);
	g_test_add_func("/lessons/bad-files", test_bad_files);
	g_test_add_func("/lessons/bad-file-cli", test_bad_file_cli);
	g_test_add_func("/lessons/inline-scene-and-braces", test_inline_and_braces);
	g_test_add_func("/lessons/perturb-physical", test_perturb_physical);
	GError *error = NULL;
	GPtrArray *lessons = cl_lessons_load_all(&error);
	if (!lessons)
		g_error("%s", error->message);
	for (guint i = 0; i < lessons->len; i++) {
		const char *id = ((ClLesson *)g_ptr_array_index(lessons, i))->id;
		char *path = g_strdup_printf("/lessons/cited-values/%s", id);
		g_test_add_data_func_full(path, g_strdup(id), test_lesson, g_free);
		g_free(path);
	}
	g_ptr_array_free(lessons, TRUE);
	g_test_add_func("/lessons/export-handout", test_export);
	g_test_add_func("/lessons/handout-colours", test_handout_colours);
	int status = g_test_run();
	g_hash_table_destroy(cli_cache);
	char *rm[] = {"rm", "-rf", tmp_dir, NULL};
	g_spawn_sync(NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
	g_free(tmp_dir);
	return status;
}
