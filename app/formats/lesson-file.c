/* Lesson files: JSON version 1, parsed strictly (every key, type and value is
 * checked, the JSON path in the message), placeholders checked against the
 * step's scene, backends and view. */
#include "lesson-file.h"

#include "json-read.h"
#include "machine.h"
#include "numbers.h"
#include "scene-file.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(cl-lesson-file-error-quark, cl_lesson_file_error)

#define LESSON_STEPS_MAX 64
#define LESSON_AXIS_MAX 256
#define LESSON_ITERATIONS_MAX 100000

static const char *const view_names[CL_LESSON_VIEW_COUNT] = {
	[CL_LESSON_VIEW_GRADIENTS] = "gradients",
	[CL_LESSON_VIEW_PERTURBATION] = "perturbation",
	[CL_LESSON_VIEW_HEATMAP] = "heatmap",
	[CL_LESSON_VIEW_LEARNING] = "learning",
	[CL_LESSON_VIEW_CONVERGENCE] = "convergence",
};

static const char *const quantities[] = {"loss", "grad-x", "grad-y", "angle-error", "sign-agreement", NULL};

static const char *const smooth_cite_names[CL_SMOOTH_CITE_COUNT + 1] = {
	[CL_SMOOTH_CITE_POINT] = "point",
	[CL_SMOOTH_CITE_ZOBG] = "zobg",
	[CL_SMOOTH_CITE_ZOBG_SE] = "zobg-se",
	[CL_SMOOTH_CITE_ZOBG_NOBASELINE] = "zobg-nobaseline",
	[CL_SMOOTH_CITE_ZOBG_NOBASELINE_SE] = "zobg-nobaseline-se",
	[CL_SMOOTH_CITE_FOBG] = "fobg",
	[CL_SMOOTH_CITE_FOBG_SE] = "fobg-se",
	[CL_SMOOTH_CITE_AOBG] = "aobg",
	[CL_SMOOTH_CITE_AOBG_SE] = "aobg-se",
	[CL_SMOOTH_CITE_FOBG_BIAS] = "fobg-bias",
	[CL_SMOOTH_CITE_FOBG_BIAS_SE] = "fobg-bias-se",
	[CL_SMOOTH_CITE_FOBG_MIN] = "fobg-min",
	[CL_SMOOTH_CITE_FOBG_MAX] = "fobg-max",
	[CL_SMOOTH_CITE_FOBG_NEGATIVE] = "fobg-negative",
	[CL_SMOOTH_CITE_LOSS] = "loss",
	[CL_SMOOTH_CITE_SMOOTHED_LOSS] = "smoothed-loss",
	[CL_SMOOTH_CITE_SMOOTHED_LOSS_SE] = "smoothed-loss-se",
	[CL_SMOOTH_CITE_ALPHA] = "alpha",
	[CL_SMOOTH_CITE_ALPHA_RULE] = "alpha-rule",
	[CL_SMOOTH_CITE_EPSILON] = "epsilon",
	[CL_SMOOTH_CITE_GAMMA] = "gamma",
	[CL_SMOOTH_CITE_NOT_OK] = "not-ok",
};

const char *cl_smooth_cite_name(ClSmoothCite what)
{
	return what >= 0 && what < CL_SMOOTH_CITE_COUNT ? smooth_cite_names[what] : "unknown";
}

const char *cl_lesson_view_name(ClLessonViewKind kind)
{
	return kind >= 0 && kind < CL_LESSON_VIEW_COUNT ? view_names[kind] : "unknown";
}

/* ------------------------------------------------------------- reading */

static gboolean read_text(ClJsonReader *rd, JsonNode *node, const char *path, char **out)
{
	const char *s = NULL;
	if (!cl_json_read_string(rd, node, path, &s))
		return FALSE;
	if (!s[0])
		return cl_json_fail(rd, path, "must not be empty");
	*out = g_strdup(s);
	return TRUE;
}

static gboolean read_bool(ClJsonReader *rd, JsonNode *node, const char *path, gboolean *out)
{
	if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN)
		return cl_json_fail(rd, path, "must be true or false");
	*out = json_node_get_boolean(node);
	return TRUE;
}

static gboolean read_array(ClJsonReader *rd, JsonNode *node, const char *path, gboolean allow_empty, JsonArray **out)
{
	if (!cl_json_read_array(rd, node, path, out))
		return FALSE;
	if (!allow_empty && json_array_get_length(*out) == 0)
		return cl_json_fail(rd, path, "must not be empty");
	return TRUE;
}

/* A parameter name that exists in the step's scene. */
static gboolean read_parameter(ClJsonReader *rd, JsonNode *node, const char *path, const ClScene *scene, char *out)
{
	const char *name = NULL;
	if (!cl_json_read_string(rd, node, path, &name))
		return FALSE;
	ClParam p;
	char message[CL_MESSAGE_MAX];
	if (strlen(name) >= CL_NAME_MAX || !cl_param_parse(scene, name, &p, message, sizeof message))
		return cl_json_fail(rd, path, "\"%s\" is not a parameter of this scene (%s)", name,
				   strlen(name) >= CL_NAME_MAX ? "too long" : message);
	g_strlcpy(out, name, CL_NAME_MAX);
	return TRUE;
}

static gboolean read_backend_id(ClJsonReader *rd, JsonNode *node, const char *path, int *out)
{
	const char *id = NULL;
	if (!cl_json_read_string(rd, node, path, &id))
		return FALSE;
	int b = cl_backend_find(id);
	if (b < 0) {
		GString *known = g_string_new(NULL);
		for (int k = 0; k < cl_backend_count(); k++)
			g_string_append_printf(known, "%s%s", k ? ", " : "", cl_backend_info(k)->id);
		gboolean ok = cl_json_fail(rd, path, "unknown backend \"%s\" (known: %s)", id, known->str);
		g_string_free(known, TRUE);
		return ok;
	}
	*out = b;
	return TRUE;
}

static gboolean backend_enabled(const ClLessonStep *step, int backend)
{
	for (guint i = 0; i < step->backends->len; i++)
		if (g_array_index(step->backends, int, i) == backend)
			return TRUE;
	return FALSE;
}

