/* The contactlab executable: bad input gets one clear message (a line for
 * each mistake of a scene file) and exit status 2 without touching output files; the CSV formats. */
#include "cli-run.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char *tmp_dir;

/* Runs contactlab with args (NULL-terminated); returns the exit status. */
static int run(const char *const *args, char **out, char **err)
{
	return cl_test_run_cli(tmp_dir, args, out, err);
}

static char *write_scene(const char *name, const char *json)
{
	char *path = g_build_filename(tmp_dir, name, NULL);
	g_assert_true(g_file_set_contents(path, json, -1, NULL));
	return path;
}

typedef struct {
	const char *name;
	const char *json;    /* written to NAME.json and passed as SCENE when not NULL */
	const char *args[14]; /* the command; "@" stands for the scene file */
	const char *message; /* must appear in the one stderr line */
} BadInput;

#define BALL_A "{\"id\": \"a\", \"position\": [0, 0], \"radius\": 0.1}"
#define HEAD "{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, "

static const BadInput bad_inputs[] = {
	{"malformed-json", HEAD "\"balls\": [", {"gradients", "@"}, "@: line 1, column"},
	{"wrong-type", HEAD "\"balls\": [{\"id\": \"a\", \"position\": [0, 0], \"radius\": \"big\"}]}",
	 {"gradients", "@"}, "@: balls[0].radius: must be a number"},
	{"unknown-key", HEAD "\"balls\": [], \"walls\": [{\"id\": \"w\", \"point\": [0, 0], \"normal\": [0, 1], "
						 "\"colour\": 1}]}",
	 {"gradients", "@"}, "@: walls[0].colour: unknown key"},
	{"missing-field", "{\"contactlab\": 1, \"duration\": 1, \"balls\": []}", {"gradients", "@"}, "@: steps: missing"},
	{"infinite", HEAD "\"gravity\": [0, -1e400], \"balls\": []}", {"gradients", "@"},
	 "@: gravity[1]: must be a finite number"},
	{"nan", HEAD "\"elasticity\": NaN, \"balls\": []}", {"gradients", "@"}, "not valid JSON"},
	{"negative-radius", HEAD "\"balls\": [" BALL_A ", {\"id\": \"b\", \"position\": [1, 1], \"radius\": -1}]}",
	 {"gradients", "@"}, "@: balls[1].radius: must be positive"},
	{"zero-mass", HEAD "\"balls\": [{\"id\": \"a\", \"position\": [0, 0], \"radius\": 0.1, \"mass\": 0}]}",
	 {"simulate", "@"}, "@: balls[0].mass: must be positive"},
	{"zero-duration", "{\"contactlab\": 1, \"duration\": 0, \"steps\": 4, \"balls\": []}", {"gradients", "@"},
	 "@: duration: must be a positive"},
	{"zero-steps", "{\"contactlab\": 1, \"duration\": 1, \"steps\": 0, \"balls\": []}", {"gradients", "@"},
	 "@: steps: 0 is outside"},
	{"too-many-steps", "{\"contactlab\": 1, \"duration\": 1, \"steps\": 20000000, \"balls\": []}",
	 {"gradients", "@"}, "@: steps: 20000000 is outside [1, 10000000]"},
	{"zero-normal", HEAD "\"balls\": [], \"walls\": [{\"id\": \"w\", \"point\": [0, 0], \"normal\": [0, 0]}]}",
	 {"gradients", "@"}, "@: walls[0].normal: must not be the zero vector"},
	{"overlap-balls", HEAD "\"balls\": [" BALL_A ", {\"id\": \"b\", \"position\": [0.1, 0], \"radius\": 0.1}]}",
	 {"gradients", "@"}, "@: balls[1].position: ball \"b\" overlaps ball \"a\" at t = 0"},
	{"overlap-wall", HEAD "\"balls\": [" BALL_A "], \"walls\": [{\"id\": \"ground\", \"point\": [0, 0.05], "
						  "\"normal\": [0, 1]}]}",
	 {"gradients", "@"}, "@: balls[0].position: ball \"a\" overlaps wall \"ground\""},
	{"loss-unknown-ball", HEAD "\"balls\": [" BALL_A "], \"loss\": [{\"type\": \"control_effort\", \"ball\": \"b\"}]}",
	 {"gradients", "@"}, "@: loss[0].ball: no ball has the id \"b\""},
	{"scene-unknown-backend", HEAD "\"balls\": [], \"backends\": {\"bullet\": {}}}", {"gradients", "@"},
	 "@: backends.bullet: unknown backend"},
	{"scene-unknown-parameter", HEAD "\"balls\": [], \"backends\": {\"exact\": {\"stiffness\": 1}}}",
	 {"gradients", "@"}, "@: backends.exact.stiffness: backend \"exact\" has no parameter"},
	{"unknown-option", NULL, {"gradients", "task1-bounce-once", "--frobnicate"}, "Unknown option --frobnicate"},
	{"unknown-command", NULL, {"frobnicate"}, "unknown command \"frobnicate\""},
	{"unknown-backend", NULL, {"gradients", "task1-bounce-once", "--backend", "bullet"},
	 "--backend bullet: unknown backend"},
	{"unknown-backend-parameter", NULL, {"gradients", "task1-bounce-once", "--set", "exact.stiffness=3"},
	 "--set exact.stiffness=3: backend \"exact\" has no parameter \"stiffness\""},
	{"malformed-set", NULL, {"gradients", "task1-bounce-once", "--set", "steps"}, "--set steps: expected KEY=VALUE"},
	{"set-not-a-number", NULL, {"gradients", "task1-bounce-once", "--set", "elasticity=high"},
	 "--set elasticity=high: \"high\" is not a number"},
	{"set-invalid-scene", NULL, {"gradients", "task1-bounce-once", "--set", "ball.radius=0"},
	 "task1-bounce-once with the --set values: balls[0].radius: must be positive"},
	{"set-wall-angle-nan", NULL, {"gradients", "task1-bounce-once", "--set", "ground.angle=nan"},
	 "--set ground.angle=nan: \"nan\" is not a number"},
	{"set-wall-point-inf", NULL, {"gradients", "task1-bounce-once", "--set", "ground.point.y=inf"},
	 "--set ground.point.y=inf: \"inf\" is not a number"},
	{"set-unknown-wall", NULL, {"gradients", "task1-bounce-once", "--set", "floor.angle=10"},
	 "--set floor.angle=10: parameter \"floor.angle\": no wall with this id"},
	{"set-wall-into-ball", NULL, {"gradients", "task1-bounce-once", "--set", "ground.point.y=0.95"},
	 "task1-bounce-once with the --set values: balls[0].position: ball \"ball\" overlaps wall \"ground\""},
	{"gradients-param-unknown", NULL, {"gradients", "task1-bounce-once", "--param", "ground.tilt"},
	 "--param ground.tilt: parameter \"ground.tilt\": no ball with this id"},
	{"gradients-param-twice", NULL, {"gradients", "task1-bounce-once", "-p", "elasticity", "-p", "elasticity"},
	 "--param elasticity: given twice"},
	{"gradients-param-default", NULL, {"gradients", "task1-bounce-once", "--param", "ball.velocity.y"},
	 "--param ball.velocity.y: already a column of the table"},
	{"missing-file", NULL, {"gradients", "no/such/scene.json"}, "no/such/scene.json: cannot read"},
	{"unknown-preset", NULL, {"gradients", "task9"}, "task9: no such scene file and no preset of this name"},
	{"bad-format", NULL, {"gradients", "task1-bounce-once", "--format", "xml"}, "--format xml: expected one of"},
	{"optimize-no-backend", NULL, {"optimize", "task2-ground-wall"}, "--backend ID is required"},
	{"optimize-bad-lr", NULL, {"optimize", "task2-ground-wall", "--backend", "exact", "--lr", "fast"},
	 "--lr fast: expected a number more than 0"},
	{"optimize-nothing", NULL, {"optimize", "task1-bounce-once", "--backend", "exact"}, "nothing to optimize"},
	{"reproduce-bad-table", NULL, {"reproduce", "--table", "7"}, "--table 7: expected one of"},
	{"two-scenes", NULL, {"gradients", "task1-bounce-once", "task3-two-balls"}, "expected one SCENE"},
#define SMOOTH1 "smooth", "task1-bounce-once", "--param", "ball.position.y"
	{"smooth-no-param", NULL, {"smooth", "task1-bounce-once", "--sigma", "0.05"}, "smooth: --param P is required"},
	{"smooth-no-sigma", NULL, {SMOOTH1}, "smooth: --sigma S is required"},
	{"smooth-bad-param", NULL, {"smooth", "task1-bounce-once", "--param", "ball.spin", "--sigma", "0.05"},
	 "--param ball.spin: parameter \"ball.spin\": expected position, velocity"},
	{"smooth-param-twice", NULL, {SMOOTH1, "--param", "ball.position.y", "--sigma", "0.05"},
	 "--param ball.position.y: given twice"},
	{"smooth-zero-sigma", NULL, {SMOOTH1, "--sigma", "0"}, "--sigma 0: \"0\" is not a positive number"},
	{"smooth-sigma-count", NULL, {SMOOTH1, "--sigma", "0.1,0.2"},
	 "--sigma 0.1,0.2: expected one value, or one per parameter (1)"},
	/* -1 once stood for "not given": the default, silently */
	{"smooth-samples-minus-one", NULL, {SMOOTH1, "--sigma", "0.05", "--samples", "-1"},
	 "--samples -1: expected a whole number from 2 to 1000000"},
	{"smooth-seed-minus-one", NULL, {SMOOTH1, "--sigma", "0.05", "--seed", "-1"},
	 "--seed -1: expected a whole number from 0 to"},
	{"smooth-one-sample", NULL, {SMOOTH1, "--sigma", "0.05", "--samples", "1"}, "--samples 1: expected a whole number from 2 to 1000000"},
	{"smooth-negative-seed", NULL, {SMOOTH1, "--sigma", "0.05", "--seed", "-3"},
	 "--seed -3: expected a whole number from 0 to"},
	{"smooth-odd-pairs", NULL, {SMOOTH1, "--sigma", "0.05", "--samples", "11", "--antithetic"},
	 "--samples 11: antithetic sampling needs an even number"},
	{"smooth-bad-gamma", NULL, {SMOOTH1, "--sigma", "0.05", "--gamma", "-1"}, "--gamma -1: expected a positive number"},
	{"smooth-bad-delta", NULL, {SMOOTH1, "--sigma", "0.05", "--delta", "1"}, "--delta 1: expected a number in (0, 1)"},
	{"smooth-quadrature-3d", NULL,
	 {SMOOTH1, "--param", "ball.position.x", "--param", "ball.velocity.x", "--sigma", "0.05", "--quadrature"},
	 "--quadrature: needs one or two parameters (got 3)"},
	{"smooth-bad-format", NULL, {SMOOTH1, "--sigma", "0.05", "--format", "xml"}, "--format xml: expected one of"},
	{"smooth-unknown-backend", NULL, {SMOOTH1, "--sigma", "0.05", "--backend", "bullet"},
	 "--backend bullet: unknown backend"},
	{"heatmap-smoothed-no-sigma", NULL,
	 {"heatmap", "task1-bounce-once", "--x", "ball.position.x:-1:1:2", "--y", "ball.position.y:1:2:2", "--quantity",
	  "zobg-x"},
	 "heatmap: --quantity zobg-x needs --sigma S[,S]"},
	{"heatmap-sigma-point-quantity", NULL,
	 {"heatmap", "task1-bounce-once", "--x", "ball.position.x:-1:1:2", "--y", "ball.position.y:1:2:2", "--sigma",
	  "0.1"},
	 "--sigma: only the smoothed quantities"},
	{"heatmap-unknown-quantity", NULL,
	 {"heatmap", "task1-bounce-once", "--x", "ball.position.x:-1:1:2", "--y", "ball.position.y:1:2:2", "--quantity",
	  "zobg-z"},
	 "--quantity zobg-z: expected one of loss, grad-x"},
	{"optimize-bad-gradient", NULL, {"optimize", "task2-ground-wall", "--backend", "exact", "--gradient", "newton"},
	 "--gradient newton: expected one of adjoint, zobg, fobg, aobg, fd"},
	{"optimize-no-adjoint", NULL,
	 {"optimize", "task2-ground-wall", "--backend", "impulse", "--param", "elasticity", "--iters", "1"},
	 "impulse has no adjoint of dL/delasticity; gradient \"fd\" takes central differences instead"},
	{"optimize-unknown-param", NULL, {"optimize", "task2-ground-wall", "--backend", "exact", "--param", "viscosity"},
	 "optimize.parameters[0]"},
	{"optimize-gradient-without-sigma", NULL,
	 {"optimize", "task2-ground-wall", "--backend", "exact", "--gradient", "zobg"},
	 "optimize: --gradient zobg needs --sigma S (or optimize.sigma in the scene)"},
	{"optimize-sigma-with-adjoint", NULL, {"optimize", "task2-ground-wall", "--backend", "exact", "--sigma", "0.1"},
	 "--sigma: only --gradient zobg, fobg or aobg samples"},
	{"optimize-scene-sigma-missing", HEAD "\"balls\": [" BALL_A "], \"optimize\": {\"parameters\": [\"a.velocity\"], "
									   "\"gradient\": \"aobg\"}}",
	 {"optimize", "@", "--backend", "exact"}, "@: optimize: \"sigma\" is required with \"gradient\": \"aobg\""},
	/* issue 18: hostile and absurd input, rows 8-16 of its table */
	{"row08-negative-iterations", NULL, {"optimize", "task3-two-balls", "--backend", "exact", "--iters", "-1"},
	 "--iters -1: expected a whole number from 0 to 1000000"},
	{"row09-width-nan", NULL,
	 {"heatmap", "task1-bounce-once", "--x", "ball.velocity.x:1:3:2", "--y", "ball.velocity.y:-3:-1:2", "--png",
	  "w.png", "--width", "nan"},
	 "--width nan: expected a number more than 0"},
	{"row09-threads-negative", NULL,
	 {"heatmap", "task1-bounce-once", "--x", "ball.velocity.x:1:3:2", "--y", "ball.velocity.y:-3:-1:2", "-j", "-2"},
	 "--threads -2: expected a whole number from 1 to 64"},
	{"row10-two-documents", HEAD "\"balls\": []}\n{\"contactlab\": 1}", {"gradients", "@"},
	 "@: line 2, column 1: not valid JSON: text after the end of the document"},
	{"row11-hexadecimal", "{\"contactlab\": 1, \"duration\": 1, \"steps\": 0x1E0, \"balls\": []}", {"gradients", "@"},
	 "@: line 1, column 43: steps: not valid JSON: 0x1E0 is not a JSON number"},
	{"row12-duplicate-key", HEAD "\"steps\": 10, \"balls\": []}", {"gradients", "@"},
	 "@: line 1, column 46: steps: duplicate key"},
	{"row13-raw-escape", HEAD "\"name\": \"\033]0;owned\\u0007\", \"balls\": []}", {"gradients", "@"},
	 "@: line 1, column 55: name: not valid JSON: the control character U+001B unescaped in a string"},
	{"row13-escaped-escape",
	 "{\"contactlab_lesson\": 1, \"id\": \"t\", \"title\": \"\\u001b[2J\", \"steps\": []}", {"lesson", "show", "@"},
	 "line 1, column 47: title: the control character U+001B in a string"},
	{"row14-lone-surrogate",
	 "{\"contactlab_lesson\": 1, \"id\": \"t\", \"title\": \"T\", \"steps\": [{\"title\": \"s\", \"text\": \"a \\udc80\"}]}",
	 {"lesson", "show", "@"}, "line 1, column 87: steps[0].text: a lone surrogate \\udc80 in a string"},
	{"row15-integer-beyond-64-bits", "{\"contactlab\": 1, \"duration\": 1, \"steps\": 99999999999999999999999, \"balls\": []}",
	 {"gradients", "@"}, "@: steps: 99999999999999999999999 is outside [1, 10000000]"},
	{"row16-far-away", HEAD "\"balls\": [{\"id\": \"a\", \"position\": [-1e308, 1e308], \"radius\": 0.1}]}",
	 {"gradients", "@"}, "@: balls[0].position: (-1e+308, 1e+308) is beyond ±1e+06"},
};

