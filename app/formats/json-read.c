#include "json-read.h"

#include "numbers.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ the reader
 *
 * RFC 8259 exactly, written here because json-glib accepts more (hexadecimal
 * numbers, a second document after the first, duplicate keys of which the
 * last wins, integers that wrap past 64 bits) and says less about where.
 * It builds json-glib's nodes, which the readers below walk. */

typedef struct Parser {
	const char *text;
	gsize length, pos;
	int line;
	gsize line_start;
	int depth;
	GString *path;        /* of the value being read: "balls[1].velocity" */
	GString *buffer;      /* a string or number being decoded */
	GHashTable *literals; /* JsonNode* → text of integers beyond 64 bits */
	const char *file, *depth_note;
	GQuark domain;
	int code;
	GError **error;
} Parser;

static JsonNode *parse_value(Parser *p);

/* "FILE: line L, column C: [PATH: ]REASON"; the column counts characters. */
static JsonNode *parse_error_at(Parser *p, gsize at, gboolean with_path, const char *format, ...) G_GNUC_PRINTF(4, 5);

static JsonNode *parse_error_at(Parser *p, gsize at, gboolean with_path, const char *format, ...)
{
	if (p->error && *p->error)
		return NULL;
	va_list args;
	va_start(args, format);
	char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	/* the line start and column of at, which may lie on an earlier line than pos */
	gsize start = at < p->line_start ? 0 : p->line_start;
	int line = at < p->line_start ? 1 : p->line;
	for (gsize i = start; at < p->line_start && i < at; i++)
		if (p->text[i] == '\n') {
			line++;
			start = i + 1;
		}
	glong column = 1;
	for (gsize i = start; i < at; i++)
		column += ((unsigned char)p->text[i] & 0xC0) != 0x80;
	const char *where = with_path && p->path->len ? p->path->str : NULL;
	g_set_error(p->error, p->domain, p->code, "%s: line %d, column %ld: %s%s%s", p->file, line, column,
				where ? where : "", where ? ": " : "", reason);
	g_free(reason);
	return NULL;
}

#define parse_error(p, ...) parse_error_at(p, (p)->pos, FALSE, __VA_ARGS__)

static void skip_space(Parser *p)
{
	for (; p->pos < p->length; p->pos++) {
		char c = p->text[p->pos];
		if (c == '\n') {
			p->line++;
			p->line_start = p->pos + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
	}
}

static gboolean at_end(const Parser *p)
{
	return p->pos >= p->length;
}

/* What stands at pos, for messages: "“x”", "the end of the file". */
static char *found(const Parser *p)
{
	if (at_end(p))
		return g_strdup("the end of the file");
	unsigned char c = (unsigned char)p->text[p->pos];
	if (c < 0x20 || c >= 0x7F)
		return g_strdup_printf("the byte 0x%02X", c);
	return g_strdup_printf("\"%c\"", c);
}

static JsonNode *expected(Parser *p, const char *what)
{
	char *f = found(p);
	parse_error(p, "not valid JSON: expected %s, found %s", what, f);
	g_free(f);
	return NULL;
}

/* \uXXXX at pos (after the backslash and u): the code unit, or −1 */
static int hex4(Parser *p)
{
	if (p->pos + 4 > p->length)
		return -1;
	int unit = 0;
	for (int i = 0; i < 4; i++) {
		int digit = g_ascii_xdigit_value(p->text[p->pos + (gsize)i]);
		if (digit < 0)
			return -1;
		unit = unit * 16 + digit;
	}
	p->pos += 4;
	return unit;
}

/* Characters refused in every string: C0 controls (but tab and newline),
 * DEL and C1 controls. Printed on a terminal, ESC or CSI would let a file
 * move the cursor, recolour or rewrite what the user sees. */
static gboolean forbidden_character(gunichar c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7F && c <= 0x9F);
}

