/* Strict JSON reading shared by the scene and lesson files: every error
 * names the file, the JSON path of the value ("balls[1].velocity[0]") and
 * what is wrong with it. */
#pragma once

#include <json-glib/json-glib.h>

/* A parser descends recursively into arrays and objects (json-glib's
 * overflowed the stack below 100 000 levels, found by tests/fuzz);
 * ContactLab's files nest a few levels, so deeper text is refused. */
#define CL_JSON_MAX_DEPTH 64

/* A parsed file: the value, and the text of the numbers a double does not
 * hold (integers beyond 64 bits, numbers beyond a double), so that a message
 * about one quotes it as written. */
typedef struct ClJsonDocument {
	JsonNode *root;
	GHashTable *literals; /* JsonNode* → text; NULL when there are none */
} ClJsonDocument;

/* A reader that goes on after an error lists this many in its message, one
 * a line, and then how many more it found. */
#define CL_JSON_MAX_ERRORS 20

typedef struct {
	GQuark domain;
	int code;		  /* of every error about the content */
	const char *file; /* the messages' prefix; NULL for none */
	GError **error;
	const ClJsonDocument *document; /* for the numbers' text; may be NULL */
	int errors;						/* how many cl_json_fail reported */
} ClJsonReader;

/* Parses data (length -1: NUL-terminated) strictly as one RFC 8259 JSON
 * text, or sets an error "FILE: line L, column C: [PATH: ]REASON" in domain
 * with syntax_code and returns NULL. Beyond the RFC it refuses duplicate
 * keys (naming the key's path), lone surrogates (\udc80), invalid UTF-8,
 * NUL, DEL and C0/C1 control characters in strings, tab and newline
 * escaped (\t, \n) excepted, and nesting deeper than CL_JSON_MAX_DEPTH
 * (depth_note is appended to that message). A leading byte order mark is
 * skipped. */
ClJsonDocument *cl_json_parse(const char *data, gssize length, const char *file, const char *depth_note, GQuark domain,
							  int syntax_code, GError **error);
void cl_json_document_free(ClJsonDocument *document);

/* A number node's text as written where the document kept it, else the
 * shortest text of its value (in buffer). */
const char *cl_json_number_text(const ClJsonReader *rd, JsonNode *node, char buffer[32]);

/* Sets the reader's error "FILE: PATH: REASON" (an empty path reads
 * "(top level)") and returns FALSE. A later call adds its line to the same
 * error, up to CL_JSON_MAX_ERRORS lines. */
gboolean cl_json_fail(ClJsonReader *rd, const char *path, const char *format, ...) G_GNUC_PRINTF(3, 4);
/* Ends the error's list with how many errors were left out of it, if any. */
void cl_json_finish_errors(ClJsonReader *rd);

/* "path.key", or "key" at the top level; free with g_free. */
char *cl_json_child_path(const char *path, const char *key);

/* Fails on every member whose key is not in the NULL-terminated allowed. */
gboolean cl_json_check_keys(ClJsonReader *rd, JsonObject *object, const char *path, const char *const *allowed);

/* The member key of object, or NULL; a missing required one fails and sets
 * *failed. */
JsonNode *cl_json_member(ClJsonReader *rd, JsonObject *object, const char *path, const char *key, gboolean required,
						 gboolean *failed);

gboolean cl_json_is_number(JsonNode *node);
double cl_json_number_of(JsonNode *node); /* of a node cl_json_is_number accepts */

/* Each reads node at path into *out, or fails naming what it must be. */
gboolean cl_json_read_number(ClJsonReader *rd, JsonNode *node, const char *path, double *out); /* finite */
/* A whole number in [min, max]; the message quotes the number as written. */
gboolean cl_json_read_integer(ClJsonReader *rd, JsonNode *node, const char *path, int min, int max, int *out);
gboolean cl_json_read_string(ClJsonReader *rd, JsonNode *node, const char *path, const char **out);
gboolean cl_json_read_object(ClJsonReader *rd, JsonNode *node, const char *path, JsonObject **out);
gboolean cl_json_read_array(ClJsonReader *rd, JsonNode *node, const char *path, JsonArray **out);