static void test_bad_input(gconstpointer data)
{
	const BadInput *c = data;
	char *scene = c->json ? write_scene(c->name, c->json) : NULL;
	const char *args[G_N_ELEMENTS(c->args) + 1] = {0};
	for (int i = 0; c->args[i]; i++)
		args[i] = strcmp(c->args[i], "@") == 0 ? scene : c->args[i];
	char *out, *err;
	int status = run(args, &out, &err);
	char **pieces = g_strsplit(c->message, "@", -1);
	char *expected = g_strjoinv(scene ? scene : "", pieces);
	g_strfreev(pieces);
	g_assert_cmpint(status, ==, 2);
	g_assert_cmpstr(out, ==, "");
	/* one line, "contactlab: …" (a usage listing may follow an unknown command) */
	g_assert_true(g_str_has_prefix(err, "contactlab: "));
	char *first_line = g_strndup(err, strcspn(err, "\n"));
	if (!strstr(first_line, expected))
		g_test_fail_printf("stderr \"%s\" lacks \"%s\"", first_line, expected);
	if (strcmp(c->args[0], "frobnicate") != 0)
		g_assert_cmpstr(err + strlen(first_line), ==, "\n");
	g_free(first_line);
	g_free(expected);
	g_free(out);
	g_free(err);
	if (scene)
		g_remove(scene);
	g_free(scene);
}

