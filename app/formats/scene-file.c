/* Scene files: JSON version 1, parsed strictly (every key, type and value is
 * checked, with the JSON path in the message) and written by hand so numbers
 * are the shortest text that reads back to the same double. The reader goes
 * on past a bad value to the next one, so that one message lists every error
 * of the file (up to CL_JSON_MAX_ERRORS); rd->errors decides the outcome. */
#include "scene-file.h"

#include "json-read.h"
#include "machine.h"
#include "numbers.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(cl-scene-file-error-quark, cl_scene_file_error)

/* ------------------------------------------------------------- parsing */

static gboolean read_vec2(ClJsonReader *rd, JsonNode *node, const char *path, ClVec2 *out)
{
	if (!JSON_NODE_HOLDS_ARRAY(node) || json_array_get_length(json_node_get_array(node)) != 2)
		return cl_json_fail(rd, path, "must be an array of two numbers [x, y]");
	JsonArray *a = json_node_get_array(node);
	double v[2];
	for (guint i = 0; i < 2; i++) {
		char *p = g_strdup_printf("%s[%u]", path, i);
		gboolean ok = cl_json_read_number(rd, json_array_get_element(a, i), p, &v[i]);
		g_free(p);
		if (!ok)
			return FALSE;
	}
	*out = (ClVec2){v[0], v[1]};
	return TRUE;
}

static gboolean read_id(ClJsonReader *rd, JsonNode *node, const char *path, char *out, size_t size)
{
	const char *s = NULL;
	if (!cl_json_read_string(rd, node, path, &s))
		return FALSE;
	if (strlen(s) >= size)
		return cl_json_fail(rd, path, "longer than %zu bytes", size - 1);
	g_strlcpy(out, s, size);
	return TRUE;
}

/* Reads an optional/required number member into *out (left alone when absent). */
static gboolean number_member(ClJsonReader *rd, JsonObject *object, const char *path, const char *key,
							  gboolean required, double *out)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, object, path, key, required, &failed);
	if (failed)
		return FALSE;
	if (!node)
		return TRUE;
	char *p = cl_json_child_path(path, key);
	gboolean ok = cl_json_read_number(rd, node, p, out);
	g_free(p);
	return ok;
}

static gboolean vec2_member(ClJsonReader *rd, JsonObject *object, const char *path, const char *key, gboolean required,
							ClVec2 *out)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, object, path, key, required, &failed);
	if (failed)
		return FALSE;
	if (!node)
		return TRUE;
	char *p = cl_json_child_path(path, key);
	gboolean ok = read_vec2(rd, node, p, out);
	g_free(p);
	return ok;
}

static void read_control(ClJsonReader *rd, ClScene *scene, int index, JsonNode *node, const char *path)
{
	static const char *const keys[] = {"constant", "sequence", NULL};
	JsonObject *object = NULL;
	if (!cl_json_read_object(rd, node, path, &object) || !cl_json_check_keys(rd, object, path, keys))
		return;
	JsonNode *constant = json_object_get_member(object, "constant");
	JsonNode *sequence = json_object_get_member(object, "sequence");
	if (!constant == !sequence) {
		cl_json_fail(rd, path, "must have exactly one of \"constant\": [ux, uy] or \"sequence\": [[ux, uy], …]");
		return;
	}
	ClBall *ball = &scene->balls[index];
	if (constant) {
		char *p = cl_json_child_path(path, "constant");
		read_vec2(rd, constant, p, &ball->control_constant);
		g_free(p);
		ball->control_kind = CL_CONTROL_CONSTANT;
		return;
	}
	if (scene->steps <= 0)
		return; /* "steps" was refused: the sequence's length cannot be judged */
	char *p = cl_json_child_path(path, "sequence");
	JsonArray *a = NULL;
	gboolean ok = cl_json_read_array(rd, sequence, p, &a);
	if (ok && json_array_get_length(a) != (guint)scene->steps)
		ok = cl_json_fail(rd, p, "has %u entries but the scene has %d steps (one [ux, uy] per step)",
						  json_array_get_length(a), scene->steps);
	double *u = ok ? g_try_new(double, 2 * (size_t)scene->steps) : NULL;
	if (ok && !u)
		ok = cl_json_fail(rd, p, "out of memory");
	for (int n = 0; ok && n < scene->steps; n++) {
		char *pn = g_strdup_printf("%s[%d]", p, n);
		ClVec2 v;
		ok = read_vec2(rd, json_array_get_element(a, (guint)n), pn, &v);
		u[2 * n] = v.x;
		u[2 * n + 1] = v.y;
		g_free(pn);
	}
	if (ok && !cl_scene_set_control_sequence(scene, index, u))
		ok = cl_json_fail(rd, p, "out of memory");
	g_free(u);
	g_free(p);
}

/* A ball or wall: an object with only the allowed keys and a required id. */
static gboolean read_item(ClJsonReader *rd, JsonNode *node, const char *path, const char *const *keys,
						  JsonObject **object, char id[CL_ID_MAX])
{
	if (!cl_json_read_object(rd, node, path, object))
		return FALSE;
	cl_json_check_keys(rd, *object, path, keys);
	gboolean failed = FALSE;
	JsonNode *id_node = cl_json_member(rd, *object, path, "id", TRUE, &failed);
	if (failed)
		return FALSE;
	char *p = cl_json_child_path(path, "id");
	gboolean ok = read_id(rd, id_node, p, id, CL_ID_MAX);
	g_free(p);
	return ok;
}