/* A string at pos (its opening quote) into p->buffer (UTF-8, NUL-free). */
static gboolean parse_string(Parser *p)
{
	gsize open = p->pos++;
	g_string_truncate(p->buffer, 0);
	for (;;) {
		if (at_end(p)) {
			parse_error_at(p, open, FALSE, "not valid JSON: the string has no closing quote");
			return FALSE;
		}
		gsize at = p->pos;
		unsigned char c = (unsigned char)p->text[at];
		if (c == '"') {
			p->pos++;
			return TRUE;
		}
		gunichar ch;
		if (c == '\\') {
			if (++p->pos >= p->length) {
				parse_error_at(p, open, FALSE, "not valid JSON: the string has no closing quote");
				return FALSE;
			}
			char e = p->text[p->pos++];
			static const char escapes[] = "\"\\/bfnrt", values[] = "\"\\/\b\f\n\r\t";
			const char *k = strchr(escapes, e);
			if (e && k) {
				ch = (gunichar)values[k - escapes];
			} else if (e == 'u') {
				int unit = hex4(p);
				if (unit < 0) {
					parse_error_at(p, at, TRUE, "not valid JSON: \\u must be followed by four hexadecimal digits");
					return FALSE;
				}
				if (unit >= 0xD800 && unit <= 0xDBFF && p->pos + 6 <= p->length && p->text[p->pos] == '\\' &&
					p->text[p->pos + 1] == 'u') {
					gsize before = p->pos;
					p->pos += 2;
					int low = hex4(p);
					if (low >= 0xDC00 && low <= 0xDFFF)
						unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
					else
						p->pos = before;
				}
				if (unit >= 0xD800 && unit <= 0xDFFF) {
					parse_error_at(p, at, TRUE,
								   "a lone surrogate \\u%04x in a string (half of a UTF-16 pair, no character)",
								   (unsigned)unit);
					return FALSE;
				}
				ch = (gunichar)unit;
			} else {
				parse_error_at(p, at, TRUE, "not valid JSON: \\%c is not an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
							   g_ascii_isprint(e) ? e : '?');
				return FALSE;
			}
		} else if (c < 0x20) {
			parse_error_at(p, at, TRUE, "not valid JSON: the control character U+%04X unescaped in a string", c);
			return FALSE;
		} else if (c < 0x80) {
			ch = c;
			p->pos++;
		} else {
			ch = g_utf8_get_char_validated(p->text + at, (gssize)(p->length - at));
			if (ch == (gunichar)-1 || ch == (gunichar)-2) {
				parse_error_at(p, at, TRUE, "not UTF-8 text (the byte 0x%02X)", c);
				return FALSE;
			}
			p->pos = (gsize)(g_utf8_next_char(p->text + at) - p->text);
		}
		if (ch == 0 || forbidden_character(ch)) {
			parse_error_at(p, at, TRUE, "the control character U+%04X in a string (refused: printed, it could "
										"rewrite the terminal)",
						   (unsigned)ch);
			return FALSE;
		}
		g_string_append_unichar(p->buffer, ch);
	}
}

