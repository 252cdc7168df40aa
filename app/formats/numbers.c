/* Number text, CSV fields and atomic output files. */
#include "numbers.h"

#include "atomic-file.h"
#include "decimal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the decimal digits of v ending just before end, two at a time;
 * returns where they start. */
static char *put_digits(char *end, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
								"25262728293031323334353637383940414243444546474849"
								"50515253545556575859606162636465666768697071727374"
								"75767778798081828384858687888990919293949596979899";
	for (; v >= 100; v /= 100) {
		end -= 2;
		memcpy(end, pairs + 2 * (v % 100), 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

ClNumberText cl_format_number(double x)
{
	ClNumberText t;
	if (isnan(x)) {
		g_strlcpy(t.text, "nan", sizeof t.text);
		return t;
	}
	if (isinf(x)) {
		g_strlcpy(t.text, x > 0 ? "inf" : "-inf", sizeof t.text);
		return t;
	}
	char *out = t.text;
	if (signbit(x)) {
		*out++ = '-';
		x = -x;
	}
	char digits[24], *end = digits + sizeof digits;
	/* whole numbers in full ("10000000", not "1e+07") */
	if (x < 1e15 && x == (double)(int64_t)x) {
		char *start = put_digits(end, (uint64_t)x);
		memcpy(out, start, (size_t)(end - start));
		out[end - start] = '\0';
		return t;
	}
	/* what printf's "%.Pg" writes for P = the digits' count */
	ClDecimal d = cl_decimal_shortest(x);
	const char *s = put_digits(end, d.digits);
	int count = (int)(end - s), point = d.exponent + count - 1; /* the exponent of the first digit */
	if (point < -4 || point >= count) {
		*out++ = *s++;
		if (count > 1) {
			*out++ = '.';
			memcpy(out, s, (size_t)count - 1);
			out += count - 1;
		}
		*out++ = 'e';
		*out++ = point < 0 ? '-' : '+';
		int magnitude = abs(point);
		if (magnitude < 10)
			*out++ = '0';
		char exponent[4], *exponent_end = exponent + sizeof exponent;
		const char *e = put_digits(exponent_end, (uint64_t)magnitude);
		memcpy(out, e, (size_t)(exponent_end - e));
		out += exponent_end - e;
	} else if (point >= 0) {
		memcpy(out, s, (size_t)point + 1);
		out += point + 1;
		if (point + 1 < count) {
			*out++ = '.';
			memcpy(out, s + point + 1, (size_t)(count - point - 1));
			out += count - point - 1;
		}
	} else {
		*out++ = '0';
		*out++ = '.';
		for (int i = point + 1; i < 0; i++)
			*out++ = '0';
		memcpy(out, s, (size_t)count);
		out += count;
	}
	*out = '\0';
	return t;
}

void cl_json_append_string(GString *out, const char *s)
{
	g_string_append_c(out, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			g_string_append_printf(out, "\\%c", *c);
		else if (*c < 0x20)
			g_string_append_printf(out, "\\u%04x", *c);
		else
			g_string_append_c(out, (char)*c);
	}
	g_string_append_c(out, '"');
}

void cl_json_append_number(GString *out, double x)
{
	g_string_append(out, isfinite(x) ? cl_format_number(x).text : "null");
}

void cl_csv_append_field(GString *out, const char *field)
{
	if (!strpbrk(field, ",\"\n\r")) {
		g_string_append(out, field);
		return;
	}
	g_string_append_c(out, '"');
	for (const char *c = field; *c; c++) {
		if (*c == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *c);
	}
	g_string_append_c(out, '"');
}

void cl_trajectory_csv_append(GString *out, const ClScene *scene, int backend, const double *states, int steps_done)
{
	/* what repeats is written once: the ball fields, each step's start */
	GString *balls = g_string_new(NULL), *step = g_string_new(NULL);
	gsize *ball_ends = g_new(gsize, (gsize)scene->ball_count);
	for (int b = 0; b < scene->ball_count; b++) {
		cl_csv_append_field(balls, scene->balls[b].id);
		ball_ends[b] = balls->len;
	}
	const char *id = cl_backend_info(backend)->id;
	int size = cl_state_size(scene);
	double dt = cl_scene_dt(scene);
	for (int n = 0; n <= steps_done; n++) {
		g_string_printf(step, "%s,%d,%s,", id, n, cl_format_number(n * dt).text);
		const double *s = states + (gsize)n * (gsize)size;
		for (int b = 0; b < scene->ball_count; b++, s += CL_BALL_STATE) {
			gsize start = b ? ball_ends[b - 1] : 0;
			g_string_append_len(out, step->str, (gssize)step->len);
			g_string_append_len(out, balls->str + start, (gssize)(ball_ends[b] - start));
			for (int c = 0; c < CL_BALL_STATE; c++) {
				g_string_append_c(out, ',');
				g_string_append(out, cl_format_number(s[c]).text);
			}
			g_string_append_c(out, '\n');
		}
	}
	g_free(ball_ends);
	g_string_free(step, TRUE);
	g_string_free(balls, TRUE);
}

char ***cl_csv_parse(const char *text)
{
	GPtrArray *rows = g_ptr_array_new();
	GPtrArray *row = g_ptr_array_new();
	GString *field = g_string_new(NULL);
	const char *c = text;
	while (*c) {
		if (*c == '"') {
			for (c++; *c; c++) {
				if (*c == '"' && c[1] == '"')
					g_string_append_c(field, *c++);
				else if (*c == '"')
					break;
				else
					g_string_append_c(field, *c);
			}
			if (*c)
				c++;
		} else if (*c == ',') {
			g_ptr_array_add(row, g_string_free(field, FALSE));
			field = g_string_new(NULL);
			c++;
		} else if (*c == '\n' || *c == '\r') {
			g_ptr_array_add(row, g_string_free(field, FALSE));
			field = g_string_new(NULL);
			g_ptr_array_add(row, NULL);
			g_ptr_array_add(rows, g_ptr_array_free(row, FALSE));
			row = g_ptr_array_new();
			if (*c == '\r' && c[1] == '\n')
				c++;
			c++;
		} else {
			g_string_append_c(field, *c++);
		}
	}
	if (field->len || row->len) {
		g_ptr_array_add(row, g_string_free(field, FALSE));
		g_ptr_array_add(row, NULL);
		g_ptr_array_add(rows, g_ptr_array_free(row, FALSE));
	} else {
		g_string_free(field, TRUE);
		g_ptr_array_free(row, TRUE);
	}
	g_ptr_array_add(rows, NULL);
	return (char ***)g_ptr_array_free(rows, FALSE);
}

void cl_csv_free(char ***rows)
{
	if (!rows)
		return;
	for (char ***r = rows; *r; r++)
		g_strfreev(*r);
	g_free(rows);
}

gboolean cl_write_file(const char *path, const char *data, gsize length, GError **error)
{
	GError *io_error = NULL;
	gboolean ok;
	if (g_file_test(path, G_FILE_TEST_EXISTS) && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
		/* a device or FIFO (/dev/stdout): renaming over it would replace it */
		FILE *f = fopen(path, "wb");
		ok = f && fwrite(data, 1, length, f) == length;
		ok = (f && fclose(f) == 0) && ok;
		if (!ok)
			g_set_error(&io_error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s", g_strerror(errno));
	} else {
		/* an existing file is replaced whole or not at all, even by a kill */
		ok = cl_atomic_file_replace(path, data, length, &io_error);
	}
	if (!ok) {
		g_set_error(error, G_FILE_ERROR, io_error->code, "%s: cannot write: %s", path, io_error->message);
		g_error_free(io_error);
	}
	return ok;
}

gboolean cl_write_output(const char *path, const GString *text, GError **error)
{
	if (strcmp(path, "-") == 0) {
		fwrite(text->str, 1, text->len, stdout);
		fflush(stdout);
		return TRUE;
	}
	return cl_write_file(path, text->str, text->len, error);
}

char *cl_status_text(const ClStatus *status)
{
	if (status->code == CL_STATUS_OK)
		return g_strdup("ok");
	if (status->step >= 0)
		return g_strdup_printf("%s at step %d: %s", cl_status_name(status->code), status->step, status->message);
	return g_strdup_printf("%s: %s", cl_status_name(status->code), status->message);
}

const char *cl_status_explanation(ClStatusCode code)
{
	switch (code) {
	case CL_STATUS_OK:
		return "";
	case CL_STATUS_GRAZING:
		return "a contact is tangential: the saltation matrix is undefined there, so the gradient is not trustworthy";
	case CL_STATUS_SIMULTANEOUS:
		return "two impacts happen at the same instant: the order of impacts, and so the gradient, is ambiguous";
	case CL_STATUS_ZENO:
		return "infinitely many impacts (the ball comes to rest): the event-driven gradient does not exist";
	case CL_STATUS_IN_CONTACT:
		return "a contact is active at t = 0: the derivative with respect to the initial state is one-sided";
	case CL_STATUS_DIVERGED:
		return "the state blew up: the contact stiffness is too large for this time step (try more steps or substeps)";
	case CL_STATUS_NOT_FINITE:
		return "a NaN or Inf appeared in the state";
	case CL_STATUS_SOLVER_FAILED:
		return "the contact solver did not converge";
	case CL_STATUS_UNSUPPORTED:
		return "this backend cannot simulate this scene";
	case CL_STATUS_IMPACT_LIMIT:
		return "the impacts never end (a nearly inelastic cluster): the event-driven run was stopped";
	case CL_STATUS_CANCELLED:
		return "cancelled";
	case CL_STATUS_COUNT:
		break;
	}
	return "";
}