static void read_ball(ClJsonReader *rd, ClScene *scene, JsonNode *node, const char *path)
{
	static const char *const keys[] = {"id", "position", "velocity", "radius", "mass", "control", NULL};
	JsonObject *object = NULL;
	char ball_id[CL_ID_MAX];
	if (!read_item(rd, node, path, keys, &object, ball_id))
		return;
	ClBall *ball = cl_scene_add_ball(scene, ball_id);
	if (!ball) {
		cl_json_fail(rd, path, "out of memory");
		return;
	}
	int index = scene->ball_count - 1;
	vec2_member(rd, object, path, "position", TRUE, &ball->position);
	vec2_member(rd, object, path, "velocity", FALSE, &ball->velocity);
	number_member(rd, object, path, "radius", TRUE, &ball->radius);
	number_member(rd, object, path, "mass", FALSE, &ball->mass);
	JsonNode *control = json_object_get_member(object, "control");
	if (control) {
		char *p = cl_json_child_path(path, "control");
		read_control(rd, scene, index, control, p);
		g_free(p);
	}
}

static void read_wall(ClJsonReader *rd, ClScene *scene, JsonNode *node, const char *path)
{
	static const char *const keys[] = {"id", "point", "normal", NULL};
	JsonObject *object = NULL;
	char wall_id[CL_ID_MAX];
	if (!read_item(rd, node, path, keys, &object, wall_id))
		return;
	ClWall *wall = cl_scene_add_wall(scene, wall_id);
	if (!wall) {
		cl_json_fail(rd, path, "out of memory");
		return;
	}
	vec2_member(rd, object, path, "point", TRUE, &wall->point);
	if (!vec2_member(rd, object, path, "normal", TRUE, &wall->normal))
		return;
	double length = hypot(wall->normal.x, wall->normal.y);
	if (!(length > 0.0) || !isfinite(length)) {
		char *p = cl_json_child_path(path, "normal");
		cl_json_fail(rd, p, "must not be the zero vector (it points into the free side)");
		g_free(p);
		return;
	}
	/* Only a vector that is not already unit to rounding is rescaled, so that
	 * saving and loading again gives the same bits. */
	if (fabs(length - 1.0) > 1e-12)
		wall->normal = (ClVec2){wall->normal.x / length, wall->normal.y / length};
}

static const char *const loss_type_names[CL_LOSS_TYPE_COUNT] = {
	[CL_LOSS_FINAL_POSITION] = "final_position",
	[CL_LOSS_FINAL_COORDINATE] = "final_coordinate",
	[CL_LOSS_CONTROL_EFFORT] = "control_effort",
	[CL_LOSS_TRAJECTORY_MATCH] = "trajectory_match",
};

/* The folder a scene file's relative paths start from: the file's own
 * when the reader reads one, else the working directory. */
static char *scene_folder(const ClJsonReader *rd)
{
	if (rd->file && g_file_test(rd->file, G_FILE_TEST_IS_REGULAR))
		return g_path_get_dirname(rd->file);
	return g_strdup(".");
}

/* One number of a CSV cell, surrounding blanks allowed. */
static gboolean csv_number(const char *text, double *out)
{
	while (*text == ' ' || *text == '\t')
		text++;
	if (!*text)
		return FALSE;
	char *end;
	*out = g_ascii_strtod(text, &end);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	return *end == '\0' && end != text && isfinite(*out);
}

/* At most 40 characters of a line for a message, valid UTF-8 without
 * control characters (a file cannot put terminal escapes in a message). */
static char *quoted_line(const char *line)
{
	char *valid = g_utf8_make_valid(line, -1);
	glong length = g_utf8_strlen(valid, -1);
	char *cut = length > 40 ? g_utf8_substring(valid, 0, 40) : g_strdup(valid);
	g_free(valid);
	for (char *c = cut; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	char *out = length > 40 ? g_strconcat(cut, "…", NULL) : g_strdup(cut);
	g_free(cut);
	return out;
}

/* observations from a CSV file: a header "t,x,y" (optional) and rows of three numbers. */
static gboolean read_observations_csv(ClJsonReader *rd, const ClScene *scene, const char *name, const char *path,
									  GArray *rows)
{
	if (!name[0])
		return cl_json_fail(rd, path, "must name a CSV file (columns t,x,y)");
	char *folder = scene_folder(rd);
	char *file = g_path_is_absolute(name) ? g_strdup(name) : g_build_filename(folder, name, NULL);
	g_free(folder);
	char *data = NULL;
	gsize length = 0;
	GError *error = NULL;
	gboolean ok = cl_input_file_read(file, CL_INPUT_FILE_MAX, &data, &length, CL_SCENE_FILE_ERROR,
									 CL_SCENE_FILE_ERROR_IO, &error);
	if (!ok) {
		cl_json_fail(rd, path, "cannot read \"%s\": %s", name, error->message);
		g_error_free(error);
		g_free(file);
		return FALSE;
	}
	g_free(file);
	char **lines = g_strsplit(data, "\n", -1);
	g_free(data);
	for (int i = 0; ok && lines[i]; i++) {
		char *line = g_strstrip(lines[i]);
		if (!line[0])
			continue;
		char **cells = g_strsplit(line, ",", -1);
		guint n = g_strv_length(cells);
		double v[3];
		gboolean numbers = n == 3 && csv_number(cells[0], &v[0]) && csv_number(cells[1], &v[1]) &&
						   csv_number(cells[2], &v[2]);
		if (!numbers && rows->len == 0 && n == 3 && strcmp(g_strstrip(cells[0]), "t") == 0 &&
			strcmp(g_strstrip(cells[1]), "x") == 0 && strcmp(g_strstrip(cells[2]), "y") == 0) {
			g_strfreev(cells);
			continue; /* the header */
		}
		if (!numbers) {
			char *shown = quoted_line(line);
			ok = cl_json_fail(rd, path, "\"%s\" line %d: must be three finite numbers t,x,y (got \"%s\")", name,
							  i + 1, shown);
			g_free(shown);
		}
		else if (v[0] < 0.0 || v[0] > scene->duration)
			ok = cl_json_fail(rd, path, "\"%s\" line %d: t = %s is outside [0, %s] (the duration)", name, i + 1,
							  cl_format_number(v[0]).text, cl_format_number(scene->duration).text);
		else
			g_array_append_vals(rows, v, 3);
		g_strfreev(cells);
	}
	g_strfreev(lines);
	if (ok && rows->len == 0)
		ok = cl_json_fail(rd, path, "\"%s\" has no observations (rows t,x,y)", name);
	return ok;
}

/* "observations": [[t, x, y], …] or "FILE.csv" */
static void read_observations(ClJsonReader *rd, const ClScene *scene, ClLossTerm *term, JsonNode *node,
							  const char *path)
{
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(double));
	gboolean ok = TRUE;
	if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_STRING) {
		ok = read_observations_csv(rd, scene, json_node_get_string(node), path, rows);
	} else {
		JsonArray *a = NULL;
		ok = cl_json_read_array(rd, node, path, &a);
		if (ok && json_array_get_length(a) == 0)
			ok = cl_json_fail(rd, path, "must hold at least one [t, x, y] (or name a CSV file)");
		for (guint i = 0; ok && i < json_array_get_length(a); i++) {
			char *p = g_strdup_printf("%s[%u]", path, i);
			JsonArray *row = NULL;
			ok = cl_json_read_array(rd, json_array_get_element(a, i), p, &row);
			if (ok && json_array_get_length(row) != 3)
				ok = cl_json_fail(rd, p, "must be [t, x, y] (got %u numbers)", json_array_get_length(row));
			double v[3] = {0, 0, 0};
			for (guint c = 0; ok && c < 3; c++) {
				char *q = g_strdup_printf("%s[%u]", p, c);
				ok = cl_json_read_number(rd, json_array_get_element(row, c), q, &v[c]);
				g_free(q);
			}
			if (ok && (v[0] < 0.0 || v[0] > scene->duration))
				ok = cl_json_fail(rd, p, "t = %s is outside [0, %s] (the duration)", cl_format_number(v[0]).text,
								  cl_format_number(scene->duration).text);
			if (ok)
				g_array_append_vals(rows, v, 3);
			g_free(p);
		}
	}
	if (ok && !cl_loss_set_observations(term, (const double *)(void *)rows->data, (int)(rows->len / 3)))
		cl_json_fail(rd, path, "out of memory");
	g_array_free(rows, TRUE);
}

