/* Heatmap and figure subcommands, and the figures of simulate and optimize:
 * their numbers equal single gradients and optimize runs, the CLI draws what
 * the in-process builders draw (the GUI's path), files are complete, bad
 * input is refused clearly. */
#include "agreement.h"
#include "backend-style.h"
#include "cli-run.h"
#include "figures.h"
#include "numbers.h"
#include "scene-figure.h"
#include "scene-file.h"
#include "smoothing-data.h"

#include <glib.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static char *tmp_dir;

static int run(const char *const *args, char **out, char **err)
{
	return cl_test_run_cli(tmp_dir, args, out, err);
}

static char *path_in_tmp(const char *name)
{
	return g_build_filename(tmp_dir, name, NULL);
}

static double parse_number(const char *text)
{
	if (strcmp(text, "nan") == 0)
		return NAN;
	char *end;
	double v = g_ascii_strtod(text, &end);
	g_assert_true(*end == '\0');
	return v;
}

/* The adjoint of one parameter from `contactlab gradients --format csv`. */
static double gradients_value(const char *backend, double vx, double vy, const char *parameter)
{
	char set_x[64], set_y[64];
	g_snprintf(set_x, sizeof set_x, "ball.velocity.x=%s", cl_format_number(vx).text);
	g_snprintf(set_y, sizeof set_y, "ball.velocity.y=%s", cl_format_number(vy).text);
	char *out = NULL, *err = NULL;
	const char *args[] = {"gradients", "task2-ground-wall", "--backend", backend, "--format", "csv",
						  "--set",     set_x,               "--set",     set_y,   NULL};
	g_assert_cmpint(run(args, &out, &err), !=, 2);
	double value = NAN;
	bool found = false;
	char ***rows = cl_csv_parse(out);
	for (char ***row = rows; *row; row++)
		if (g_strv_length(*row) >= 3 && strcmp((*row)[0], backend) == 0 && strcmp((*row)[1], parameter) == 0) {
			value = parse_number((*row)[2]);
			found = true;
		}
	g_assert_true(found);
	cl_csv_free(rows);
	g_free(out);
	g_free(err);
	return value;
}

static void test_heatmap_matches_gradients(void)
{
	char *csv = path_in_tmp("heat.csv");
	char *out = NULL, *err = NULL;
	const char *args[] = {"heatmap",  "task2-ground-wall",        "--x",       "ball.velocity.x:3:7:5",
						  "--y",      "ball.velocity.y:-6:-4:3",  "--backend", "exact",
						  "--backend", "impulse-toi,compliant-warp", "--quantity", "grad-x",
						  "--csv",    csv,                         NULL};
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	char *text = NULL;
	g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
	char ***rows = cl_csv_parse(text);
	g_assert_cmpstr(rows[0][0], ==, "x");
	g_assert_cmpstr(rows[0][4], ==, "value");
	int count = 0;
	for (char ***row = rows + 1; *row; row++)
		count++;
	g_assert_cmpint(count, ==, 3 * 5 * 3);
	/* sampled cells: corners and the middle of each backend's grid */
	int checked = 0;
	for (char ***row = rows + 1; *row; row++) {
		double x = parse_number((*row)[0]), y = parse_number((*row)[1]);
		bool sample = (x == 3 || x == 5 || x == 7) && (y == -6 || y == -4);
		if (!sample)
			continue;
		g_assert_cmpstr((*row)[3], ==, "grad-x");
		double want = gradients_value((*row)[2], x, y, "ball.velocity.x");
		double got = parse_number((*row)[4]);
		if (!(got == want || (isnan(got) && isnan(want))))
			g_error("%s at (%g, %g): heatmap %.17g, gradients %.17g", (*row)[2], x, y, got, want);
		checked++;
	}
	g_assert_cmpint(checked, ==, 3 * 6);
	cl_csv_free(rows);
	g_free(text);
	g_free(out);
	g_free(err);
	g_free(csv);
}

static int cmp_double(gconstpointer a, gconstpointer b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static cairo_surface_t *load_png(const char *path)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
	return s;
}

static bool same_pixels(cairo_surface_t *a, cairo_surface_t *b)
{
	int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
	if (w != cairo_image_surface_get_width(b) || h != cairo_image_surface_get_height(b))
		return false;
	for (int y = 0; y < h; y++)
		if (memcmp(cairo_image_surface_get_data(a) + y * cairo_image_surface_get_stride(a),
				   cairo_image_surface_get_data(b) + y * cairo_image_surface_get_stride(b), (size_t)w * 4) != 0)
			return false;
	return true;
}

/* The GUI builds its heatmap figure in-process from cl_sweep and cl_figure_heatmap:
 * the CLI's PNG must be the same picture. */