/* A file with several mistakes: the message lists each on its own line. */
static void test_every_error(void)
{
	g_autofree char *scene = write_scene("two-errors.json",
										 HEAD "\"balls\": [{\"id\": \"a\", \"position\": [0, 0], \"radius\": \"big\"}], "
											  "\"walls\": [{\"id\": \"w\", \"point\": [0, 0], \"normal\": [0, 1], "
											  "\"colour\": 1}]}");
	const char *args[] = {"gradients", scene, NULL};
	g_autofree char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 2);
	g_assert_cmpstr(out, ==, "");
	g_autofree char *expected = g_strdup_printf("contactlab: %s: balls[0].radius: must be a number\n"
												"%s: walls[0].colour: unknown key (expected one of: id, point, normal)\n",
												scene, scene);
	g_assert_cmpstr(err, ==, expected);
	g_remove(scene);
}

/* A bad run never replaces a user's file. */
static void test_output_untouched(void)
{
	char *path = write_scene("precious.csv", "precious\n");
	const char *args[] = {"optimize", "task2-ground-wall", "--backend", "bullet", "--csv", path, NULL};
	char *out, *err;
	g_assert_cmpint(run(args, &out, &err), ==, 2);
	char *contents;
	g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
	g_assert_cmpstr(contents, ==, "precious\n");
	const char *args2[] = {"simulate", "task9", "--csv", path, NULL};
	g_free(out);
	g_free(err);
	g_free(contents);
	g_assert_cmpint(run(args2, &out, &err), ==, 2);
	g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
	g_assert_cmpstr(contents, ==, "precious\n");
	g_remove(path);
	g_free(contents);
	g_free(out);
	g_free(err);
	g_free(path);
}

