/* Lesson handouts: PDF pages drawn with Cairo + Pango around the same
 * figures the window shows, and a folder of figures and CSV. */
#include "lesson-handout.h"

#include "agreement.h"
#include "figures.h"
#include "lesson-figures.h"
#include "lesson.h"
#include "numbers.h"

#include <cairo-pdf.h>
#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdatomic.h>
#include <string.h>

/* A4 in points, with 40 pt margins */
#define PAGE_WIDTH 595.0
#define PAGE_HEIGHT 842.0
#define MARGIN 40.0
#define CONTENT_WIDTH (PAGE_WIDTH - 2 * MARGIN)

/* Draws markup in a box of width w at (x, y); returns its height. */
static double draw_markup(cairo_t *cr, double x, double y, double w, const char *font, const char *text,
						  gboolean is_markup, double gray)
{
	PangoLayout *layout = pango_cairo_create_layout(cr);
	PangoFontDescription *desc = pango_font_description_from_string(font);
	pango_layout_set_font_description(layout, desc);
	pango_layout_set_width(layout, (int)(w * PANGO_SCALE));
	pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
	if (is_markup)
		pango_layout_set_markup(layout, text, -1);
	else
		pango_layout_set_text(layout, text, -1);
	int width, height;
	pango_layout_get_size(layout, &width, &height);
	cairo_set_source_rgb(cr, gray, gray, gray);
	cairo_move_to(cr, x, y);
	pango_cairo_show_layout(cr, layout);
	pango_font_description_free(desc);
	g_object_unref(layout);
	return (double)height / PANGO_SCALE;
}

static double draw_text(cairo_t *cr, double x, double y, double w, const char *font, const char *text, double gray)
{
	return draw_markup(cr, x, y, w, font, text, FALSE, gray);
}

/* Draws one line of text at (x, y); returns its width. */
static double draw_text_width(cairo_t *cr, double x, double y, const char *font, const char *text)
{
	PangoLayout *layout = pango_cairo_create_layout(cr);
	PangoFontDescription *desc = pango_font_description_from_string(font);
	pango_layout_set_font_description(layout, desc);
	pango_layout_set_text(layout, text, -1);
	int width, height;
	pango_layout_get_size(layout, &width, &height);
	cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
	cairo_move_to(cr, x, y);
	pango_cairo_show_layout(cr, layout);
	pango_font_description_free(desc);
	g_object_unref(layout);
	return (double)width / PANGO_SCALE;
}

/* ------------------------------------------------------------ gradient table */

static gboolean cell_highlighted(const ClLessonStep *step, int backend, const char *parameter)
{
	for (guint i = 0; i < step->highlights->len; i++) {
		const ClLessonHighlight *h = &g_array_index(step->highlights, ClLessonHighlight, i);
		if (h->backend == backend && (!h->parameter[0] || strcmp(h->parameter, parameter) == 0))
			return TRUE;
	}
	return FALSE;
}

static void fill(cairo_t *cr, ClPlotColor c, double x, double y, double w, double h)
{
	cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
	cairo_rectangle(cr, x, y, w, h);
	cairo_fill(cr);
}

/* The window's legend: what each cell colour means. Returns the height used. */
static double draw_agreement_legend(cairo_t *cr, double x, double y)
{
	static const ClAgreement shown[] = {CL_AGREEMENT_REFERENCE, CL_AGREEMENT_GOOD, CL_AGREEMENT_FAIR,
										CL_AGREEMENT_POOR, CL_AGREEMENT_WRONG_SIGN};
	double cx = x;
	for (gsize i = 0; i < G_N_ELEMENTS(shown); i++) {
		fill(cr, cl_agreement_background(shown[i]), cx, y + 1, 9, 8);
		cx += 12 + draw_text_width(cr, cx + 12, y, "Sans 6.5", cl_agreement_label(shown[i])) + 10;
	}
	double h = draw_text(cr, cx, y, CONTENT_WIDTH - (cx - x), "Sans 6.5",
						 "colour: the adjoint against exact's; each cell: the backend's adjoint, then its own "
						 "finite difference (FD)",
						 0.35);
	return MAX(h, 10);
}

