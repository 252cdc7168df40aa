/* Shared pieces of the subcommands: option parsing, scenes, backends, output. */
#pragma once

#include "contactlab/sim.h"
#include "figures.h"
#include "plot.h"

#include <glib.h>

/* Exit statuses; an interrupted command exits with 128 + the signal (130 for Ctrl-C). */
enum { CL_EXIT_OK = 0, CL_EXIT_FAILED = 1, CL_EXIT_BAD_INPUT = 2 };

/* Prints "contactlab: MESSAGE" on stderr (over the progress line). */
void cl_cli_message(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* cl_cli_message, returning status. */
int cl_cli_fail(int status, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Around one command (cli.c): every file it writes is staged and appears
 * at the end, all together, when the command did not fail on bad input,
 * stdout took its output and every file could be written; else none
 * (plots/atomic-file.h, the batch). Meanwhile Ctrl-C (SIGINT, SIGTERM,
 * SIGHUP) ends the process at once, removing the staged files, and on a
 * terminal stderr shows the command's progress once it has run a second.
 * SIGPIPE is ignored, so a closed stdout is a write error with a message.
 * end returns the command's exit status, 1 when writing failed. */
void cl_cli_session_begin(const char *command);
int cl_cli_session_end(int status);

/* What the progress line shows ("heatmap: cells", 3, 64 → "heatmap: cells
 * 3/64, 5 s"; total 0: no count). Any thread, any rate. */
void cl_cli_progress(const char *task, int done, int total);

/* Parses a subcommand's options (argv[0] is the subcommand). On success
 * *positional holds the remaining arguments (free with g_strfreev). Every
 * subcommand also takes --memory-limit SIZE (machine.h). Every FILE option
 * (G_OPTION_ARG_FILENAME) names an output: one that is the same file as an
 * argument (the SCENE read) or as another output is refused, before
 * anything is computed. */
gboolean cl_cli_parse_options(const char *command, const char *parameter_string, const char *summary,
							  GOptionEntry *entries, int argc, char **argv, char ***positional, GError **error);

/* The one rule for numeric option values: TEXT of OPTION must be a whole
 * number in [min, max] (resp. a finite number in [min, max], above min when
 * min_excluded), else an error naming the option (exit status 2). A NULL
 * text (option not given) leaves *out as it is. */
gboolean cl_cli_whole_option(const char *option, const char *text, gint64 min, gint64 max, int *out, GError **error);
gboolean cl_cli_whole_option64(const char *option, const char *text, gint64 min, gint64 max, gint64 *out,
							   GError **error);
gboolean cl_cli_real_option(const char *option, const char *text, double min, gboolean min_excluded, double max,
							double *out, GError **error);

/* The hint after a run that stopped at its memory budget. */
void cl_cli_memory_note(void);

/* Checks that the arguments left after the options are exactly one SCENE. */
gboolean cl_cli_one_scene(const char *command, char **positional, GError **error);

/* If error is set: reports it like cl_cli_fail with status, and frees it. */
void cl_cli_report(GError *error, int status);

/* The preset ids, sorted, comma-separated (free with g_free). */
char *cl_cli_preset_list(void);

/* SCENE is a file path or a preset id; the settings (--set) are applied and
 * the result validated. The file it reads must not be an output (see
 * cl_cli_parse_options). */
ClScene *cl_cli_load_scene(const char *scene_arg, char **settings, GError **error);

/* Backend ids from repeated and/or comma-separated --backend options; all
 * registered backends when ids is NULL or empty. */
GArray *cl_cli_backends(char **ids, GError **error);
/* Of all backends (ids NULL or empty), leaves out those that cannot model
 * the scene (cl_backend_can_run), saying so on stderr; a backend asked for
 * by name stays and reports unsupported. */
void cl_cli_leave_out_unsupported(GArray *backends, char **ids, const ClScene *scene);

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
/* --width and --height PT (NULL: not given, *width and *height kept). */
gboolean cl_cli_figure_size_options(const char *width_text, const char *height_text, double *width, double *height,
									GError **error);
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
	char *samples_text, *seed_text; /* as given, read by cl_cli_sampling_check */
	int samples;  /* −1 when not given */
	gint64 seed;  /* −1 when not given */
} ClCliSampling;

#define CL_CLI_SAMPLING_INIT {.samples = -1, .seed = -1}
#define CL_CLI_SAMPLES_DEFAULT 100
#define CL_CLI_SEED_DEFAULT 1

#define CL_CLI_SAMPLING_OPTIONS(o)                                                                                 \
	{"sigma", 0, 0, G_OPTION_ARG_STRING, &(o).sigma,                                                               \
	 "Noise scale of the smoothing, in each parameter's unit (one for all, or one per parameter)", "S[,S...]"},   \
		{"samples", 0, 0, G_OPTION_ARG_STRING, &(o).samples_text, "Samples N of the smoothing (default 100)", "N"},  \
		{"seed", 0, 0, G_OPTION_ARG_STRING, &(o).seed_text, "Seed of the smoothing's samples (default 1)", "K"}

/* Reads --samples (2 … 1000000) and --seed (≥ 0) if given (cl_cli_whole_option's rule). */
gboolean cl_cli_sampling_check(ClCliSampling *o, GError **error);
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