static void read_loss(ClJsonReader *rd, ClScene *scene, JsonNode *node, const char *path)
{
	static const char *const keys_position[] = {"type", "ball", "target", "weight", NULL};
	static const char *const keys_coordinate[] = {"type", "ball", "axis", "weight", NULL};
	static const char *const keys_effort[] = {"type", "ball", "weight", NULL};
	static const char *const keys_match[] = {"type", "ball", "observations", "weight", NULL};
	JsonObject *object = NULL;
	if (!cl_json_read_object(rd, node, path, &object))
		return;
	gboolean failed = FALSE;
	JsonNode *type_node = cl_json_member(rd, object, path, "type", TRUE, &failed);
	if (failed)
		return; /* the other keys depend on the type */
	const char *type_name = NULL;
	char *p = cl_json_child_path(path, "type");
	gboolean ok = cl_json_read_string(rd, type_node, p, &type_name);
	int type = -1;
	for (int t = 0; ok && t < CL_LOSS_TYPE_COUNT; t++)
		if (strcmp(type_name, loss_type_names[t]) == 0)
			type = t;
	if (ok && type < 0)
		ok = cl_json_fail(rd, p,
						  "\"%s\" is not a loss type (final_position, final_coordinate, control_effort or "
						  "trajectory_match)",
						  type_name);
	g_free(p);
	if (!ok)
		return;
	const char *const *keys = type == CL_LOSS_FINAL_POSITION	  ? keys_position
							  : type == CL_LOSS_FINAL_COORDINATE ? keys_coordinate
							  : type == CL_LOSS_TRAJECTORY_MATCH ? keys_match
																 : keys_effort;
	cl_json_check_keys(rd, object, path, keys);
	ClLossTerm *term = cl_scene_add_loss(scene, (ClLossType)type);
	if (!term) {
		cl_json_fail(rd, path, "out of memory");
		return;
	}
	JsonNode *ball = cl_json_member(rd, object, path, "ball", TRUE, &failed);
	const char *ball_id = NULL;
	p = cl_json_child_path(path, "ball");
	if (ball && cl_json_read_string(rd, ball, p, &ball_id)) {
		term->ball = cl_scene_find_ball(scene, ball_id);
		if (term->ball < 0)
			cl_json_fail(rd, p, "no ball has the id \"%s\"", ball_id);
	}
	g_free(p);
	number_member(rd, object, path, "weight", FALSE, &term->weight);
	if (type == CL_LOSS_FINAL_POSITION)
		vec2_member(rd, object, path, "target", TRUE, &term->target);
	JsonNode *observations =
		type == CL_LOSS_TRAJECTORY_MATCH ? cl_json_member(rd, object, path, "observations", TRUE, &failed) : NULL;
	if (observations) {
		p = cl_json_child_path(path, "observations");
		read_observations(rd, scene, term, observations, p);
		g_free(p);
	}
	JsonNode *axis = type == CL_LOSS_FINAL_COORDINATE ? cl_json_member(rd, object, path, "axis", TRUE, &failed) : NULL;
	if (axis) {
		const char *axis_name = NULL;
		p = cl_json_child_path(path, "axis");
		if (cl_json_read_string(rd, axis, p, &axis_name)) {
			if (strcmp(axis_name, "x") && strcmp(axis_name, "y"))
				cl_json_fail(rd, p, "must be \"x\" or \"y\"");
			else
				term->axis = axis_name[0] == 'y';
		}
		g_free(p);
	}
}

