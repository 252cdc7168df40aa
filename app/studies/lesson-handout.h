/* Lesson handouts: a multi-page PDF (a cover page, then one page per step
 * with its figure, its gradient table where the view has one, and its text
 * with the numbers computed) and, optionally, a folder with every step's
 * figure (PNG, SVG), data (CSV) and text, and a manifest. */
#pragma once

#include "lesson-file.h"

#include <glib.h>

/* Called after each step is computed: done of total steps. */
typedef void (*ClLessonExportProgress)(int done, int total, void *user);

/* Computes every step and writes the handout atomically (never a half file).
 * Every problem of a step ("step 2: {gradient …}: unsupported …") is added
 * to problems (char*, may be NULL) and shown on its page; FALSE only when
 * a file cannot be written (or the export was cancelled). */
gboolean cl_lesson_export(const ClLesson *lesson, const char *pdf_path, const char *dir, GPtrArray *problems,
						  ClLessonExportProgress progress, void *user, const _Atomic int *cancel, GError **error);
