#include "json-read.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* False when the text nests arrays and objects more than CL_JSON_MAX_DEPTH
 * deep; *line and *column (from 1) then locate the first bracket too many.
 * Brackets inside strings do not count. */
static gboolean depth_ok(const char *data, gsize length, int *line, int *column)
{
	int depth = 0;
	gboolean in_string = FALSE, escaped = FALSE;
	*line = 1;
	*column = 1;
	for (gsize i = 0; i < length; i++) {
		char c = data[i];
		if (in_string) {
			if (escaped)
				escaped = FALSE;
			else if (c == '\\')
				escaped = TRUE;
			else if (c == '"')
				in_string = FALSE;
		} else if (c == '"') {
			in_string = TRUE;
		} else if (c == '[' || c == '{') {
			if (++depth > CL_JSON_MAX_DEPTH)
				return FALSE;
		} else if (c == ']' || c == '}') {
			depth--;
		}
		if (c == '\n') {
			++*line;
			*column = 1;
		} else {
			++*column;
		}
	}
	return TRUE;
}

JsonParser *cl_json_parse(const char *data, gssize length, const char *file, const char *depth_note, GQuark domain,
						  int syntax_code, GError **error)
{
	int line, column;
	if (!depth_ok(data, length < 0 ? strlen(data) : (gsize)length, &line, &column)) {
		g_set_error(error, domain, syntax_code, "%s: line %d, column %d: arrays and objects nested more than %d deep%s",
					file, line, column, CL_JSON_MAX_DEPTH, depth_note);
		return NULL;
	}
	JsonParser *parser = json_parser_new();
	GError *json_error = NULL;
	if (!json_parser_load_from_data(parser, data, length, &json_error)) {
		/* json-glib says "<data>:LINE:COLUMN: Parse error: …" */
		const char *text = json_error->message;
		if (g_str_has_prefix(text, "<data>:"))
			text += strlen("<data>:");
		int consumed = 0;
		if (sscanf(text, "%d:%d: %n", &line, &column, &consumed) == 2 && consumed > 0)
			g_set_error(error, domain, syntax_code, "%s: line %d, column %d: not valid JSON: %s", file, line, column,
						text + consumed);
		else
			g_set_error(error, domain, syntax_code, "%s: not valid JSON: %s", file, text);
		g_error_free(json_error);
		g_object_unref(parser);
		return NULL;
	}
	if (!json_parser_get_root(parser)) {
		g_set_error(error, domain, syntax_code, "%s: not valid JSON: the file is empty", file);
		g_object_unref(parser);
		return NULL;
	}
	return parser;
}

gboolean cl_json_fail(ClJsonReader *rd, const char *path, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	const char *where = path[0] ? path : "(top level)";
	if (rd->file)
		g_set_error(rd->error, rd->domain, rd->code, "%s: %s: %s", rd->file, where, reason);
	else
		g_set_error(rd->error, rd->domain, rd->code, "%s: %s", where, reason);
	g_free(reason);
	return FALSE;
}

char *cl_json_child_path(const char *path, const char *key)
{
	return path[0] ? g_strdup_printf("%s.%s", path, key) : g_strdup(key);
}

gboolean cl_json_check_keys(ClJsonReader *rd, JsonObject *object, const char *path, const char *const *allowed)
{
	GList *members = json_object_get_members(object);
	gboolean ok = TRUE;
	for (GList *m = members; m && ok; m = m->next) {
		if (!g_strv_contains(allowed, m->data)) {
			char *joined = g_strjoinv(", ", (char **)allowed);
			char *p = cl_json_child_path(path, m->data);
			ok = cl_json_fail(rd, p, "unknown key (expected one of: %s)", joined);
			g_free(p);
			g_free(joined);
		}
	}
	g_list_free(members);
	return ok;
}

JsonNode *cl_json_member(ClJsonReader *rd, JsonObject *object, const char *path, const char *key, gboolean required,
						 gboolean *failed)
{
	JsonNode *node = json_object_get_member(object, key);
	if (!node && required) {
		char *p = cl_json_child_path(path, key);
		cl_json_fail(rd, p, "missing");
		g_free(p);
		*failed = TRUE;
	}
	return node;
}

gboolean cl_json_is_number(JsonNode *node)
{
	if (!JSON_NODE_HOLDS_VALUE(node))
		return FALSE;
	GType type = json_node_get_value_type(node);
	return type == G_TYPE_INT64 || type == G_TYPE_DOUBLE;
}

double cl_json_number_of(JsonNode *node)
{
	return json_node_get_value_type(node) == G_TYPE_INT64 ? (double)json_node_get_int(node)
														  : json_node_get_double(node);
}

gboolean cl_json_read_number(ClJsonReader *rd, JsonNode *node, const char *path, double *out)
{
	if (!cl_json_is_number(node))
		return cl_json_fail(rd, path, "must be a number");
	double x = cl_json_number_of(node);
	if (!isfinite(x))
		return cl_json_fail(rd, path, "must be a finite number");
	*out = x;
	return TRUE;
}

gboolean cl_json_read_string(ClJsonReader *rd, JsonNode *node, const char *path, const char **out)
{
	if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING)
		return cl_json_fail(rd, path, "must be a string");
	*out = json_node_get_string(node);
	return TRUE;
}

gboolean cl_json_read_object(ClJsonReader *rd, JsonNode *node, const char *path, JsonObject **out)
{
	if (!JSON_NODE_HOLDS_OBJECT(node))
		return cl_json_fail(rd, path, "must be an object");
	*out = json_node_get_object(node);
	return TRUE;
}

gboolean cl_json_read_array(ClJsonReader *rd, JsonNode *node, const char *path, JsonArray **out)
{
	if (!JSON_NODE_HOLDS_ARRAY(node))
		return cl_json_fail(rd, path, "must be an array");
	*out = json_node_get_array(node);
	return TRUE;
}
