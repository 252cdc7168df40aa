/* Shared pieces of the subcommands. */
#define _DEFAULT_SOURCE /* sigtimedwait, pthread_sigmask */

#include "cli-common.h"

#include "atomic-file.h"
#include "machine.h"
#include "numbers.h"
#include "scene-file.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- the session
 *
 * One command per process: its state is the process's. */

static struct {
	GMutex lock; /* the progress fields and stderr */
	gboolean tty;
	gint64 start;
	char *task;
	int done, total;
	int shown; /* length of the progress line on stderr, 0 when none */
	GPtrArray *outputs; /* the FILE options' paths, for cl_cli_load_scene */
} session;

/* Removes the progress line (session.lock held). */
static void clear_progress(void)
{
	if (!session.shown)
		return;
	fprintf(stderr, "\r%*s\r", session.shown, "");
	fflush(stderr);
	session.shown = 0;
}

static void show_progress(void)
{
	gint64 now = g_get_monotonic_time();
	if (!session.tty || now - session.start < G_USEC_PER_SEC)
		return;
	char line[256];
	int seconds = (int)((now - session.start) / G_USEC_PER_SEC);
	if (session.total > 0)
		g_snprintf(line, sizeof line, "contactlab: %s %d/%d, %d s", session.task, session.done, session.total,
				   seconds);
	else
		g_snprintf(line, sizeof line, "contactlab: %s, %d s", session.task, seconds);
	int length = (int)g_utf8_strlen(line, -1);
	fprintf(stderr, "\r%s%*s", line, session.shown > length ? session.shown - length : 0, "");
	fflush(stderr);
	session.shown = MAX(length, session.shown);
}

void cl_cli_progress(const char *task, int done, int total)
{
	g_mutex_lock(&session.lock);
	if (!session.task || strcmp(session.task, task) != 0) {
		g_free(session.task);
		session.task = g_strdup(task);
	}
	session.done = done;
	session.total = total;
	g_mutex_unlock(&session.lock);
}

static void say(const char *format, va_list args)
{
	char *message = g_strdup_vprintf(format, args);
	g_mutex_lock(&session.lock);
	clear_progress();
	fprintf(stderr, "contactlab: %s\n", message);
	g_mutex_unlock(&session.lock);
	g_free(message);
}

void cl_cli_message(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	say(format, args);
	va_end(args);
}

int cl_cli_fail(int status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	say(format, args);
	va_end(args);
	return status;
}

/* The signals that end a command; blocked in every thread, taken by the watcher. */
static void interrupt_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* Waits for an interrupt, drawing the progress line meanwhile. An
 * interrupt removes the staged output files and ends the process. */
static void *watch(void *data)
{
	(void)data;
	sigset_t set;
	interrupt_signals(&set);
	const struct timespec tick = {0, 250 * 1000 * 1000};
	for (;;) {
		int signal = sigtimedwait(&set, NULL, &tick);
		g_mutex_lock(&session.lock);
		if (signal > 0) {
			clear_progress();
			cl_atomic_batch_interrupt();
			static const char message[] = "contactlab: interrupted; no output file was written\n";
			if (write(STDERR_FILENO, message, sizeof message - 1) < 0) {
				/* nothing more to say */
			}
			_exit(128 + signal);
		}
		show_progress();
		g_mutex_unlock(&session.lock);
	}
	return NULL;
}

void cl_cli_session_begin(const char *command)
{
	signal(SIGPIPE, SIG_IGN);
	session.tty = isatty(STDERR_FILENO);
	session.start = g_get_monotonic_time();
	session.task = g_strdup(command);
	session.outputs = g_ptr_array_new_with_free_func(g_free);
	cl_atomic_batch_begin();
	/* blocked before any other thread exists, so that every thread inherits it */
	sigset_t set;
	interrupt_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, watch, NULL) == 0)
		pthread_detach(watcher);
	else
		pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* no watcher: Ctrl-C as without one */
}