static JsonNode *parse_number(Parser *p)
{
	gsize start = p->pos;
	const char *t = p->text;
	gsize i = p->pos;
	gboolean integer = TRUE;
	if (i < p->length && t[i] == '-')
		i++;
	if (i < p->length && t[i] == '0')
		i++;
	else if (i < p->length && t[i] >= '1' && t[i] <= '9')
		while (i < p->length && g_ascii_isdigit(t[i]))
			i++;
	else
		i = start; /* no digits: refused below */
	gboolean ok = i > start && !(i == start + 1 && t[start] == '-');
	if (ok && i < p->length && t[i] == '.') {
		integer = FALSE;
		gsize digits = ++i;
		while (i < p->length && g_ascii_isdigit(t[i]))
			i++;
		ok = i > digits;
	}
	if (ok && i < p->length && (t[i] == 'e' || t[i] == 'E')) {
		integer = FALSE;
		i++;
		if (i < p->length && (t[i] == '+' || t[i] == '-'))
			i++;
		gsize digits = i;
		while (i < p->length && g_ascii_isdigit(t[i]))
			i++;
		ok = i > digits;
	}
	/* what a reader might take for a number: 0x1E0, 1.5f, 010, .5, NaN, Infinity */
	gsize end = i;
	while (end < p->length && (g_ascii_isalnum(t[end]) || t[end] == '.' || t[end] == '+' || t[end] == '-'))
		end++;
	if (!ok || end > i) {
		char *text = g_strndup(t + start, MIN(end - start, 40));
		parse_error_at(p, start, TRUE,
					   "not valid JSON: %s is not a JSON number (one decimal number: no hexadecimal, octal, leading "
					   "point, NaN or Infinity)",
					   text);
		g_free(text);
		return NULL;
	}
	p->pos = i;
	g_string_truncate(p->buffer, 0);
	g_string_append_len(p->buffer, t + start, (gssize)(i - start));
	JsonNode *node = json_node_alloc();
	if (integer) {
		char *rest = NULL;
		errno = 0;
		gint64 value = g_ascii_strtoll(p->buffer->str, &rest, 10);
		if (errno == 0 && *rest == '\0')
			return json_node_init_int(node, value);
	}
	double value = g_ascii_strtod(p->buffer->str, NULL);
	json_node_init_double(node, value);
	/* an integer beyond 64 bits, or beyond a double: the text, for the messages about it */
	if (integer || !isfinite(value)) {
		if (!p->literals)
			p->literals = g_hash_table_new_full(NULL, NULL, NULL, g_free);
		g_hash_table_insert(p->literals, node, g_strdup(p->buffer->str));
	}
	return node;
}

static gboolean enter(Parser *p)
{
	if (++p->depth > CL_JSON_MAX_DEPTH) {
		parse_error(p, "arrays and objects nested more than %d deep%s", CL_JSON_MAX_DEPTH, p->depth_note);
		return FALSE;
	}
	p->pos++;
	return TRUE;
}

static JsonNode *parse_object(Parser *p)
{
	if (!enter(p))
		return NULL;
	JsonObject *object = json_object_new();
	gsize path_length = p->path->len;
	skip_space(p);
	gboolean ok = TRUE;
	if (!at_end(p) && p->text[p->pos] == '}') {
		p->pos++;
	} else {
		for (;;) {
			skip_space(p);
			if (at_end(p) || p->text[p->pos] != '"') {
				ok = expected(p, "a key in quotes") != NULL;
				break;
			}
			gsize key_at = p->pos;
			if (!(ok = parse_string(p)))
				break;
			char *key = g_strdup(p->buffer->str);
			if (path_length)
				g_string_append_c(p->path, '.');
			g_string_append(p->path, key);
			if (json_object_has_member(object, key)) {
				parse_error_at(p, key_at, TRUE, "duplicate key (a key appears once in an object)");
				g_free(key);
				ok = FALSE;
				break;
			}
			skip_space(p);
			JsonNode *value = NULL;
			if (at_end(p) || p->text[p->pos] != ':')
				expected(p, "\":\" after the key");
			else {
				p->pos++;
				skip_space(p);
				value = parse_value(p);
			}
			if (value)
				json_object_set_member(object, key, value);
			g_free(key);
			g_string_truncate(p->path, path_length);
			if (!(ok = value != NULL))
				break;
			skip_space(p);
			if (!at_end(p) && p->text[p->pos] == ',') {
				p->pos++;
				continue;
			}
			if (!at_end(p) && p->text[p->pos] == '}') {
				p->pos++;
				break;
			}
			ok = expected(p, "\",\" or \"}\"") != NULL;
			break;
		}
	}
	g_string_truncate(p->path, path_length);
	p->depth--;
	if (!ok) {
		json_object_unref(object);
		return NULL;
	}
	JsonNode *node = json_node_alloc();
	json_node_init_object(node, object);
	json_object_unref(object);
	return node;
}

