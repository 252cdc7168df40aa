/* PNG, SVG and PDF export through the one draw function, written atomically. */
#include "atomic-file.h"
#include "figure-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(cl-plot-error-quark, cl_plot_error)

ClPlotFormat cl_plot_format_from_path(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, G_DIR_SEPARATOR))
		return CL_PLOT_FORMAT_AUTO;
	if (g_ascii_strcasecmp(dot, ".png") == 0)
		return CL_PLOT_FORMAT_PNG;
	if (g_ascii_strcasecmp(dot, ".svg") == 0)
		return CL_PLOT_FORMAT_SVG;
	if (g_ascii_strcasecmp(dot, ".pdf") == 0)
		return CL_PLOT_FORMAT_PDF;
	return CL_PLOT_FORMAT_AUTO;
}

typedef struct DrawJob {
	ClPlotDrawFunc draw;
	gpointer user;
	GError *error;       /* from the callback */
	GError *write_error; /* from the file */
	ClAtomicFile *file;  /* the new file, or NULL: fd */
	int fd;              /* a device or FIFO written directly */
} DrawJob;

static cairo_status_t write_out(void *closure, const unsigned char *data, unsigned int length)
{
	DrawJob *job = closure;
	if (job->write_error)
		return CAIRO_STATUS_WRITE_ERROR;
	if (job->file)
		return cl_atomic_file_write(job->file, data, length, &job->write_error) ? CAIRO_STATUS_SUCCESS
																				 : CAIRO_STATUS_WRITE_ERROR;
	for (unsigned int done = 0; done < length;) {
		gssize n = write(job->fd, data + done, length - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			g_set_error_literal(&job->write_error, G_FILE_ERROR, g_file_error_from_errno(errno), g_strerror(errno));
			return CAIRO_STATUS_WRITE_ERROR;
		}
		done += (unsigned int)n;
	}
	return CAIRO_STATUS_SUCCESS;
}

/* Renders through write_out; FALSE with job->error or a cairo status on failure. */
static cairo_status_t render(DrawJob *job, ClPlotFormat format, double width, double height, double dpi)
{
	cairo_surface_t *surface;
	double scale = 1.0;
	if (format == CL_PLOT_FORMAT_PNG) {
		scale = dpi / 72.0;
		surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(width * scale), (int)ceil(height * scale));
	} else if (format == CL_PLOT_FORMAT_SVG) {
		surface = cairo_svg_surface_create_for_stream(write_out, job, width, height);
	} else {
		surface = cairo_pdf_surface_create_for_stream(write_out, job, width, height);
		cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "ContactLab");
	}
	cairo_status_t status = cairo_surface_status(surface);
	if (status == CAIRO_STATUS_SUCCESS) {
		cairo_t *cr = cairo_create(surface);
		cairo_scale(cr, scale, scale);
		if (!job->draw(cr, width, height, job->user, &job->error))
			status = CAIRO_STATUS_WRITE_ERROR; /* the callback's error is reported */
		else
			status = cairo_status(cr);
		cairo_destroy(cr);
	}
	if (status == CAIRO_STATUS_SUCCESS && format == CL_PLOT_FORMAT_PNG)
		status = cairo_surface_write_to_png_stream(surface, write_out, job);
	cairo_surface_finish(surface);
	if (status == CAIRO_STATUS_SUCCESS)
		status = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	return status;
}

static gboolean fail_write(GError **error, const char *path, const char *reason)
{
	g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE, "%s: %s", path, reason);
	return FALSE;
}

/* fail_write with the reason of a file error, which it frees */
static gboolean fail_file(GError **error, const char *path, GError *cause)
{
	fail_write(error, path, cause->message);
	g_error_free(cause);
	return FALSE;
}

static gboolean finish_job(DrawJob *job, cairo_status_t status, const char *path, GError **error)
{
	if (job->error) {
		g_clear_error(&job->write_error);
		g_propagate_error(error, job->error);
		return FALSE;
	}
	if (job->write_error)
		return fail_file(error, path, job->write_error);
	return status == CAIRO_STATUS_SUCCESS || fail_write(error, path, cairo_status_to_string(status));
}

gboolean cl_plot_export_document(const char *path, ClPlotFormat format, double width, double height, double dpi,
								 ClPlotDrawFunc draw, gpointer user, GError **error)
{
	if (format == CL_PLOT_FORMAT_AUTO)
		format = cl_plot_format_from_path(path);
	if (format == CL_PLOT_FORMAT_AUTO) {
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_FORMAT, "%s: unknown figure format (use .png, .svg or .pdf)",
					path);
		return FALSE;
	}
	if (!(width > 0 && height > 0 && isfinite(width) && isfinite(height)) ||
		(format == CL_PLOT_FORMAT_PNG && !(dpi > 0 && dpi <= 2400))) {
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_FORMAT, "%s: bad figure size %g × %g pt or resolution %g dpi",
					path, width, height, dpi);
		return FALSE;
	}
	double pixels = ceil(width * dpi / 72.0) * ceil(height * dpi / 72.0);
	if (format == CL_PLOT_FORMAT_PNG && pixels > CL_PLOT_PNG_PIXELS_MAX) {
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_FORMAT,
					"%s: %g × %g pt at %g dpi is %.0f megapixels, more than the %.0f a PNG may have (its image "
					"takes 4 bytes a pixel): lower the resolution or the size",
					path, width, height, dpi, pixels / 1e6, CL_PLOT_PNG_PIXELS_MAX / 1e6);
		return FALSE;
	}
	DrawJob job = {draw, user, NULL, NULL, NULL, -1};
	if (g_file_test(path, G_FILE_TEST_EXISTS) && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
		job.fd = g_open(path, O_WRONLY, 0);
		if (job.fd < 0)
			return fail_write(error, path, g_strerror(errno));
		gboolean ok = finish_job(&job, render(&job, format, width, height, dpi), path, error);
		close(job.fd);
		return ok;
	}
	GError *file_error = NULL;
	job.file = cl_atomic_file_new(path, &file_error);
	if (!job.file)
		return fail_file(error, path, file_error);
	if (!finish_job(&job, render(&job, format, width, height, dpi), path, error)) {
		cl_atomic_file_abort(job.file);
		return FALSE;
	}
	return cl_atomic_file_commit(job.file, &file_error) || fail_file(error, path, file_error);
}

typedef struct FigureJob {
	ClPlotFigure *figure;
	gboolean pdf;
} FigureJob;

static gboolean draw_figure(cairo_t *cr, double width, double height, gpointer user, GError **error)
{
	(void)error;
	FigureJob *job = user;
	if (job->pdf && job->figure->title) {
		char *plain = NULL;
		if (!pango_parse_markup(job->figure->title, -1, 0, NULL, &plain, NULL, NULL))
			plain = g_strdup(job->figure->title);
		cairo_pdf_surface_set_metadata(cairo_get_target(cr), CAIRO_PDF_METADATA_TITLE, plain);
		g_free(plain);
	}
	cl_plot_figure_draw(job->figure, cr, width, height);
	return TRUE;
}

gboolean cl_plot_figure_export(ClPlotFigure *figure, const char *path, ClPlotFormat format, double width,
							   double height, double dpi, GError **error)
{
	if (format == CL_PLOT_FORMAT_AUTO)
		format = cl_plot_format_from_path(path);
	FigureJob job = {figure, format == CL_PLOT_FORMAT_PDF};
	return cl_plot_export_document(path, format, width, height, dpi, draw_figure, &job, error);
}
