/* The headless command line: contactlab SUBCOMMAND … */
#pragma once

#include <stdbool.h>

/* True when argv names a subcommand (gradients, optimize, …, --help). */
bool cl_cli_wants(int argc, char **argv);
/* Runs it; returns the process exit status (0 ok, 1 failure, 2 bad input). */
int cl_cli_run(int argc, char **argv);
/* Parses and validates it as cl_cli_run would (scene and --set values
 * included) without computing or writing anything: 0 when it would run,
 * 2 for bad input (with the message on stderr). For the CLI fuzzer. Note
 * that GOption exits the process on --help of a subcommand. */
int cl_cli_check(int argc, char **argv);
