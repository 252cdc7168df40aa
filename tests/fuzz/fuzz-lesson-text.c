/* libFuzzer target: the placeholders of a lesson's text ({gradient exact
 * ball.position.y .4f}, {learning impulse loss[999]}, …), parsed, checked
 * against the step and computed on small scenes (fuzz-input.c). Whatever
 * the text, a lesson whose computed text and problems are printable, or a
 * message naming the file; never a crash, leak, UB, a run past the memory
 * budget set here or a computation that takes seconds (-timeout in run.sh). */
#include "fuzz-input.h"
#include "machine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cl_memory_budget_set((gsize)64 << 20);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *failure = cl_fuzz_lesson_text((const char *)data, size);
	if (failure) {
		fprintf(stderr, "fuzz-lesson-text: %s\n", failure);
		abort();
	}
	return 0;
}