/* "gradient": "adjoint|zobg|fobg|aobg" and its smoothing's sigma, samples, seed. */
static void read_estimator(ClJsonReader *rd, JsonObject *object, const char *path, ClOptimizeDef *def)
{
	JsonNode *gradient = json_object_get_member(object, "gradient");
	if (gradient) {
		const char *name = NULL;
		char *p = cl_json_child_path(path, "gradient");
		int estimator = cl_json_read_string(rd, gradient, p, &name) ? cl_gradient_estimator_find(name) : -2;
		if (estimator == -1)
			cl_json_fail(rd, p, "must be \"adjoint\", \"zobg\", \"fobg\", \"aobg\" or \"fd\"");
		if (estimator >= 0)
			def->gradient = (ClGradientEstimator)estimator;
		g_free(p);
	}
	JsonNode *sigma = json_object_get_member(object, "sigma");
	if (number_member(rd, object, path, "sigma", FALSE, &def->sigma) && sigma && !(def->sigma > 0)) {
		char *p = cl_json_child_path(path, "sigma");
		cl_json_fail(rd, p, "must be positive (got %s)", cl_format_number(def->sigma).text);
		g_free(p);
	}
	JsonNode *samples = json_object_get_member(object, "samples"), *seed = json_object_get_member(object, "seed");
	char *p = cl_json_child_path(path, "samples");
	if (samples)
		cl_json_read_integer(rd, samples, p, 2, 1000000, &def->samples);
	g_free(p);
	double x = 0;
	p = cl_json_child_path(path, "seed");
	/* a seed is a whole number a double holds exactly */
	if (seed && cl_json_read_number(rd, seed, p, &x)) {
		if (x != floor(x) || x < 0 || x > 0x1p53)
			cl_json_fail(rd, p, "must be a whole number from 0 to 2^53 (got %s)", cl_format_number(x).text);
		else
			def->seed = (uint64_t)x;
	}
	g_free(p);
	if (def->gradient != CL_GRADIENT_ADJOINT && def->gradient != CL_GRADIENT_FD && !sigma)
		cl_json_fail(rd, path, "\"sigma\" is required with \"gradient\": \"%s\"",
					 cl_gradient_estimator_name(def->gradient));
}

static void read_optimize(ClJsonReader *rd, ClScene *scene, JsonNode *node, const char *path)
{
	static const char *const keys[] = {"parameters", "learning_rate", "iterations", "optimizer",
									   "gradient",	 "sigma",		  "samples",	"seed",
									   NULL};
	JsonObject *object = NULL;
	if (!cl_json_read_object(rd, node, path, &object))
		return;
	cl_json_check_keys(rd, object, path, keys);
	ClOptimizeDef *def = &scene->optimize;
	gboolean failed = FALSE;
	JsonNode *parameters = cl_json_member(rd, object, path, "parameters", TRUE, &failed);
	char *p = cl_json_child_path(path, "parameters");
	JsonArray *a = NULL;
	gboolean parameters_ok = parameters && cl_json_read_array(rd, parameters, p, &a);
	if (parameters_ok && json_array_get_length(a) > CL_OPTIMIZE_PARAMS_MAX)
		parameters_ok = cl_json_fail(rd, p, "at most %d entries", CL_OPTIMIZE_PARAMS_MAX);
	for (guint i = 0; parameters_ok && i < json_array_get_length(a); i++) {
		char *pi = g_strdup_printf("%s[%u]", p, i);
		parameters_ok = read_id(rd, json_array_get_element(a, i), pi, def->parameters[i], CL_NAME_MAX);
		def->parameter_count = (int)i + 1;
		g_free(pi);
	}
	g_free(p);
	/* the names are looked up in the scene only when every one could be read */
	if (!parameters_ok)
		def->parameter_count = 0;
	if (def->parameter_count > 0) {
		char message[CL_MESSAGE_MAX];
		int count;
		ClParam *expanded = cl_optimize_expand(scene, def, &count, message, sizeof message);
		if (!expanded) {
			/* the engine's message starts with the JSON path already */
			const char *colon = strstr(message, ": ");
			char *where = colon ? g_strndup(message, (gsize)(colon - message)) : g_strdup(path);
			cl_json_fail(rd, where, "%s", colon ? colon + 2 : message);
			g_free(where);
		}
		g_free(expanded);
	}
	number_member(rd, object, path, "learning_rate", FALSE, &def->learning_rate);
	JsonNode *iterations = json_object_get_member(object, "iterations");
	if (iterations) {
		p = cl_json_child_path(path, "iterations");
		cl_json_read_integer(rd, iterations, p, 0, 1000000, &def->iterations);
		g_free(p);
	}
	JsonNode *optimizer = json_object_get_member(object, "optimizer");
	const char *name = NULL;
	p = cl_json_child_path(path, "optimizer");
	if (optimizer && cl_json_read_string(rd, optimizer, p, &name)) {
		if (strcmp(name, "gd") == 0)
			def->optimizer = CL_OPTIMIZER_GD;
		else if (strcmp(name, "adam") == 0)
			def->optimizer = CL_OPTIMIZER_ADAM;
		else
			cl_json_fail(rd, p, "must be \"gd\" or \"adam\"");
	}
	g_free(p);
	read_estimator(rd, object, path, def);
}

static char *backend_ids(void)
{
	GString *s = g_string_new(NULL);
	for (int b = 0; b < cl_backend_count(); b++)
		g_string_append_printf(s, "%s%s", b ? ", " : "", cl_backend_info(b)->id);
	return g_string_free(s, FALSE);
}

static char *param_names(int backend)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	GString *s = g_string_new(NULL);
	for (int i = 0; i < info->param_count; i++)
		g_string_append_printf(s, "%s%s", i ? ", " : "", info->params[i].name);
	return g_string_free(s, FALSE);
}

