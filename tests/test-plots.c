/* plots/: ticks, colour maps, pixel checks of known geometry, exports. No display. */
#include "atomic-file.h"
#include "plot.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

static void assert_ticks(double lo, double hi, ClPlotScale scale, int target, const double *expected, int count)
{
	ClPlotTicks ticks;
	g_assert_cmpint(cl_plot_nice_ticks(lo, hi, scale, target, &ticks), ==, count);
	for (int i = 0; i < count; i++)
		g_assert_cmpfloat_with_epsilon(ticks.values[i], expected[i], 1e-12 * MAX(1.0, fabs(expected[i])));
}

static void test_ticks(void)
{
	assert_ticks(0, 1, CL_PLOT_SCALE_LINEAR, 5, (double[]){0, 0.2, 0.4, 0.6, 0.8, 1}, 6);
	assert_ticks(-1, 1, CL_PLOT_SCALE_LINEAR, 4, (double[]){-1, -0.5, 0, 0.5, 1}, 5);
	assert_ticks(0, 100, CL_PLOT_SCALE_LINEAR, 5, (double[]){0, 20, 40, 60, 80, 100}, 6);
	assert_ticks(-3.7, 12.2, CL_PLOT_SCALE_LINEAR, 7, (double[]){-2.5, 0, 2.5, 5, 7.5, 10}, 6);
	assert_ticks(-3.7, 12.2, CL_PLOT_SCALE_LINEAR, 6, (double[]){0, 5, 10}, 3); /* never more than about target */
	assert_ticks(0.1, 0.35, CL_PLOT_SCALE_LINEAR, 5, (double[]){0.1, 0.15, 0.2, 0.25, 0.3, 0.35}, 6);
	assert_ticks(1e-3, 10, CL_PLOT_SCALE_LOG, 6, (double[]){1e-3, 1e-2, 1e-1, 1, 10}, 5);
	assert_ticks(1e-8, 1e8, CL_PLOT_SCALE_LOG, 5, (double[]){1e-8, 1e-4, 1, 1e4, 1e8}, 5);
	assert_ticks(1, 5, CL_PLOT_SCALE_LOG, 5, (double[]){1, 2, 5}, 3);
	ClPlotTicks ticks;
	g_assert_cmpint(cl_plot_nice_ticks(-1, 10, CL_PLOT_SCALE_LOG, 5, &ticks), ==, 0);
	g_assert_cmpint(cl_plot_nice_ticks(1, 1, CL_PLOT_SCALE_LINEAR, 5, &ticks), ==, 0);
}

static void test_tick_labels(void)
{
	char label[64];
	ClPlotTicks ticks;
	cl_plot_nice_ticks(0, 1, CL_PLOT_SCALE_LINEAR, 4, &ticks); /* step 0.25 */
	cl_plot_format_tick(0.25, &ticks, CL_PLOT_SCALE_LINEAR, label, sizeof label);
	g_assert_cmpstr(label, ==, "0.25");
	cl_plot_format_tick(0, &ticks, CL_PLOT_SCALE_LINEAR, label, sizeof label);
	g_assert_cmpstr(label, ==, "0.00");
	cl_plot_nice_ticks(-4, 4, CL_PLOT_SCALE_LINEAR, 4, &ticks);
	cl_plot_format_tick(-2, &ticks, CL_PLOT_SCALE_LINEAR, label, sizeof label);
	g_assert_cmpstr(label, ==, "\u22122");
	cl_plot_nice_ticks(1e-5, 1, CL_PLOT_SCALE_LOG, 6, &ticks);
	cl_plot_format_tick(1e-4, &ticks, CL_PLOT_SCALE_LOG, label, sizeof label);
	g_assert_cmpstr(label, ==, "10<sup>\u22124</sup>");
	cl_plot_nice_ticks(0, 2e5, CL_PLOT_SCALE_LINEAR, 3, &ticks);
	cl_plot_format_tick(2e5, &ticks, CL_PLOT_SCALE_LINEAR, label, sizeof label);
	g_assert_cmpstr(label, ==, "2×10<sup>5</sup>");
}

static void assert_color(ClPlotColor c, double r, double g, double b, double tolerance)
{
	if (fabs(c.r - r) > tolerance || fabs(c.g - g) > tolerance || fabs(c.b - b) > tolerance)
		g_error("colour (%.3f, %.3f, %.3f), expected (%.3f, %.3f, %.3f) ± %g", c.r, c.g, c.b, r, g, b, tolerance);
}

static void test_colormaps(void)
{
	/* viridis's published 5-class stops */
	static const char *const stops[] = {"#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"};
	for (int i = 0; i < 5; i++) {
		ClPlotColor want = cl_plot_color_hex(stops[i]);
		assert_color(cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, i / 4.0), want.r, want.g, want.b, 0.02);
	}
	/* Moreland's cool–warm: its end points and grey #dddddd centre */
	assert_color(cl_plot_colormap(CL_PLOT_COLORMAP_COOLWARM, 0), 0.230, 0.299, 0.754, 0.004);
	assert_color(cl_plot_colormap(CL_PLOT_COLORMAP_COOLWARM, 1), 0.706, 0.016, 0.150, 0.004);
	assert_color(cl_plot_colormap(CL_PLOT_COLORMAP_COOLWARM, 0.5), 0.865, 0.865, 0.865, 0.01);
	/* lightness rises monotonically along viridis */
	double previous = -1;
	for (int i = 0; i <= 64; i++) {
		ClPlotColor c = cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, i / 64.0);
		double luma = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
		g_assert_cmpfloat(luma, >, previous);
		previous = luma;
	}
}

