#include "json-depth.h"

gboolean cl_json_depth_ok(const char *data, gsize length, int *line, int *column)
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