static gboolean is_number_text(const char *s)
{
	char *end;
	if (!s[0])
		return FALSE;
	g_ascii_strtod(s, &end);
	return *end == '\0';
}

/* backend,parameter,value: a status row, a loss row, six rows per ball
 * (position, velocity, control[0]) and then their FD rows (fd:NAME); numbers
 * in C-locale text. */
static void test_gradients_csv(void)
{
	const char *args[] = {"gradients", "task3-two-balls", "--format", "csv", NULL};
	char *out, *err;
	int status = run(args, &out, &err);
	g_assert_cmpint(status, !=, 2);
	char **lines = g_strsplit(out, "\n", -1);
	g_assert_cmpstr(lines[0], ==, "backend,parameter,value");
	static const char *const params[] = {"ball1.position.x",   "ball1.position.y",   "ball1.velocity.x",
										 "ball1.velocity.y",   "ball1.control[0].x", "ball1.control[0].y",
										 "ball2.position.x",   "ball2.position.y",   "ball2.velocity.x",
										 "ball2.velocity.y",   "ball2.control[0].x", "ball2.control[0].y"};
	int line = 1, backends = 0;
	gboolean any_failed = FALSE;
	while (lines[line] && lines[line][0]) {
		char **f = g_strsplit(lines[line], ",", 3);
		g_assert_cmpstr(f[1], ==, "status");
		char *id = g_strdup(f[0]);
		gboolean ok = g_str_equal(f[2], "ok");
		any_failed |= !ok;
		g_strfreev(f);
		f = g_strsplit(lines[line + 1], ",", -1);
		g_assert_cmpuint(g_strv_length(f), ==, 3);
		g_assert_cmpstr(f[0], ==, id);
		g_assert_cmpstr(f[1], ==, "loss");
		g_assert_true(is_number_text(f[2]));
		g_strfreev(f);
		for (size_t k = 0; k < 2 * G_N_ELEMENTS(params); k++) {
			size_t p = k % G_N_ELEMENTS(params);
			f = g_strsplit(lines[line + 2 + (int)k], ",", -1);
			g_assert_cmpuint(g_strv_length(f), ==, 3);
			g_assert_cmpstr(f[0], ==, id);
			char *name = k < G_N_ELEMENTS(params) ? g_strdup(params[p]) : g_strconcat("fd:", params[p], NULL);
			g_assert_cmpstr(f[1], ==, name);
			g_free(name);
			g_assert_true(is_number_text(f[2]));
			if (ok)
				g_assert_true(isfinite(g_ascii_strtod(f[2], NULL)));
			g_strfreev(f);
		}
		line += 2 + 2 * (int)G_N_ELEMENTS(params);
		backends++;
		g_free(id);
	}
	g_assert_null(lines[line + 1]);
	g_assert_cmpint(backends, ==, 12);
	/* a backend that cannot run makes the command fail, with its reason in the status row */
	g_assert_cmpint(status, ==, any_failed ? 1 : 0);
	g_strfreev(lines);
	g_free(out);
	g_free(err);
}