/* ------------------------------------------------------------- scene */

static gboolean apply_setting(ClJsonReader *rd, ClScene *scene, const char *path, const char *setting)
{
	GError *error = NULL;
	if (cl_scene_apply_setting(scene, setting, &error))
		return TRUE;
	gboolean ok = cl_json_fail(rd, path, "%s", error->message);
	g_error_free(error);
	return ok;
}

static gboolean read_scene(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	gboolean failed = FALSE;
	char *p = cl_json_child_path(path, "scene");
	JsonNode *node = cl_json_member(rd, step_object, path, "scene", TRUE, &failed);
	gboolean ok = !failed;
	if (ok && JSON_NODE_HOLDS_OBJECT(node)) {
		/* inline: the scene loader's messages, prefixed with where the scene sits */
		char *where = g_strdup_printf("%s: %s", rd->file, p);
		GError *error = NULL;
		step->scene = cl_scene_file_read_node(node, rd->document, where, &error);
		if (!step->scene) {
			g_set_error_literal(rd->error, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_INVALID, error->message);
			g_error_free(error);
			ok = FALSE;
		}
		g_free(where);
	} else if (ok) {
		const char *id = NULL;
		ok = cl_json_read_string(rd, node, p, &id);
		GError *error = NULL;
		if (ok && !(step->scene = cl_preset_load(id, &error))) {
			ok = cl_json_fail(rd, p, "no preset \"%s\" (%s)", id, error->message);
			g_error_free(error);
		}
		if (ok)
			step->scene_preset = g_strdup(id);
	}
	g_free(p);
	if (!ok)
		return FALSE;

	JsonNode *set = cl_json_member(rd, step_object, path, "set", FALSE, &failed);
	if (set) {
		char *sp = cl_json_child_path(path, "set");
		JsonArray *a = NULL;
		ok = read_array(rd, set, sp, TRUE, &a);
		for (guint i = 0; ok && i < json_array_get_length(a); i++) {
			char *ip = g_strdup_printf("%s[%u]", sp, i);
			const char *setting = NULL;
			ok = cl_json_read_string(rd, json_array_get_element(a, i), ip, &setting) &&
				 apply_setting(rd, step->scene, ip, setting);
			g_free(ip);
		}
		g_free(sp);
	}
	return ok;
}

/* "backends": ["exact", {"id": "compliant-brax", "parameters": {"precision": "float64"}}] */
static gboolean read_backends(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, step_object, path, "backends", TRUE, &failed);
	if (failed)
		return FALSE;
	char *bp = cl_json_child_path(path, "backends");
	JsonArray *a = NULL;
	gboolean ok = read_array(rd, node, bp, FALSE, &a);
	for (guint i = 0; ok && i < json_array_get_length(a); i++) {
		char *ip = g_strdup_printf("%s[%u]", bp, i);
		JsonNode *entry = json_array_get_element(a, i);
		int backend = -1;
		if (JSON_NODE_HOLDS_OBJECT(entry)) {
			JsonObject *o = json_node_get_object(entry);
			static const char *const keys[] = {"id", "parameters", NULL};
			JsonNode *id = NULL, *params = NULL;
			ok =
				cl_json_check_keys(rd, o, ip, keys) && (id = cl_json_member(rd, o, ip, "id", TRUE, &failed)) && !failed;
			char *idp = cl_json_child_path(ip, "id");
			ok = ok && read_backend_id(rd, id, idp, &backend);
			g_free(idp);
			params = ok ? json_object_get_member(o, "parameters") : NULL;
			if (params) {
				char *pp = cl_json_child_path(ip, "parameters");
				JsonObject *po = NULL;
				ok = cl_json_read_object(rd, params, pp, &po);
				GList *names = ok ? json_object_get_members(po) : NULL;
				for (GList *n = names; ok && n; n = n->next) {
					char *np = cl_json_child_path(pp, n->data);
					JsonNode *v = json_object_get_member(po, n->data);
					char *value = NULL;
					if (JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING)
						value = g_strdup(json_node_get_string(v));
					else if (JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_BOOLEAN)
						value = g_strdup(json_node_get_boolean(v) ? "true" : "false");
					else {
						double x;
						if ((ok = cl_json_read_number(rd, v, np, &x)))
							value = g_strdup(cl_format_number(x).text);
					}
					if (ok) {
						char *setting = g_strdup_printf("%s.%s=%s", cl_backend_info(backend)->id,
														(const char *)n->data, value);
						ok = apply_setting(rd, step->scene, np, setting);
						g_free(setting);
					}
					g_free(value);
					g_free(np);
				}
				g_list_free(names);
				g_free(pp);
			}
		} else {
			ok = read_backend_id(rd, entry, ip, &backend);
		}
		if (ok && backend_enabled(step, backend))
			ok = cl_json_fail(rd, ip, "backend \"%s\" is listed twice", cl_backend_info(backend)->id);
		if (ok)
			g_array_append_val(step->backends, backend);
		g_free(ip);
	}
	g_free(bp);
	return ok;
}

/* ------------------------------------------------------------- view */

static gboolean read_axis(ClJsonReader *rd, JsonObject *view, const char *path, const char *key, const ClScene *scene,
						  ClLessonAxis *axis)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, view, path, key, TRUE, &failed);
	if (failed)
		return FALSE;
	char *ap = cl_json_child_path(path, key);
	JsonObject *o = NULL;
	static const char *const keys[] = {"parameter", "min", "max", "count", NULL};
	gboolean ok = cl_json_read_object(rd, node, ap, &o) && cl_json_check_keys(rd, o, ap, keys);
	const char *names[] = {"parameter", "min", "max", "count"};
	JsonNode *parts[4] = {0};
	for (int i = 0; ok && i < 4; i++)
		ok = (parts[i] = cl_json_member(rd, o, ap, names[i], TRUE, &failed)) && !failed;
	char *pp[4];
	for (int i = 0; i < 4; i++)
		pp[i] = cl_json_child_path(ap, names[i]);
	ok = ok && read_parameter(rd, parts[0], pp[0], scene, axis->parameter) &&
		 cl_json_read_number(rd, parts[1], pp[1], &axis->min) && cl_json_read_number(rd, parts[2], pp[2], &axis->max) &&
		 cl_json_read_integer(rd, parts[3], pp[3], 1, LESSON_AXIS_MAX, &axis->count);
	if (ok && !(axis->max > axis->min))
		ok = cl_json_fail(rd, pp[2], "must be greater than min");
	for (int i = 0; i < 4; i++)
		g_free(pp[i]);
	g_free(ap);
	return ok;
}

