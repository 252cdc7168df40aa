/* Strict JSON reading shared by the scene and lesson files: every error
 * names the file, the JSON path of the value ("balls[1].velocity[0]") and
 * what is wrong with it. */
#pragma once

#include <json-glib/json-glib.h>

/* json-glib's parser descends recursively into arrays and objects and
 * overflows the stack somewhere below 100 000 levels (found by tests/fuzz);
 * ContactLab's files nest a few levels, so deeper text is refused first. */
#define CL_JSON_MAX_DEPTH 64

typedef struct {
	GQuark domain;
	int code;		  /* of every error about the content */
	const char *file; /* the messages' prefix; NULL for none */
	GError **error;
} ClJsonReader;

/* Parses data (length -1: NUL-terminated) into a parser holding a root
 * node, or sets a syntax error "FILE: line L, column C: …" in domain with
 * syntax_code and returns NULL. depth_note is appended to the message about
 * too deep nesting. */
JsonParser *cl_json_parse(const char *data, gssize length, const char *file, const char *depth_note, GQuark domain,
						  int syntax_code, GError **error);

/* Sets the reader's error "FILE: PATH: REASON" (an empty path reads
 * "(top level)") and returns FALSE. */
gboolean cl_json_fail(ClJsonReader *rd, const char *path, const char *format, ...) G_GNUC_PRINTF(3, 4);

/* "path.key", or "key" at the top level; free with g_free. */
char *cl_json_child_path(const char *path, const char *key);

/* Fails on the first member whose key is not in the NULL-terminated allowed. */
gboolean cl_json_check_keys(ClJsonReader *rd, JsonObject *object, const char *path, const char *const *allowed);

/* The member key of object, or NULL; a missing required one fails and sets
 * *failed. */
JsonNode *cl_json_member(ClJsonReader *rd, JsonObject *object, const char *path, const char *key, gboolean required,
						 gboolean *failed);

gboolean cl_json_is_number(JsonNode *node);
double cl_json_number_of(JsonNode *node); /* of a node cl_json_is_number accepts */

/* Each reads node at path into *out, or fails naming what it must be. */
gboolean cl_json_read_number(ClJsonReader *rd, JsonNode *node, const char *path, double *out); /* finite */
gboolean cl_json_read_string(ClJsonReader *rd, JsonNode *node, const char *path, const char **out);
gboolean cl_json_read_object(ClJsonReader *rd, JsonNode *node, const char *path, JsonObject **out);
gboolean cl_json_read_array(ClJsonReader *rd, JsonNode *node, const char *path, JsonArray **out);