static void test_cli_draws_what_the_builder_draws(void)
{
	char *png = path_in_tmp("cli.png"), *svg = path_in_tmp("cli.svg"), *pdf = path_in_tmp("cli.pdf");
	char *out = NULL, *err = NULL;
	const char *args[] = {"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:2:8:12", "--y", "ball.velocity.y:-7:-3:10",
						  "--backend", "exact,impulse,impulse-toi", "--threads", "2", "--png", png, "--svg", svg,
						  "--pdf", pdf, NULL};
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	g_assert_cmpstr(out, ==, ""); /* no CSV on stdout when a figure is asked for */

	GError *error = NULL;
	ClScene *scene = cl_preset_load("task2-ground-wall", &error);
	g_assert_no_error(error);
	int backends[] = {cl_backend_find("exact"), cl_backend_find("impulse"), cl_backend_find("impulse-toi")};
	char message[CL_MESSAGE_MAX];
	ClSweepDef def = {.x = {.min = 2, .max = 8, .count = 12}, .y = {.min = -7, .max = -3, .count = 10},
					  .backends = backends, .backend_count = 3, .threads = 1};
	g_assert_true(cl_param_parse(scene, "ball.velocity.x", &def.x.param, message, sizeof message));
	g_assert_true(cl_param_parse(scene, "ball.velocity.y", &def.y.param, message, sizeof message));
	ClSweepCell *cells = g_new(ClSweepCell, cl_sweep_cell_count(&def));
	g_assert_true(cl_sweep(scene, &def, cells, NULL));
	ClPlotFigure *figure = cl_figure_heatmap(scene, &def, cells, CL_SWEEP_LOSS, 0);
	double w, h;
	cl_figure_heatmap_size(figure, &w, &h);
	char *mine = path_in_tmp("builder.png");
	g_assert_true(cl_plot_figure_export(figure, mine, CL_PLOT_FORMAT_PNG, w, h, CL_FIGURE_DPI, &error));
	cairo_surface_t *a = load_png(png), *b = load_png(mine);
	g_assert_cmpint(cairo_image_surface_get_width(a), ==, (int)ceil(w * CL_FIGURE_DPI / 72));
	g_assert_true(same_pixels(a, b));
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);

	char *data = NULL;
	gsize length = 0;
	g_assert_true(g_file_get_contents(svg, &data, &length, NULL));
	g_assert_nonnull(strstr(data, "</svg>"));
	g_free(data);
	g_assert_true(g_file_get_contents(pdf, &data, &length, NULL));
	g_assert_cmpmem(data, 5, "%PDF-", 5);
	g_assert_cmpmem(data + length - 6, 6, "%%EOF\n", 6);
	g_free(data);
	cl_plot_figure_free(figure);

	/* the sweep drawn beside a scene without its ball (a load while it ran): no star */
	ClScene *empty = cl_preset_load("empty", &error);
	g_assert_no_error(error);
	g_assert_false(cl_param_fits(empty, &def.x.param));
	figure = cl_figure_heatmap(empty, &def, cells, CL_SWEEP_LOSS, 0);
	g_assert_nonnull(figure);
	cl_plot_figure_free(figure);
	cl_scene_free(empty);
	g_free(cells);
	cl_scene_free(scene);
	g_free(mine);
	g_free(png);
	g_free(svg);
	g_free(pdf);
	g_free(out);
	g_free(err);
}

/* cl_figure_learn, which Figures 2, 4 and 5 use, against `contactlab optimize --csv`. */
static void test_learning_matches_optimize(void)
{
	GError *error = NULL;
	ClScene *scene = cl_preset_load("task2-ground-wall", &error);
	g_assert_no_error(error);
	scene->optimize.iterations = 40;
	ClParam vx;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(scene, "ball.velocity.x", &vx, message, sizeof message));
	const char *ids[] = {"exact", "impulse", "compliant-warp", "lcp-nimble"};
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
		int backend = cl_backend_find(ids[i]);
		ClLearningCurve curve;
		cl_figure_learn(scene, backend, &vx, &curve);
		if (curve.status.code == CL_STATUS_UNSUPPORTED) {
			g_test_message("%s: not implemented, skipped", ids[i]);
			cl_learning_curve_clear(&curve);
			continue;
		}
		g_assert_cmpint(curve.iterations, ==, 40);
		char *csv = path_in_tmp("learn.csv");
		char *out = NULL, *err = NULL;
		const char *args[] = {"optimize", "task2-ground-wall", "--backend", ids[i], "--iters", "40", "--csv", csv, NULL};
		g_assert_cmpint(run(args, &out, &err), ==, 0);
		char *text = NULL;
		g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
		char ***rows = cl_csv_parse(text);
		g_assert_cmpstr(rows[0][1], ==, "loss");
		g_assert_cmpstr(rows[0][2], ==, "ball.velocity.x");
		for (int it = 0; it < 40; it += 39) {
			char **row = rows[1 + it];
			g_assert_cmpint((int)parse_number(row[0]), ==, it);
			g_assert_cmpfloat(parse_number(row[1]), ==, curve.loss[it]);
			g_assert_cmpfloat(parse_number(row[2]), ==, curve.tracked[it]);
		}
		cl_csv_free(rows);
		g_free(text);
		g_free(out);
		g_free(err);
		g_free(csv);
		cl_learning_curve_clear(&curve);
	}
	cl_scene_free(scene);
}