static gboolean read_backend_param(ClJsonReader *rd, ClScene *scene, int backend, int index, JsonNode *node,
								   const char *path)
{
	const ClParamDesc *d = &cl_backend_info(backend)->params[index];
	double value;
	if (d->kind == CL_PARAM_KIND_CHOICE) {
		const char *name = NULL;
		if (!cl_json_read_string(rd, node, path, &name))
			return FALSE;
		int choice = -1;
		for (int c = 0; d->choices[c]; c++)
			if (strcmp(d->choices[c], name) == 0)
				choice = c;
		if (choice < 0) {
			char *choices = g_strjoinv("\", \"", (char **)d->choices);
			gboolean ok = cl_json_fail(rd, path, "\"%s\" is not one of \"%s\"", name, choices);
			g_free(choices);
			return ok;
		}
		value = choice;
	} else if (d->kind == CL_PARAM_KIND_BOOL) {
		if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN)
			return cl_json_fail(rd, path, "must be true or false");
		value = json_node_get_boolean(node);
	} else {
		if (!cl_json_read_number(rd, node, path, &value))
			return FALSE;
		if (d->kind == CL_PARAM_KIND_INT && value != floor(value))
			return cl_json_fail(rd, path, "must be a whole number");
	}
	if (!cl_scene_set_backend_param(scene, backend, d->name, value, NULL, 0))
		return cl_json_fail(rd, path, "%s is outside [%s, %s]%s%s", cl_format_number(value).text,
				   cl_format_number(d->min).text, cl_format_number(d->max).text, d->unit[0] ? " " : "", d->unit);
	return TRUE;
}

static void read_backends(ClJsonReader *rd, ClScene *scene, JsonNode *node, const char *path)
{
	JsonObject *object = NULL;
	if (!cl_json_read_object(rd, node, path, &object))
		return;
	GList *members = json_object_get_members(object);
	for (GList *m = members; m; m = m->next) {
		const char *id = m->data;
		char *p = cl_json_child_path(path, id);
		int backend = cl_backend_find(id);
		JsonObject *params = NULL;
		if (backend < 0) {
			char *known = backend_ids();
			cl_json_fail(rd, p, "unknown backend (known: %s)", known);
			g_free(known);
		}
		GList *names = backend >= 0 && cl_json_read_object(rd, json_object_get_member(object, id), p, &params)
						   ? json_object_get_members(params)
						   : NULL;
		for (GList *n = names; n; n = n->next) {
			const char *name = n->data;
			char *pp = cl_json_child_path(p, name);
			int index = cl_backend_param_find(backend, name);
			if (index < 0) {
				char *known = param_names(backend);
				cl_json_fail(rd, pp, "backend \"%s\" has no parameter of this name (it has: %s)", id,
							 known[0] ? known : "none");
				g_free(known);
			} else {
				read_backend_param(rd, scene, backend, index, json_object_get_member(params, name), pp);
			}
			g_free(pp);
		}
		g_list_free(names);
		g_free(p);
	}
	g_list_free(members);
}

/* An array of at most max items (0: any number), each read by read_one. */
static void read_list(ClJsonReader *rd, ClScene *scene, JsonObject *root, const char *key, gboolean required,
					  guint max, void (*read_one)(ClJsonReader *, ClScene *, JsonNode *, const char *))
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, root, "", key, required, &failed);
	JsonArray *a = NULL;
	if (!node || !cl_json_read_array(rd, node, key, &a))
		return;
	if (max && json_array_get_length(a) > max) { /* refused before it is read */
		cl_json_fail(rd, key, "%u %s, more than the limit of %u", json_array_get_length(a), key, max);
		return;
	}
	for (guint i = 0; i < json_array_get_length(a); i++) {
		char *p = g_strdup_printf("%s[%u]", key, i);
		read_one(rd, scene, json_array_get_element(a, i), p);
		g_free(p);
	}
}

static gboolean read_scene(ClJsonReader *rd, ClScene *scene, JsonNode *root_node)
{
	static const char *const keys[] = {"contactlab", "name",  "description", "duration", "steps",	"gravity",
									   "elasticity", "friction", "balls",		"walls",	"loss",		"optimize",
									   "backends",	 NULL};
	if (!root_node || !JSON_NODE_HOLDS_OBJECT(root_node))
		return cl_json_fail(rd, "(top level)", "must be a JSON object {\"contactlab\": 1, …}");
	JsonObject *root = json_node_get_object(root_node);
	gboolean failed = FALSE;
	JsonNode *version = cl_json_member(rd, root, "", "contactlab", TRUE, &failed);
	if (failed)
		return FALSE;
	if (!cl_json_is_number(version) || cl_json_number_of(version) != 1.0)
		return cl_json_fail(rd, "contactlab", "must be 1 (the only scene file version so far)");
	cl_json_check_keys(rd, root, "", keys);
	JsonNode *name = json_object_get_member(root, "name");
	if (name)
		read_id(rd, name, "name", scene->name, sizeof scene->name);
	JsonNode *description = json_object_get_member(root, "description");
	if (description)
		read_id(rd, description, "description", scene->description, sizeof scene->description);
	number_member(rd, root, "", "duration", TRUE, &scene->duration);
	JsonNode *steps = cl_json_member(rd, root, "", "steps", TRUE, &failed);
	if (failed || !cl_json_read_integer(rd, steps, "steps", 1, CL_MAX_STEPS, &scene->steps))
		scene->steps = 0; /* read_control then leaves the sequences alone */
	vec2_member(rd, root, "", "gravity", FALSE, &scene->gravity);
	number_member(rd, root, "", "elasticity", FALSE, &scene->elasticity);
	number_member(rd, root, "", "friction", FALSE, &scene->friction);
	read_list(rd, scene, root, "balls", TRUE, CL_MAX_BALLS, read_ball);
	read_list(rd, scene, root, "walls", FALSE, CL_MAX_WALLS, read_wall);
	read_list(rd, scene, root, "loss", FALSE, 0, read_loss);
	JsonNode *optimize = json_object_get_member(root, "optimize");
	if (optimize)
		read_optimize(rd, scene, optimize, "optimize");
	JsonNode *backends = json_object_get_member(root, "backends");
	if (backends)
		read_backends(rd, scene, backends, "backends");
	if (rd->errors > 0) {
		cl_json_finish_errors(rd);
		return FALSE;
	}
	/* the scene as a whole (sizes, overlaps), once every value could be read */
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(scene, message, sizeof message)) {
		/* validation messages read "PATH: reason" already */
		if (rd->file)
			g_set_error(rd->error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID, "%s: %s", rd->file, message);
		else
			g_set_error_literal(rd->error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID, message);
		return FALSE;
	}
	return TRUE;
}

