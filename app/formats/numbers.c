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

struct ClOutput {
	char *path;
	ClAtomicFile *file; /* a regular file, replaced when the output closes */
	FILE *direct;       /* stdout, a device or a FIFO: written as it comes */
	gboolean is_stdout;
};

static int stdout_errno;

int cl_stdout_errno(void)
{
	return stdout_errno;
}

static gboolean output_failed(ClOutput *out, int err, const char *reason, GError **error)
{
	if (out->is_stdout && !stdout_errno)
		stdout_errno = err;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: cannot write: %s",
				out->is_stdout ? "stdout" : out->path, reason ? reason : g_strerror(err));
	return FALSE;
}

static void output_free(ClOutput *out)
{
	g_free(out->path);
	g_free(out);
}

ClOutput *cl_output_open(const char *path, GError **error)
{
	ClOutput *out = g_new0(ClOutput, 1);
	out->path = g_strdup(path);
	out->is_stdout = strcmp(path, "-") == 0;
	GError *io_error = NULL;
	if (out->is_stdout) {
		out->direct = stdout;
	} else if (g_file_test(path, G_FILE_TEST_EXISTS) && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
		/* a device or FIFO (/dev/stdout): renaming over it would replace it */
		if (!(out->direct = fopen(path, "wb"))) {
			output_failed(out, errno, NULL, error);
			output_free(out);
			return NULL;
		}
	} else if (!(out->file = cl_atomic_file_new(path, &io_error))) {
		/* an existing file is replaced whole or not at all, even by a kill */
		output_failed(out, EIO, io_error->message, error);
		g_error_free(io_error);
		output_free(out);
		return NULL;
	}
	return out;
}

static gboolean output_put(ClOutput *out, const char *data, gsize length, GError **error)
{
	if (out->file) {
		GError *io_error = NULL;
		if (cl_atomic_file_write(out->file, data, length, &io_error))
			return TRUE;
		output_failed(out, EIO, io_error->message, error);
		g_error_free(io_error);
		return FALSE;
	}
	errno = 0;
	return fwrite(data, 1, length, out->direct) == length || output_failed(out, errno ? errno : EIO, NULL, error);
}

gboolean cl_output_write(ClOutput *out, GString *text, GError **error)
{
	gboolean ok = output_put(out, text->str, text->len, error);
	g_string_truncate(text, 0);
	return ok;
}

gboolean cl_output_close(ClOutput *out, GError **error)
{
	gboolean ok = TRUE;
	GError *io_error = NULL;
	if (out->file) {
		if (!cl_atomic_file_commit(out->file, &io_error)) {
			ok = output_failed(out, EIO, io_error->message, error);
			g_error_free(io_error);
		}
	} else {
		errno = 0;
		if (out->is_stdout ? fflush(stdout) != 0 : fclose(out->direct) != 0)
			ok = output_failed(out, errno ? errno : EIO, NULL, error);
	}
	output_free(out);
	return ok;
}

void cl_output_abort(ClOutput *out)
{
	if (out->file)
		cl_atomic_file_abort(out->file);
	else if (!out->is_stdout)
		fclose(out->direct);
	output_free(out);
}

gboolean cl_write_file(const char *path, const char *data, gsize length, GError **error)
{
	ClOutput *out = cl_output_open(path, error);
	if (!out)
		return FALSE;
	if (!output_put(out, data, length, error)) {
		cl_output_abort(out);
		return FALSE;
	}
	return cl_output_close(out, error);
}

gboolean cl_write_output(const char *path, const GString *text, GError **error)
{
	return cl_write_file(path, text->str, text->len, error);
}

char *cl_status_text(const ClStatus *status)
{
	if (status->code == CL_STATUS_OK)
		return g_strdup("ok");
	/* how to raise the limit, which the engine does not know */
	const char *hint = status->code == CL_STATUS_MEMORY_LIMIT && strstr(status->message, "memory budget")
						   ? " (raise it with --memory-limit SIZE or CONTACTLAB_MEMORY_LIMIT)"
						   : "";
	if (status->step >= 0)
		return g_strdup_printf("%s at step %d: %s%s", cl_status_name(status->code), status->step, status->message,
							   hint);
	return g_strdup_printf("%s: %s%s", cl_status_name(status->code), status->message, hint);
}