/* --param adds columns after the default ones, which stay as they are:
 * exact's adjoint beside its FD, "no adjoint" (nan in CSV) where a backend
 * lacks that derivative (impulse's elasticity, a constant of its peer), its
 * FD still there. */
static void test_gradients_param(void)
{
	const char *plain[] = {"gradients", "task1-bounce-once", "--backend", "exact", "--backend", "impulse", "--format",
						   "csv", NULL};
	const char *more[] = {"gradients", "task1-bounce-once", "--backend", "exact", "--backend", "impulse", "--format",
						  "csv", "--param", "elasticity", "--param", "ground.angle", "--param", "ball.radius", NULL};
	char *out0, *out1, *err;
	g_assert_cmpint(run(plain, &out0, &err), ==, 0);
	g_free(err);
	g_assert_cmpint(run(more, &out1, &err), ==, 0);
	g_free(err);
	char **a = g_strsplit(out0, "\n", -1), **b = g_strsplit(out1, "\n", -1);
	/* every line without --param is there with it, in the same order */
	int j = 0;
	for (int i = 0; a[i]; i++) {
		while (b[j] && strcmp(a[i], b[j]) != 0)
			j++;
		if (!b[j])
			g_test_fail_printf("\"%s\" is missing with --param", a[i]);
		else
			j++;
	}
	g_assert_cmpuint(g_strv_length(b), ==, g_strv_length(a) + 2 * 2 * 3);
	static const char *const names[] = {"elasticity", "ground.angle", "ball.radius"};
	for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
		double adjoint = NAN, fd = NAN, other_fd = NAN;
		char *other_adjoint = NULL;
		for (int i = 0; b[i]; i++) {
			char **f = g_strsplit(b[i], ",", 3);
			if (f[0] && f[1] && f[2]) {
				char *fd_name = g_strconcat("fd:", names[k], NULL);
				gboolean exact = g_str_equal(f[0], "exact");
				if (g_str_equal(f[1], names[k]) && exact)
					adjoint = g_ascii_strtod(f[2], NULL);
				else if (g_str_equal(f[1], names[k]))
					other_adjoint = g_strdup(f[2]);
				else if (g_str_equal(f[1], fd_name))
					*(exact ? &fd : &other_fd) = g_ascii_strtod(f[2], NULL);
				g_free(fd_name);
			}
			g_strfreev(f);
		}
		g_assert_true(isfinite(adjoint) && isfinite(fd) && isfinite(other_fd));
		if (!(fabs(adjoint - fd) <= 1e-6 * fmax(fabs(fd), 1e-3)))
			g_test_fail_printf("exact d loss / d %s: adjoint %.12g, FD %.12g", names[k], adjoint, fd);
		if (k == 0)
			g_assert_cmpstr(other_adjoint, ==, "nan");
		else /* impulse has these */
			g_assert_true(other_adjoint && isfinite(g_ascii_strtod(other_adjoint, NULL)));
		g_free(other_adjoint);
	}
	g_strfreev(a);
	g_strfreev(b);
	g_free(out0);
	g_free(out1);

	const char *table[] = {"gradients", "task1-bounce-once", "--backend", "exact", "--backend", "impulse",
						   "--param", "elasticity", NULL};
	g_assert_cmpint(run(table, &out0, &err), ==, 0);
	g_free(err);
	char **lines = g_strsplit(out0, "\n", -1);
	int param_rows = 0;
	for (int i = 0; lines[i]; i++)
		if (g_str_has_prefix(lines[i], "  elasticity ")) {
			char **f = g_strsplit_set(lines[i], " ", -1);
			GPtrArray *words = g_ptr_array_new();
			for (int w = 0; f[w]; w++)
				if (f[w][0])
					g_ptr_array_add(words, f[w]);
			if (param_rows == 0) { /* exact: a number */
				g_assert_cmpuint(words->len, ==, 4);
				g_assert_true(isfinite(g_ascii_strtod(g_ptr_array_index(words, 1), NULL)));
			} else { /* impulse */
				g_assert_cmpuint(words->len, ==, 5);
				g_assert_cmpstr(g_ptr_array_index(words, 1), ==, "no");
				g_assert_cmpstr(g_ptr_array_index(words, 2), ==, "adjoint");
			}
			g_ptr_array_free(words, TRUE);
			g_strfreev(f);
			param_rows++;
		}
	g_assert_cmpint(param_rows, ==, 2);
	g_strfreev(lines);
	g_free(out0);
}

