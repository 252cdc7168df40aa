/* A guard in front of json-glib's parser, which descends recursively into
 * arrays and objects and overflows the stack somewhere below 100 000 levels
 * of nesting (found by tests/fuzz). ContactLab's files nest a few levels. */
#pragma once

#include <glib.h>

#define CL_JSON_MAX_DEPTH 64

/* False when the JSON text nests arrays and objects more than
 * CL_JSON_MAX_DEPTH deep; *line and *column then locate the first bracket
 * too many (from 1). Brackets inside strings do not count. */
gboolean cl_json_depth_ok(const char *data, gsize length, int *line, int *column);