/* Renders into an ARGB image at 1 pixel per unit. */
static cairo_surface_t *render(ClPlotFigure *f, int width, int height)
{
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
	cairo_t *cr = cairo_create(surface);
	cl_plot_figure_draw(f, cr, width, height);
	g_assert_cmpint(cairo_status(cr), ==, CAIRO_STATUS_SUCCESS);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	return surface;
}

static ClPlotColor pixel(cairo_surface_t *surface, double x, double y)
{
	int stride = cairo_image_surface_get_stride(surface);
	const guint32 *row = (const guint32 *)(cairo_image_surface_get_data(surface) + (int)floor(y) * stride);
	guint32 p = row[(int)floor(x)];
	return (ClPlotColor){((p >> 16) & 255) / 255.0, ((p >> 8) & 255) / 255.0, (p & 255) / 255.0, 1};
}

static gboolean same_pixels(cairo_surface_t *a, cairo_surface_t *b)
{
	int height = cairo_image_surface_get_height(a), stride = cairo_image_surface_get_stride(a);
	return height == cairo_image_surface_get_height(b) && stride == cairo_image_surface_get_stride(b) &&
		   memcmp(cairo_image_surface_get_data(a), cairo_image_surface_get_data(b), (size_t)height * stride) == 0;
}

/* A curve grown point by point (the live learning curves) draws exactly as
 * the same curve added at once; replacing the points redraws from the new ones. */