static gboolean read_view(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, step_object, path, "view", TRUE, &failed);
	if (failed)
		return FALSE;
	char *vp = cl_json_child_path(path, "view");
	ClLessonView *v = &step->view;
	ClScene *scene = step->scene;
	v->iterations = scene->optimize.iterations;
	v->learning_rate = scene->optimize.learning_rate;
	JsonObject *o = NULL;
	const char *type = NULL;
	JsonNode *type_node = NULL;
	gboolean ok = cl_json_read_object(rd, node, vp, &o) &&
				  (type_node = cl_json_member(rd, o, vp, "type", TRUE, &failed)) && !failed;
	char *tp = cl_json_child_path(vp, "type");
	ok = ok && cl_json_read_string(rd, type_node, tp, &type);
	if (ok) {
		int kind = -1;
		for (int k = 0; k < CL_LESSON_VIEW_COUNT; k++)
			if (strcmp(type, view_names[k]) == 0)
				kind = k;
		if (kind < 0) {
			char *joined = g_strjoinv(", ", (char **)view_names);
			ok = cl_json_fail(rd, tp, "\"%s\" is not a view (expected one of: %s)", type, joined);
			g_free(joined);
		}
		v->kind = (ClLessonViewKind)kind;
	}
	g_free(tp);
	static const char *const keys[CL_LESSON_VIEW_COUNT][9] = {
		[CL_LESSON_VIEW_GRADIENTS] = {"type", "parameters", NULL},
		[CL_LESSON_VIEW_PERTURBATION] = {"type", "parameter", "delta", NULL},
		[CL_LESSON_VIEW_HEATMAP] = {"type", "x", "y", "quantity", "paths", "iterations", "learning_rate", NULL},
		[CL_LESSON_VIEW_LEARNING] = {"type", "iterations", "learning_rate", "log_scale", "optimum", NULL},
		[CL_LESSON_VIEW_CONVERGENCE] = {"type", "parameter", "steps", NULL},
	};
	ok = ok && cl_json_check_keys(rd, o, vp, keys[v->kind]);
	JsonNode *n;
	char *p;
#define FIELD(key) ((n = json_object_get_member(o, key)) ? (p = cl_json_child_path(vp, key)) : NULL)
	if (ok && FIELD("parameters")) {
		JsonArray *a = NULL;
		ok = read_array(rd, n, p, FALSE, &a);
		guint len = ok ? json_array_get_length(a) : 0;
		v->parameters = g_new0(char *, len + 1);
		for (guint i = 0; ok && i < len; i++) {
			char *ip = g_strdup_printf("%s[%u]", p, i);
			v->parameters[i] = g_malloc0(CL_NAME_MAX);
			ok = read_parameter(rd, json_array_get_element(a, i), ip, scene, v->parameters[i]);
			g_free(ip);
		}
		g_free(p);
	}
	gboolean needs_parameter = v->kind == CL_LESSON_VIEW_PERTURBATION || v->kind == CL_LESSON_VIEW_CONVERGENCE;
	if (ok && needs_parameter && !cl_json_member(rd, o, vp, "parameter", TRUE, &failed))
		ok = FALSE;
	if (ok && FIELD("parameter")) {
		/* any parameter of the scene: the perturbation view (as the window's)
		 * moves a physical one too, elasticity, a radius or a wall's pose */
		ok = read_parameter(rd, n, p, scene, v->parameter);
		g_free(p);
	}
	v->delta = 0.05;
	if (ok && FIELD("delta")) {
		ok = cl_json_read_number(rd, n, p, &v->delta);
		if (ok && !(v->delta > 0))
			ok = cl_json_fail(rd, p, "must be positive");
		g_free(p);
	}
	if (ok && v->kind == CL_LESSON_VIEW_HEATMAP) {
		ok = read_axis(rd, o, vp, "x", scene, &v->x) && read_axis(rd, o, vp, "y", scene, &v->y);
		if (ok && strcmp(v->x.parameter, v->y.parameter) == 0)
			ok = cl_json_fail(rd, vp, "x and y are the same parameter");
		g_strlcpy(v->quantity, "loss", sizeof v->quantity);
	}
	if (ok && FIELD("quantity")) {
		const char *q = NULL;
		ok = cl_json_read_string(rd, n, p, &q);
		if (ok && !g_strv_contains(quantities, q)) {
			char *joined = g_strjoinv(", ", (char **)quantities);
			ok = cl_json_fail(rd, p, "\"%s\" is not a quantity (expected one of: %s)", q, joined);
			g_free(joined);
		}
		if (ok)
			g_strlcpy(v->quantity, q, sizeof v->quantity);
		g_free(p);
	}
	if (ok && FIELD("paths")) {
		ok = read_bool(rd, n, p, &v->paths);
		g_free(p);
	}
	if (ok && FIELD("iterations")) {
		ok = cl_json_read_integer(rd, n, p, 1, LESSON_ITERATIONS_MAX, &v->iterations);
		g_free(p);
	}
	if (ok && FIELD("learning_rate")) {
		ok = cl_json_read_number(rd, n, p, &v->learning_rate);
		if (ok && !(v->learning_rate > 0))
			ok = cl_json_fail(rd, p, "must be positive");
		g_free(p);
	}
	if (ok && FIELD("log_scale")) {
		ok = read_bool(rd, n, p, &v->log_scale);
		g_free(p);
	}
	if (ok && FIELD("optimum")) {
		ok = read_bool(rd, n, p, &v->show_optimum);
		if (ok && v->show_optimum && isnan(cl_two_ball_optimum(scene, NULL)))
			ok = cl_json_fail(rd, p, "this scene is not the two-ball problem, it has no analytic optimum");
		g_free(p);
	}
	if (ok && v->kind == CL_LESSON_VIEW_CONVERGENCE) {
		ok = (n = cl_json_member(rd, o, vp, "steps", TRUE, &failed)) && !failed;
		p = cl_json_child_path(vp, "steps");
		JsonArray *a = NULL;
		ok = ok && read_array(rd, n, p, FALSE, &a);
		v->steps = g_array_new(FALSE, FALSE, sizeof(int));
		for (guint i = 0; ok && i < json_array_get_length(a); i++) {
			char *ip = g_strdup_printf("%s[%u]", p, i);
			int steps;
			ok = cl_json_read_integer(rd, json_array_get_element(a, i), ip, 1, 1000000, &steps);
			ClParam param;
			cl_param_parse(scene, v->parameter, &param, NULL, 0);
			if (ok && param.target == CL_PARAM_CONTROL && param.step >= steps)
				ok = cl_json_fail(rd, ip, "%s does not exist with %d steps", v->parameter, steps);
			if (ok)
				g_array_append_val(v->steps, steps);
			g_free(ip);
		}
		g_free(p);
	}
