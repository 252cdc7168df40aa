#include "fuzz-input.h"

#include "lesson-file.h"
#include "lesson.h"
#include "numbers.h"

#include <string.h>

char **cl_fuzz_command_line(const char *data, gsize length)
{
	GPtrArray *args = g_ptr_array_new();
	g_ptr_array_add(args, g_strdup("contactlab"));
	gsize start = 0;
	for (gsize i = 0; i <= length; i++)
		if (i == length || data[i] == '\n') {
			if (i > start || i < length)
				g_ptr_array_add(args, g_strndup(data + start, i - start)); /* strndup stops at a NUL */
			start = i + 1;
		}
	g_ptr_array_add(args, NULL);
	return (char **)g_ptr_array_free(args, FALSE);
}

gboolean cl_fuzz_command_line_is_safe(char **argv)
{
	for (char **a = argv + 1; *a; a++) {
		const char *arg = *a;
		if (strchr(arg, '/'))
			return FALSE;
		if (g_str_has_prefix(arg, "--help"))
			return FALSE;
		/* -h, -?, or a cluster of short options holding either */
		if (arg[0] == '-' && arg[1] != '-' && (strchr(arg, 'h') || strchr(arg, '?')))
			return FALSE;
	}
	return TRUE;
}

/* Steps whose computations are small: at most 40 control steps and a few
 * iterations or cells. "%s" is where the text goes. */
static const char *const text_steps[] = {
	"{\"title\": \"t\", \"scene\": \"task1-bounce-once\", \"set\": [\"steps=40\"], \"backends\": [\"exact\", "
	"\"impulse-toi\"], \"view\": {\"type\": \"gradients\"}, \"text\": %s}",
	"{\"title\": \"t\", \"scene\": \"task3-two-balls\", \"set\": [\"steps=20\"], \"backends\": [\"exact\", "
	"\"compliant-warp\"], \"view\": {\"type\": \"learning\", \"iterations\": 3}, \"text\": %s}",
	"{\"title\": \"t\", \"scene\": \"task1-bounce-once\", \"backends\": [\"exact\", \"pbd-brax\"], \"view\": "
	"{\"type\": \"convergence\", \"parameter\": \"ball.velocity.y\", \"steps\": [10, 20]}, \"text\": %s}",
	"{\"title\": \"t\", \"scene\": \"task2-ground-wall\", \"set\": [\"steps=20\"], \"backends\": [\"exact\", "
	"\"lcp-nimble\"], \"view\": {\"type\": \"heatmap\", \"x\": {\"parameter\": \"ball.velocity.x\", \"min\": 1, "
	"\"max\": 3, \"count\": 2}, \"y\": {\"parameter\": \"ball.velocity.y\", \"min\": -3, \"max\": -1, \"count\": 2}, "
	"\"paths\": true, \"iterations\": 2}, \"text\": %s}",
	"{\"title\": \"t\", \"scene\": \"task1-bounce-once\", \"set\": [\"steps=40\"], \"backends\": [\"exact\", "
	"\"convex\"], \"view\": {\"type\": \"perturbation\", \"parameter\": \"ball.position.y\"}, \"text\": %s}",
};

/* Valid UTF-8 with no control character but newline and tab. */
static gboolean printable(const char *s)
{
	if (!g_utf8_validate(s, -1, NULL))
		return FALSE;
	for (const char *c = s; *c; c = g_utf8_next_char(c)) {
		gunichar u = g_utf8_get_char(c);
		if ((u < 0x20 && u != '\n' && u != '\t') || (u >= 0x7F && u <= 0x9F))
			return FALSE;
	}
	return TRUE;
}

char *cl_fuzz_lesson_text(const char *data, gsize length)
{
	if (length == 0)
		return NULL;
	const char *step_format = text_steps[(unsigned char)data[0] % G_N_ELEMENTS(text_steps)];
	GString *text = g_string_new(NULL);
	char *raw = g_strndup(data + 1, length - 1); /* a NUL ends the text, as it would a C string */
	cl_json_append_string(text, raw);
	g_free(raw);
	char *step = g_strdup_printf(step_format, text->str);
	char *json = g_strdup_printf("{\"contactlab_lesson\": 1, \"id\": \"fuzz\", \"title\": \"Fuzz\", \"steps\": [%s]}",
								 step);
	g_string_free(text, TRUE);
	g_free(step);
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_file_parse(json, -1, "fuzz.json", &error);
	g_free(json);
	char *failure = NULL;
	if (!lesson) {
		if (!error || !strstr(error->message, "fuzz.json") || !printable(error->message))
			failure = g_strdup_printf("no lesson and the error \"%s\"", error ? error->message : "(none)");
		g_clear_error(&error);
		return failure;
	}
	for (guint i = 0; !failure && i < lesson->steps->len; i++) {
		const ClLessonStep *s = g_ptr_array_index(lesson->steps, i);
		ClLessonResult *r = cl_lesson_step_apply(s, NULL);
		if (!printable(r->text))
			failure = g_strdup_printf("the computed text is not printable: \"%s\"", r->text);
		for (guint k = 0; !failure && k < r->problems->len; k++)
			if (!printable(g_ptr_array_index(r->problems, k)))
				failure = g_strdup("a problem is not printable");
		cl_lesson_result_free(r);
	}
	cl_lesson_free(lesson);
	return failure;
}