ClScene *cl_scene_file_read_node(JsonNode *node, const ClJsonDocument *document, const char *where, GError **error)
{
	ClScene *scene = cl_scene_new();
	scene->memory_budget = cl_memory_budget();
	ClJsonReader rd = {.domain = CL_SCENE_FILE_ERROR, .code = CL_SCENE_FILE_ERROR_INVALID, .file = where,
					   .error = error, .document = document};
	if (!read_scene(&rd, scene, node)) {
		cl_scene_free(scene);
		return NULL;
	}
	return scene;
}

ClScene *cl_scene_file_parse(const char *data, gssize length, const char *filename, GError **error)
{
	ClJsonDocument *document = cl_json_parse(data, length, filename ? filename : "scene", " (a scene needs 6)",
											 CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_SYNTAX, error);
	if (!document)
		return NULL;
	ClScene *scene = cl_scene_file_read_node(document->root, document, filename, error);
	cl_json_document_free(document);
	return scene;
}

ClScene *cl_scene_file_load(const char *path, GError **error)
{
	char *data;
	gsize length;
	if (!cl_input_file_read(path, CL_INPUT_FILE_MAX, &data, &length, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO,
							error))
		return NULL;
	ClScene *scene = cl_scene_file_parse(data, (gssize)length, path, error);
	g_free(data);
	return scene;
}

/* ------------------------------------------------------------- writing */

static void put_number(GString *out, double x)
{
	/* json-glib reads "-0" as the integer 0; "-0.0" keeps the sign bit */
	g_string_append(out, x == 0.0 && signbit(x) ? "-0.0" : cl_format_number(x).text);
}

static void put_vec2(GString *out, ClVec2 v)
{
	g_string_append_c(out, '[');
	put_number(out, v.x);
	g_string_append(out, ", ");
	put_number(out, v.y);
	g_string_append_c(out, ']');
}

static void put_ball(GString *out, const ClScene *scene, const ClBall *ball)
{
	g_string_append(out, "    { \"id\": ");
	cl_json_append_string(out, ball->id);
	g_string_append(out, ", \"position\": ");
	put_vec2(out, ball->position);
	g_string_append(out, ", \"velocity\": ");
	put_vec2(out, ball->velocity);
	g_string_append(out, ", \"radius\": ");
	put_number(out, ball->radius);
	g_string_append(out, ", \"mass\": ");
	put_number(out, ball->mass);
	if (ball->control_kind == CL_CONTROL_CONSTANT) {
		g_string_append(out, ",\n      \"control\": { \"constant\": ");
		put_vec2(out, ball->control_constant);
		g_string_append(out, " }");
	} else if (ball->control_kind == CL_CONTROL_SEQUENCE) {
		g_string_append(out, ",\n      \"control\": { \"sequence\": [");
		for (int n = 0; n < scene->steps; n++) {
			g_string_append(out, n ? ",\n        " : "\n        ");
			put_vec2(out, ball->control_sequence[n]);
		}
		g_string_append(out, " ] }");
	}
	g_string_append(out, " }");
}

static void put_backend_param(GString *out, const ClParamDesc *d, double value)
{
	switch (d->kind) {
	case CL_PARAM_KIND_CHOICE:
		cl_json_append_string(out, d->choices[(int)value]);
		break;
	case CL_PARAM_KIND_BOOL:
		g_string_append(out, value != 0.0 ? "true" : "false");
		break;
	case CL_PARAM_KIND_INT:
	case CL_PARAM_KIND_REAL:
		put_number(out, value);
		break;
	}
}