static void test_simulate_csv(void)
{
	char *path = g_build_filename(tmp_dir, "trajectory.csv", NULL);
	const char *args[] = {"simulate", "task1-bounce-once", "--backend", "exact", "--csv", path, NULL};
	char *out, *err, *contents;
	int status = run(args, &out, &err);
	g_assert_cmpint(status, !=, 2);
	g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
	g_assert_true(g_str_has_prefix(contents, "backend,step,time,ball,x,y,vx,vy\nexact,0,0,ball,-1,1,2,-2\n"));
	char **lines = g_strsplit(contents, "\n", -1);
	if (status == 0) /* every step: the header, steps 0 … 480 and the final newline */
		g_assert_cmpuint(g_strv_length(lines), ==, 1 + 481 + 1);
	g_strfreev(lines);
	g_remove(path);
	g_free(contents);
	g_free(out);
	g_free(err);
	g_free(path);
}

static void test_backends_list(void)
{
	const char *args[] = {"backends", NULL};
	char *out, *err;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	static const char *const ids[] = {"exact",  "lcp-nimble",     "convex-toi",     "convex",   "impulse-toi",
									  "impulse", "compliant-warp", "compliant-brax", "pbd-warp", "pbd-brax",
									  "impulse-tds", "ncp-dojo"};
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
		char *line = g_strdup_printf("\n%s — ", ids[i]);
		g_assert_true(g_str_has_prefix(out, line + 1) || strstr(out, line));
		g_free(line);
	}
	g_assert_nonnull(strstr(out, "precision      float32|float64, default float32"));
	/* Dojo ignores the scene's elasticity, and the list says so in its entry */
	const char *dojo = strstr(out, "\nncp-dojo — ");
	g_assert_nonnull(dojo);
	const char *next = g_strstr_len(dojo + 1, -1, "\n\n"); /* not strstr: GCC 12 misreads dojo + 1 under ASan */
	const char *cannot = strstr(dojo, "  cannot express: restitution.");
	g_assert_nonnull(cannot);
	g_assert_true(!next || cannot < next);
	g_assert_nonnull(strstr(cannot, "the elasticity of this scene is not used"));
	g_free(out);
	g_free(err);
}