static void test_figure_command(void)
{
	char *png = path_in_tmp("figure4.png");
	char *out = NULL, *err = NULL;
	const char *args[] = {"figure", "4", "--png", png, "--dpi", "72", NULL};
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	cairo_surface_t *s = load_png(png);
	g_assert_cmpint(cairo_image_surface_get_width(s), ==, (int)CL_FIGURE_WIDTH);
	cairo_surface_destroy(s);
	g_free(out);
	g_free(err);
	const char *bad[] = {"figure", "3", "--png", png, NULL};
	g_assert_cmpint(run(bad, &out, &err), ==, 2);
	g_assert_nonnull(strstr(err, "expected 2, 4 or 5"));
	g_free(out);
	g_free(err);
	g_free(png);
}

typedef struct {
	const char *args[12];
	const char *message;
} BadHeatmap;

static void test_bad_heatmap_input(void)
{
	static const BadHeatmap cases[] = {
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:2", "--y", "ball.velocity.y:0:1:4"},
		 "--x ball.velocity.x:1:2: expected PARAM:MIN:MAX:N"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.speed:1:2:4", "--y", "ball.velocity.y:0:1:4"}, "--x ball.speed"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:two:4", "--y", "ball.velocity.y:0:1:4"},
		 "MAX \"two\" is not a finite number"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:2:0", "--y", "ball.velocity.y:0:1:4"},
		 "N \"0\" must be a whole number"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:2:4", "--y", "ball.velocity.x:0:1:4"},
		 "same parameter"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:2:4", "--y", "ball.velocity.y:0:1:4", "--quantity",
		  "speed"},
		 "--quantity speed"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:1:2:4"}, "--x and --y are required"},
	};
	char *csv = path_in_tmp("untouched.csv");
	g_assert_true(g_file_set_contents(csv, "keep", -1, NULL));
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const char *args[16] = {0};
		int n = 0;
		for (; cases[i].args[n]; n++)
			args[n] = cases[i].args[n];
		args[n++] = "--csv";
		args[n++] = csv;
		char *out = NULL, *err = NULL;
		g_assert_cmpint(run(args, &out, &err), ==, 2);
		if (!strstr(err, cases[i].message))
			g_error("case %zu: stderr \"%s\" lacks \"%s\"", i, err, cases[i].message);
		g_free(out);
		g_free(err);
	}
	char *text = NULL;
	g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "keep");
	g_free(text);
	g_free(csv);
}

/* A written figure is complete: the format's signature at the start, its end marker at the end. */
static void assert_figure_file(const char *path, ClPlotFormat format)
{
	char *data = NULL;
	gsize length = 0;
	g_assert_true(g_file_get_contents(path, &data, &length, NULL));
	g_assert_cmpuint(length, >, 16);
	if (format == CL_PLOT_FORMAT_PNG) {
		g_assert_cmpmem(data, 8, "\x89PNG\r\n\x1a\n", 8);
		g_assert_cmpmem(data + length - 8, 4, "IEND", 4);
	} else if (format == CL_PLOT_FORMAT_SVG) {
		g_assert_nonnull(strstr(data, "<svg"));
		g_assert_nonnull(strstr(data, "</svg>"));
	} else {
		g_assert_cmpmem(data, 5, "%PDF-", 5);
		g_assert_cmpmem(data + length - 6, 6, "%%EOF\n", 6);
	}
	g_free(data);
}

/* The PNG the CLI wrote and the one the in-process builder's figure exports to are the same picture. */
static void assert_same_png(const char *cli_png, ClPlotFigure *figure)
{
	char *mine = path_in_tmp("builder.png");
	GError *error = NULL;
	g_assert_true(cl_plot_figure_export(figure, mine, CL_PLOT_FORMAT_PNG, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT,
									   CL_FIGURE_DPI, &error));
	g_assert_no_error(error);
	cairo_surface_t *a = load_png(cli_png), *b = load_png(mine);
	g_assert_cmpint(cairo_image_surface_get_width(a), ==, (int)ceil(CL_FIGURE_WIDTH * CL_FIGURE_DPI / 72));
	g_assert_true(same_pixels(a, b));
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);
	g_free(mine);
}