static void test_series_append(void)
{
	enum { N = 300 };
	double x[N], y[N], z[N];
	for (int i = 0; i < N; i++) {
		x[i] = i;
		y[i] = exp(-i / 60.0) * (1 + 0.2 * sin(i / 7.0));
		z[i] = 0.5 + 0.3 * cos(i / 11.0);
	}
	ClPlotFigure *whole = cl_plot_figure_new(1, 1), *grown = cl_plot_figure_new(1, 1);
	ClPlotPanel *pw = cl_plot_figure_panel(whole, 0, 0), *pg = cl_plot_figure_panel(grown, 0, 0);
	cl_plot_panel_set_y_axis(pw, "loss", CL_PLOT_SCALE_LOG);
	cl_plot_panel_set_y_axis(pg, "loss", CL_PLOT_SCALE_LOG);
	cl_plot_panel_add_line(pw, "a", x, y, N);
	cl_plot_panel_add_line(pw, "b", x, z, N);
	ClPlotSeries *a = cl_plot_panel_add_line(pg, "a", x, y, 1);
	ClPlotSeries *b = cl_plot_panel_add_line(pg, "b", NULL, NULL, 0);
	cairo_surface_t *expected = render(whole, 400, 300);
	cairo_surface_destroy(render(grown, 400, 300)); /* a draw in between, as on screen */
	for (int i = 1; i < N; i += 7)
		cl_plot_series_append(a, x + i, y + i, MIN(7, N - i));
	for (int i = 0; i < N; i++)
		cl_plot_series_append(b, x + i, z + i, 1);
	cairo_surface_t *got = render(grown, 400, 300);
	g_assert_true(same_pixels(expected, got));
	cairo_surface_destroy(got);
	/* replaced points: the other curve's shape */
	cl_plot_series_set_points(a, x, z, N);
	cl_plot_series_set_points(b, x, y, N);
	got = render(grown, 400, 300);
	g_assert_false(same_pixels(expected, got));
	cairo_surface_destroy(got);
	cl_plot_series_set_points(a, x, y, N);
	cl_plot_series_set_points(b, x, z, N);
	got = render(grown, 400, 300);
	g_assert_true(same_pixels(expected, got));
	cairo_surface_destroy(got);
	cairo_surface_destroy(expected);
	cl_plot_figure_free(whole);
	cl_plot_figure_free(grown);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, joined by spaces. */
static char *listing(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (const char *name; (name = g_dir_read_name(d));)
		g_ptr_array_add(names, g_strdup(name));
	g_dir_close(d);
	g_ptr_array_sort(names, compare_names);
	g_ptr_array_add(names, NULL);
	char *text = g_strjoinv(" ", (char **)names->pdata);
	g_ptr_array_free(names, TRUE);
	return text;
}

static void assert_listing(const char *dir, const char *expected)
{
	char *got = listing(dir);
	g_assert_cmpstr(got, ==, expected);
	g_free(got);
}

static void assert_contents(const char *path, const char *expected)
{
	char *data = NULL;
	g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
	g_assert_cmpstr(data, ==, expected);
	g_free(data);
}

/* The new contents have no name in the folder until they are complete
 * (O_TMPFILE; the fallback's hidden .tmp is the only other name allowed),
 * then replace the old file whole; an abandoned one leaves the old file. */
static void test_atomic_file(void)
{
	char *dir = g_dir_make_tmp("test-plots-XXXXXX", NULL);
	char *path = g_build_filename(dir, "scene.json", NULL);
	GError *error = NULL;
	g_assert_true(cl_atomic_file_replace(path, "old", 3, &error));
	g_assert_no_error(error);
	assert_listing(dir, "scene.json");
	ClAtomicFile *f = cl_atomic_file_new(path, &error);
	g_assert_nonnull(f);
	g_assert_true(cl_atomic_file_write(f, "new ", 4, &error));
	g_assert_true(cl_atomic_file_write(f, "contents", 8, &error));
	char *during = listing(dir);
	if (strcmp(during, "scene.json") != 0) { /* no O_TMPFILE: one hidden .tmp */
		g_assert_true(g_str_has_prefix(during, ".scene.json."));
		g_assert_true(g_str_has_suffix(during, ".tmp scene.json"));
		g_test_message("no O_TMPFILE here: written as %s", during);
	}
	g_free(during);
	assert_contents(path, "old");
	cl_atomic_file_abort(f);
	assert_listing(dir, "scene.json");
	assert_contents(path, "old");
	f = cl_atomic_file_new(path, &error);
	g_assert_true(cl_atomic_file_write(f, "new contents", 12, &error));
	g_assert_true(cl_atomic_file_commit(f, &error));
	g_assert_no_error(error);
	assert_listing(dir, "scene.json");
	assert_contents(path, "new contents");
	/* an ordinary document: 0644 less the umask */
	mode_t mask = umask(022);
	umask(mask);
	GStatBuf st;
	g_assert_cmpint(g_stat(path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0644 & ~mask);
	/* a new name, and a folder that does not exist */
	char *other = g_build_filename(dir, "other.csv", NULL);
	g_assert_true(cl_atomic_file_replace(other, "a,b\n", 4, &error));
	assert_contents(other, "a,b\n");
	char *missing = g_build_filename(dir, "no-such-folder", "x.png", NULL);
	g_assert_false(cl_atomic_file_replace(missing, "x", 1, &error));
	g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
	g_clear_error(&error);
	/* what a killed writer can leave: exactly .NAME.XXXXXX.tmp, and only that is cleaned */
	const char *names[] = {".scene.json.a1B2c3.tmp", ".scene.json.ab.tmp", "scene.json.a1B2c3", ".other.csv.a1B2c3.tmp"};
	for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
		char *file = g_build_filename(dir, names[i], NULL);
		g_assert_true(g_file_set_contents(file, "x", 1, NULL));
		g_free(file);
	}
	g_assert_cmpint(cl_atomic_file_clean(path), ==, 1);
	assert_listing(dir, ".other.csv.a1B2c3.tmp .scene.json.ab.tmp other.csv scene.json scene.json.a1B2c3");
	g_assert_cmpint(cl_atomic_file_clean(other), ==, 1);
	for (gsize i = 1; i < 3; i++) {
		char *file = g_build_filename(dir, names[i], NULL);
		g_unlink(file);
		g_free(file);
	}
	g_unlink(path);
	g_unlink(other);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
	g_free(missing);
	g_free(other);
	g_free(path);
	g_free(dir);
}

static void test_heatmap_cells(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	const double values[] = {0, 1, 2, NAN}; /* row 0 (bottom): 0, 1; row 1: 2, NaN */
	cl_plot_panel_add_heatmap(p, 2, 2, values, 0, 2, 10, 20);
	cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_VIRIDIS, 0, 3, CL_PLOT_SCALE_LINEAR, "loss");
	cairo_surface_t *s = render(f, 400, 300);
	double px, py;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++) {
			if (i == 1 && j == 1)
				continue;
			g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5 + i, 12.5 + 5 * j, &px, &py));
			ClPlotColor want = cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, values[j * 2 + i] / 3.0);
			assert_color(pixel(s, px, py), want.r, want.g, want.b, 2.5 / 255);
		}
	/* the NaN cell is grey (hatched grey on grey) */
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 1.5, 17.5, &px, &py));
	ClPlotColor missing = pixel(s, px, py);
	g_assert_cmpfloat(fabs(missing.r - missing.g) + fabs(missing.g - missing.b), <, 0.02);
	/* the heatmap fills the plot area exactly: its corner is the plot's corner */
	double x0, y0;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0, 10, &x0, &y0));
	ClPlotColor inside = pixel(s, x0 + 2, y0 - 2);
	ClPlotColor want = cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, 0);
	assert_color(inside, want.r, want.g, want.b, 2.5 / 255);
	cairo_surface_destroy(s);

	/* a diverging scale from the data is symmetric: zero is its centre */
	const double signed_values[] = {-1, 4};
	cl_plot_figure_free(f);
	f = cl_plot_figure_new(1, 1);
	cl_plot_panel_add_heatmap(cl_plot_figure_panel(f, 0, 0), 2, 1, signed_values, 0, 1, 0, 1);
	cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_COOLWARM, NAN, NAN, CL_PLOT_SCALE_LINEAR, NULL);
	s = render(f, 300, 200);
	ClPlotColor zero = cl_plot_figure_value_color(f, 0);
	ClPlotColor centre = cl_plot_colormap(CL_PLOT_COLORMAP_COOLWARM, 0.5);
	assert_color(zero, centre.r, centre.g, centre.b, 1e-12);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.25, 0.5, &px, &py));
	want = cl_plot_colormap(CL_PLOT_COLORMAP_COOLWARM, 3.0 / 8.0); /* −1 on [−4, 4] */
	assert_color(pixel(s, px, py), want.r, want.g, want.b, 2.5 / 255);
	cairo_surface_destroy(s);
	cl_plot_figure_free(f);
}