static JsonNode *parse_array(Parser *p)
{
	if (!enter(p))
		return NULL;
	JsonArray *array = json_array_new();
	gsize path_length = p->path->len;
	skip_space(p);
	gboolean ok = TRUE;
	if (!at_end(p) && p->text[p->pos] == ']') {
		p->pos++;
	} else {
		for (guint index = 0;; index++) {
			skip_space(p);
			g_string_append_printf(p->path, "[%u]", index);
			JsonNode *value = parse_value(p);
			g_string_truncate(p->path, path_length);
			if (!(ok = value != NULL))
				break;
			json_array_add_element(array, value);
			skip_space(p);
			if (!at_end(p) && p->text[p->pos] == ',') {
				p->pos++;
				continue;
			}
			if (!at_end(p) && p->text[p->pos] == ']') {
				p->pos++;
				break;
			}
			ok = expected(p, "\",\" or \"]\"") != NULL;
			break;
		}
	}
	p->depth--;
	if (!ok) {
		json_array_unref(array);
		return NULL;
	}
	JsonNode *node = json_node_alloc();
	json_node_init_array(node, array);
	json_array_unref(array);
	return node;
}

/* Whether the word (and no longer one) stands at pos. */
static gboolean word_at(const Parser *p, const char *word)
{
	gsize n = strlen(word);
	return p->length - p->pos >= n && memcmp(p->text + p->pos, word, n) == 0 &&
		   !(p->pos + n < p->length && g_ascii_isalnum(p->text[p->pos + n]));
}

static gboolean take_word(Parser *p, const char *word)
{
	if (!word_at(p, word))
		return FALSE;
	p->pos += strlen(word);
	return TRUE;
}

static JsonNode *parse_value(Parser *p)
{
	if (at_end(p))
		return expected(p, "a value");
	char c = p->text[p->pos];
	if (c == '{')
		return parse_object(p);
	if (c == '[')
		return parse_array(p);
	if (c == '"') {
		if (!parse_string(p))
			return NULL;
		JsonNode *node = json_node_alloc();
		json_node_init_string(node, p->buffer->str);
		return node;
	}
	if (c == '-' || g_ascii_isdigit(c) || c == '.' || c == '+')
		return parse_number(p);
	JsonNode *node = json_node_alloc();
	if (take_word(p, "true"))
		return json_node_init_boolean(node, TRUE);
	if (take_word(p, "false"))
		return json_node_init_boolean(node, FALSE);
	if (take_word(p, "null"))
		return json_node_init_null(node);
	json_node_free(node);
	if (word_at(p, "NaN") || word_at(p, "Infinity") || word_at(p, "nan") || word_at(p, "inf"))
		return parse_number(p); /* named as not a JSON number */
	if (g_ascii_isalpha(c)) {
		gsize end = p->pos;
		while (end < p->length && g_ascii_isalnum(p->text[end]) && end - p->pos < 40)
			end++;
		char *word = g_strndup(p->text + p->pos, end - p->pos);
		parse_error_at(p, p->pos, TRUE,
					   "not valid JSON: %s is not a JSON value (a string in quotes, a number, true, false, null, an "
					   "array or an object)",
					   word);
		g_free(word);
		return NULL;
	}
	return expected(p, "a value");
}

void cl_json_document_free(ClJsonDocument *document)
{
	if (!document)
		return;
	if (document->root)
		json_node_unref(document->root);
	if (document->literals)
		g_hash_table_unref(document->literals);
	g_free(document);
}

