/* libFuzzer target: the command line. One argument per input line; the
 * subcommand's arguments are parsed and validated exactly as `contactlab`
 * does (scene presets, --set values, backends, formats), but nothing is
 * computed or written. Exit status 0 or 2, never a crash, leak or UB. */
#include "cli.h"
#include "fuzz-input.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **argv = cl_fuzz_command_line((const char *)data, size);
	int argc = (int)g_strv_length(argv);
	if (cl_fuzz_command_line_is_safe(argv) && cl_cli_wants(argc, argv)) {
		int status = cl_cli_check(argc, argv);
		if (status != 0 && status != 2) {
			fprintf(stderr, "fuzz-cli: exit status %d from checking a command line\n", status);
			abort();
		}
	}
	g_strfreev(argv);
	return 0;
}