#undef FIELD
	gboolean learns = v->kind == CL_LESSON_VIEW_LEARNING || (v->kind == CL_LESSON_VIEW_HEATMAP && v->paths);
	if (ok && learns && scene->optimize.parameter_count == 0)
		ok = cl_json_fail(rd, vp, "the scene has no optimization problem (its \"optimize\" lists no parameters)");
	if (ok && learns) {
		/* the scene carries the view's settings, so a saved step scene reproduces the run */
		scene->optimize.iterations = v->iterations;
		scene->optimize.learning_rate = v->learning_rate;
	}
	g_free(vp);
	return ok;
}

/* ------------------------------------------------------------- smoothing */

/* "smoothing": {"parameters": [...], "sigma": S or [S, …], "samples": N,
 * "seed": K, "antithetic": bool, "gamma": G} */
static gboolean read_smoothing(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	ClLessonSmoothing *sm = &step->smoothing;
	sm->samples = 100;
	sm->seed = 1;
	sm->gamma = NAN;
	JsonNode *node = json_object_get_member(step_object, "smoothing");
	if (!node)
		return TRUE;
	char *sp = cl_json_child_path(path, "smoothing");
	JsonObject *o = NULL;
	static const char *const keys[] = {"parameters", "sigma", "samples", "seed", "antithetic", "gamma", NULL};
	gboolean failed = FALSE;
	JsonNode *parameters = NULL, *sigma = NULL;
	gboolean ok = cl_json_read_object(rd, node, sp, &o) && cl_json_check_keys(rd, o, sp, keys) &&
				  (parameters = cl_json_member(rd, o, sp, "parameters", TRUE, &failed)) && !failed &&
				  (sigma = cl_json_member(rd, o, sp, "sigma", TRUE, &failed)) && !failed;
	char *p = cl_json_child_path(sp, "parameters");
	JsonArray *a = NULL;
	ok = ok && read_array(rd, parameters, p, FALSE, &a);
	guint count = ok ? json_array_get_length(a) : 0;
	if (ok && count > CL_OPTIMIZE_PARAMS_MAX)
		ok = cl_json_fail(rd, p, "at most %d parameters", CL_OPTIMIZE_PARAMS_MAX);
	sm->parameters = g_new0(char *, count + 1);
	sm->sigma = g_new0(double, count + 1);
	for (guint i = 0; ok && i < count; i++) {
		char *ip = g_strdup_printf("%s[%u]", p, i);
		sm->parameters[i] = g_malloc0(CL_NAME_MAX);
		ok = read_parameter(rd, json_array_get_element(a, i), ip, step->scene, sm->parameters[i]);
		for (guint j = 0; ok && j < i; j++)
			if (strcmp(sm->parameters[j], sm->parameters[i]) == 0)
				ok = cl_json_fail(rd, ip, "\"%s\" is listed twice", sm->parameters[i]);
		g_free(ip);
	}
	g_free(p);
	p = cl_json_child_path(sp, "sigma");
	/* one σ for every parameter, or one each */
	if (ok && JSON_NODE_HOLDS_ARRAY(sigma)) {
		JsonArray *values = json_node_get_array(sigma);
		if (json_array_get_length(values) != count)
			ok = cl_json_fail(rd, p, "needs one value per parameter (%u)", count);
		for (guint i = 0; ok && i < count; i++) {
			char *ip = g_strdup_printf("%s[%u]", p, i);
			ok = cl_json_read_number(rd, json_array_get_element(values, i), ip, &sm->sigma[i]);
			if (ok && !(sm->sigma[i] > 0))
				ok = cl_json_fail(rd, ip, "must be positive");
			g_free(ip);
		}
	} else if (ok) {
		double x = 0;
		ok = cl_json_read_number(rd, sigma, p, &x);
		if (ok && !(x > 0))
			ok = cl_json_fail(rd, p, "must be positive");
		for (guint i = 0; ok && i < count; i++)
			sm->sigma[i] = x;
	}
	g_free(p);
	JsonNode *n;
#define FIELD(key) ((n = json_object_get_member(o, key)) ? (p = cl_json_child_path(sp, key)) : NULL)
	if (ok && FIELD("samples")) {
		ok = cl_json_read_integer(rd, n, p, 2, 1000000, &sm->samples);
		g_free(p);
	}
	if (ok && FIELD("seed")) {
		int seed = 0;
		ok = cl_json_read_integer(rd, n, p, 0, G_MAXINT, &seed);
		sm->seed = (guint64)seed;
		g_free(p);
	}
	if (ok && FIELD("antithetic")) {
		ok = read_bool(rd, n, p, &sm->antithetic);
		if (ok && sm->antithetic && sm->samples % 2)
			ok = cl_json_fail(rd, p, "antithetic sampling needs an even number of samples (got %d)", sm->samples);
		g_free(p);
	}
	if (ok && FIELD("gamma")) {
		ok = cl_json_read_number(rd, n, p, &sm->gamma);
		if (ok && !(sm->gamma > 0))
			ok = cl_json_fail(rd, p, "must be positive");
		g_free(p);
	}
#undef FIELD
	g_free(sp);
	return ok;
}