char *cl_scene_file_to_json(const ClScene *scene)
{
	GString *out = g_string_new("{\n  \"contactlab\": 1,\n  \"name\": ");
	cl_json_append_string(out, scene->name);
	if (scene->description[0]) {
		g_string_append(out, ",\n  \"description\": ");
		cl_json_append_string(out, scene->description);
	}
	g_string_append(out, ",\n  \"duration\": ");
	put_number(out, scene->duration);
	g_string_append_printf(out, ",\n  \"steps\": %d,\n  \"gravity\": ", scene->steps);
	put_vec2(out, scene->gravity);
	g_string_append(out, ",\n  \"elasticity\": ");
	put_number(out, scene->elasticity);
	g_string_append(out, ",\n  \"friction\": ");
	put_number(out, scene->friction);
	g_string_append(out, ",\n  \"balls\": [");
	for (int i = 0; i < scene->ball_count; i++) {
		g_string_append(out, i ? ",\n" : "\n");
		put_ball(out, scene, &scene->balls[i]);
	}
	g_string_append(out, scene->ball_count ? " ],\n  \"walls\": [" : "],\n  \"walls\": [");
	for (int w = 0; w < scene->wall_count; w++) {
		const ClWall *wall = &scene->walls[w];
		g_string_append(out, w ? ",\n    { \"id\": " : "\n    { \"id\": ");
		cl_json_append_string(out, wall->id);
		g_string_append(out, ", \"point\": ");
		put_vec2(out, wall->point);
		g_string_append(out, ", \"normal\": ");
		put_vec2(out, wall->normal);
		g_string_append(out, " }");
	}
	g_string_append(out, scene->wall_count ? " ],\n  \"loss\": [" : "],\n  \"loss\": [");
	for (int k = 0; k < scene->loss_count; k++) {
		const ClLossTerm *t = &scene->loss[k];
		g_string_append(out, k ? ",\n    { \"type\": " : "\n    { \"type\": ");
		cl_json_append_string(out, loss_type_names[t->type]);
		g_string_append(out, ", \"ball\": ");
		cl_json_append_string(out, scene->balls[t->ball].id);
		if (t->type == CL_LOSS_FINAL_POSITION) {
			g_string_append(out, ", \"target\": ");
			put_vec2(out, t->target);
		} else if (t->type == CL_LOSS_FINAL_COORDINATE) {
			g_string_append(out, t->axis ? ", \"axis\": \"y\"" : ", \"axis\": \"x\"");
		} else if (t->type == CL_LOSS_TRAJECTORY_MATCH) {
			/* written inline, whether they were read from a CSV file or not */
			g_string_append(out, ", \"observations\": [");
			for (int j = 0; j < t->observation_count; j++) {
				g_string_append(out, j ? ", [" : "[");
				for (int c = 0; c < 3; c++) {
					if (c)
						g_string_append(out, ", ");
					put_number(out, t->observations[3 * j + c]);
				}
				g_string_append(out, "]");
			}
			g_string_append(out, "]");
		}
		g_string_append(out, ", \"weight\": ");
		put_number(out, t->weight);
		g_string_append(out, " }");
	}
	const ClOptimizeDef *def = &scene->optimize;
	g_string_append(out, scene->loss_count ? " ],\n  \"optimize\": { \"parameters\": ["
										   : "],\n  \"optimize\": { \"parameters\": [");
	for (int k = 0; k < def->parameter_count; k++) {
		if (k)
			g_string_append(out, ", ");
		cl_json_append_string(out, def->parameters[k]);
	}
	g_string_append(out, "], \"learning_rate\": ");
	put_number(out, def->learning_rate);
	g_string_append_printf(out, ", \"iterations\": %d, \"optimizer\": \"%s\"", def->iterations,
						   def->optimizer == CL_OPTIMIZER_ADAM ? "adam" : "gd");
	/* the estimator's keys only where they differ from cl_scene_new's */
	if (def->gradient != CL_GRADIENT_ADJOINT)
		g_string_append_printf(out, ", \"gradient\": \"%s\"", cl_gradient_estimator_name(def->gradient));
	if (def->sigma != 0) {
		g_string_append(out, ", \"sigma\": ");
		put_number(out, def->sigma);
	}
	if (def->samples != CL_OPTIMIZE_SAMPLES_DEFAULT)
		g_string_append_printf(out, ", \"samples\": %d", def->samples);
	if (def->seed != CL_OPTIMIZE_SEED_DEFAULT)
		g_string_append_printf(out, ", \"seed\": %" G_GUINT64_FORMAT, (guint64)def->seed);
	g_string_append(out, " },\n  \"backends\": {");
	/* only values that differ from the backend's defaults */
	gboolean first_backend = TRUE;
	for (int b = 0; b < cl_backend_count(); b++) {
		const ClBackendInfo *info = cl_backend_info(b);
		gboolean first_param = TRUE;
		for (int i = 0; i < info->param_count; i++) {
			double value = scene->backend_params[b].values[i];
			if (value == info->params[i].default_value)
				continue;
			if (first_param) {
				g_string_append(out, first_backend ? "\n    " : ",\n    ");
				cl_json_append_string(out, info->id);
				g_string_append(out, ": { ");
				first_backend = FALSE;
			} else {
				g_string_append(out, ", ");
			}
			first_param = FALSE;
			cl_json_append_string(out, info->params[i].name);
			g_string_append(out, ": ");
			put_backend_param(out, &info->params[i], value);
		}
		if (!first_param)
			g_string_append(out, " }");
	}
	g_string_append(out, first_backend ? "}\n}\n" : "\n  }\n}\n");
	return g_string_free(out, FALSE);
}

gboolean cl_scene_file_save(const ClScene *scene, const char *path, GError **error)
{
	char *json = cl_scene_file_to_json(scene);
	GError *io_error = NULL;
	gboolean ok = cl_write_file(path, json, strlen(json), &io_error);
	if (!ok)
		g_propagate_error(error, g_error_new_literal(CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO, io_error->message));
	g_clear_error(&io_error);
	g_free(json);
	return ok;
}

/* ------------------------------------------------------------ settings */

static gboolean setting_error(GError **error, const char *setting, const char *format, ...) G_GNUC_PRINTF(3, 4);

static gboolean setting_error(GError **error, const char *setting, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID, "%s: %s", setting, reason);
	g_free(reason);
	return FALSE;
}

static gboolean parse_double(const char *text, double *out)
{
	char *end;
	if (!text[0] || g_ascii_isspace(text[0]))
		return FALSE;
	*out = g_ascii_strtod(text, &end);
	return *end == '\0' && isfinite(*out);
}

static gboolean apply_backend_setting(ClScene *scene, int backend, const char *name, const char *value,
									  const char *setting, GError **error)
{
	int index = cl_backend_param_find(backend, name);
	const ClBackendInfo *info = cl_backend_info(backend);
	if (index < 0) {
		char *known = param_names(backend);
		gboolean ok = setting_error(error, setting, "backend \"%s\" has no parameter \"%s\" (it has: %s)", info->id,
									name, known[0] ? known : "none");
		g_free(known);
		return ok;
	}
	const ClParamDesc *d = &info->params[index];
	double x = NAN;
	if (d->kind == CL_PARAM_KIND_CHOICE) {
		for (int c = 0; d->choices[c]; c++)
			if (strcmp(d->choices[c], value) == 0)
				x = c;
		if (isnan(x)) {
			char *choices = g_strjoinv(", ", (char **)d->choices);
			gboolean ok = setting_error(error, setting, "\"%s\" is not one of: %s", value, choices);
			g_free(choices);
			return ok;
		}
	} else if (d->kind == CL_PARAM_KIND_BOOL) {
		if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
			x = 1;
		else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
			x = 0;
		else
			return setting_error(error, setting, "\"%s\" is not true or false", value);
	} else if (!parse_double(value, &x)) {
		return setting_error(error, setting, "\"%s\" is not a number", value);
	}
	if (!cl_scene_set_backend_param(scene, backend, name, x, NULL, 0))
		return setting_error(error, setting, "%s is outside [%s, %s]%s", value, cl_format_number(d->min).text,
							 cl_format_number(d->max).text,
							 d->kind == CL_PARAM_KIND_REAL ? "" : " or not a whole number");
	return TRUE;
}

