/* Scene files: presets equal the C builders, round trips, strict parsing
 * with path-named messages, --set overrides, CSV parsing (number text: test-numbers). */
#include "json-read.h"
#include "numbers.h"
#include "scene-file.h"
#include "tasks.h"

#include <glib/gstdio.h>
#include <string.h>

static const char *const preset_ids[] = {
	"task1-bounce-once", "task2-ground-wall", "task2-ground-wall-friction", "task3-two-balls", "empty",
	"wedge-corner",		 "task3-graze",
};

static ClScene *load_preset(const char *id)
{
	GError *error = NULL;
	ClScene *scene = cl_preset_load(id, &error);
	g_assert_no_error(error);
	g_assert_nonnull(scene);
	return scene;
}

static void test_presets_equal_builders(void)
{
	struct {
		const char *id;
		ClScene *(*build)(void);
	} tasks[] = {{"task1-bounce-once", cl_test_task1},
				 {"task3-two-balls", cl_test_task3},
				 {"task3-graze", cl_test_task3_graze},
				 {"wedge-corner", cl_test_wedge}};
	for (size_t i = 0; i < G_N_ELEMENTS(tasks); i++) {
		ClScene *file = load_preset(tasks[i].id), *built = tasks[i].build();
		/* the one-line description is the file's prose, not part of the task */
		g_strlcpy(built->description, file->description, sizeof built->description);
		if (!cl_scene_equal(file, built))
			g_test_fail_printf("preset %s differs from its C builder", tasks[i].id);
		cl_scene_free(file);
		cl_scene_free(built);
	}
	const double friction[] = {0.0, 0.1};
	const char *ids[] = {"task2-ground-wall", "task2-ground-wall-friction"};
	for (int i = 0; i < 2; i++) {
		ClScene *file = load_preset(ids[i]), *built = cl_test_task2(friction[i]);
		g_strlcpy(built->description, file->description, sizeof built->description);
		if (!cl_scene_equal(file, built))
			g_test_fail_printf("preset %s differs from cl_test_task2(%g)", ids[i], friction[i]);
		cl_scene_free(file);
		cl_scene_free(built);
	}
}

static void round_trip(const ClScene *scene)
{
	char *json = cl_scene_file_to_json(scene);
	GError *error = NULL;
	ClScene *again = cl_scene_file_parse(json, -1, "round trip", &error);
	g_assert_no_error(error);
	g_assert_true(cl_scene_equal(scene, again));
	char *json_again = cl_scene_file_to_json(again);
	g_assert_cmpstr(json, ==, json_again);
	g_free(json_again);
	cl_scene_free(again);
	g_free(json);
}

static void test_round_trip_presets(void)
{
	for (size_t i = 0; i < G_N_ELEMENTS(preset_ids); i++) {
		ClScene *scene = load_preset(preset_ids[i]);
		round_trip(scene);
		cl_scene_free(scene);
	}
}

/* Awkward numbers, a sequence control, every loss type, non-default backend
 * parameters of every kind, a tilted wall, Adam. */
static void test_round_trip_general(void)
{
	ClScene *scene = cl_test_random_scene(7, 3, 5);
	scene->steps = 37;
	snprintf(scene->name, sizeof scene->name, "quote \" backslash \\ tab \t é");
	double *u = g_new(double, 2 * 37);
	for (int n = 0; n < 2 * 37; n++)
		u[n] = 1.0 / 3.0 * n - 1e-300 + (n % 5 ? 0.1 : 1e17);
	cl_scene_set_control_sequence(scene, 1, u);
	g_free(u);
	ClLossTerm *effort = cl_scene_add_loss(scene, CL_LOSS_CONTROL_EFFORT);
	effort->ball = 1;
	effort->weight = 0.1 + 0.2;
	scene->optimize.parameter_count = 2;
	g_strlcpy(scene->optimize.parameters[0], "b1.control", CL_NAME_MAX);
	g_strlcpy(scene->optimize.parameters[1], "b0.velocity.y", CL_NAME_MAX);
	scene->optimize.optimizer = CL_OPTIMIZER_ADAM;
	scene->optimize.learning_rate = 3e-5;
	scene->optimize.gradient = CL_GRADIENT_AOBG;
	scene->optimize.sigma = 0.1 + 0.2;
	scene->optimize.samples = 37;
	scene->optimize.seed = ((uint64_t)1 << 53) - 1;
	for (int b = 0; b < cl_backend_count(); b++) {
		const ClBackendInfo *info = cl_backend_info(b);
		for (int i = 0; i < info->param_count; i++) {
			const ClParamDesc *d = &info->params[i];
			double v = d->kind == CL_PARAM_KIND_REAL ? d->min + (d->max - d->min) / 3.0 : d->max;
			g_assert_true(cl_scene_set_backend_param(scene, b, d->name, v, NULL, 0));
		}
	}
	g_assert_true(cl_scene_validate(scene, NULL, 0));
	round_trip(scene);
	cl_scene_free(scene);
}

