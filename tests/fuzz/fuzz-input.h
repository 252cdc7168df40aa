/* How a fuzz input becomes a command line, shared by the CLI fuzz target
 * and the regression test that replays what it found. */
#pragma once

#include <glib.h>

/* "contactlab" followed by one argument per line of data (a final line
 * without a newline counts; NUL bytes end an argument early, as a real
 * argv would). Free with g_strfreev. */
char **cl_fuzz_command_line(const char *data, gsize length);

/* False for command lines the fuzz target must skip: a subcommand's --help
 * (GOption prints it and exits the process, which is by design) and
 * arguments naming absolute or nested paths (a fuzzer must not read
 * /dev/zero or files outside its directory). */
gboolean cl_fuzz_command_line_is_safe(char **argv);
