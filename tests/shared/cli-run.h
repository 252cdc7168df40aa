/* Runs the real contactlab executable ($CONTACTLAB) from the app tests. */
#pragma once

#include <glib.h>

/* Runs contactlab with the NULL-terminated args in dir (NULL: here),
 * collects stdout and stderr (free both) and returns its exit status;
 * a failure to start it or a death by signal fails the test. */
int cl_test_run_cli(const char *dir, const char *const *args, char **out, char **err);