ClJsonDocument *cl_json_parse(const char *data, gssize length, const char *file, const char *depth_note, GQuark domain,
							  int syntax_code, GError **error)
{
	Parser p = {
		.text = data,
		.length = length < 0 ? strlen(data) : (gsize)length,
		.line = 1,
		.path = g_string_new(NULL),
		.buffer = g_string_new(NULL),
		.file = file,
		.depth_note = depth_note,
		.domain = domain,
		.code = syntax_code,
		.error = error,
	};
	if (p.length >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
		p.pos = 3; /* a byte order mark, which RFC 8259 lets a reader ignore */
	skip_space(&p);
	JsonNode *root = NULL;
	if (at_end(&p))
		g_set_error(error, domain, syntax_code, "%s: not valid JSON: the file is empty", file);
	else if ((root = parse_value(&p))) {
		skip_space(&p);
		if (!at_end(&p)) {
			parse_error(&p, "not valid JSON: text after the end of the document (a file holds one JSON value)");
			json_node_unref(root);
			root = NULL;
		}
	}
	g_string_free(p.path, TRUE);
	g_string_free(p.buffer, TRUE);
	if (!root) {
		if (p.literals)
			g_hash_table_unref(p.literals);
		return NULL;
	}
	ClJsonDocument *document = g_new0(ClJsonDocument, 1);
	document->root = root;
	document->literals = p.literals;
	return document;
}

const char *cl_json_number_text(const ClJsonReader *rd, JsonNode *node, char buffer[32])
{
	const char *literal = rd->document && rd->document->literals ? g_hash_table_lookup(rd->document->literals, node)
																  : NULL;
	if (literal)
		return literal;
	g_strlcpy(buffer, cl_format_number(cl_json_number_of(node)).text, 32);
	return buffer;
}

gboolean cl_json_read_integer(ClJsonReader *rd, JsonNode *node, const char *path, int min, int max, int *out)
{
	double x;
	if (!cl_json_read_number(rd, node, path, &x))
		return FALSE;
	char text[32];
	if (x != floor(x))
		return cl_json_fail(rd, path, "must be a whole number (got %s)", cl_json_number_text(rd, node, text));
	if (x < min || x > max)
		return cl_json_fail(rd, path, "%s is outside [%d, %d]", cl_json_number_text(rd, node, text), min, max);
	*out = (int)x;
	return TRUE;
}

gboolean cl_json_fail(ClJsonReader *rd, const char *path, const char *format, ...)
{
	if (++rd->errors > CL_JSON_MAX_ERRORS)
		return FALSE;
	va_list args;
	va_start(args, format);
	char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	const char *where = path[0] ? path : "(top level)";
	char *line = rd->file ? g_strdup_printf("%s: %s: %s", rd->file, where, reason)
						  : g_strdup_printf("%s: %s", where, reason);
	if (rd->error && *rd->error) {
		char *joined = g_strconcat((*rd->error)->message, "\n", line, NULL);
		g_free((*rd->error)->message);
		(*rd->error)->message = joined;
	} else {
		g_set_error_literal(rd->error, rd->domain, rd->code, line);
	}
	g_free(line);
	g_free(reason);
	return FALSE;
}

void cl_json_finish_errors(ClJsonReader *rd)
{
	int unlisted = rd->errors - CL_JSON_MAX_ERRORS;
	if (unlisted <= 0 || !rd->error || !*rd->error)
		return;
	char *joined = g_strdup_printf("%s\n%s%s%d more error%s not listed", (*rd->error)->message,
								   rd->file ? rd->file : "", rd->file ? ": " : "", unlisted, unlisted == 1 ? "" : "s");
	g_free((*rd->error)->message);
	(*rd->error)->message = joined;
}

char *cl_json_child_path(const char *path, const char *key)
{
	return path[0] ? g_strdup_printf("%s.%s", path, key) : g_strdup(key);
}

gboolean cl_json_check_keys(ClJsonReader *rd, JsonObject *object, const char *path, const char *const *allowed)
{
	GList *members = json_object_get_members(object);
	gboolean ok = TRUE;
	for (GList *m = members; m; m = m->next) {
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
	char text[32];
	if (!isfinite(x))
		return cl_json_fail(rd, path, "must be a finite number (%s is too large for a double)",
							cl_json_number_text(rd, node, text));
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