static const char *const figure_options[] = {"--png", "--svg", "--pdf"};
static const char *const figure_names[] = {"figure.png", "figure.svg", "figure.pdf"};
static const ClPlotFormat figure_formats[] = {CL_PLOT_FORMAT_PNG, CL_PLOT_FORMAT_SVG, CL_PLOT_FORMAT_PDF};

static void test_simulate_figure(void)
{
	const char *ids[] = {"exact", "impulse", "compliant-warp"};
	char *png = path_in_tmp(figure_names[0]);
	for (int f = 0; f < 3; f++) {
		char *path = path_in_tmp(figure_names[f]);
		char *out = NULL, *err = NULL;
		const char *args[] = {"simulate", "task2-ground-wall", "--backend", "exact,impulse,compliant-warp",
							  figure_options[f], path, NULL};
		g_assert_cmpint(run(args, &out, &err), ==, 0);
		g_assert_cmpstr(out, ==, ""); /* no CSV on stdout when a figure is asked for */
		assert_figure_file(path, figure_formats[f]);
		g_free(out);
		g_free(err);
		g_free(path);
	}

	/* the window's drawing of the same Run data (Export All's canvas) */
	GError *error = NULL;
	ClScene *scene = cl_preset_load("task2-ground-wall", &error);
	g_assert_no_error(error);
	int backends[G_N_ELEMENTS(ids)];
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++)
		backends[i] = cl_backend_find(ids[i]);
	ClRunData *data = cl_run_data_new(scene, backends, (int)G_N_ELEMENTS(ids), NULL, 0);
	for (int i = 0; i < data->backend_count; i++)
		cl_run_data_compute_backend(data, scene, i);
	ClPlotFigure *figure = cl_scene_figure_new(scene, data);
	assert_same_png(png, figure);
	cl_plot_figure_free(figure);
	cl_run_data_unref(data);

	/* a figure of other runs is another picture: the comparison can fail */
	data = cl_run_data_new(scene, backends, 2, NULL, 0);
	for (int i = 0; i < data->backend_count; i++)
		cl_run_data_compute_backend(data, scene, i);
	figure = cl_scene_figure_new(scene, data);
	cl_run_data_unref(data);
	char *fewer = path_in_tmp("fewer.png");
	g_assert_true(cl_plot_figure_export(figure, fewer, CL_PLOT_FORMAT_PNG, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT,
									   CL_FIGURE_DPI, &error));
	cairo_surface_t *a = load_png(png), *b = load_png(fewer);
	g_assert_false(same_pixels(a, b));
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);
	cl_plot_figure_free(figure);
	g_free(fewer);
	cl_scene_free(scene);

	/* --csv still writes the trajectories alongside the figure */
	char *csv = path_in_tmp("paths.csv");
	char *out = NULL, *err = NULL;
	const char *both[] = {"simulate", "task2-ground-wall", "--backend", "exact", "--csv", csv, "--png", png,
						  "--dpi", "72", NULL};
	g_assert_cmpint(run(both, &out, &err), ==, 0);
	char *text = NULL;
	g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
	g_assert_true(g_str_has_prefix(text, "backend,step,time,ball,x,y,vx,vy\nexact,0,"));
	cairo_surface_t *small = load_png(png);
	g_assert_cmpint(cairo_image_surface_get_width(small), ==, (int)CL_FIGURE_WIDTH);
	cairo_surface_destroy(small);
	g_free(text);
	g_free(out);
	g_free(err);

	/* several formats at once: each file in its own format */
	char *svg = path_in_tmp("paths.svg"), *pdf = path_in_tmp("paths.pdf");
	const char *all[] = {"simulate", "task2-ground-wall", "--backend", "exact", "--png", png, "--svg", svg,
						 "--pdf", pdf, NULL};
	g_assert_cmpint(run(all, &out, &err), ==, 0);
	assert_figure_file(png, CL_PLOT_FORMAT_PNG);
	assert_figure_file(svg, CL_PLOT_FORMAT_SVG);
	assert_figure_file(pdf, CL_PLOT_FORMAT_PDF);
	g_free(out);
	g_free(err);
	g_free(svg);
	g_free(pdf);
	g_free(csv);
	g_free(png);
}