int cl_cli_session_end(int status)
{
	errno = 0;
	gboolean stdout_ok = fflush(stdout) == 0 && !ferror(stdout);
	int stdout_errno = cl_stdout_errno() ? cl_stdout_errno() : errno ? errno : EIO;
	g_mutex_lock(&session.lock);
	clear_progress();
	g_mutex_unlock(&session.lock);
	if (!stdout_ok)
		status = cl_cli_fail(CL_EXIT_FAILED, "stdout: cannot write: %s", g_strerror(stdout_errno));
	gboolean failed = cl_atomic_batch_failed();
	GError *error = NULL;
	if (!cl_atomic_batch_end(stdout_ok && status != CL_EXIT_BAD_INPUT, &error) && error) {
		status = cl_cli_fail(CL_EXIT_FAILED, "%s: cannot write: %s", "output", error->message);
		g_error_free(error);
	}
	if (failed && status == CL_EXIT_OK)
		status = CL_EXIT_FAILED; /* a file could not be written: its writer said why */
	g_clear_pointer(&session.outputs, g_ptr_array_unref);
	return status;
}

void cl_cli_memory_note(void)
{
	static gboolean noted;
	if (noted)
		return;
	noted = TRUE;
	char budget[32];
	cl_format_bytes(cl_memory_budget(), budget, sizeof budget);
	cl_cli_message("note: a run stops at the memory budget of %s (%s); raise it with --memory-limit SIZE "
								"or CONTACTLAB_MEMORY_LIMIT",
				budget, cl_memory_budget_origin());
}

/* --memory-limit SIZE, which every subcommand takes */
static gboolean apply_memory_limit(const char *value, GError **error)
{
	gsize bytes;
	if (!value)
		return TRUE;
	if (!cl_memory_size_parse(value, &bytes)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--memory-limit %s: expected a size of at least 1M, such as 512M, 4G or 1.5G", value);
		return FALSE;
	}
	cl_memory_budget_set(bytes);
	return TRUE;
}

/* Whether two paths name one file: the same inode, or for a file yet to be
 * written the same absolute path. */
static gboolean same_file(const char *a, const char *b)
{
	GStatBuf sa, sb;
	gboolean ea = g_stat(a, &sa) == 0, eb = g_stat(b, &sb) == 0;
	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
	if (ea || eb)
		return FALSE;
	char *ca = g_canonicalize_filename(a, NULL), *cb = g_canonicalize_filename(b, NULL);
	gboolean same = strcmp(ca, cb) == 0;
	g_free(ca);
	g_free(cb);
	return same;
}

/* The FILE options given are outputs: none may be an argument read (a
 * regular file) or another output. */
static gboolean outputs_distinct(const GOptionEntry *entries, char **arguments, GError **error)
{
	for (const GOptionEntry *e = entries; e->long_name; e++) {
		const char *path = e->arg == G_OPTION_ARG_FILENAME ? *(char **)e->arg_data : NULL;
		if (!path || strcmp(path, "-") == 0)
			continue;
		for (char **a = arguments; *a; a++)
			if (g_file_test(*a, G_FILE_TEST_IS_REGULAR) && same_file(path, *a)) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
							"--%s %s: that is the file %s, which this command reads; write to another file",
							e->long_name, path, *a);
				return FALSE;
			}
		for (const GOptionEntry *f = entries; f != e; f++) {
			const char *other = f->arg == G_OPTION_ARG_FILENAME ? *(char **)f->arg_data : NULL;
			if (other && strcmp(other, "-") != 0 && same_file(path, other)) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
							"--%s %s: --%s writes that file already; give each output its own file", e->long_name,
							path, f->long_name);
				return FALSE;
			}
		}
		if (session.outputs)
			g_ptr_array_add(session.outputs, g_strdup(path));
	}
	return TRUE;
}

