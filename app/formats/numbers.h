/* Locale-independent number text for files and CSV. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

typedef struct {
	char text[32];
} ClNumberText;

/* The fewest significant digits that read back to the same double, laid out
 * as printf's "%.Pg" ("0.1", "-0.39866841646142", "1e-05", "1e+15"), whole
 * numbers below 10^15 in full ("10000", "-0"); "nan", "inf" and "-inf". */
ClNumberText cl_format_number(double x);

/* Appends a JSON string literal with the escapes JSON requires. */
void cl_json_append_string(GString *out, const char *s);
/* Appends a number as cl_format_number writes it, null when not finite. */
void cl_json_append_number(GString *out, double x);

/* Appends a CSV field, quoted when it holds a comma, quote or newline. */
void cl_csv_append_field(GString *out, const char *field);

/* A trajectory CSV: this header, then per backend the rows of
 * cl_trajectory_csv_append. */
#define CL_TRAJECTORY_CSV_HEADER "backend,step,time,ball,x,y,vx,vy\n"

/* Appends one backend's run, a row per step n ≤ steps_done and ball:
 * backend,n,time,ball,x,y,vx,vy. states: (steps_done + 1) × state size. */
void cl_trajectory_csv_append(GString *out, const ClScene *scene, int backend, const double *states, int steps_done);

/* Splits CSV text (RFC 4180 quoting) into rows of fields; NULL-terminated
 * arrays of NULL-terminated string vectors (free with cl_csv_free). */
char ***cl_csv_parse(const char *text);
void cl_csv_free(char ***rows);

/* Writes text to path atomically, or to stdout when path is "-". */
/* Replaces path atomically (or writes a device/FIFO directly); the error reads "PATH: cannot write: reason". */
gboolean cl_write_file(const char *path, const char *data, gsize length, GError **error);
gboolean cl_write_output(const char *path, const GString *text, GError **error);

/* "ok", or "NAME at step K: MESSAGE" (the status name, where and why). */
char *cl_status_text(const ClStatus *status);
/* What a status means for the user's gradient, in one sentence ("" for ok). */
const char *cl_status_explanation(ClStatusCode code);
