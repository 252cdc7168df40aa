/* PLACEHOLDER: the CLI is being written. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

bool cl_cli_wants(int argc, char **argv)
{
	return argc > 1 && argv[1][0] != '-';
}

int cl_cli_run(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "contactlab: unknown command \"%s\"\n", argv[1]);
	return 2;
}