gboolean cl_cli_parse_options(const char *command, const char *parameter_string, const char *summary,
							  GOptionEntry *entries, int argc, char **argv, char ***positional, GError **error)
{
	/* "Usage: contactlab COMMAND [OPTION…] PARAMETERS" (the program name is "contactlab COMMAND") */
	GOptionContext *context = g_option_context_new(parameter_string);
	g_option_context_set_summary(context, summary);
	g_option_context_add_main_entries(context, entries, NULL);
	char *memory_limit = NULL;
	const GOptionEntry shared[] = {
		{"memory-limit", 0, 0, G_OPTION_ARG_STRING, &memory_limit,
		 "Memory one run may hold (default: a quarter of this machine's, or CONTACTLAB_MEMORY_LIMIT)", "SIZE"},
		G_OPTION_ENTRY_NULL,
	};
	g_option_context_add_main_entries(context, shared, NULL);
	/* argv[0] is the subcommand; GOption skips it like a program name */
	char **args = g_new0(char *, (gsize)argc + 1);
	for (int i = 0; i < argc; i++)
		args[i] = g_strdup(argv[i]);
	char *prgname = g_strdup_printf("contactlab %s", command);
	g_set_prgname(prgname);
	g_free(prgname);
	GError *option_error = NULL;
	gboolean ok = g_option_context_parse_strv(context, &args, &option_error);
	g_option_context_free(context);
	for (char **a = args + 1; ok && *a; a++)
		if ((*a)[0] == '-' && (*a)[1]) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION,
						"%s: unknown option %s (see contactlab %s --help)", command, *a, command);
			ok = FALSE;
		}
	ok = ok && apply_memory_limit(memory_limit, error) && outputs_distinct(entries, args + 1, error);
	g_free(memory_limit);
	if (!ok && option_error) {
		g_set_error(error, G_OPTION_ERROR, option_error->code, "%s: %s (see contactlab %s --help)", command,
					option_error->message, command);
		g_error_free(option_error);
	}
	if (!ok) {
		g_strfreev(args);
		return FALSE;
	}
	/* drop the subcommand itself */
	*positional = g_strdupv(args + 1);
	g_strfreev(args);
	return TRUE;
}

gboolean cl_cli_whole_option64(const char *option, const char *text, gint64 min, gint64 max, gint64 *out,
							   GError **error)
{
	if (!text)
		return TRUE;
	if (!g_ascii_string_to_signed(text, 10, min, max, out, NULL)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"%s %s: expected a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, option, text, min,
					max);
		return FALSE;
	}
	return TRUE;
}

gboolean cl_cli_whole_option(const char *option, const char *text, gint64 min, gint64 max, int *out, GError **error)
{
	gint64 value = *out;
	if (!cl_cli_whole_option64(option, text, MAX(min, G_MININT), MIN(max, G_MAXINT), &value, error))
		return FALSE;
	*out = (int)value;
	return TRUE;
}

gboolean cl_cli_real_option(const char *option, const char *text, double min, gboolean min_excluded, double max,
							double *out, GError **error)
{
	if (!text)
		return TRUE;
	char *end = NULL;
	double value = g_ascii_strtod(text, &end);
	if (!text[0] || g_ascii_isspace(text[0]) || *end || !isfinite(value) || value < min ||
		(min_excluded && value == min) || value > max) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: expected a number %s %s and at most %s",
					option, text, min_excluded ? "more than" : "from", cl_format_number(min).text,
					cl_format_number(max).text);
		return FALSE;
	}
	*out = value;
	return TRUE;
}

gboolean cl_cli_one_scene(const char *command, char **positional, GError **error)
{
	if (g_strv_length(positional) == 1)
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
				"%s: expected one SCENE (a scene file or a preset id), got %u arguments", command,
				g_strv_length(positional));
	return FALSE;
}