/* ------------------------------------------------------------- highlights */

static gboolean read_highlights(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	JsonNode *node = json_object_get_member(step_object, "highlight");
	if (!node)
		return TRUE;
	char *hp = cl_json_child_path(path, "highlight");
	JsonArray *a = NULL;
	gboolean ok = read_array(rd, node, hp, TRUE, &a);
	for (guint i = 0; ok && i < json_array_get_length(a); i++) {
		char *ip = g_strdup_printf("%s[%u]", hp, i);
		JsonObject *o = NULL;
		static const char *const keys[] = {"backend", "parameter", NULL};
		gboolean failed = FALSE;
		JsonNode *b = NULL;
		ok = cl_json_read_object(rd, json_array_get_element(a, i), ip, &o) && cl_json_check_keys(rd, o, ip, keys) &&
			 (b = cl_json_member(rd, o, ip, "backend", TRUE, &failed)) && !failed;
		ClLessonHighlight h = {0};
		char *bp = cl_json_child_path(ip, "backend");
		ok = ok && read_backend_id(rd, b, bp, &h.backend);
		if (ok && !backend_enabled(step, h.backend))
			ok = cl_json_fail(rd, bp, "backend \"%s\" is not enabled in this step", cl_backend_info(h.backend)->id);
		g_free(bp);
		JsonNode *param = ok ? json_object_get_member(o, "parameter") : NULL;
		if (param) {
			char *pp = cl_json_child_path(ip, "parameter");
			ok = read_parameter(rd, param, pp, step->scene, h.parameter);
			g_free(pp);
		}
		if (ok)
			g_array_append_val(step->highlights, h);
		g_free(ip);
	}
	g_free(hp);
	return ok;
}

/* ------------------------------------------------------------- placeholders */

static gboolean in_optimized(const ClScene *scene, const char *name)
{
	int count = 0;
	ClParam *params = cl_optimize_expand(scene, &scene->optimize, &count, NULL, 0);
	ClParam p;
	gboolean found = FALSE;
	if (params && cl_param_parse(scene, name, &p, NULL, 0))
		for (int i = 0; i < count && !found; i++)
			found = cl_param_equal(&params[i], &p);
	free(params);
	return found;
}

/* "smooth BACKEND WHAT [PARAMETER]" (words[0 … count − 1], the format taken off). */
static gboolean parse_smooth_cite(const ClLessonStep *step, const char *const *words, guint count, ClCite *cite,
								  char **reason)
{
	const ClLessonSmoothing *sm = &step->smoothing;
	if (!sm->parameters) {
		*reason = g_strdup("smooth values need the step's \"smoothing\"");
		return FALSE;
	}
	if (count < 3 || count > 4) {
		*reason = g_strdup("{smooth …} takes a backend, what (zobg, fobg-se, alpha, …) and, for a gradient, a "
						   "parameter");
		return FALSE;
	}
	cite->kind = CL_CITE_SMOOTH;
	cite->backend = cl_backend_find(words[1]);
	if (cite->backend < 0 || !backend_enabled(step, cite->backend)) {
		*reason = g_strdup_printf(cite->backend < 0 ? "unknown backend \"%s\""
												   : "backend \"%s\" is not enabled in this step",
								  words[1]);
		return FALSE;
	}
	int what = -1;
	for (int k = 0; k < CL_SMOOTH_CITE_COUNT; k++)
		if (strcmp(words[2], smooth_cite_names[k]) == 0)
			what = k;
	if (what < 0) {
		char *joined = g_strjoinv(", ", (char **)smooth_cite_names);
		*reason = g_strdup_printf("\"%s\" is not one of %s", words[2], joined);
		g_free(joined);
		return FALSE;
	}
	cite->index = what;
	gboolean per_parameter = what < CL_SMOOTH_CITE_LOSS;
	if (per_parameter != (count == 4)) {
		*reason = g_strdup_printf(per_parameter ? "{smooth %s %s …} needs one of the smoothing's parameters"
												: "{smooth %s %s} takes no parameter",
								  words[1], words[2]);
		return FALSE;
	}
	if (what == CL_SMOOTH_CITE_FOBG_BIAS || what == CL_SMOOTH_CITE_FOBG_BIAS_SE) {
		if (!backend_enabled(step, cl_backend_reference())) {
			*reason = g_strdup("the FoBG bias is measured against exact's ZoBG: enable exact");
			return FALSE;
		}
	}
	if (!per_parameter)
		return TRUE;
	gboolean listed = FALSE;
	for (char **p = sm->parameters; *p; p++)
		listed |= strcmp(*p, words[3]) == 0;
	if (!listed) {
		*reason = g_strdup_printf("\"%s\" is not one of the smoothing's parameters", words[3]);
		return FALSE;
	}
	g_strlcpy(cite->parameter, words[3], sizeof cite->parameter);
	ClParam param;
	gboolean first_order = what >= CL_SMOOTH_CITE_FOBG && what <= CL_SMOOTH_CITE_FOBG_NEGATIVE &&
						   what != CL_SMOOTH_CITE_AOBG && what != CL_SMOOTH_CITE_AOBG_SE;
	if (first_order && cl_param_parse(step->scene, words[3], &param, NULL, 0) &&
		!cl_backend_has_param_adjoint(cite->backend, &param)) {
		*reason = g_strdup_printf("%s has no adjoint of %s: FoBG is not available for it", words[1], words[3]);
		return FALSE;
	}
	return TRUE;
}

