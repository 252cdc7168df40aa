/* contactlab lesson list|show|export: the guided lessons, headless. */
#include "cli-common.h"
#include "lesson-handout.h"
#include "lesson.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* LESSON is a lesson file (a path or *.json) or a shipped lesson's id. */
static ClLesson *load_lesson(const char *arg, GError **error)
{
	if (strchr(arg, '/') || g_str_has_suffix(arg, ".json"))
		return cl_lesson_file_load(arg, error);
	return cl_lesson_load(arg, error);
}

static int lesson_list(int argc, char **argv, gboolean check_only)
{
	char **positional = NULL;
	GError *error = NULL;
	GOptionEntry entries[] = {G_OPTION_ENTRY_NULL};
	GPtrArray *lessons = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("lesson list", "", "Lists the shipped lessons: id, steps, title.", entries, argc, argv,
							  &positional, &error))
		goto out;
	if (g_strv_length(positional) != 0) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "lesson list: takes no arguments");
		goto out;
	}
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	if (!(lessons = cl_lessons_load_all(&error)))
		goto out;
	for (guint i = 0; i < lessons->len; i++) {
		const ClLesson *l = g_ptr_array_index(lessons, i);
		printf("%-28s %2u steps  %s\n", l->id, l->steps->len, l->title);
	}
	status = CL_EXIT_OK;
out:
	if (error) {
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	if (lessons)
		g_ptr_array_free(lessons, TRUE);
	g_strfreev(positional);
	return status;
}

static void put_estimate(GString *out, const char *label, ClSmoothEstimate e)
{
	char *mean = cl_lesson_format_number("%.4g", e.mean), *se = cl_lesson_format_number("%.2g", e.se);
	g_string_append_printf(out, ", %s %s%s%s", label, mean, isfinite(e.se) ? " ± " : "", isfinite(e.se) ? se : "");
	g_free(mean);
	g_free(se);
}

/* The step's smoothing, per backend and parameter: what a Smoothing view shows. */
static void put_smoothing(GString *out, const ClLessonStep *step, const ClLessonResult *r)
{
	const ClLessonSmoothing *sm = &step->smoothing;
	g_string_append_printf(out, "[smoothing: N = %d%s, seed %" G_GUINT64_FORMAT "]\n", sm->samples,
						   sm->antithetic ? " in antithetic pairs" : "", sm->seed);
	for (guint b = 0; b < r->backend_count; b++) {
		const ClSmoothResult *s = &r->smoothing[b];
		for (guint k = 0; sm->parameters[k]; k++) {
			const ClSmoothGradient *g = &s->gradient[k];
			char *sigma = cl_lesson_format_number("%g", sm->sigma[k]), *point = cl_lesson_format_number("%.4g", g->point);
			g_string_append_printf(out, "  %s d/d%s (σ %s): point %s", cl_backend_info(s->backend)->id,
								   sm->parameters[k], sigma, point);
			put_estimate(out, "ZoBG", g->zobg);
			put_estimate(out, "FoBG", g->fobg);
			put_estimate(out, "AoBG", g->aobg);
			g_string_append_c(out, '\n');
			g_free(sigma);
			g_free(point);
		}
		char *alpha = cl_lesson_format_number("%.3g", s->alpha.alpha);
		char *epsilon = cl_lesson_format_number("%.3g", s->alpha.epsilon);
		char *gamma = cl_lesson_format_number("%.3g", s->alpha.gamma);
		g_string_append_printf(out, "  %s α = %s (%s, ε = %s, γ = %s)\n", cl_backend_info(s->backend)->id, alpha,
							   cl_smooth_alpha_rule_name(s->alpha.rule), epsilon, gamma);
		g_free(alpha);
		g_free(epsilon);
		g_free(gamma);
	}
}

static void put_step_text(GString *out, const ClLesson *lesson, guint index, const ClLessonResult *r)
{
	const ClLessonStep *step = g_ptr_array_index(lesson->steps, index);
	g_string_append_printf(out, "%s — step %u of %u: %s\n[%s view; backends:", lesson->title, index + 1,
						   lesson->steps->len, step->title, cl_lesson_view_name(step->view.kind));
	for (guint b = 0; b < step->backends->len; b++)
		g_string_append_printf(out, " %s", cl_backend_info(g_array_index(step->backends, int, b))->id);
	g_string_append_printf(out, "]\n%s\n", r->text);
	if (r->smoothing)
		put_smoothing(out, step, r);
	for (guint i = 0; i < r->problems->len; i++)
		g_string_append_printf(out, "problem: %s\n", (const char *)g_ptr_array_index(r->problems, i));
	g_string_append_c(out, '\n');
}

static void put_step_csv(GString *out, guint index, const ClLessonStep *step, const ClLessonResult *r)
{
	for (guint i = 0; i < step->cites->len; i++) {
		const ClCite *cite = &g_array_index(step->cites, ClCite, i);
		g_string_append_printf(out, "%u,", index + 1); /* 1-based, as --step */
		cl_csv_append_field(out, cite->source);
		g_string_append_printf(out, ",%s,", cl_format_number(r->cite_values[i]).text);
		cl_csv_append_field(out, r->cite_texts[i]);
		g_string_append_c(out, '\n');
	}
}