static void test_optimize_figure(void)
{
	char *png = path_in_tmp(figure_names[0]);
	for (int f = 0; f < 3; f++) {
		char *path = path_in_tmp(figure_names[f]);
		char *out = NULL, *err = NULL;
		const char *args[] = {"optimize", "task3-two-balls", "--backend", "exact", "--iters", "30",
							  figure_options[f], path, NULL};
		g_assert_cmpint(run(args, &out, &err), ==, 0);
		assert_figure_file(path, figure_formats[f]);
		g_free(out);
		g_free(err);
		g_free(path);
	}

	GError *error = NULL;
	ClScene *scene = cl_preset_load("task3-two-balls", &error);
	g_assert_no_error(error);
	scene->optimize.iterations = 30;
	ClLearningCurve curve;
	cl_figure_learn(scene, cl_backend_find("exact"), NULL, &curve);
	g_assert_cmpint(curve.iterations, ==, 30);
	ClPlotFigure *figure = cl_figure_learning(scene, &curve, 1);
	assert_same_png(png, figure);
	cl_plot_figure_free(figure);

	/* fewer iterations draw another curve: the comparison can fail */
	curve.iterations = 20;
	figure = cl_figure_learning(scene, &curve, 1);
	char *shorter = path_in_tmp("shorter.png");
	g_assert_true(cl_plot_figure_export(figure, shorter, CL_PLOT_FORMAT_PNG, CL_FIGURE_WIDTH, CL_FIGURE_HEIGHT,
									   CL_FIGURE_DPI, &error));
	cairo_surface_t *a = load_png(png), *b = load_png(shorter);
	g_assert_false(same_pixels(a, b));
	cairo_surface_destroy(a);
	cairo_surface_destroy(b);
	cl_plot_figure_free(figure);
	g_free(shorter);
	cl_learning_curve_clear(&curve);
	cl_scene_free(scene);
	g_free(png);
}

typedef struct {
	const char *args[12];
	const char *message;
} BadFigure;