/* On a log axis cells are even in log space: the cell of [10, 100] spans a decade. */
static void test_heatmap_log_axis(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_x_axis(p, "k", CL_PLOT_SCALE_LOG);
	const double values[] = {0, NAN, 1};
	cl_plot_panel_add_heatmap(p, 3, 1, values, 1, 1000, 0, 1);
	cl_plot_figure_set_color_scale(f, CL_PLOT_COLORMAP_VIRIDIS, 0, 1, CL_PLOT_SCALE_LINEAR, NULL);
	cairo_surface_t *s = render(f, 400, 200);
	double px, py;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 500, 0.5, &px, &py));
	ClPlotColor want = cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, 1);
	assert_color(pixel(s, px, py), want.r, want.g, want.b, 2.5 / 255);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 2, 0.5, &px, &py));
	want = cl_plot_colormap(CL_PLOT_COLORMAP_VIRIDIS, 0);
	assert_color(pixel(s, px, py), want.r, want.g, want.b, 2.5 / 255);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 50, 0.5, &px, &py));
	ClPlotColor missing = pixel(s, px, py);
	g_assert_cmpfloat(fabs(missing.r - missing.g) + fabs(missing.g - missing.b), <, 0.02);
	cairo_surface_destroy(s);
	cl_plot_figure_free(f);
}

static void test_line_geometry(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_x_range(p, 0, 1);
	cl_plot_panel_set_y_range(p, 0, 1);
	cl_plot_panel_set_grid(p, false);
	cl_plot_panel_set_x_axis(p, "x", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(p, "y", CL_PLOT_SCALE_LINEAR);
	ClPlotSeries *s = cl_plot_panel_add_line(p, NULL, (double[]){0, 1}, (double[]){0, 1}, 2);
	cl_plot_series_set_color(s, (ClPlotColor){1, 0, 0, 1});
	cl_plot_series_set_width(s, 3);
	ClPlotSeries *h = cl_plot_panel_add_hline(p, 0.25, NULL);
	cl_plot_series_set_color(h, (ClPlotColor){0, 0, 1, 1});
	cl_plot_series_set_dash(h, CL_PLOT_DASH_SOLID);
	cl_plot_series_set_width(h, 3);
	cairo_surface_t *surface = render(f, 320, 240);
	double px, py;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5, 0.5, &px, &py));
	/* pure red is darkened to WCAG AA contrast on white (4.0:1 → 4.5:1); pure blue passes as it is */
	ClPlotColor red = cl_plot_color_legible((ClPlotColor){1, 0, 0, 1}, (ClPlotColor){1, 1, 1, 1}, 4.5);
	g_assert_cmpfloat(red.r, <, 1);
	g_assert_cmpfloat(cl_plot_contrast(red, (ClPlotColor){1, 1, 1, 1}), >=, 4.5);
	assert_color(pixel(surface, px, py), red.r, red.g, red.b, 0.05);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5, 0.8, &px, &py));
	assert_color(pixel(surface, px, py), 1, 1, 1, 0.01); /* background above the line */
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.75, 0.25, &px, &py));
	assert_color(pixel(surface, px, py), 0, 0, 1, 0.05);
	/* the ticks of a fixed [0, 1] axis */
	ClPlotTicks ticks;
	cl_plot_nice_ticks(0, 1, CL_PLOT_SCALE_LINEAR, 5, &ticks);
	g_assert_cmpfloat(ticks.step, ==, 0.2);
	/* pick inverts data_to_device */
	int row, col;
	double x, y;
	g_assert_true(cl_plot_figure_pick(f, px, py, &row, &col, &x, &y));
	g_assert_cmpint(row, ==, 0);
	g_assert_cmpint(col, ==, 0);
	g_assert_cmpfloat_with_epsilon(x, 0.75, 1e-9);
	g_assert_cmpfloat_with_epsilon(y, 0.25, 1e-9);
	g_assert_false(cl_plot_figure_pick(f, 1, 1, &row, &col, &x, &y));
	cairo_surface_destroy(surface);
	cl_plot_figure_free(f);
}

/* A histogram's bars stand on 0 over their bin edges, filled translucent in
 * the series' colour; an empty bin leaves the background; the y range of a
 * histogram always takes in 0. */
static void test_histogram_geometry(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_x_range(p, 0, 3);
	cl_plot_panel_set_y_range(p, 0, 2);
	cl_plot_panel_set_grid(p, false);
	ClPlotSeries *s = cl_plot_panel_add_histogram(p, NULL, (double[]){0, 1, 2, 3}, (double[]){2, 0, 1}, 3);
	cl_plot_series_set_color(s, (ClPlotColor){0, 0, 1, 1});
	cairo_surface_t *surface = render(f, 320, 240);
	double px, py;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5, 1.0, &px, &py));
	assert_color(pixel(surface, px, py), 0.65, 0.65, 1, 0.02); /* 35 % blue over white */
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 1.5, 0.5, &px, &py));
	assert_color(pixel(surface, px, py), 1, 1, 1, 0.01); /* the empty bin */
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 2.5, 0.5, &px, &py));
	assert_color(pixel(surface, px, py), 0.65, 0.65, 1, 0.02);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 2.5, 1.5, &px, &py));
	assert_color(pixel(surface, px, py), 1, 1, 1, 0.01); /* above the third bar */
	cairo_surface_destroy(surface);
	cl_plot_figure_free(f);

	/* heights 5 and 6 without a fixed range: the bars still start at 0 */
	f = cl_plot_figure_new(1, 1);
	p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_grid(p, false);
	s = cl_plot_panel_add_histogram(p, NULL, (double[]){0, 1, 2}, (double[]){5, 6}, 2);
	cl_plot_series_set_color(s, (ClPlotColor){0, 0, 1, 1});
	surface = render(f, 320, 240);
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.5, 1.0, &px, &py));
	assert_color(pixel(surface, px, py), 0.65, 0.65, 1, 0.02);
	cairo_surface_destroy(surface);
	cl_plot_figure_free(f);
}