static void test_save_atomic(void)
{
	char *dir = g_dir_make_tmp("contactlab-XXXXXX", NULL);
	char *path = g_build_filename(dir, "scene.json", NULL);
	ClScene *scene = load_preset("task3-two-balls");
	GError *error = NULL;
	g_assert_true(cl_scene_file_save(scene, path, &error));
	g_assert_no_error(error);
	ClScene *loaded = cl_scene_file_load(path, &error);
	g_assert_no_error(error);
	g_assert_true(cl_scene_equal(scene, loaded));
	/* an unwritable place fails with a message and leaves no file behind */
	char *bad = g_build_filename(dir, "missing", "scene.json", NULL);
	g_assert_false(cl_scene_file_save(scene, bad, &error));
	g_assert_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO);
	g_assert_nonnull(strstr(error->message, bad));
	g_clear_error(&error);
	g_remove(path);
	g_rmdir(dir);
	g_free(bad);
	cl_scene_free(loaded);
	cl_scene_free(scene);
	g_free(path);
	g_free(dir);
}

static void test_normal_normalised(void)
{
	const char *json = "{\"contactlab\": 1, \"duration\": 1, \"steps\": 10, \"balls\": [],"
					   " \"walls\": [{\"id\": \"w\", \"point\": [0, 0], \"normal\": [3, 4]}]}";
	GError *error = NULL;
	ClScene *scene = cl_scene_file_parse(json, -1, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpfloat_with_epsilon(scene->walls[0].normal.x, 0.6, 1e-15);
	g_assert_cmpfloat_with_epsilon(scene->walls[0].normal.y, 0.8, 1e-15);
	round_trip(scene);
	cl_scene_free(scene);
}

/* A valid Task-3-like scene with one piece replaced. */
typedef struct {
	const char *json;
	const char *message; /* the expected text after "bad.json: " */
	ClSceneFileError code;
} BadCase;

static const BadCase bad_cases[] = {
	{"{\"contactlab\": 1, \"duration\": 1,", "line 1, column 33: not valid JSON: expected a key in quotes, found the end of the file", CL_SCENE_FILE_ERROR_SYNTAX},
	{"", "not valid JSON: the file is empty", CL_SCENE_FILE_ERROR_SYNTAX},
	{"[1, 2]", "(top level): must be a JSON object", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"duration\": 1, \"steps\": 4, \"balls\": []}", "contactlab: missing", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 2, \"duration\": 1, \"steps\": 4, \"balls\": []}", "contactlab: must be 1",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"steps\": 4, \"balls\": []}", "duration: missing", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"balls\": []}", "steps: missing", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4}", "balls: missing", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"colour\": 3}",
	 "colour: unknown key", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": \"long\", \"steps\": 4, \"balls\": []}", "duration: must be a number",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 0, \"steps\": 4, \"balls\": []}", "duration: must be a positive",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1e999, \"steps\": 4, \"balls\": []}", "duration: must be a finite number",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": NaN, \"steps\": 4, \"balls\": []}", "line 1, column 31: duration: not valid JSON: NaN is not a JSON number",
	 CL_SCENE_FILE_ERROR_SYNTAX},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 0, \"balls\": []}", "steps: 0 is outside [1, 10000000]",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 10000001, \"balls\": []}",
	 "steps: 10000001 is outside [1, 10000000]", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 2.5, \"balls\": []}", "steps: must be a whole number",
	 CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"gravity\": [0], \"balls\": []}",
	 "gravity: must be an array of two numbers", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1}, {\"id\": \"b\", \"position\": [1, 0], \"radius\": -0.1}]}",
	 "balls[1].radius: must be positive", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1, \"mass\": 0}]}",
	 "balls[0].mass: must be positive", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0]}]}",
	 "balls[0].radius: missing", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1, \"colour\": \"red\"}]}",
	 "balls[0].colour: unknown key", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, true], "
	 "\"radius\": 0.1}]}",
	 "balls[0].position[1]: must be a number", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 2, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1, \"control\": {\"sequence\": [[1, 2]]}}]}",
	 "balls[0].control.sequence: has 1 entries but the scene has 2 steps", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 2, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1, \"control\": {}}]}",
	 "balls[0].control: must have exactly one of", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.2}, {\"id\": \"b\", \"position\": [0.3, 0], \"radius\": 0.2}]}",
	 "balls[1].position: ball \"b\" overlaps ball \"a\" at t = 0", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0.05], "
	 "\"radius\": 0.1}], \"walls\": [{\"id\": \"ground\", \"point\": [0, 0], \"normal\": [0, 1]}]}",
	 "balls[0].position: ball \"a\" overlaps wall \"ground\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"walls\": [{\"id\": \"w\", "
	 "\"point\": [0, 0], \"normal\": [0, 0]}]}",
	 "walls[0].normal: must not be the zero vector", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1}], \"loss\": [{\"type\": \"final_position\", \"ball\": \"nope\", \"target\": [0, 0]}]}",
	 "loss[0].ball: no ball has the id \"nope\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1}], \"loss\": [{\"type\": \"final_speed\", \"ball\": \"a\"}]}",
	 "loss[0].type: \"final_speed\" is not a loss type", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1}], \"loss\": [{\"type\": \"final_coordinate\", \"ball\": \"a\", \"axis\": \"z\"}]}",
	 "loss[0].axis: must be \"x\" or \"y\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [{\"id\": \"a\", \"position\": [0, 0], "
	 "\"radius\": 0.1}], \"optimize\": {\"parameters\": [\"z.velocity.x\"]}}",
	 "optimize.parameters[0]: parameter \"z.velocity.x\": no ball with this id", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"optimizer\": \"lbfgs\"}}",
	 "optimize.optimizer: must be \"gd\" or \"adam\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"gradient\": \"newton\"}}",
	 "optimize.gradient: must be \"adjoint\", \"zobg\", \"fobg\", \"aobg\" or \"fd\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"gradient\": \"zobg\"}}",
	 "optimize: \"sigma\" is required with \"gradient\": \"zobg\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"gradient\": \"zobg\", \"sigma\": -0.1}}",
	 "optimize.sigma: must be positive (got -0.1)", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"gradient\": \"fobg\", \"sigma\": 0.1, \"samples\": 1}}",
	 "optimize.samples: 1 is outside [2, 1000000]", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"optimize\": {\"parameters\": [], "
	 "\"seed\": 1.5}}",
	 "optimize.seed: must be a whole number from 0 to 2^53 (got 1.5)", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"backends\": {\"bullet\": {}}}",
	 "backends.bullet: unknown backend", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"backends\": {\"impulse\": "
	 "{\"warp_speed\": 9}}}",
	 "backends.impulse.warp_speed: backend \"impulse\" has no parameter of this name", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"backends\": {\"impulse\": "
	 "{\"precision\": \"float16\"}}}",
	 "backends.impulse.precision: \"float16\" is not one of \"float32\", \"float64\"", CL_SCENE_FILE_ERROR_INVALID},
	{"{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [], \"backends\": {\"impulse\": "
	 "{\"precision\": 1}}}",
	 "backends.impulse.precision: must be a string", CL_SCENE_FILE_ERROR_INVALID},
};