/* Parses "KIND BACKEND ARG [.Nf]" into cite; reason on failure. */
static gboolean parse_cite(const ClLessonStep *step, const char *source, ClCite *cite, char **reason)
{
	char **words = g_strsplit_set(source, " \t", -1);
	GPtrArray *w = g_ptr_array_new();
	for (char **s = words; *s; s++)
		if (**s)
			g_ptr_array_add(w, *s);
	g_strlcpy(cite->source, source, sizeof cite->source);
	g_strlcpy(cite->format, "%.4g", sizeof cite->format);
	cite->backend = -1;
	gboolean ok = FALSE;
	guint count = w->len;
	/* an optional last word ".Nf", ".Ng" or ".Ne" is the number's format */
	if (count > 1) {
		const char *f = g_ptr_array_index(w, count - 1);
		if (f[0] == '.' || (f[0] == '+' && f[1] == '.')) {
			/* "+" shows the sign of positive numbers too */
			gsize len = strlen(f), first = f[0] == '+' ? 2 : 1;
			gboolean digits = len >= first + 2 && len <= first + 3;
			for (gsize i = first; digits && i < len - 1; i++)
				digits = g_ascii_isdigit(f[i]);
			if (!digits || !strchr("fge", f[len - 1])) {
				*reason = g_strdup_printf("\"%s\" is not a number format (.4f, +.4f, .6g, .3e …)", f);
				goto out;
			}
			g_snprintf(cite->format, sizeof cite->format, "%%%s", f);
			count--;
		}
	}
	const char *kind = count ? g_ptr_array_index(w, 0) : "";
	if (strcmp(kind, "optimum") == 0) {
		if (count > 2 || (count == 2 && strcmp(g_ptr_array_index(w, 1), "time") != 0)) {
			*reason = g_strdup("expected {optimum} or {optimum time}");
			goto out;
		}
		cite->kind = count == 2 ? CL_CITE_OPTIMUM_TIME : CL_CITE_OPTIMUM;
		if (isnan(cl_two_ball_optimum(step->scene, NULL))) {
			*reason = g_strdup("this scene is not the two-ball problem, it has no analytic optimum");
			goto out;
		}
		ok = TRUE;
		goto out;
	}
	if (strcmp(kind, "smooth") == 0) {
		ok = parse_smooth_cite(step, (const char *const *)w->pdata, count, cite, reason);
		goto out;
	}
	static const char *const kinds[] = {"gradient", "fd", "loss", "learning", "convergence", NULL};
	if (!g_strv_contains(kinds, kind)) {
		*reason = g_strdup_printf("\"%s\" is not a placeholder kind (gradient, fd, loss, learning, convergence, "
								  "optimum, smooth)",
								  kind);
		goto out;
	}
	guint expected = strcmp(kind, "loss") == 0 ? 2 : 3;
	if (count != expected) {
		*reason = g_strdup_printf("{%s …} takes %s", kind,
								  expected == 2 ? "a backend" : strcmp(kind, "learning") == 0
																	? "a backend and loss[K], final, exact-loss, "
																	  "contacts or a parameter"
																	: strcmp(kind, "convergence") == 0
																		  ? "a backend and a step count"
																		  : "a backend and a parameter");
		goto out;
	}
	const char *id = g_ptr_array_index(w, 1);
	cite->backend = cl_backend_find(id);
	if (cite->backend < 0) {
		*reason = g_strdup_printf("unknown backend \"%s\"", id);
		goto out;
	}
	if (!backend_enabled(step, cite->backend)) {
		*reason = g_strdup_printf("backend \"%s\" is not enabled in this step", id);
		goto out;
	}
	const char *arg = count > 2 ? g_ptr_array_index(w, 2) : "";
	ClParam param;
	char message[CL_MESSAGE_MAX];
	const ClLessonView *v = &step->view;
	if (strcmp(kind, "loss") == 0) {
		cite->kind = CL_CITE_LOSS;
	} else if (strcmp(kind, "gradient") == 0 || strcmp(kind, "fd") == 0) {
		cite->kind = kind[0] == 'g' ? CL_CITE_GRADIENT : CL_CITE_FD;
		if (!cl_param_parse(step->scene, arg, &param, message, sizeof message)) {
			*reason = g_strdup_printf("\"%s\": %s", arg, message);
			goto out;
		}
		g_strlcpy(cite->parameter, arg, sizeof cite->parameter);
	} else if (strcmp(kind, "learning") == 0) {
		if (!(v->kind == CL_LESSON_VIEW_LEARNING || (v->kind == CL_LESSON_VIEW_HEATMAP && v->paths))) {
			*reason = g_strdup("learning values need a learning view (or a heatmap with paths)");
			goto out;
		}
		gsize len = strlen(arg);
		if (g_str_has_prefix(arg, "loss[") && len > 6 && arg[len - 1] == ']') {
			char *index = g_strndup(arg + 5, len - 6);
			guint64 k = 0;
			gboolean number = g_ascii_string_to_unsigned(index, 10, 0, G_MAXUINT64, &k, NULL);
			if (!number || k >= (guint64)v->iterations) {
				*reason = number ? g_strdup_printf("loss[%s]: the view runs %d iterations (0 … %d)", index,
												   v->iterations, v->iterations - 1)
								 : g_strdup_printf("loss[%s]: K must be a whole number from 0 to %d", index,
												   v->iterations - 1);
				g_free(index);
				goto out;
			}
			g_free(index);
			cite->kind = CL_CITE_LEARNING_LOSS;
			cite->index = (int)k;
		} else if (strcmp(arg, "final") == 0) {
			cite->kind = CL_CITE_LEARNING_FINAL;
		} else if (strcmp(arg, "exact-loss") == 0) {
			cite->kind = CL_CITE_LEARNING_EXACT;
		} else if (strcmp(arg, "contacts") == 0) {
			cite->kind = CL_CITE_LEARNING_CONTACTS;
		} else if (in_optimized(step->scene, arg)) {
			cite->kind = CL_CITE_LEARNING_PARAMETER;
			g_strlcpy(cite->parameter, arg, sizeof cite->parameter);
		} else {
			*reason = g_strdup_printf("\"%s\" is not loss[K], final, exact-loss, contacts or an optimized parameter",
									  arg);
			goto out;
		}
	} else {
		if (v->kind != CL_LESSON_VIEW_CONVERGENCE) {
			*reason = g_strdup("convergence values need a convergence view");
			goto out;
		}
		guint64 n = 0;
		gboolean listed = FALSE;
		if (g_ascii_string_to_unsigned(arg, 10, 1, CL_MAX_STEPS, &n, NULL))
			for (guint i = 0; i < v->steps->len; i++)
				listed = listed || g_array_index(v->steps, int, i) == (int)n;
		if (!listed) {
			*reason = g_strdup_printf("%s is not one of the view's step counts", arg);
			goto out;
		}
		cite->kind = CL_CITE_CONVERGENCE;
		cite->index = (int)n;
	}
	ok = TRUE;
out:
	g_ptr_array_free(w, TRUE);
	g_strfreev(words);
	return ok;
}