static void test_log_axis_geometry(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_y_axis(p, "loss", CL_PLOT_SCALE_LOG);
	cl_plot_panel_set_y_range(p, 1e-3, 1e1);
	cl_plot_panel_add_line(p, "a", (double[]){0, 1, 2}, (double[]){1e-2, 0, 1}, 3); /* 0 breaks the line */
	cairo_surface_t *s = render(f, 300, 200);
	double x, y0, y1, y2;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0, 1e-3, &x, &y0));
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0, 1e-1, &x, &y1));
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0, 1e1, &x, &y2));
	g_assert_cmpfloat_with_epsilon(y0 - y1, y1 - y2, 1e-9); /* decades equally spaced */
	g_assert_false(cl_plot_figure_data_to_device(f, 0, 0, 0, -1, &x, &y0));
	cairo_surface_destroy(s);
	cl_plot_figure_free(f);
}

static void test_small_multiples(void)
{
	ClPlotFigure *f = cl_plot_figure_new(2, 3);
	cl_plot_figure_share_axes(f, true, true);
	cl_plot_figure_set_title(f, "grid");
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 3; c++) {
			ClPlotPanel *p = cl_plot_figure_panel(f, r, c);
			double v[4] = {r, c, r + c, 1};
			cl_plot_panel_add_heatmap(p, 2, 2, v, -1 - c, 1, -1, 1 + r); /* different extents */
			cl_plot_panel_set_x_axis(p, "x", CL_PLOT_SCALE_LINEAR);
			cl_plot_panel_set_y_axis(p, "y", CL_PLOT_SCALE_LINEAR);
		}
	cairo_surface_t *s = render(f, 600, 400);
	double x00, y00, x01, y01, x10, y10;
	cl_plot_figure_data_to_device(f, 0, 0, 0, 0, &x00, &y00);
	cl_plot_figure_data_to_device(f, 0, 1, 0, 0, &x01, &y01);
	cl_plot_figure_data_to_device(f, 1, 0, 0, 0, &x10, &y10);
	g_assert_cmpfloat_with_epsilon(y00, y01, 1e-9); /* same row, same y */
	g_assert_cmpfloat_with_epsilon(x00, x10, 1e-9); /* same column, same x */
	/* the shared range is the union: x ∈ [−3, 1], y ∈ [−1, 2] in every panel */
	double xa, ya, xb, yb;
	cl_plot_figure_data_to_device(f, 1, 2, -3, -1, &xa, &ya);
	cl_plot_figure_data_to_device(f, 1, 2, 1, 2, &xb, &yb);
	int row, col;
	double x, y;
	g_assert_true(cl_plot_figure_pick(f, xa + 0.5, ya - 0.5, &row, &col, &x, &y));
	g_assert_cmpint(row, ==, 1);
	g_assert_cmpint(col, ==, 2);
	g_assert_cmpfloat_with_epsilon(x, -3, 0.05);
	g_assert_cmpfloat_with_epsilon(y, -1, 0.05);
	g_assert_true(cl_plot_figure_pick(f, xb - 0.5, yb + 0.5, &row, &col, &x, &y));
	g_assert_cmpfloat_with_epsilon(x, 1, 0.05);
	g_assert_cmpfloat_with_epsilon(y, 2, 0.05);
	g_assert_false(cl_plot_figure_pick(f, xa - 1.5, ya - 0.5, &row, &col, &x, &y));
	/* one colour scale: the same value has the same colour in every panel */
	double pa, qa, pb, qb;
	cl_plot_figure_data_to_device(f, 0, 0, 0.5, 0.5, &pa, &qa); /* value 1 (top-right cell of [−1, 1]²) */
	cl_plot_figure_data_to_device(f, 1, 2, 0.5, 1.5, &pb, &qb); /* value 1 */
	ClPlotColor a = pixel(s, pa, qa), b = pixel(s, pb, qb);
	assert_color(a, b.r, b.g, b.b, 1.0 / 255);
	cairo_surface_destroy(s);
	cl_plot_figure_free(f);
}

typedef struct {
	int calls, destroyed;
	double x0, y0, x1, y1; /* the cell in device coordinates */
	ClPlotThemeKind theme;
	double font_size;
} Drawing;

static void paint_cell(cairo_t *cr, double width, double height, ClPlotThemeKind theme, double font_size,
					   gpointer data)
{
	Drawing *d = data;
	d->calls++;
	d->theme = theme;
	d->font_size = font_size;
	d->x0 = 0, d->y0 = 0, d->x1 = width, d->y1 = height;
	cairo_user_to_device(cr, &d->x0, &d->y0);
	cairo_user_to_device(cr, &d->x1, &d->y1);
	cairo_set_source_rgb(cr, 1, 0, 0);
	cairo_paint(cr); /* the clip keeps it in the cell */
}

static void count_destroy(gpointer data)
{
	((Drawing *)data)->destroyed++;
}

