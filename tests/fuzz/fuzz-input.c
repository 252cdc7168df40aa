#include "fuzz-input.h"

#include <string.h>

char **cl_fuzz_command_line(const char *data, gsize length)
{
	GPtrArray *args = g_ptr_array_new();
	g_ptr_array_add(args, g_strdup("contactlab"));
	gsize start = 0;
	for (gsize i = 0; i <= length; i++)
		if (i == length || data[i] == '\n') {
			if (i > start || i < length)
				g_ptr_array_add(args, g_strndup(data + start, i - start)); /* strndup stops at a NUL */
			start = i + 1;
		}
	g_ptr_array_add(args, NULL);
	return (char **)g_ptr_array_free(args, FALSE);
}

gboolean cl_fuzz_command_line_is_safe(char **argv)
{
	for (char **a = argv + 1; *a; a++) {
		const char *arg = *a;
		if (strchr(arg, '/'))
			return FALSE;
		if (g_str_has_prefix(arg, "--help"))
			return FALSE;
		/* -h, -?, or a cluster of short options holding either */
		if (arg[0] == '-' && arg[1] != '-' && (strchr(arg, 'h') || strchr(arg, '?')))
			return FALSE;
	}
	return TRUE;
}