static gboolean read_text_cites(ClJsonReader *rd, JsonObject *step_object, const char *path, ClLessonStep *step)
{
	gboolean failed = FALSE;
	JsonNode *node = cl_json_member(rd, step_object, path, "text", TRUE, &failed);
	char *tp = cl_json_child_path(path, "text");
	gboolean ok = !failed && read_text(rd, node, tp, &step->text);
	for (const char *c = ok ? step->text : ""; ok && *c; c++) {
		if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
			c++; /* a literal brace */
			continue;
		}
		if (*c == '}') {
			ok = cl_json_fail(rd, tp, "a \"}\" without \"{\" at byte %td (write \"}}\" for a brace)", c - step->text);
			break;
		}
		if (*c != '{')
			continue;
		const char *end = strchr(c, '}');
		if (!end) {
			ok = cl_json_fail(rd, tp, "the placeholder at byte %td has no closing \"}\"", c - step->text);
			break;
		}
		char *source = g_strndup(c + 1, (gsize)(end - c - 1));
		ClCite cite = {.start = (gsize)(c - step->text), .end = (gsize)(end - step->text) + 1};
		char *reason = NULL;
		if (strlen(source) >= sizeof cite.source)
			ok = cl_json_fail(rd, tp, "{%.20s…}: too long", source);
		else if (!parse_cite(step, source, &cite, &reason))
			ok = cl_json_fail(rd, tp, "{%s}: %s", source, reason);
		else
			g_array_append_val(step->cites, cite);
		g_free(reason);
		g_free(source);
		c = end;
	}
	g_free(tp);
	return ok;
}

/* ------------------------------------------------------------- lesson */

static void step_free(gpointer data)
{
	ClLessonStep *step = data;
	if (!step)
		return;
	g_free(step->title);
	g_free(step->scene_preset);
	cl_scene_free(step->scene);
	g_array_free(step->backends, TRUE);
	g_strfreev(step->view.parameters);
	g_strfreev(step->smoothing.parameters);
	g_free(step->smoothing.sigma);
	if (step->view.steps)
		g_array_free(step->view.steps, TRUE);
	g_array_free(step->highlights, TRUE);
	g_free(step->text);
	g_array_free(step->cites, TRUE);
	g_free(step);
}

static ClLessonStep *read_step(ClJsonReader *rd, JsonNode *node, const char *path)
{
	JsonObject *o = NULL;
	static const char *const keys[] = {"title", "scene", "set", "backends", "view", "smoothing", "highlight", "text",
									   NULL};
	if (!cl_json_read_object(rd, node, path, &o) || !cl_json_check_keys(rd, o, path, keys))
		return NULL;
	ClLessonStep *step = g_new0(ClLessonStep, 1);
	step->backends = g_array_new(FALSE, FALSE, sizeof(int));
	step->highlights = g_array_new(FALSE, FALSE, sizeof(ClLessonHighlight));
	step->cites = g_array_new(FALSE, FALSE, sizeof(ClCite));
	gboolean failed = FALSE;
	JsonNode *title = cl_json_member(rd, o, path, "title", TRUE, &failed);
	char *tp = cl_json_child_path(path, "title");
	gboolean ok = !failed && read_text(rd, title, tp, &step->title) && read_scene(rd, o, path, step) &&
				  read_backends(rd, o, path, step) && read_view(rd, o, path, step) &&
				  read_smoothing(rd, o, path, step) && read_highlights(rd, o, path, step) &&
				  read_text_cites(rd, o, path, step);
	g_free(tp);
	char message[CL_MESSAGE_MAX];
	if (ok && !cl_scene_validate(step->scene, message, sizeof message)) {
		char *sp = cl_json_child_path(path, "scene");
		ok = cl_json_fail(rd, sp, "%s", message);
		g_free(sp);
	}
	if (!ok) {
		step_free(step);
		return NULL;
	}
	return step;
}

void cl_lesson_free(ClLesson *lesson)
{
	if (!lesson)
		return;
	g_free(lesson->id);
	g_free(lesson->title);
	g_free(lesson->summary);
	g_free(lesson->path);
	g_ptr_array_free(lesson->steps, TRUE);
	g_free(lesson);
}