/* A drawing panel: the callback gets its cell (translated, clipped) in the
 * figure's theme and font size, beside a plot panel laid out as usual; its
 * legend entries join the figure's legend; it has no data coordinates. */
static void test_drawing_panel(void)
{
	Drawing d = {0}, replaced = {0};
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	cl_plot_figure_set_theme(f, CL_PLOT_THEME_DARK);
	cl_plot_figure_set_font_size(f, 11);
	ClPlotPanel *drawing = cl_plot_figure_panel(f, 0, 0), *plot = cl_plot_figure_panel(f, 0, 1);
	cl_plot_panel_set_drawing(drawing, paint_cell, &replaced, count_destroy);
	cl_plot_panel_set_drawing(drawing, paint_cell, &d, count_destroy);
	g_assert_cmpint(replaced.destroyed, ==, 1);
	cl_plot_panel_set_title(drawing, "scene");
	double x[] = {0, 1}, y[] = {0, 1};
	cl_plot_panel_add_line(plot, NULL, x, y, 2);
	cl_plot_panel_set_x_axis(plot, "x", CL_PLOT_SCALE_LINEAR);
	cl_plot_panel_set_y_axis(plot, "y", CL_PLOT_SCALE_LINEAR);
	cairo_surface_t *s = render(f, 600, 300);
	g_assert_cmpint(d.calls, ==, 1);
	g_assert_cmpint(replaced.calls, ==, 0);
	g_assert_cmpint(d.theme, ==, CL_PLOT_THEME_DARK);
	g_assert_cmpfloat(d.font_size, ==, 11);
	/* the left half of the figure, below the title row */
	g_assert_cmpfloat(d.x0, <, 20);
	g_assert_cmpfloat(d.x1, >, 250);
	g_assert_cmpfloat(d.x1, <=, 300);
	g_assert_cmpfloat(d.y0, >, 10);
	g_assert_cmpfloat(d.y1, >, 250);
	assert_color(pixel(s, (d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2), 1, 0, 0, 0);
	assert_color(pixel(s, d.x1 + 1, (d.y0 + d.y1) / 2), 0.141, 0.141, 0.141, 1.0 / 255);
	assert_color(pixel(s, (d.x0 + d.x1) / 2, d.y0 - 1), 0.141, 0.141, 0.141, 1.0 / 255);
	int row, col;
	double px, py;
	g_assert_false(cl_plot_figure_pick(f, (d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2, &row, &col, &px, &py));
	g_assert_false(cl_plot_figure_data_to_device(f, 0, 0, 0.5, 0.5, &px, &py));
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 1, 0.5, 0.5, &px, &py));
	g_assert_cmpfloat(px, >, d.x1);
	g_assert_true(cl_plot_figure_pick(f, px, py, &row, &col, NULL, NULL));
	g_assert_cmpint(col, ==, 1);

	/* a legend entry of the drawing is drawn in the figure's legend below */
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	cairo_surface_t *without = render(f, 600, 300);
	ClPlotSeries *entry = cl_plot_panel_add_legend_entry(drawing, "trajectory");
	cl_plot_series_set_color(entry, (ClPlotColor){0, 1, 0, 1});
	cairo_surface_t *with = render(f, 600, 300);
	g_assert_false(same_pixels(without, with));
	gboolean green = FALSE;
	for (int yy = (int)d.y1; yy < 300 && !green; yy++)
		for (int xx = 0; xx < 600 && !green; xx++) {
			ClPlotColor c = pixel(with, xx, yy);
			green = c.g > 0.9 && c.r < 0.1 && c.b < 0.1;
		}
	g_assert_true(green);
	cairo_surface_destroy(s);
	cairo_surface_destroy(without);
	cairo_surface_destroy(with);
	cl_plot_figure_free(f);
	g_assert_cmpint(d.destroyed, ==, 1);
}

static void test_dark_theme(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 1);
	cl_plot_figure_set_theme(f, CL_PLOT_THEME_DARK);
	cl_plot_panel_add_line(cl_plot_figure_panel(f, 0, 0), "a", (double[]){0, 1}, (double[]){0, 1}, 2);
	cairo_surface_t *s = render(f, 200, 150);
	ClPlotColor corner = pixel(s, 1, 1);
	g_assert_cmpfloat(corner.r + corner.g + corner.b, <, 0.6);
	cairo_surface_destroy(s);
	cl_plot_figure_free(f);
}

static ClPlotFigure *sample_figure(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	cl_plot_figure_set_title(f, "ContactLab export check");
	double x[50], y[50], grid[16];
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		y[i] = exp(-i / 10.0);
	}
	for (int i = 0; i < 16; i++)
		grid[i] = sin(i);
	ClPlotPanel *p = cl_plot_figure_panel(f, 0, 0);
	cl_plot_panel_set_y_axis(p, "loss", CL_PLOT_SCALE_LOG);
	cl_plot_panel_add_line(p, "impulse", x, y, 50);
	cl_plot_panel_add_hline(p, 0.05, "optimum");
	cl_plot_panel_add_heatmap(cl_plot_figure_panel(f, 0, 1), 4, 4, grid, 0, 1, 0, 1);
	return f;
}

static char *read_file(const char *path, gsize *length)
{
	char *data = NULL;
	g_assert_true(g_file_get_contents(path, &data, length, NULL));
	return data;
}