static void test_bad_input(gconstpointer data)
{
	const BadCase *c = data;
	GError *error = NULL;
	ClScene *scene = cl_scene_file_parse(c->json, -1, "bad.json", &error);
	g_assert_null(scene);
	g_assert_error(error, CL_SCENE_FILE_ERROR, (gint)c->code);
	char *expected = g_strconcat("bad.json: ", c->message, NULL);
	if (!g_str_has_prefix(error->message, expected))
		g_test_fail_printf("message \"%s\" does not start with \"%s\"", error->message, expected);
	g_free(expected);
	g_error_free(error);
}

/* A file with several mistakes: one message, a line for each, in the order
 * of the file; a mistake does not hide the ones after it. */
static void test_every_error(void)
{
	const char *json = "{\"contactlab\": 1, \"duration\": 1, \"steps\": 10, \"colour\": 3,\n"
					   " \"balls\": [{\"id\": \"a\", \"position\": [0, \"x\"], \"radius\": 0.1, \"mass\": \"heavy\"},\n"
					   "           {\"id\": \"b\", \"position\": [3, 0], \"radius\": 0.5, \"spin\": 1}],\n"
					   " \"walls\": [{\"id\": \"w\", \"point\": [0, null], \"normal\": [0, 1]}],\n"
					   " \"loss\": [{\"type\": \"final_position\", \"ball\": \"zz\", \"target\": [1, 1]}],\n"
					   " \"optimize\": {\"parameters\": [], \"learning_rate\": \"fast\", \"optimizer\": \"sgd\"},\n"
					   " \"backends\": {\"nope\": {}, \"impulse\": {\"precision\": 1}}}";
	const char *const expected[] = {
		"bad.json: colour: unknown key",
		"bad.json: balls[0].position[1]: must be a number",
		"bad.json: balls[0].mass: must be a number",
		"bad.json: balls[1].spin: unknown key",
		"bad.json: walls[0].point[1]: must be a number",
		"bad.json: loss[0].ball: no ball has the id \"zz\"",
		"bad.json: optimize.learning_rate: must be a number",
		"bad.json: optimize.optimizer: must be \"gd\" or \"adam\"",
		"bad.json: backends.nope: unknown backend",
		"bad.json: backends.impulse.precision: must be a string",
	};
	GError *error = NULL;
	g_assert_null(cl_scene_file_parse(json, -1, "bad.json", &error));
	g_assert_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID);
	g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, G_N_ELEMENTS(expected));
	for (gsize i = 0; i < G_N_ELEMENTS(expected); i++)
		if (!g_str_has_prefix(lines[i], expected[i]))
			g_test_fail_printf("line %zu \"%s\" does not start with \"%s\"", i + 1, lines[i], expected[i]);
	g_error_free(error);
}

