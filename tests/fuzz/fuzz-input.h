/* How a fuzz input becomes a command line or a lesson text, shared by the
 * fuzz targets and the regression test that replays what they found. */
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

/* The text of a lesson step: the first byte picks the step (a gradients,
 * learning, convergence, heatmap or perturbation view on small scenes, so
 * that computing it takes milliseconds), the rest is its text. The lesson
 * is parsed and, when it loads, computed. NULL when everything held: a
 * lesson or a message naming the file; a computed text and every problem
 * valid UTF-8 without control characters but newline and tab. Else what
 * failed (free it). */
char *cl_fuzz_lesson_text(const char *data, gsize length);