static void assert_no_temporaries(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	const char *name;
	while ((name = g_dir_read_name(d)))
		g_assert_false(name[0] == '.');
	g_dir_close(d);
}

static void test_export(void)
{
	char *dir = g_dir_make_tmp("test-plots-XXXXXX", NULL);
	g_assert_nonnull(dir);
	ClPlotFigure *f = sample_figure();
	GError *error = NULL;
	char *png = g_build_filename(dir, "f.png", NULL), *svg = g_build_filename(dir, "f.svg", NULL);
	char *pdf = g_build_filename(dir, "f.pdf", NULL);
	g_assert_true(cl_plot_figure_export(f, png, CL_PLOT_FORMAT_AUTO, 300, 150, 144, &error));
	g_assert_no_error(error);
	g_assert_true(cl_plot_figure_export(f, svg, CL_PLOT_FORMAT_AUTO, 300, 150, 0, &error));
	g_assert_true(cl_plot_figure_export(f, pdf, CL_PLOT_FORMAT_AUTO, 300, 150, 0, &error));
	g_assert_no_error(error);
	gsize length;
	char *data = read_file(png, &length);
	g_assert_cmpmem(data, 8, "\x89PNG\r\n\x1a\n", 8);
	g_free(data);
	cairo_surface_t *image = cairo_image_surface_create_from_png(png);
	g_assert_cmpint(cairo_image_surface_get_width(image), ==, 600); /* 300 pt at 144 dpi */
	g_assert_cmpint(cairo_image_surface_get_height(image), ==, 300);
	cairo_surface_destroy(image);
	data = read_file(svg, &length);
	g_assert_cmpuint(length, >, 1000);
	g_assert_nonnull(strstr(data, "<svg"));
	g_assert_nonnull(strstr(data, "</svg>"));
	g_free(data);
	data = read_file(pdf, &length);
	g_assert_cmpuint(length, >, 1000);
	g_assert_cmpmem(data, 5, "%PDF-", 5);
	g_assert_cmpmem(data + length - 6, 6, "%%EOF\n", 6);
	g_free(data);
	char *pdftotext = g_find_program_in_path("pdftotext");
	if (pdftotext) {
		char *argv[] = {pdftotext, pdf, "-", NULL};
		char *out = NULL;
		int status = 0;
		g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, NULL));
		g_assert_nonnull(strstr(out, "ContactLab export check"));
		g_assert_nonnull(strstr(out, "optimum"));
		g_free(out);
		g_free(pdftotext);
	} else {
		g_test_message("pdftotext not installed: PDF text not checked");
	}
	/* failures leave nothing behind and never touch an existing file */
	g_assert_true(g_file_set_contents(png, "old", -1, NULL));
	char *missing = g_build_filename(dir, "no-such-dir", "f.png", NULL);
	g_assert_false(cl_plot_figure_export(f, missing, CL_PLOT_FORMAT_AUTO, 300, 150, 144, &error));
	g_assert_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_WRITE);
	g_clear_error(&error);
	g_assert_false(cl_plot_figure_export(f, png, CL_PLOT_FORMAT_PNG, 300, 150, -1, &error));
	g_assert_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_FORMAT);
	g_clear_error(&error);
	char *unknown = g_build_filename(dir, "f.bmp", NULL);
	g_assert_false(cl_plot_figure_export(f, unknown, CL_PLOT_FORMAT_AUTO, 300, 150, 144, &error));
	g_assert_error(error, CL_PLOT_ERROR, CL_PLOT_ERROR_FORMAT);
	g_clear_error(&error);
	data = read_file(png, &length);
	g_assert_cmpstr(data, ==, "old");
	g_free(data);
	assert_no_temporaries(dir);
	g_assert_false(g_file_test(unknown, G_FILE_TEST_EXISTS));
	for (const char *const *name = (const char *const[]){png, svg, pdf, NULL}; *name; name++)
		g_unlink(*name);
	g_rmdir(dir);
	g_free(unknown);
	g_free(missing);
	g_free(png);
	g_free(svg);
	g_free(pdf);
	g_free(dir);
	cl_plot_figure_free(f);
}

/* Where the legend entry of group lies in the last draw, by asking the pick. */
static gboolean find_legend_entry(ClPlotFigure *f, int width, int height, const char *group, double *px, double *py)
{
	for (int y = 0; y < height; y++)
		for (int x = 0; x < width; x++) {
			const char *picked = cl_plot_figure_legend_pick(f, x + 0.5, y + 0.5);
			if (picked && strcmp(picked, group) == 0) {
				*px = x + 0.5;
				*py = y + 0.5;
				return TRUE;
			}
		}
	return FALSE;
}

/* A legend entry is found by its point and names its group; hiding a group
 * takes its curves out of every panel, labelled or not, and leaves its
 * legend entry in place (so a second click can bring it back). */