void cl_cli_report(GError *error, int status)
{
	if (!error)
		return;
	cl_cli_fail(status, "%s", error->message);
	g_error_free(error);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *cl_cli_preset_list(void)
{
	char *dir = g_build_filename(cl_data_dir(), "presets", NULL);
	GDir *d = g_dir_open(dir, 0, NULL);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (const char *f; d && (f = g_dir_read_name(d));)
		if (g_str_has_suffix(f, ".json"))
			g_ptr_array_add(names, g_strndup(f, strlen(f) - 5));
	if (d)
		g_dir_close(d);
	g_free(dir);
	g_ptr_array_sort(names, compare_names);
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s", i ? ", " : "", (const char *)g_ptr_array_index(names, i));
	g_ptr_array_free(names, TRUE);
	return g_string_free(s, FALSE);
}

ClScene *cl_cli_load_scene(const char *scene_arg, char **settings, GError **error)
{
	ClScene *scene;
	gboolean looks_like_id = !strchr(scene_arg, '/') && !g_str_has_suffix(scene_arg, ".json");
	if (looks_like_id && !g_file_test(scene_arg, G_FILE_TEST_EXISTS)) {
		GError *preset_error = NULL;
		scene = cl_preset_load(scene_arg, &preset_error);
		if (!scene) {
			if (g_error_matches(preset_error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO)) {
				char *presets = cl_cli_preset_list();
				g_set_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_IO,
							"%s: no such scene file and no preset of this name (presets: %s)", scene_arg, presets);
				g_free(presets);
				g_error_free(preset_error);
			} else {
				g_propagate_error(error, preset_error);
			}
			return NULL;
		}
	} else {
		scene = cl_scene_file_load(scene_arg, error);
		if (!scene)
			return NULL;
	}
	/* a preset's file too must not be written over */
	char *preset = looks_like_id ? g_build_filename(cl_data_dir(), "presets", scene_arg, NULL) : NULL;
	for (guint i = 0; preset && session.outputs && i < session.outputs->len; i++) {
		char *file = g_strconcat(preset, ".json", NULL);
		gboolean same = same_file(g_ptr_array_index(session.outputs, i), file);
		g_free(file);
		if (same) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: the preset's file is also an output",
						(const char *)g_ptr_array_index(session.outputs, i));
			g_free(preset);
			cl_scene_free(scene);
			return NULL;
		}
	}
	g_free(preset);
	for (char **s = settings; s && *s; s++) {
		GError *setting_error = NULL;
		if (!cl_scene_apply_setting(scene, *s, &setting_error)) {
			g_set_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID, "--set %s", setting_error->message);
			g_error_free(setting_error);
			cl_scene_free(scene);
			return NULL;
		}
	}
	char message[CL_MESSAGE_MAX];
	if (settings && settings[0] && !cl_scene_validate(scene, message, sizeof message)) {
		g_set_error(error, CL_SCENE_FILE_ERROR, CL_SCENE_FILE_ERROR_INVALID, "%s with the --set values: %s",
					scene_arg, message);
		cl_scene_free(scene);
		return NULL;
	}
	return scene;
}

GArray *cl_cli_backends(char **ids, GError **error)
{
	GArray *backends = g_array_new(FALSE, FALSE, sizeof(int));
	for (char **id = ids; id && *id; id++) {
		char **parts = g_strsplit(*id, ",", -1);
		for (char **p = parts; *p; p++) {
			int b = cl_backend_find(*p);
			if (b < 0) {
				GString *known = g_string_new(NULL);
				for (int k = 0; k < cl_backend_count(); k++)
					g_string_append_printf(known, "%s%s", k ? ", " : "", cl_backend_info(k)->id);
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
							"--backend %s: unknown backend (known: %s)", *p, known->str);
				g_string_free(known, TRUE);
				g_strfreev(parts);
				g_array_free(backends, TRUE);
				return NULL;
			}
			g_array_append_val(backends, b);
		}
		g_strfreev(parts);
	}
	if (backends->len == 0)
		for (int b = 0; b < cl_backend_count(); b++)
			g_array_append_val(backends, b);
	return backends;
}

void cl_cli_leave_out_unsupported(GArray *backends, char **ids, const ClScene *scene)
{
	if (ids && ids[0])
		return;
	for (guint k = backends->len; k-- > 0;) {
		char why[CL_MESSAGE_MAX];
		int b = g_array_index(backends, int, k);
		if (!cl_backend_can_run(b, scene, why, sizeof why)) {
			g_printerr("contactlab: %s left out: %s (name it with --backend to run it)\n", cl_backend_info(b)->id,
					   why);
			g_array_remove_index(backends, k);
		}
	}
}

gboolean cl_cli_check_choice(const char *option, const char *value, const char *const *choices, GError **error)
{
	if (g_strv_contains(choices, value))
		return TRUE;
	char *joined = g_strjoinv(", ", (char **)choices);
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: expected one of %s", option, value, joined);
	g_free(joined);
	return FALSE;
}

static const char *const figure_options[] = {"--png", "--svg", "--pdf"};
static const ClPlotFormat figure_formats[] = {CL_PLOT_FORMAT_PNG, CL_PLOT_FORMAT_SVG, CL_PLOT_FORMAT_PDF};

