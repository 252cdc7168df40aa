/* Runs the real contactlab executable ($CONTACTLAB) from the app tests. */
#pragma once

#include <glib.h>

/* Runs contactlab with the NULL-terminated args in dir (NULL: here),
 * collects stdout and stderr (free both) and returns its exit status;
 * a failure to start it or a death by signal fails the test. */
int cl_test_run_cli(const char *dir, const char *const *args, char **out, char **err);

/* How cl_test_run_cli_with runs it. */
typedef struct ClTestRun {
	const char *dir;         /* working folder, NULL: here */
	const char *stdout_path; /* stdout goes to this file (/dev/full), not collected; NULL: collected */
	gboolean stdout_closed;  /* stdout is a pipe whose reading end is closed */
	gsize address_space;     /* RLIMIT_AS of the child (ulimit -v), 0: none */
	const char *const *unset; /* environment variables the child does not get */
	double interrupt_after;  /* > 0: SIGINT after this many seconds */
	/* results */
	int status;       /* exit status, or 128 + signal when a signal ended it */
	gboolean signaled;
	char *out, *err;  /* free both */
	double seconds;   /* wall time */
	gsize max_rss;    /* peak resident set, bytes */
} ClTestRun;

/* Runs it as set in run and fills in the results; returns run->status. */
int cl_test_run_cli_with(ClTestRun *run, const char *const *args);
void cl_test_run_clear(ClTestRun *run);