static void test_help(void)
{
	const char *args[] = {"--help", NULL};
	char *out, *err;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	g_assert_nonnull(strstr(out, "gradients SCENE"));
	g_assert_nonnull(strstr(out, "reproduce [--table"));
	g_free(out);
	g_free(err);
}

/* Output to a FIFO (or /dev/stdout) is written into it; an atomic rename
 * would have replaced the special file with a regular one. */
static void test_output_to_fifo(void)
{
	char *fifo = g_build_filename(tmp_dir, "pipe.csv", NULL);
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	const char *reader[] = {"/bin/sh", "-c", "cat \"$0\" > \"$0.out\"", fifo, NULL};
	GPid pid;
	GError *error = NULL;
	g_assert_true(g_spawn_async(NULL, (char **)reader, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error));
	g_assert_no_error(error);
	const char *args[] = {"simulate", "task1-bounce-once", "--backend", "exact", "--csv", fifo, NULL};
	char *out, *err;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	int wait_status;
	g_assert_cmpint(waitpid(pid, &wait_status, 0), ==, pid);
	g_spawn_close_pid(pid);
	struct stat st;
	g_assert_cmpint(stat(fifo, &st), ==, 0);
	g_assert_true(S_ISFIFO(st.st_mode));
	char *copy = g_strconcat(fifo, ".out", NULL), *text;
	g_assert_true(g_file_get_contents(copy, &text, NULL, NULL));
	g_assert_true(g_str_has_prefix(text, "backend,step,time,ball,x,y,vx,vy\n"));
	g_free(text);
	g_free(copy);
	g_free(out);
	g_free(err);
	g_free(fifo);
}