/* Rows = backends, columns = the loss and the derivatives; each cell holds
 * the adjoint and the backend's own FD, coloured as the window colours it
 * (cl_agreement against exact), highlighted cells framed, with the legend
 * below. Returns the height used. */
static double draw_gradient_table(cairo_t *cr, double x, double y, const ClLessonResult *r)
{
	const ClLessonStep *step = r->step;
	guint cols = r->columns->len + 1; /* the loss first */
	double name_w = 92, row_h = 22, cell_w = MIN(78.0, (CONTENT_WIDTH - name_w) / cols);
	int exact_slot = cl_lesson_step_backend_slot(step, cl_backend_reference());
	double header_h = draw_text(cr, x, y, name_w, "Sans Bold 7.5", "backend", 0.2);
	for (guint c = 0; c < cols; c++) {
		const char *label = c == 0 ? "loss" : g_ptr_array_index(r->columns, c - 1);
		char *header = c == 0 ? g_strdup(label) : g_strdup_printf("∂L/∂ %s", label);
		header_h = MAX(header_h, draw_text(cr, x + name_w + c * cell_w + 2, y, cell_w - 4, "Sans Bold 6.5", header, 0.2));
		g_free(header);
	}
	double top = y + header_h + 4;
	for (guint b = 0; b < r->backend_count; b++) {
		int backend = g_array_index(step->backends, int, b);
		double row_y = top + b * row_h;
		draw_text(cr, x, row_y + 2, name_w, "Sans 7.5", cl_backend_info(backend)->id, 0.1);
		for (guint c = 0; c < cols; c++) {
			gsize k = b * r->columns->len + (c - 1);
			double value = c == 0 ? r->loss[b] : r->gradient[k];
			double cx = x + name_w + c * cell_w;
			if (c > 0 && exact_slot >= 0) {
				double exact = r->gradient[(guint)exact_slot * r->columns->len + (c - 1)];
				ClAgreement a = (int)b == exact_slot ? CL_AGREEMENT_REFERENCE : cl_agreement(value, exact, NULL);
				fill(cr, cl_agreement_background(a), cx + 1, row_y + 1, cell_w - 2, row_h - 2);
			}
			g_autofree char *text = cl_lesson_format_number("%.4g", value);
			draw_text(cr, cx + 4, row_y + 2, cell_w - 6, "Sans 7.5", text, 0.05);
			if (c > 0) {
				g_autofree char *fd_number = cl_lesson_format_number("%.4g", r->fd[k]);
				g_autofree char *fd = g_strdup_printf("FD %s", fd_number);
				draw_text(cr, cx + 4, row_y + 11, cell_w - 6, "Sans 6", fd, 0.35);
			}
			if (c > 0 && cell_highlighted(step, backend, g_ptr_array_index(r->columns, c - 1))) {
				cairo_set_source_rgb(cr, 0.11, 0.44, 0.85);
				cairo_set_line_width(cr, 1.6);
				cairo_rectangle(cr, cx + 1, row_y + 1, cell_w - 2, row_h - 2);
				cairo_stroke(cr);
			}
		}
	}
	cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
	cairo_set_line_width(cr, 0.5);
	cairo_move_to(cr, x, top - 1);
	cairo_line_to(cr, x + name_w + cols * cell_w, top - 1);
	cairo_stroke(cr);
	double table_h = header_h + 4 + r->backend_count * row_h;
	return table_h + 4 + draw_agreement_legend(cr, x, y + table_h + 4);
}

/* ------------------------------------------------------------ pages */

static void draw_cover(cairo_t *cr, const ClLesson *lesson)
{
	double y = MARGIN + 60;
	y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Sans 9", "ContactLab lesson", 0.4) + 6;
	y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Sans Bold 22", lesson->title, 0.05) + 12;
	if (lesson->summary)
		y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Sans 12", lesson->summary, 0.15) + 24;
	for (guint i = 0; i < lesson->steps->len; i++) {
		const ClLessonStep *step = g_ptr_array_index(lesson->steps, i);
		char *line = g_strdup_printf("%u.  %s", i + 1, step->title);
		y += draw_text(cr, MARGIN + 10, y, CONTENT_WIDTH - 10, "Sans 11", line, 0.1) + 6;
		g_free(line);
	}
	draw_text(cr, MARGIN, PAGE_HEIGHT - MARGIN - 30, CONTENT_WIDTH, "Sans 8",
			  "Every number in this handout was computed by ContactLab " CL_VERSION
			  " when it was exported; none is typed into the lesson.",
			  0.4);
}

