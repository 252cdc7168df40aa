/* PNG, SVG and PDF export through the one draw function, written atomically. */
#include "figure-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <math.h>
#include <pango/pango.h>
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

/* Renders into `file`; returns the cairo status of the whole job. */
static cairo_status_t render_to(ClPlotFigure *figure, const char *file, ClPlotFormat format, double width,
								double height, double dpi)
{
	cairo_surface_t *surface;
	double scale = 1.0;
	if (format == CL_PLOT_FORMAT_PNG) {
		scale = dpi / 72.0;
		surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(width * scale), (int)ceil(height * scale));
	} else if (format == CL_PLOT_FORMAT_SVG) {
		surface = cairo_svg_surface_create(file, width, height);
	} else {
		surface = cairo_pdf_surface_create(file, width, height);
		if (figure->title) {
			char *plain = NULL;
			if (!pango_parse_markup(figure->title, -1, 0, NULL, &plain, NULL, NULL))
				plain = g_strdup(figure->title);
			cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, plain);
			g_free(plain);
		}
		cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "ContactLab");
	}
	cairo_status_t status = cairo_surface_status(surface);
	if (status == CAIRO_STATUS_SUCCESS) {
		cairo_t *cr = cairo_create(surface);
		cairo_scale(cr, scale, scale);
		cl_plot_figure_draw(figure, cr, width, height);
		status = cairo_status(cr);
		cairo_destroy(cr);
	}
	if (status == CAIRO_STATUS_SUCCESS && format == CL_PLOT_FORMAT_PNG)
		status = cairo_surface_write_to_png(surface, file);
	cairo_surface_finish(surface);
	if (status == CAIRO_STATUS_SUCCESS)
		status = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	return status;
}

gboolean cl_plot_figure_export(ClPlotFigure *figure, const char *path, ClPlotFormat format, double width,
							   double height, double dpi, GError **error)
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
	char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
	char *name = g_strdup_printf(".%s.XXXXXX", base);
	char *temp = g_build_filename(dir, name, NULL);
	g_free(dir);
	g_free(base);
	g_free(name);
	int fd = g_mkstemp(temp);
	if (fd < 0) {
		int err = errno;
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE, "%s: cannot create a file there: %s", path,
					g_strerror(err));
		g_free(temp);
		return FALSE;
	}
	close(fd);
	cairo_status_t status = render_to(figure, temp, format, width, height, dpi);
	gboolean ok = status == CAIRO_STATUS_SUCCESS;
	if (!ok)
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE, "%s: %s", path, cairo_status_to_string(status));
	/* mkstemp makes the file private; a figure is an ordinary document */
	if (ok && g_chmod(temp, 0644) != 0) {
		int err = errno;
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE, "%s: %s", path, g_strerror(err));
		ok = FALSE;
	}
	if (ok && g_rename(temp, path) != 0) {
		int err = errno;
		g_set_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE, "%s: %s", path, g_strerror(err));
		ok = FALSE;
	}
	if (!ok)
		g_unlink(temp);
	g_free(temp);
	return ok;
}
