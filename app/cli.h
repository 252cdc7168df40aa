/* The headless command line: contactlab SUBCOMMAND … */
#pragma once

#include <stdbool.h>

/* True when argv names a subcommand (gradients, optimize, …, --help). */
bool cl_cli_wants(int argc, char **argv);
/* Runs it; returns the process exit status (0 ok, 1 failure, 2 bad input). */
int cl_cli_run(int argc, char **argv);