static char *settings_line(const ClLessonStep *step)
{
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "Scene: %s%s (%d steps, dt = %.4g s).  Backends:",
						   step->scene_preset ? step->scene_preset : step->scene->name,
						   step->scene_preset ? "" : " (inline)", step->scene->steps, cl_scene_dt(step->scene));
	for (guint b = 0; b < step->backends->len; b++)
		g_string_append_printf(s, " %s", cl_backend_info(g_array_index(step->backends, int, b))->id);
	g_string_append_printf(s, ".  View: %s", cl_lesson_view_name(step->view.kind));
	const ClLessonView *v = &step->view;
	if (v->kind == CL_LESSON_VIEW_CONVERGENCE || v->kind == CL_LESSON_VIEW_PERTURBATION)
		g_string_append_printf(s, " of %s", v->parameter);
	if (v->kind == CL_LESSON_VIEW_LEARNING || (v->kind == CL_LESSON_VIEW_HEATMAP && v->paths))
		g_string_append_printf(s, ", %d iterations, learning rate %s", v->iterations,
							   cl_format_number(v->learning_rate).text);
	g_string_append_c(s, '.');
	return g_string_free(s, FALSE);
}

static void draw_step_page(cairo_t *cr, const ClLesson *lesson, guint index, const ClLessonResult *r,
						   ClPlotFigure *figure, double figure_w, double figure_h)
{
	const ClLessonStep *step = r->step;
	char *header = g_strdup_printf("%s — step %u of %u", lesson->title, index + 1, lesson->steps->len);
	double y = MARGIN;
	y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Sans 8", header, 0.45) + 4;
	y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Sans Bold 15", step->title, 0.05) + 10;
	g_free(header);

	/* the figure, scaled to the content width (and to at most 45% of the page) */
	double scale = MIN(CONTENT_WIDTH / figure_w, 0.45 * PAGE_HEIGHT / figure_h);
	cairo_save(cr);
	cairo_translate(cr, MARGIN + (CONTENT_WIDTH - figure_w * scale) / 2, y);
	cairo_scale(cr, scale, scale);
	cl_plot_figure_draw(figure, cr, figure_w, figure_h);
	cairo_restore(cr);
	y += figure_h * scale + 12;

	if (step->view.kind == CL_LESSON_VIEW_GRADIENTS)
		y += draw_gradient_table(cr, MARGIN, y, r) + 14;

	y += draw_text(cr, MARGIN, y, CONTENT_WIDTH, "Serif 11", r->text, 0.05) + 12;
	for (guint i = 0; i < r->problems->len; i++) {
		char *escaped = g_markup_escape_text(g_ptr_array_index(r->problems, i), -1);
		char *line = g_strdup_printf("<span foreground=\"#b00000\">Not computed: %s</span>", escaped);
		y += draw_markup(cr, MARGIN, y, CONTENT_WIDTH, "Sans 8", line, TRUE, 0.0) + 3;
		g_free(line);
		g_free(escaped);
	}
	char *settings = settings_line(step);
	draw_text(cr, MARGIN, PAGE_HEIGHT - MARGIN - 22, CONTENT_WIDTH, "Sans 7", settings, 0.45);
	g_free(settings);
}

/* ------------------------------------------------------------ folder */