gboolean cl_scene_apply_setting(ClScene *scene, const char *setting, GError **error)
{
	const char *equals = strchr(setting, '=');
	if (!equals || equals == setting)
		return setting_error(error, setting, "expected KEY=VALUE, e.g. steps=240 or impulse-toi.precision=float64");
	char *key = g_strndup(setting, (gsize)(equals - setting));
	const char *value = equals + 1;
	gboolean ok = TRUE;
	double x = 0;
	const char *dot = strchr(key, '.');
	char *prefix = dot ? g_strndup(key, (gsize)(dot - key)) : NULL;
	int backend = prefix ? cl_backend_find(prefix) : -1;
	if (backend >= 0) {
		ok = apply_backend_setting(scene, backend, dot + 1, value, setting, error);
	} else if (strcmp(key, "steps") == 0) {
		if (!parse_double(value, &x) || x != floor(x) || x < 1 || x > CL_MAX_STEPS)
			ok = setting_error(error, setting, "steps must be a whole number from 1 to %d", CL_MAX_STEPS);
		else
			cl_scene_set_steps(scene, (int)x);
	} else if (strcmp(key, "name") == 0) {
		if (strlen(value) >= sizeof scene->name)
			ok = setting_error(error, setting, "the name is longer than %zu bytes", sizeof scene->name - 1);
		else
			g_strlcpy(scene->name, value, sizeof scene->name);
	} else if (strcmp(key, "learning_rate") == 0 || strcmp(key, "optimize.learning_rate") == 0) {
		if (!parse_double(value, &x) || !(x > 0))
			ok = setting_error(error, setting, "the learning rate must be a positive number");
		else
			scene->optimize.learning_rate = x;
	} else if (strcmp(key, "iterations") == 0 || strcmp(key, "optimize.iterations") == 0) {
		if (!parse_double(value, &x) || x != floor(x) || x < 0 || x > 1000000)
			ok = setting_error(error, setting, "iterations must be a whole number from 0 to 1000000");
		else
			scene->optimize.iterations = (int)x;
	} else {
		ClParam param;
		char message[CL_MESSAGE_MAX];
		if (!cl_param_parse(scene, key, &param, message, sizeof message)) {
			char *known = backend_ids();
			ok = setting_error(error, setting,
							   "%s; a setting is steps, duration, elasticity, friction, gravity.x|y, learning_rate, "
							   "iterations, BALL.position.x|y, BALL.velocity.x|y, BALL.radius, BALL.mass, "
							   "BALL.control[K].x|y, WALL.point.x|y, WALL.angle or BACKEND.PARAM with BACKEND "
							   "one of %s",
							   message, known);
			g_free(known);
		} else if (!parse_double(value, &x)) {
			ok = setting_error(error, setting, "\"%s\" is not a number", value);
		} else {
			cl_param_set(scene, &param, x);
		}
	}
	g_free(prefix);
	g_free(key);
	return ok;
}

/* ---------------------------------------------------------------- data */

static char *default_data_dir(void)
{
	/* A binary inside the build tree reads the source tree's data/, so it can
	 * run without being installed; an installed one reads the datadir. */
	char *exe = g_file_read_link("/proc/self/exe", NULL);
	gboolean in_build_tree = exe && g_str_has_prefix(exe, CL_BUILD_ROOT G_DIR_SEPARATOR_S);
	g_free(exe);
	if (in_build_tree && g_file_test(CL_SOURCE_DATA_DIR, G_FILE_TEST_IS_DIR))
		return g_strdup(CL_SOURCE_DATA_DIR);
	return g_strdup(CL_INSTALLED_DATA_DIR);
}

const char *cl_data_dir(void)
{
	const char *env = g_getenv("CONTACTLAB_DATA_DIR");
	if (env && env[0])
		return env;
	static char *dir;
	if (g_once_init_enter(&dir))
		g_once_init_leave(&dir, default_data_dir());
	return dir;
}

static void preset_info_free(gpointer data)
{
	ClPresetInfo *info = data;
	g_free(info->id);
	g_free(info->name);
	g_free(info->description);
	g_free(info);
}

static int compare_presets(gconstpointer a, gconstpointer b)
{
	const ClPresetInfo *x = *(ClPresetInfo *const *)a, *y = *(ClPresetInfo *const *)b;
	return strcmp(x->id, y->id);
}

GPtrArray *cl_preset_list(void)
{
	GPtrArray *list = g_ptr_array_new_with_free_func(preset_info_free);
	g_autofree char *folder = g_build_filename(cl_data_dir(), "presets", NULL);
	GDir *dir = g_dir_open(folder, 0, NULL);
	for (const char *file; dir && (file = g_dir_read_name(dir));) {
		if (!g_str_has_suffix(file, ".json"))
			continue;
		g_autofree char *id = g_strndup(file, strlen(file) - strlen(".json"));
		g_autoptr(ClScene) scene = cl_preset_load(id, NULL);
		if (!scene)
			continue; /* a broken preset is reported when it is loaded */
		ClPresetInfo *info = g_new(ClPresetInfo, 1);
		info->id = g_steal_pointer(&id);
		info->name = g_strdup(scene->name);
		info->description = g_strdup(scene->description);
		g_ptr_array_add(list, info);
	}
	if (dir)
		g_dir_close(dir);
	g_ptr_array_sort(list, compare_presets);
	return list;
}

ClScene *cl_preset_load(const char *id, GError **error)
{
	for (const char *c = id; *c; c++)
		if (!(g_ascii_isalnum(*c) || *c == '-' || *c == '_')) {
			g_set_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO, "\"%s\" is not a preset id", id);
			return NULL;
		}
	char *file = g_strconcat(id, ".json", NULL);
	char *path = g_build_filename(cl_data_dir(), "presets", file, NULL);
	ClScene *scene = cl_scene_file_load(path, error);
	g_free(path);
	g_free(file);
	return scene;
}