static int lesson_show(int argc, char **argv, gboolean check_only)
{
	char *format = NULL;
	int only_step = 0;
	GOptionEntry entries[] = {
		{"step", 0, 0, G_OPTION_ARG_INT, &only_step, "Only this step (1 = the first; default: all)", "K"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "text, or csv: step,placeholder,value,text", "text|csv"},
		G_OPTION_ENTRY_NULL,
	};
	static const char *const formats[] = {"text", "csv", NULL};
	char **positional = NULL;
	GError *error = NULL;
	ClLesson *lesson = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("lesson show", "LESSON",
							  "Applies every step of a lesson (a shipped lesson's id or a lesson file) and prints\n"
							  "its text with the numbers computed, or every cited number as CSV.",
							  entries, argc, argv, &positional, &error) ||
		!cl_cli_check_choice("--format", format ? format : "text", formats, &error))
		goto out;
	if (g_strv_length(positional) != 1) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "lesson show: expected one LESSON, got %u arguments",
					g_strv_length(positional));
		goto out;
	}
	if (!(lesson = load_lesson(positional[0], &error)))
		goto out;
	if (only_step < 0 || only_step > (int)lesson->steps->len) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--step %d: the lesson has steps 1 … %u",
					only_step, lesson->steps->len);
		goto out;
	}
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	gboolean csv = format && strcmp(format, "csv") == 0;
	GString *out = g_string_new(csv ? "step,placeholder,value,text\n" : NULL);
	status = CL_EXIT_OK;
	for (guint i = 0; i < lesson->steps->len; i++) {
		if (only_step && i + 1 != (guint)only_step)
			continue;
		const ClLessonStep *step = g_ptr_array_index(lesson->steps, i);
		ClLessonResult *r = cl_lesson_step_apply(step, NULL);
		if (r->problems->len)
			status = CL_EXIT_FAILED;
		if (csv)
			put_step_csv(out, i, step, r);
		else
			put_step_text(out, lesson, i, r);
		if (csv)
			for (guint k = 0; k < r->problems->len; k++)
				fprintf(stderr, "contactlab: step %u: %s\n", i + 1, (const char *)g_ptr_array_index(r->problems, k));
		cl_lesson_result_free(r);
	}
	cl_write_output("-", out, NULL);
	g_string_free(out, TRUE);
out:
	if (error) {
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	cl_lesson_free(lesson);
	g_strfreev(positional);
	g_free(format);
	return status;
}

static int lesson_export(int argc, char **argv, gboolean check_only)
{
	char *pdf = NULL, *dir = NULL;
	GOptionEntry entries[] = {
		{"pdf", 0, 0, G_OPTION_ARG_FILENAME, &pdf, "Write the handout here (required)", "FILE"},
		{"dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "Also write every step's figures and CSV files here", "DIR"},
		G_OPTION_ENTRY_NULL,
	};
	char **positional = NULL;
	GError *error = NULL;
	ClLesson *lesson = NULL;
	int status = CL_EXIT_BAD_INPUT;
	if (!cl_cli_parse_options("lesson export", "LESSON",
							  "Writes a lesson's handout: a PDF with one page per step (its figure and its text with\n"
							  "the numbers computed) and, with --dir, the figures (PNG, SVG) and CSV files.",
							  entries, argc, argv, &positional, &error))
		goto out;
	if (g_strv_length(positional) != 1) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
					"lesson export: expected one LESSON, got %u arguments", g_strv_length(positional));
		goto out;
	}
	if (!pdf) {
		g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "lesson export: --pdf FILE is required");
		goto out;
	}
	if (!(lesson = load_lesson(positional[0], &error)))
		goto out;
	if (check_only) {
		status = CL_EXIT_OK;
		goto out;
	}
	status = CL_EXIT_FAILED;
	GPtrArray *problems = g_ptr_array_new_with_free_func(g_free);
	if (cl_lesson_export(lesson, pdf, dir, problems, NULL, NULL, NULL, &error)) {
		status = problems->len ? CL_EXIT_FAILED : CL_EXIT_OK;
		for (guint i = 0; i < problems->len; i++)
			fprintf(stderr, "contactlab: %s\n", (const char *)g_ptr_array_index(problems, i));
		printf("%s: %u pages\n", pdf, lesson->steps->len + 1);
	}
	g_ptr_array_free(problems, TRUE);
out:
	if (error) {
		cl_cli_fail(status, "%s", error->message);
		g_error_free(error);
	}
	cl_lesson_free(lesson);
	g_strfreev(positional);
	g_free(pdf);
	g_free(dir);
	return status;
}

int cl_cmd_lesson(int argc, char **argv, gboolean check_only)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv, gboolean check_only);
	} subcommands[] = {{"list", lesson_list}, {"show", lesson_show}, {"export", lesson_export}};
	if (argc >= 2)
		for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].run(argc - 1, argv + 1, check_only);
	return cl_cli_fail(CL_EXIT_BAD_INPUT, "lesson: expected list, show LESSON or export LESSON --pdf FILE%s%s",
					   argc >= 2 ? ", not " : "", argc >= 2 ? argv[1] : "");
}