static gboolean write_step_files(const char *dir, guint index, const ClLessonResult *r, ClPlotFigure *figure,
								 double w, double h, GString *manifest, GError **error)
{
	char *base = g_strdup_printf("step-%02u", index + 1);
	static const char *const figure_formats[] = {"png", "svg"};
	gboolean ok = TRUE;
	for (size_t i = 0; ok && i < G_N_ELEMENTS(figure_formats); i++) {
		char *name = g_strdup_printf("%s.%s", base, figure_formats[i]);
		char *path = g_build_filename(dir, name, NULL);
		ok = cl_plot_figure_export(figure, path, CL_PLOT_FORMAT_AUTO, w, h, CL_FIGURE_DPI, error);
		if (ok)
			g_string_append_printf(manifest, "%u,figure,%s\n", index + 1, name);
		g_free(path);
		g_free(name);
	}
	struct {
		const char *suffix, *kind;
		GString *text;
	} files[] = {
		{"csv", "data", cl_lesson_step_csv(r)},
		{"txt", "text", g_string_new(r->text)},
	};
	g_string_append_c(files[1].text, '\n');
	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		char *name = g_strdup_printf("%s.%s", base, files[i].suffix);
		char *path = g_build_filename(dir, name, NULL);
		if (ok && (ok = cl_write_output(path, files[i].text, error)))
			g_string_append_printf(manifest, "%u,%s,%s\n", index + 1, files[i].kind, name);
		g_string_free(files[i].text, TRUE);
		g_free(path);
		g_free(name);
	}
	g_free(base);
	return ok;
}

/* ------------------------------------------------------------ export */

typedef struct HandoutJob {
	const ClLesson *lesson;
	const char *dir;
	GPtrArray *problems;
	ClLessonExportProgress progress;
	void *user;
	const _Atomic int *cancel;
	GString *manifest;
} HandoutJob;

/* The cover, then one page per step, each step applied (computed) in turn. */
static gboolean draw_handout(cairo_t *cr, double width, double height, gpointer data, GError **error)
{
	(void)width;
	(void)height;
	HandoutJob *job = data;
	const ClLesson *lesson = job->lesson;
	cairo_surface_t *surface = cairo_get_target(cr);
	cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, lesson->title);
	cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "ContactLab " CL_VERSION);
	draw_cover(cr, lesson);
	cairo_show_page(cr);
	gboolean ok = TRUE;
	for (guint i = 0; ok && i < lesson->steps->len; i++) {
		ClLessonResult *r = cl_lesson_step_apply(g_ptr_array_index(lesson->steps, i), job->cancel);
		if (!r) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the export was cancelled");
			return FALSE;
		}
		for (guint k = 0; job->problems && k < r->problems->len; k++)
			g_ptr_array_add(job->problems,
							g_strdup_printf("step %u: %s", i + 1, (const char *)g_ptr_array_index(r->problems, k)));
		ClPlotFigure *figure = cl_lesson_figure(r);
		double w, h;
		cl_lesson_figure_size(r, figure, &w, &h);
		draw_step_page(cr, lesson, i, r, figure, w, h);
		cairo_show_page(cr);
		if (job->dir)
			ok = write_step_files(job->dir, i, r, figure, w, h, job->manifest, error);
		cl_plot_figure_free(figure);
		cl_lesson_result_free(r);
		if (job->progress)
			job->progress((int)i + 1, (int)lesson->steps->len, job->user);
	}
	return ok;
}

gboolean cl_lesson_export(const ClLesson *lesson, const char *pdf_path, const char *dir, GPtrArray *problems,
						  ClLessonExportProgress progress, void *user, const _Atomic int *cancel, GError **error)
{
	if (dir && g_mkdir_with_parents(dir, 0755) != 0) {
		int saved = errno;
		g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved), "%s: %s", dir, g_strerror(saved));
		return FALSE;
	}
	HandoutJob job = {lesson, dir, problems, progress, user, cancel, g_string_new("step,kind,file\n")};
	gboolean ok = cl_plot_export_document(pdf_path, CL_PLOT_FORMAT_PDF, PAGE_WIDTH, PAGE_HEIGHT, 72, draw_handout,
										  &job, error);
	if (ok && dir) {
		char *path = g_build_filename(dir, "manifest.csv", NULL);
		ok = cl_write_output(path, job.manifest, error);
		g_free(path);
	}
	g_string_free(job.manifest, TRUE);
	return ok;
}