/* Beyond CL_JSON_MAX_ERRORS the message says how many more there are. */
static void test_error_limit(void)
{
	const int balls = CL_JSON_MAX_ERRORS + 10;
	GString *json = g_string_new("{\"contactlab\": 1, \"duration\": 1, \"steps\": 4, \"balls\": [");
	for (int i = 0; i < balls; i++)
		g_string_append_printf(json, "%s{\"id\": \"b%d\", \"position\": [%d, 0], \"radius\": \"big\"}", i ? ", " : "",
							   i, i);
	g_string_append(json, "]}");
	GError *error = NULL;
	g_assert_null(cl_scene_file_parse(json->str, -1, "many.json", &error));
	g_assert_nonnull(error);
	g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, CL_JSON_MAX_ERRORS + 1);
	for (int i = 0; i < CL_JSON_MAX_ERRORS; i++) {
		g_autofree char *line = g_strdup_printf("many.json: balls[%d].radius: must be a number", i);
		g_assert_cmpstr(lines[i], ==, line);
	}
	g_assert_cmpstr(lines[CL_JSON_MAX_ERRORS], ==, "many.json: 10 more errors not listed");
	g_error_free(error);
	g_string_free(json, TRUE);
}

/* Every prefix and many one-byte corruptions of every preset: a scene or a
 * message, never a crash (run under ASan/UBSan in CI). */
static void test_never_crashes(void)
{
	static const char replacements[] = "\"{}[],:0-e.9 \\nxt";
	for (size_t i = 0; i < G_N_ELEMENTS(preset_ids); i++) {
		char *file = g_strconcat(preset_ids[i], ".json", NULL);
		char *path = g_build_filename(cl_data_dir(), "presets", file, NULL);
		char *json;
		gsize length;
		g_assert_true(g_file_get_contents(path, &json, &length, NULL));
		for (gsize cut = 0; cut < length; cut++) {
			GError *error = NULL;
			ClScene *scene = cl_scene_file_parse(json, (gssize)cut, "cut.json", &error);
			g_assert_true((scene == NULL) != (error == NULL));
			g_assert_true(scene || g_str_has_prefix(error->message, "cut.json: "));
			cl_scene_free(scene);
			g_clear_error(&error);
		}
		for (gsize at = 0; at < length; at++) {
			char saved = json[at];
			json[at] = replacements[at % (sizeof replacements - 1)];
			GError *error = NULL;
			ClScene *scene = cl_scene_file_parse(json, (gssize)length, "flip.json", &error);
			g_assert_true((scene == NULL) != (error == NULL));
			cl_scene_free(scene);
			g_clear_error(&error);
			json[at] = saved;
		}
		g_free(json);
		g_free(path);
		g_free(file);
	}
}

