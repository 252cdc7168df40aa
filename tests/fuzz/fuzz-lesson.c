/* libFuzzer target: the lesson-file parser. Whatever the bytes, a lesson or
 * an error whose message names the file; never a crash, leak or UB. */
#include "lesson-file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_file_parse((const char *)data, (gssize)size, "fuzz.json", &error);
	if (!lesson == !error || (error && !strstr(error->message, "fuzz.json"))) {
		fprintf(stderr, "fuzz-lesson: %s\n", error ? error->message : "a lesson and an error, or neither");
		abort();
	}
	if (error)
		g_error_free(error);
	cl_lesson_free(lesson);
	return 0;
}
