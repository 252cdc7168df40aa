/* Shared pieces of the subcommands: option parsing, scenes, backends, output. */
#pragma once

#include "contactlab/sim.h"
#include "figures.h"
#include "plot.h"

#include <glib.h>

/* Exit statuses. */
enum { CL_EXIT_OK = 0, CL_EXIT_FAILED = 1, CL_EXIT_BAD_INPUT = 2 };

/* Prints "contactlab: MESSAGE" on stderr and returns status. */
int cl_cli_fail(int status, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Parses a subcommand's options (argv[0] is the subcommand). On success
 * *positional holds the remaining arguments (free with g_strfreev). */
gboolean cl_cli_parse_options(const char *command, const char *parameter_string, const char *summary,
							  GOptionEntry *entries, int argc, char **argv, char ***positional, GError **error);

/* Checks that the arguments left after the options are exactly one SCENE. */
gboolean cl_cli_one_scene(const char *command, char **positional, GError **error);

/* If error is set: reports it like cl_cli_fail with status, and frees it. */
void cl_cli_report(GError *error, int status);

/* A progress line on stderr ("\r12/40 cells"), only on a terminal and at
 * most every 0.1 s (and at the end). */
typedef struct ClCliProgress {
	gboolean show;
	gint64 last;
} ClCliProgress;

ClCliProgress cl_cli_progress_new(void);
void cl_cli_progress_update(ClCliProgress *progress, int done, int total, const char *unit);

/* The preset ids, sorted, comma-separated (free with g_free). */
char *cl_cli_preset_list(void);

/* SCENE is a file path or a preset id; the settings (--set) are applied and
 * the result validated. */
ClScene *cl_cli_load_scene(const char *scene_arg, char **settings, GError **error);

/* Backend ids from repeated and/or comma-separated --backend options; all
 * registered backends when ids is NULL or empty. */
GArray *cl_cli_backends(char **ids, GError **error);

/* Checks --format against a NULL-terminated list. */
gboolean cl_cli_check_choice(const char *option, const char *value, const char *const *choices, GError **error);

/* The figure files a subcommand was asked for (--png, --svg, --pdf FILE,
 * any of them) and --dpi. Start from CL_CLI_FIGURE_FILES_INIT, put
 * CL_CLI_FIGURE_OPTIONS in the option table, free with
 * cl_cli_figure_files_clear. */
typedef struct ClCliFigureFiles {
	char *png, *svg, *pdf;
	double dpi;
} ClCliFigureFiles;

#define CL_CLI_FIGURE_FILES_INIT {.dpi = CL_FIGURE_DPI}

/* what: the figure, e.g. "the learning curve" */
#define CL_CLI_FIGURE_OPTIONS(files, what)                                                                         \
	{"png", 0, 0, G_OPTION_ARG_FILENAME, &(files).png, "Write " what " as PNG", "FILE"},                           \
		{"svg", 0, 0, G_OPTION_ARG_FILENAME, &(files).svg, "Write " what " as SVG", "FILE"},                       \
		{"pdf", 0, 0, G_OPTION_ARG_FILENAME, &(files).pdf, "Write " what " as PDF", "FILE"},                       \
		{"dpi", 0, 0, G_OPTION_ARG_DOUBLE, &(files).dpi, "PNG resolution (default 150)", "DPI"}

/* Checks, before anything is computed or written, that a FILE with an
 * extension has its option's and that --dpi is sensible. */
gboolean cl_cli_figure_files_check(const ClCliFigureFiles *files, GError **error);
gboolean cl_cli_figure_files_wanted(const ClCliFigureFiles *files);

/* Writes the figure, width × height points, to every file asked for. */
gboolean cl_cli_figure_files_write(const ClCliFigureFiles *files, ClPlotFigure *figure, double width, double height,
								   GError **error);
void cl_cli_figure_files_clear(ClCliFigureFiles *files);

/* The sampling options of the smoothing estimators (smooth, heatmap,
 * optimize): --sigma S[,S…], --samples N, --seed K. Start from
 * CL_CLI_SAMPLING_INIT, put CL_CLI_SAMPLING_OPTIONS in the option table,
 * free with cl_cli_sampling_clear. */
typedef struct ClCliSampling {
	char *sigma;
	int samples;  /* −1 when not given */
	gint64 seed;  /* −1 when not given */
} ClCliSampling;

#define CL_CLI_SAMPLING_INIT {.samples = -1, .seed = -1}
#define CL_CLI_SAMPLES_DEFAULT 100
#define CL_CLI_SEED_DEFAULT 1

#define CL_CLI_SAMPLING_OPTIONS(o)                                                                                 \
	{"sigma", 0, 0, G_OPTION_ARG_STRING, &(o).sigma,                                                               \
	 "Noise scale of the smoothing, in each parameter's unit (one for all, or one per parameter)", "S[,S...]"},   \
		{"samples", 0, 0, G_OPTION_ARG_INT, &(o).samples, "Samples N of the smoothing (default 100)", "N"},          \
		{"seed", 0, 0, G_OPTION_ARG_INT64, &(o).seed, "Seed of the smoothing's samples (default 1)", "K"}

/* Checks --samples (2 … 1000000) and --seed (≥ 0) if given. */
gboolean cl_cli_sampling_check(const ClCliSampling *o, GError **error);
gboolean cl_cli_sampling_given(const ClCliSampling *o);
/* --sigma as count positive numbers (one value is repeated). */
gboolean cl_cli_sampling_sigma(const ClCliSampling *o, int count, double *sigma, GError **error);
int cl_cli_sampling_samples(const ClCliSampling *o);
guint64 cl_cli_sampling_seed(const ClCliSampling *o);
void cl_cli_sampling_clear(ClCliSampling *o);

/* With check_only, a subcommand parses and validates its arguments (the
 * scene and its --set values included) and stops there: nothing is
 * computed, printed on stdout or written. */
int cl_cmd_gradients(int argc, char **argv, gboolean check_only);
int cl_cmd_optimize(int argc, char **argv, gboolean check_only);
int cl_cmd_simulate(int argc, char **argv, gboolean check_only);
int cl_cmd_backends(int argc, char **argv, gboolean check_only);
int cl_cmd_reproduce(int argc, char **argv, gboolean check_only);
int cl_cmd_bench(int argc, char **argv, gboolean check_only);
int cl_cmd_convergence(int argc, char **argv, gboolean check_only);
int cl_cmd_lesson(int argc, char **argv, gboolean check_only);
int cl_cmd_smooth(int argc, char **argv, gboolean check_only);