static void test_settings(void)
{
	ClScene *scene = load_preset("task3-two-balls");
	GError *error = NULL;
	g_assert_true(cl_scene_apply_setting(scene, "steps=240", &error));
	g_assert_cmpint(scene->steps, ==, 240);
	g_assert_true(cl_scene_apply_setting(scene, "impulse-toi.precision=float64", &error));
	g_assert_cmpfloat(cl_scene_backend_param(scene, cl_backend_find("impulse-toi"), "precision"), ==,
					  CL_PRECISION_FLOAT64);
	g_assert_true(cl_scene_apply_setting(scene, "ball2.velocity.x=0.5", &error));
	g_assert_cmpfloat(scene->balls[1].velocity.x, ==, 0.5);
	g_assert_true(cl_scene_apply_setting(scene, "elasticity=0.5", &error));
	g_assert_true(cl_scene_apply_setting(scene, "gravity.y=-9.8", &error));
	g_assert_true(cl_scene_apply_setting(scene, "learning_rate=0.5", &error));
	g_assert_no_error(error);
	g_assert_cmpfloat(scene->gravity.y, ==, -9.8);
	g_assert_cmpfloat(scene->optimize.learning_rate, ==, 0.5);
	static const struct {
		const char *setting, *message;
	} bad[] = {
		{"steps", "steps: expected KEY=VALUE"},
		{"=3", "=3: expected KEY=VALUE"},
		{"steps=abc", "steps=abc: steps must be a whole number"},
		{"steps=0", "steps=0: steps must be a whole number"},
		{"elasticity=1,5", "elasticity=1,5: \"1,5\" is not a number"},
		{"mass=2", "mass=2: parameter \"mass\""},
		{"ball9.position.x=1", "ball9.position.x=1: parameter \"ball9.position.x\": no ball with this id"},
		{"impulse.stiffness=1", "impulse.stiffness=1: backend \"impulse\" has no parameter \"stiffness\""},
		{"impulse.precision=float16", "impulse.precision=float16: \"float16\" is not one of"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_assert_false(cl_scene_apply_setting(scene, bad[i].setting, &error));
		g_assert_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID);
		if (!g_str_has_prefix(error->message, bad[i].message))
			g_test_fail_printf("--set %s: \"%s\" does not start with \"%s\"", bad[i].setting, error->message,
							   bad[i].message);
		g_clear_error(&error);
	}
	cl_scene_free(scene);
}

static void test_csv_parse(void)
{
	char ***rows = cl_csv_parse("a,b,c\n1,\"x, \"\"y\"\"\",\n\r\nlast,2,3");
	g_assert_cmpuint(g_strv_length(rows[0]), ==, 3);
	g_assert_cmpstr(rows[1][1], ==, "x, \"y\"");
	g_assert_cmpstr(rows[1][2], ==, "");
	g_assert_cmpstr(rows[2][0], ==, "");
	g_assert_cmpstr(rows[3][0], ==, "last");
	g_assert_null(rows[4]);
	cl_csv_free(rows);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/scene-file/presets-equal-builders", test_presets_equal_builders);
	g_test_add_func("/scene-file/round-trip/presets", test_round_trip_presets);
	g_test_add_func("/scene-file/round-trip/general", test_round_trip_general);
	g_test_add_func("/scene-file/save-atomic", test_save_atomic);
	g_test_add_func("/scene-file/normal-normalised", test_normal_normalised);
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
		char *path = g_strdup_printf("/scene-file/bad-input/%02zu", i);
		g_test_add_data_func(path, &bad_cases[i], test_bad_input);
		g_free(path);
	}
	g_test_add_func("/scene-file/every-error", test_every_error);
	g_test_add_func("/scene-file/error-limit", test_error_limit);
	g_test_add_func("/scene-file/never-crashes", test_never_crashes);
	g_test_add_func("/scene-file/settings", test_settings);
	g_test_add_func("/scene-file/csv-parse", test_csv_parse);
	return g_test_run();
}
