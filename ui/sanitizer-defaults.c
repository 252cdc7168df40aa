/* The sanitizer build's own LeakSanitizer suppressions, so that the executable
 * reports nothing on its own (without the tests' LSAN_OPTIONS).
 *
 * fontconfig keeps its caches (50-70 KB) until the process ends, by design.
 * Freeing them at exit (cairo_debug_reset_static_data, FcFini) is not safe:
 * Pango 1.50 finalizes its font map on a thread of its own, which may still
 * hold cairo's fonts then (cairo's hash-table assertion aborted the CLI). */

const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void)
{
	return "leak:libfontconfig.so\n";
}
