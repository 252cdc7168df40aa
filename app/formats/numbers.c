/* Number text, CSV fields and atomic output files. */
#include "numbers.h"

#include "atomic-file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
	/* whole numbers in full ("10000000", not "1e+07") */
	if (x == floor(x) && fabs(x) < 1e15) {
		g_ascii_formatd(t.text, sizeof t.text, "%.0f", x);
		return t;
	}
	for (int digits = 1; digits <= 17; digits++) {
		char format[8];
		snprintf(format, sizeof format, "%%.%dg", digits);
		g_ascii_formatd(t.text, sizeof t.text, format, x);
		if (g_ascii_strtod(t.text, NULL) == x)
			break;
	}
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