static gboolean read_lesson(ClJsonReader *rd, JsonNode *root, ClLesson *lesson)
{
	JsonObject *o = NULL;
	static const char *const keys[] = {"contactlab_lesson", "id", "order", "title", "summary", "steps", NULL};
	if (!cl_json_read_object(rd, root, "", &o) || !cl_json_check_keys(rd, o, "", keys))
		return FALSE;
	gboolean failed = FALSE;
	JsonNode *version = cl_json_member(rd, o, "", "contactlab_lesson", TRUE, &failed);
	int v = 0;
	if (failed || !cl_json_read_integer(rd, version, "contactlab_lesson", 1, 1000, &v))
		return FALSE;
	if (v != 1)
		return cl_json_fail(rd, "contactlab_lesson", "version %d is newer than this ContactLab (it reads version 1)",
							v);
	JsonNode *id = cl_json_member(rd, o, "", "id", TRUE, &failed);
	if (failed || !read_text(rd, id, "id", &lesson->id))
		return FALSE;
	for (const char *c = lesson->id; *c; c++)
		if (!(g_ascii_islower(*c) || g_ascii_isdigit(*c) || *c == '-'))
			return cl_json_fail(rd, "id", "\"%s\": use lower-case letters, digits and '-'", lesson->id);
	JsonNode *order = json_object_get_member(o, "order");
	lesson->order = 1000;
	if (order && !cl_json_read_integer(rd, order, "order", 0, 1000000, &lesson->order))
		return FALSE;
	JsonNode *title = cl_json_member(rd, o, "", "title", TRUE, &failed);
	if (failed || !read_text(rd, title, "title", &lesson->title))
		return FALSE;
	JsonNode *summary = json_object_get_member(o, "summary");
	if (summary && !read_text(rd, summary, "summary", &lesson->summary))
		return FALSE;
	JsonNode *steps = cl_json_member(rd, o, "", "steps", TRUE, &failed);
	JsonArray *a = NULL;
	if (failed || !read_array(rd, steps, "steps", FALSE, &a))
		return FALSE;
	if (json_array_get_length(a) > LESSON_STEPS_MAX)
		return cl_json_fail(rd, "steps", "%u steps (at most %d)", json_array_get_length(a), LESSON_STEPS_MAX);
	for (guint i = 0; i < json_array_get_length(a); i++) {
		char *path = g_strdup_printf("steps[%u]", i);
		ClLessonStep *step = read_step(rd, json_array_get_element(a, i), path);
		g_free(path);
		if (!step)
			return FALSE;
		g_ptr_array_add(lesson->steps, step);
	}
	return TRUE;
}

ClLesson *cl_lesson_file_parse(const char *data, gssize length, const char *filename, GError **error)
{
	const char *file = filename ? filename : "lesson";
	ClJsonDocument *document =
		cl_json_parse(data, length, file, "", CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_SYNTAX, error);
	if (!document)
		return NULL;
	ClLesson *lesson = g_new0(ClLesson, 1);
	lesson->steps = g_ptr_array_new_with_free_func(step_free);
	ClJsonReader rd = {.domain = CL_LESSON_FILE_ERROR, .code = CL_LESSON_FILE_ERROR_INVALID, .file = file,
					   .error = error, .document = document};
	gboolean ok = read_lesson(&rd, document->root, lesson);
	cl_json_document_free(document);
	if (!ok) {
		cl_lesson_free(lesson);
		return NULL;
	}
	return lesson;
}

ClLesson *cl_lesson_file_load(const char *path, GError **error)
{
	char *data = NULL;
	gsize length = 0;
	if (!cl_input_file_read(path, CL_INPUT_FILE_MAX, &data, &length, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_IO,
							error))
		return NULL;
	char *name = g_path_get_basename(path);
	ClLesson *lesson = cl_lesson_file_parse(data, (gssize)length, name, error);
	g_free(name);
	g_free(data);
	if (lesson)
		lesson->path = g_strdup(path);
	return lesson;
}

static char *lessons_dir(void)
{
	return g_build_filename(cl_data_dir(), "lessons", NULL);
}

/* A shipped lesson's id is its file name, so `lesson export ID` finds it. */
static ClLesson *load_named(const char *dir, const char *file, GError **error)
{
	char *path = g_build_filename(dir, file, NULL);
	ClLesson *lesson = cl_lesson_file_load(path, error);
	g_free(path);
	if (lesson && (!g_str_has_prefix(file, lesson->id) || strcmp(file + strlen(lesson->id), ".json") != 0)) {
		g_set_error(error, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_INVALID,
					"%s: id: \"%s\" must be the file's name without .json", file, lesson->id);
		cl_lesson_free(lesson);
		return NULL;
	}
	return lesson;
}

static int compare_lessons(gconstpointer a, gconstpointer b)
{
	const ClLesson *x = *(ClLesson *const *)a, *y = *(ClLesson *const *)b;
	return x->order != y->order ? (x->order > y->order) - (x->order < y->order) : strcmp(x->id, y->id);
}

GPtrArray *cl_lessons_load_all(GError **error)
{
	char *dir_path = lessons_dir();
	GError *io_error = NULL;
	GDir *dir = g_dir_open(dir_path, 0, &io_error);
	if (!dir) {
		g_set_error(error, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_IO, "%s", io_error->message);
		g_error_free(io_error);
		g_free(dir_path);
		return NULL;
	}
	GPtrArray *lessons = g_ptr_array_new_with_free_func((GDestroyNotify)cl_lesson_free);
	for (const char *name; lessons && (name = g_dir_read_name(dir));) {
		if (!g_str_has_suffix(name, ".json"))
			continue;
		ClLesson *lesson = load_named(dir_path, name, error);
		if (lesson) {
			g_ptr_array_add(lessons, lesson);
		} else {
			g_ptr_array_free(lessons, TRUE);
			lessons = NULL;
		}
	}
	g_dir_close(dir);
	g_free(dir_path);
	if (lessons)
		g_ptr_array_sort(lessons, compare_lessons);
	return lessons;
}

ClLesson *cl_lesson_load(const char *id, GError **error)
{
	for (const char *c = id; *c; c++)
		if (!(g_ascii_islower(*c) || g_ascii_isdigit(*c) || *c == '-')) {
			g_set_error(error, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_IO, "\"%s\" is not a lesson id", id);
			return NULL;
		}
	char *dir = lessons_dir();
	char *file = g_strconcat(id, ".json", NULL);
	char *path = g_build_filename(dir, file, NULL);
	ClLesson *lesson = NULL;
	if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
		GPtrArray *all = cl_lessons_load_all(NULL);
		GString *known = g_string_new(NULL);
		for (guint i = 0; all && i < all->len; i++)
			g_string_append_printf(known, "%s%s", i ? ", " : "", ((ClLesson *)g_ptr_array_index(all, i))->id);
		g_set_error(error, CL_LESSON_FILE_ERROR, CL_LESSON_FILE_ERROR_IO, "no lesson \"%s\" (lessons: %s)", id,
					known->str);
		g_string_free(known, TRUE);
		if (all)
			g_ptr_array_free(all, TRUE);
	} else {
		lesson = load_named(dir, file, error);
	}
	g_free(path);
	g_free(file);
	g_free(dir);
	return lesson;
}