/* A FILE whose extension is not the option's, or a bad --dpi: refused before anything is written. */
static void test_bad_figure_output(void)
{
	char *keep = path_in_tmp("keep.png"), *other = path_in_tmp("other.svg"), *jpg = path_in_tmp("plot.jpg");
	const BadFigure cases[] = {
		{{"simulate", "task2-ground-wall", "--png", keep, "--svg", jpg}, "expected a .svg file"},
		{{"simulate", "task2-ground-wall", "--png", jpg}, "expected a .png file"},
		{{"simulate", "task2-ground-wall", "--svg", keep}, "expected a .svg file"},
		{{"simulate", "task2-ground-wall", "--png", keep, "--dpi", "-5"}, "--dpi"},
		{{"optimize", "task3-two-balls", "--backend", "exact", "--pdf", other, "--png", keep}, "expected a .pdf file"},
		{{"heatmap", "task2-ground-wall", "--x", "ball.velocity.x:3:7:4", "--y", "ball.velocity.y:-7:-3:4", "--png",
		  keep, "--dpi", "5000"},
		 "--dpi"},
		{{"figure", "4", "--svg", other, "--dpi", "0"}, "--dpi"},
		{{"optimize", "task3-two-balls", "--backend", "exact", "--pdf", jpg}, "expected a .pdf file"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_assert_true(g_file_set_contents(keep, "keep", -1, NULL));
		char *out = NULL, *err = NULL;
		g_assert_cmpint(run(cases[i].args, &out, &err), ==, 2);
		if (!strstr(err, cases[i].message))
			g_error("case %zu: stderr \"%s\" lacks \"%s\"", i, err, cases[i].message);
		g_assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one message, one line */
		g_assert_cmpstr(out, ==, "");
		char *text = NULL;
		g_assert_true(g_file_get_contents(keep, &text, NULL, NULL));
		g_assert_cmpstr(text, ==, "keep");
		g_assert_false(g_file_test(other, G_FILE_TEST_EXISTS));
		g_assert_false(g_file_test(jpg, G_FILE_TEST_EXISTS));
		g_free(text);
		g_free(out);
		g_free(err);
	}
	g_free(keep);
	g_free(other);
	g_free(jpg);
}

static void remove_tree(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;
	while (d && (name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL);
		g_unlink(path);
		g_free(path);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(dir);
}

/* Every backend of the registry has a style of its own, the reference is
 * drawn in the theme's foreground (readable on both backgrounds) and no
 * two backends share a colour and dash. */
static void test_every_backend_has_a_style(void)
{
	for (int b = 0; b < cl_backend_count(); b++) {
		const ClBackendStyle *style = cl_backend_style(b);
		g_assert_nonnull(style);
		g_assert_cmpint(cl_plot_color_is_foreground(style->color), ==, cl_backend_is_reference(b));
		for (int c = 0; c < b; c++) {
			const ClBackendStyle *other = cl_backend_style(c);
			gboolean same_color = style->color.r == other->color.r && style->color.g == other->color.g &&
								  style->color.b == other->color.b;
			g_assert_false(same_color && style->dash == other->dash);
		}
	}
	ClPlotColor light = cl_backend_color(cl_backend_reference(), CL_PLOT_THEME_LIGHT);
	ClPlotColor dark = cl_backend_color(cl_backend_reference(), CL_PLOT_THEME_DARK);
	g_assert_cmpfloat(light.r, <, 0.3);
	g_assert_cmpfloat(dark.r, >, 0.7);
}

/* Every backend's colour, the agreement chips and the canvas's arrows and
 * targets reach WCAG AA (4.5:1) in the light and the dark theme, and every
 * backend opens its description with one short plain sentence. */
static void test_legible_in_both_themes(void)
{
	for (int theme = 0; theme < 2; theme++) {
		ClPlotThemeKind kind = theme ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT;
		ClPlotColor background = cl_theme_background(kind);
		for (int b = 0; b < cl_backend_count(); b++) {
			double ratio = cl_plot_contrast(cl_backend_color(b, kind), background);
			if (ratio < 4.5)
				g_test_fail_printf("%s on the %s background: %.2f:1", cl_backend_info(b)->id, theme ? "dark" : "light",
								   ratio);
		}
		/* the canvas's arrow and target colours go through the same function */
		ClPlotColor arrow = cl_plot_color_legible((ClPlotColor){0.10, 0.37, 0.71, 1}, background, 4.5);
		g_assert_cmpfloat(cl_plot_contrast(arrow, background), >=, 4.5);
	}
	for (int a = 0; a < CL_AGREEMENT_COUNT; a++)
		g_assert_cmpfloat(cl_plot_contrast(cl_agreement_foreground(a), cl_agreement_background(a)), >=, 4.5);
	for (int b = 0; b < cl_backend_count(); b++) {
		const char *intro = cl_backend_info(b)->intro;
		g_assert_nonnull(intro);
		g_assert_true(g_str_has_suffix(intro, "."));
		g_assert_null(strstr(intro, ". ")); /* one sentence */
		g_assert_cmpint((int)g_utf8_strlen(intro, -1), <=, 160);
	}
}

/* The Smoothing view's run on Task 1 (impulse and exact, σ = 0.05, N = 64,
 * seed 7): its table's CSV is `contactlab smooth`'s for the same inputs,
 * the α rule recomputed from the kept terms at the automatic γ is the one
 * cl_smooth applied, stepping γ walks the rule through its three cases, and
 * the histogram of the terms draws bars where the terms are. */
static void test_smoothing_view_data(void)
{
	GError *error = NULL;
	ClScene *scene = cl_preset_load("task1-bounce-once", &error);
	g_assert_no_error(error);
	const char *names[] = {"ball.position.y"};
	const double sigma[] = {0.05};
	const int backends[] = {cl_backend_find("exact"), cl_backend_find("impulse")};
	ClSmoothingRun *sr = cl_smoothing_run_prepare(scene, names, sigma, 1, 64, 7, FALSE, FALSE, backends, 2, &error);
	g_assert_no_error(error);
	g_assert_true(cl_smoothing_run_compute(sr, scene, 2, NULL, NULL, NULL, &error));
	g_assert_no_error(error);
	ClSmoothTable table = cl_smoothing_run_table(sr);
	GString *mine = cl_smooth_csv(&table);
	char *out = NULL, *err = NULL;
	const char *args[] = {"smooth",   "task1-bounce-once", "--param", "ball.position.y", "--sigma", "0.05",
						  "--samples", "64",              "--seed",  "7",               "--backend", "exact",
						  "--backend", "impulse",         "--format", "csv",             NULL};
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	g_assert_cmpstr(mine->str, ==, out);
	g_string_free(mine, TRUE);
	g_free(out);
	g_free(err);

	for (int slot = 0; slot < 2; slot++) {
		const ClSmoothResult *r = &sr->results[slot];
		ClSmoothAlpha a = cl_smoothing_alpha(sr, slot, 0);
		g_assert_cmpfloat(a.alpha, ==, r->alpha.alpha);
		g_assert_cmpfloat(a.epsilon, ==, r->alpha.epsilon);
		g_assert_cmpfloat(a.gamma, ==, r->alpha.gamma);
		g_assert_cmpint(a.rule, ==, r->alpha.rule);
		ClSmoothEstimate aobg = cl_smoothing_aobg(sr, slot, 0, a.alpha);
		g_assert_cmpfloat(aobg.mean, ==, r->gradient[0].aobg.mean);
	}
	/* impulse: FoBG +1 at every sample against ZoBG near −1, a gap of about 2 */
	ClSmoothAlpha a = cl_smoothing_alpha(sr, 1, 0);
	g_assert_cmpfloat(a.gap, >, 1);
	g_assert_cmpint(cl_smoothing_alpha(sr, 1, 0.5 * a.epsilon).rule, ==, CL_SMOOTH_ALPHA_ZOBG);
	g_assert_cmpfloat(cl_smoothing_alpha(sr, 1, 0.5 * a.epsilon).alpha, ==, 0);
	double weight = a.zobg_variance / (a.zobg_variance + a.fobg_variance);
	ClSmoothAlpha c = cl_smoothing_alpha(sr, 1, a.epsilon + 0.5 * weight * a.gap);
	g_assert_cmpint(c.rule, ==, CL_SMOOTH_ALPHA_CONSTRAINT);
	g_assert_cmpfloat_with_epsilon(c.alpha, 0.5 * weight, 1e-12);
	ClSmoothAlpha o = cl_smoothing_alpha(sr, 1, a.epsilon + 2 * weight * a.gap);
	g_assert_cmpint(o.rule, ==, CL_SMOOTH_ALPHA_OPTIMUM);
	g_assert_cmpfloat_with_epsilon(o.alpha, weight, 1e-12);
	/* the blend at that α: between FoBG (+1) and ZoBG */
	ClSmoothEstimate blend = cl_smoothing_aobg(sr, 1, 0, c.alpha);
	double want = c.alpha * sr->results[1].gradient[0].fobg.mean + (1 - c.alpha) * sr->results[1].gradient[0].zobg.mean;
	g_assert_cmpfloat_with_epsilon(blend.mean, want, 1e-12);

	/* the histogram: impulse's ZoBG terms, bars under the median term */
	GString *terms = cl_smoothing_terms_csv(sr, 1, 0);
	char ***rows = cl_csv_parse(terms->str);
	GArray *z = g_array_new(FALSE, FALSE, sizeof(double));
	for (char ***row = rows + 1; *row; row++) {
		double v = parse_number((*row)[1]);
		g_array_append_val(z, v);
		g_assert_cmpfloat(parse_number((*row)[2]), ==, 1.0); /* impulse's adjoint: +1 */
	}
	g_assert_cmpint((int)z->len, ==, 64);
	cl_csv_free(rows);
	g_string_free(terms, TRUE);
	g_array_sort(z, cmp_double);
	double median = g_array_index(z, double, 32);
	ClPlotFigure *figure = cl_figure_smoothing_terms(sr, 1, 0);
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 540, 360);
	cairo_t *cr = cairo_create(surface);
	cl_plot_figure_draw(figure, cr, 540, 360);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	double px, py, bx, by;
	g_assert_true(cl_plot_figure_data_to_device(figure, 0, 0, median, 0.5, &px, &py));
	g_assert_true(cl_plot_figure_data_to_device(figure, 0, 0, median, 1e6, &bx, &by)); /* above every bar */
	guint32 *data = (guint32 *)(void *)cairo_image_surface_get_data(surface);
	int stride = cairo_image_surface_get_stride(surface) / 4;
	guint32 under = data[(int)py * stride + (int)px] & 0xffffff, background = data[2 * stride + 2] & 0xffffff;
	g_assert_cmpuint(under, !=, background);
	cairo_surface_destroy(surface);
	cl_plot_figure_free(figure);
	g_array_unref(z);
	(void)bx, (void)by;
	cl_smoothing_run_free(sr);

	/* with the quadrature ground truth: the CSV of contactlab smooth --quadrature */
	sr = cl_smoothing_run_prepare(scene, names, sigma, 1, 16, 7, TRUE, TRUE, backends, 2, &error);
	g_assert_no_error(error);
	g_assert_true(cl_smoothing_run_compute(sr, scene, 2, NULL, NULL, NULL, &error));
	table = cl_smoothing_run_table(sr);
	mine = cl_smooth_csv(&table);
	g_assert_nonnull(strstr(mine->str, "exact,quadrature,ball.position.y,"));
	const char *quad_args[] = {"smooth",	  "task1-bounce-once", "--param", "ball.position.y", "--sigma",
							   "0.05",	  "--samples",		   "16",	  "--seed",			 "7",
							   "--antithetic", "--quadrature",	   "--backend", "exact",		 "--backend",
							   "impulse",	  "--format",		   "csv",	  NULL};
	g_assert_cmpint(run(quad_args, &out, &err), ==, 0);
	g_assert_cmpstr(mine->str, ==, out);
	g_string_free(mine, TRUE);
	g_free(out);
	g_free(err);
	cl_smoothing_run_free(sr);
	/* three parameters have no quadrature */
	const char *three[] = {"ball.position.x", "ball.position.y", "ball.velocity.x"};
	const double sigmas[] = {0.05, 0.05, 0.05};
	g_assert_null(cl_smoothing_run_prepare(scene, three, sigmas, 3, 16, 7, FALSE, TRUE, backends, 2, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "quadrature"));
	g_clear_error(&error);
	cl_scene_free(scene);
}

/* The canvas's playback frames: the kept layer under the balls plus the
 * balls drawn over it give the pixels of a whole frame drawn afresh, after
 * the time moves on and after each thing that keys the layer changes. */
static cairo_surface_t *frame(const ClSceneRenderInput *in, double pixels, ClSceneLayer *layer)
{
	int w = (int)ceil(in->view->width * pixels), h = (int)ceil(in->view->height * pixels);
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
	cairo_surface_set_device_scale(surface, pixels, pixels);
	cairo_t *cr = cairo_create(surface);
	if (layer)
		cl_scene_layer_render(layer, cr, in, pixels, 7);
	else
		cl_scene_render(cr, in);
	cairo_destroy(cr);
	return surface;
}

static void test_playback_layer_matches_full_frame(void)
{
	g_autoptr(GError) error = NULL;
	ClScene *scene = cl_preset_load("task3-two-balls", &error);
	g_assert_no_error(error);
	int backends[] = {cl_backend_find("exact"), cl_backend_find("impulse"), cl_backend_find("pbd-brax")};
	ClRunData *data = cl_run_data_new(scene, backends, 3, NULL, 0);
	for (int k = 0; k < 3; k++)
		cl_run_data_compute_backend(data, scene, k);
	gboolean *visible = g_new0(gboolean, (gsize)cl_backend_count()), *hidden = g_new0(gboolean, (gsize)cl_backend_count());
	for (int k = 0; k < 3; k++)
		visible[backends[k]] = TRUE;
	ClView view = {.scale = 120, .width = 240, .height = 160};
	cl_view_fit_scene(&view, scene, scene, data, visible, 24);
	ClSceneRenderInput in = {.scene = scene, .result_scene = scene, .result = data, .view = &view,
							 .time = 0, .trail = 0.15, .selection = {CL_PICK_NONE, -1},
							 .hover = {CL_PICK_NONE, -1}, .backend_visible = visible, .backend_hidden = hidden,
							 .handles = TRUE};
	ClSceneLayer *layer = cl_scene_layer_new();
	double pixels = 1;
	for (int change = 0; change < 8; change++) {
		double before = in.time;
		switch (change) {
		case 1: /* playback begins: the authored balls turn ghosts */
			in.time = 0.6 * scene->duration;
			break;
		case 2:
			cl_view_pan(&view, 13, -7);
			break;
		case 3:
			visible[backends[1]] = FALSE, hidden[backends[1]] = TRUE;
			break;
		case 4:
			in.hover = (ClPick){CL_PICK_BALL, 0};
			break;
		case 5:
			in.dark = TRUE;
			break;
		case 6: /* a HiDPI screen */
			pixels = 2;
			break;
		case 7: /* playback moves on: the layer is kept */
			in.time = 0.9 * scene->duration;
			break;
		}
		cairo_surface_t *full = frame(&in, pixels, NULL), *cached = frame(&in, pixels, layer);
		cairo_surface_flush(full), cairo_surface_flush(cached);
		g_assert_true(same_pixels(full, cached));
		if (change == 1) { /* the balls did move: the frames compared differ from the last */
			double now = in.time;
			in.time = before;
			cairo_surface_t *earlier = frame(&in, pixels, NULL);
			in.time = now;
			g_assert_false(same_pixels(full, earlier));
			cairo_surface_destroy(earlier);
		}
		cairo_surface_destroy(full);
		cairo_surface_destroy(cached);
	}
	cl_scene_layer_free(layer);
	g_free(visible);
	g_free(hidden);
	cl_run_data_unref(data);
	cl_scene_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("test-figures-XXXXXX", NULL);
	g_test_add_func("/figures/playback-layer-matches-full-frame", test_playback_layer_matches_full_frame);
	g_test_add_func("/figures/every-backend-has-a-style", test_every_backend_has_a_style);
	g_test_add_func("/figures/legible-in-both-themes", test_legible_in_both_themes);
	g_test_add_func("/figures/smoothing-view-data", test_smoothing_view_data);
	g_test_add_func("/figures/heatmap-matches-gradients", test_heatmap_matches_gradients);
	g_test_add_func("/figures/cli-draws-what-the-builder-draws", test_cli_draws_what_the_builder_draws);
	g_test_add_func("/figures/learning-matches-optimize", test_learning_matches_optimize);
	g_test_add_func("/figures/figure-command", test_figure_command);
	g_test_add_func("/figures/bad-heatmap-input", test_bad_heatmap_input);
	g_test_add_func("/figures/simulate-figure", test_simulate_figure);
	g_test_add_func("/figures/optimize-figure", test_optimize_figure);
	g_test_add_func("/figures/bad-figure-output", test_bad_figure_output);
	int status = g_test_run();
	remove_tree(tmp_dir);
	g_free(tmp_dir);
	return status;
}