static void test_legend_pick_and_hide(void)
{
	const int width = 480, height = 300;
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	cl_plot_figure_set_legend(f, CL_PLOT_LEGEND_BELOW);
	ClPlotColor red = {0.8, 0, 0, 1}, blue = {0, 0, 1, 1};
	for (int c = 0; c < 2; c++) {
		ClPlotPanel *p = cl_plot_figure_panel(f, 0, c);
		cl_plot_panel_set_x_range(p, 0, 1);
		cl_plot_panel_set_y_range(p, 0, 1);
		cl_plot_panel_set_grid(p, false);
		/* the left panel's curves are labelled; the right one's "a" curve is only grouped */
		ClPlotSeries *a = cl_plot_panel_add_line(p, c == 0 ? "a" : NULL, (double[]){0, 1}, (double[]){0.5, 0.5}, 2);
		cl_plot_series_set_group(a, "a");
		cl_plot_series_set_color(a, red);
		cl_plot_series_set_width(a, 3);
		ClPlotSeries *b = cl_plot_panel_add_line(p, c == 0 ? "b" : NULL, (double[]){0, 1}, (double[]){0.25, 0.25}, 2);
		cl_plot_series_set_group(b, "b");
		cl_plot_series_set_color(b, blue);
		cl_plot_series_set_width(b, 3);
	}
	cairo_surface_t *shown = render(f, width, height);
	double ax, ay, bx, by;
	g_assert_true(find_legend_entry(f, width, height, "a", &ax, &ay));
	g_assert_true(find_legend_entry(f, width, height, "b", &bx, &by));
	g_assert_null(cl_plot_figure_legend_pick(f, 1, 1));
	double px, py;
	for (int c = 0; c < 2; c++) {
		g_assert_true(cl_plot_figure_data_to_device(f, 0, c, 0.5, 0.5, &px, &py));
		g_assert_cmpfloat(pixel(shown, px, py).r, >, 0.5);
	}

	cl_plot_figure_set_group_hidden(f, "a", true);
	cairo_surface_t *hidden = render(f, width, height);
	for (int c = 0; c < 2; c++) {
		g_assert_true(cl_plot_figure_data_to_device(f, 0, c, 0.5, 0.5, &px, &py));
		assert_color(pixel(hidden, px, py), 1, 1, 1, 0.01); /* a is gone from both panels */
		g_assert_true(cl_plot_figure_data_to_device(f, 0, c, 0.5, 0.25, &px, &py));
		assert_color(pixel(hidden, px, py), 0, 0, 1, 0.05); /* b stays */
	}
	const char *still = cl_plot_figure_legend_pick(f, ax, ay);
	g_assert_cmpstr(still, ==, "a");

	cl_plot_figure_set_group_hidden(f, "a", false);
	cairo_surface_t *again = render(f, width, height);
	g_assert_true(same_pixels(shown, again));
	cairo_surface_destroy(shown);
	cairo_surface_destroy(hidden);
	cairo_surface_destroy(again);
	cl_plot_figure_free(f);
}

/* A panel of a hidden group leaves its cell empty, and nothing is picked there. */
static void test_panel_group_hidden(void)
{
	ClPlotFigure *f = cl_plot_figure_new(1, 2);
	const char *groups[2] = {"a", "b"};
	for (int c = 0; c < 2; c++) {
		ClPlotPanel *p = cl_plot_figure_panel(f, 0, c);
		cl_plot_panel_add_heatmap(p, 2, 2, (double[]){1, 2, 3, 4}, 0, 1, 0, 1);
		cl_plot_panel_set_group(p, groups[c]);
	}
	cairo_surface_t *shown = render(f, 400, 240);
	double ax, ay, bx, by;
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 0, 0.25, 0.25, &ax, &ay));
	g_assert_true(cl_plot_figure_data_to_device(f, 0, 1, 0.25, 0.25, &bx, &by));
	ClPlotColor a = pixel(shown, ax, ay);
	g_assert_false(fabs(a.r - 1) < 0.01 && fabs(a.g - 1) < 0.01 && fabs(a.b - 1) < 0.01);
	g_assert_true(cl_plot_figure_pick(f, ax, ay, NULL, NULL, NULL, NULL));

	cl_plot_figure_set_group_hidden(f, "a", true);
	cairo_surface_t *hidden = render(f, 400, 240);
	assert_color(pixel(hidden, ax, ay), 1, 1, 1, 0.01);
	g_assert_false(cl_plot_figure_pick(f, ax, ay, NULL, NULL, NULL, NULL));
	ClPlotColor b0 = pixel(shown, bx, by), b1 = pixel(hidden, bx, by);
	assert_color(b1, b0.r, b0.g, b0.b, 0.0); /* the other panel is untouched */
	cairo_surface_destroy(shown);
	cairo_surface_destroy(hidden);
	cl_plot_figure_free(f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/plots/ticks", test_ticks);
	g_test_add_func("/plots/tick-labels", test_tick_labels);
	g_test_add_func("/plots/colormaps", test_colormaps);
	g_test_add_func("/plots/heatmap-cells", test_heatmap_cells);
	g_test_add_func("/plots/heatmap-log-axis", test_heatmap_log_axis);
	g_test_add_func("/plots/line-geometry", test_line_geometry);
	g_test_add_func("/plots/series-append", test_series_append);
	g_test_add_func("/plots/log-axis", test_log_axis_geometry);
	g_test_add_func("/plots/small-multiples", test_small_multiples);
	g_test_add_func("/plots/dark-theme", test_dark_theme);
	g_test_add_func("/plots/drawing-panel", test_drawing_panel);
	g_test_add_func("/plots/legend-pick-and-hide", test_legend_pick_and_hide);
	g_test_add_func("/plots/panel-group-hidden", test_panel_group_hidden);
	g_test_add_func("/plots/histogram-geometry", test_histogram_geometry);
	g_test_add_func("/plots/export", test_export);
	g_test_add_func("/plots/atomic-file", test_atomic_file);
	return g_test_run();
}