gboolean cl_cli_figure_files_check(const ClCliFigureFiles *files, GError **error)
{
	const char *paths[] = {files->png, files->svg, files->pdf};
	for (int i = 0; i < 3; i++) {
		const char *path = paths[i];
		if (!path)
			continue;
		/* a name without an extension (/dev/stdout) takes the option's format */
		char *base = g_path_get_basename(path);
		const char *dot = strrchr(base, '.');
		gboolean mismatch = dot && dot != base && cl_plot_format_from_path(base) != figure_formats[i];
		g_free(base);
		if (mismatch) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: expected a .%s file",
						figure_options[i], path, figure_options[i] + 2);
			return FALSE;
		}
	}
	if (!isfinite(files->dpi) || files->dpi <= 0 || files->dpi > 1200) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--dpi %g: expected more than 0 and at most 1200",
					files->dpi);
		return FALSE;
	}
	return TRUE;
}

gboolean cl_cli_figure_size_options(const char *width_text, const char *height_text, double *width, double *height,
									GError **error)
{
	/* a poster is 4 000 pt wide; a PNG that large at 150 dpi is 70 MB */
	return cl_cli_real_option("--width", width_text, 0, TRUE, 10000, width, error) &&
		   cl_cli_real_option("--height", height_text, 0, TRUE, 10000, height, error);
}

gboolean cl_cli_figure_files_wanted(const ClCliFigureFiles *files)
{
	return files->png || files->svg || files->pdf;
}

gboolean cl_cli_figure_files_write(const ClCliFigureFiles *files, ClPlotFigure *figure, double width, double height,
								   GError **error)
{
	const char *paths[] = {files->png, files->svg, files->pdf};
	for (int i = 0; i < 3; i++)
		if (paths[i] && !cl_plot_figure_export(figure, paths[i], figure_formats[i], width, height, files->dpi, error))
			return FALSE;
	return TRUE;
}

void cl_cli_figure_files_clear(ClCliFigureFiles *files)
{
	g_clear_pointer(&files->png, g_free);
	g_clear_pointer(&files->svg, g_free);
	g_clear_pointer(&files->pdf, g_free);
}

gboolean cl_cli_sampling_check(ClCliSampling *o, GError **error)
{
	return cl_cli_whole_option("--samples", o->samples_text, 2, 1000000, &o->samples, error) &&
		   cl_cli_whole_option64("--seed", o->seed_text, 0, G_MAXINT64, &o->seed, error);
}

gboolean cl_cli_sampling_given(const ClCliSampling *o)
{
	return o->sigma || o->samples_text || o->seed_text;
}

gboolean cl_cli_sampling_sigma(const ClCliSampling *o, int count, double *sigma, GError **error)
{
	char **parts = g_strsplit(o->sigma ? o->sigma : "", ",", -1);
	guint n = g_strv_length(parts);
	gboolean ok = n == 1 || n == (guint)count;
	if (!ok)
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--sigma %s: expected one value, or one per parameter (%d)", o->sigma ? o->sigma : "", count);
	for (guint i = 0; ok && i < n; i++) {
		char *end = NULL;
		double x = g_ascii_strtod(parts[i], &end);
		if (!parts[i][0] || *end || !isfinite(x) || x <= 0) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						"--sigma %s: \"%s\" is not a positive number", o->sigma, parts[i]);
			ok = FALSE;
		}
		for (int k = 0; ok && k < count; k++)
			if (n == 1 || (guint)k == i)
				sigma[k] = x;
	}
	g_strfreev(parts);
	return ok;
}

int cl_cli_sampling_samples(const ClCliSampling *o)
{
	return o->samples != -1 ? o->samples : CL_CLI_SAMPLES_DEFAULT;
}

guint64 cl_cli_sampling_seed(const ClCliSampling *o)
{
	return o->seed != -1 ? (guint64)o->seed : CL_CLI_SEED_DEFAULT;
}

void cl_cli_sampling_clear(ClCliSampling *o)
{
	g_clear_pointer(&o->sigma, g_free);
	g_clear_pointer(&o->samples_text, g_free);
	g_clear_pointer(&o->seed_text, g_free);
}
