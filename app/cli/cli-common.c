/* Shared pieces of the subcommands. */
#include "cli-common.h"

#include "scene-file.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ClCliProgress cl_cli_progress_new(void)
{
	return (ClCliProgress){.show = isatty(STDERR_FILENO)};
}

void cl_cli_progress_update(ClCliProgress *p, int done, int total, const char *unit)
{
	gint64 now = g_get_monotonic_time();
	if (!p->show || (done < total && now - p->last < 100000))
		return;
	p->last = now;
	fprintf(stderr, "\r%d/%d %s%s", done, total, unit, done == total ? "\n" : "");
}

int cl_cli_fail(int status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	char *message = g_strdup_vprintf(format, args);
	va_end(args);
	fprintf(stderr, "contactlab: %s\n", message);
	g_free(message);
	return status;
}

gboolean cl_cli_parse_options(const char *command, const char *parameter_string, const char *summary,
							  GOptionEntry *entries, int argc, char **argv, char ***positional, GError **error)
{
	char *usage = g_strdup_printf("%s%s%s", command, parameter_string ? " " : "", parameter_string ? parameter_string : "");
	GOptionContext *context = g_option_context_new(usage);
	g_free(usage);
	g_option_context_set_summary(context, summary);
	g_option_context_add_main_entries(context, entries, NULL);
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
	if (!ok) {
		g_set_error(error, G_OPTION_ERROR, option_error->code, "%s: %s (see contactlab %s --help)", command,
					option_error->message, command);
		g_error_free(option_error);
		g_strfreev(args);
		return FALSE;
	}
	for (char **a = args + 1; *a; a++)
		if ((*a)[0] == '-' && (*a)[1]) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION,
						"%s: unknown option %s (see contactlab %s --help)", command, *a, command);
			g_strfreev(args);
			return FALSE;
		}
	/* drop the subcommand itself */
	*positional = g_strdupv(args + 1);
	g_strfreev(args);
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

gboolean cl_cli_sampling_check(const ClCliSampling *o, GError **error)
{
	if (o->samples != -1 && (o->samples < 2 || o->samples > 1000000)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--samples %d: expected 2 … 1000000", o->samples);
		return FALSE;
	}
	if (o->seed != -1 && o->seed < 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					"--seed %" G_GINT64_FORMAT ": expected a whole number ≥ 0", o->seed);
		return FALSE;
	}
	return TRUE;
}

gboolean cl_cli_sampling_given(const ClCliSampling *o)
{
	return o->sigma || o->samples != -1 || o->seed != -1;
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
}