/* A backend that cannot model a scene (ncp-dojo: friction) is left out of
 * the default set, saying why; asked for by name it reports unsupported. */
static void test_leave_out_unsupported(void)
{
	char *out, *err;
	const char *all[] = {"gradients", "task2-ground-wall-friction", "--format", "csv", NULL};
	g_assert_cmpint(run(all, &out, &err), ==, 0);
	g_assert_null(strstr(out, "ncp-dojo"));
	g_assert_nonnull(strstr(out, "exact,"));
	g_assert_nonnull(strstr(err, "ncp-dojo left out: friction"));
	g_free(out);
	g_free(err);
	const char *named[] = {"gradients", "task2-ground-wall-friction", "--backend", "ncp-dojo", NULL};
	g_assert_cmpint(run(named, &out, &err), ==, 1);
	g_assert_nonnull(strstr(out, "ncp-dojo  (unsupported at step 0: friction"));
	g_free(out);
	g_free(err);
	const char *frictionless[] = {"gradients", "task2-ground-wall", "--format", "csv", NULL};
	g_assert_cmpint(run(frictionless, &out, &err), ==, 0);
	g_assert_nonnull(strstr(out, "ncp-dojo,"));
	g_free(out);
	g_free(err);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("contactlab-cli-XXXXXX", NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(bad_inputs); i++) {
		char *path = g_strdup_printf("/cli/bad-input/%s", bad_inputs[i].name);
		g_test_add_data_func(path, &bad_inputs[i], test_bad_input);
		g_free(path);
	}
	g_test_add_func("/cli/every-error", test_every_error);
	g_test_add_func("/cli/output-untouched", test_output_untouched);
	g_test_add_func("/cli/output-to-fifo", test_output_to_fifo);
	g_test_add_func("/cli/gradients-csv", test_gradients_csv);
	g_test_add_func("/cli/gradients-param", test_gradients_param);
	g_test_add_func("/cli/simulate-csv", test_simulate_csv);
	g_test_add_func("/cli/backends", test_backends_list);
	g_test_add_func("/cli/help", test_help);
	g_test_add_func("/cli/leave-out-unsupported", test_leave_out_unsupported);
	int status = g_test_run();
	g_rmdir(tmp_dir);
	g_free(tmp_dir);
	return status;
}
