/* The headless command line: dispatch to one subcommand per file. */
#include "cli.h"

#include "cli-common.h"
#include "cli-plots.h"

#include <stdio.h>
#include <string.h>

typedef struct {
	const char *name;
	int (*run)(int argc, char **argv, gboolean check_only);
	const char *usage;
} ClCommand;

static const ClCommand commands[] = {
	{"gradients", cl_cmd_gradients,
	 "gradients SCENE [--backend ID]... [--format table|csv|json] [--set KEY=VALUE]...\n"
	 "      loss and its derivatives w.r.t. every ball's initial position, velocity and first control,\n"
	 "      by each backend's adjoint and by central differences of its own forward map"},
	{"optimize", cl_cmd_optimize,
	 "optimize SCENE --backend ID [--lr X] [--iters N] [--gradient adjoint|zobg|fobg|aobg [--sigma S] [--samples N]\n"
	 "         [--seed K]] [--csv FILE] [--controls-csv FILE] [--set KEY=VALUE]...\n"
	 "      gradient descent on the scene's optimization problem, along the adjoint or a smoothed estimate"},
	{"simulate", cl_cmd_simulate,
	 "simulate SCENE [--backend ID]... [--csv FILE] [--set KEY=VALUE]...\n"
	 "      trajectories as CSV: backend,step,time,ball,x,y,vx,vy"},
	{"heatmap", cl_cmd_heatmap,
	 "heatmap SCENE --x PARAM:MIN:MAX:N --y PARAM:MIN:MAX:N [--backend ID]... [--quantity Q] [--threads N]\n"
	 "        [--csv FILE] [--png|--svg|--pdf FILE] [--set KEY=VALUE]...\n"
	 "      loss, gradient, angle error or sign agreement over a grid, one panel per backend"},
	{"smooth", cl_cmd_smooth,
	 "smooth SCENE --param P [--param P]... --sigma S[,S...] [--samples N] [--seed K] [--backend ID]...\n"
	 "       [--antithetic] [--gamma G] [--quadrature] [--format table|csv|json] [--terms-csv FILE] [--set KEY=VALUE]...\n"
	 "      gradients of the randomly smoothed loss: ZoBG, FoBG and AoBG with standard errors, beside the point gradient"},
	{"figure", cl_cmd_figure, "figure 2|4|5 --png|--svg|--pdf FILE\n      the paper's Figures 2, 4 and 5, recomputed"},
	{"backends", cl_cmd_backends, "backends\n      the contact models and their parameters"},
	{"reproduce", cl_cmd_reproduce,
	 "reproduce [--table 1|2|3|4|3-learning|tds|dojo|all] [--format table|csv]\n"
	 "      recompute the paper's Tables 1-4 and compare with data/reference/paper-tables.csv"},
	{"convergence", cl_cmd_convergence,
	 "convergence SCENE --param NAME [--steps N,N,...] [--backend ID]... [--csv FILE] [--png|--svg|--pdf FILE]\n"
	 "      [--set KEY=VALUE]...\n"
	 "      one derivative per backend as a function of the step count (dt = T/N)"},
	{"lesson", cl_cmd_lesson,
	 "lesson list | show LESSON [--step K] [--format text|csv] | export LESSON --pdf FILE [--dir DIR]\n"
	 "      the guided lessons: list them, compute a lesson's texts, write its handout"},
	{"bench", cl_cmd_bench,
	 "bench [--backend ID]...\n      time gradients and optimizations of Task 3 and the whole reproduction"},
};

static void print_usage(FILE *out)
{
	fprintf(out, "Usage: contactlab                 open the workbench\n"
				 "       contactlab COMMAND [OPTION]...\n\n"
				 "Commands (each takes --help):\n");
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(out, "  %s\n", commands[i].usage);
	char *presets = cl_cli_preset_list();
	fprintf(out, "\nSCENE is a scene file (JSON) or a preset id: %s.\n"
				 "Exit status: 0 ok, 1 a computation failed, 2 bad input.\n",
			presets);
	g_free(presets);
}

bool cl_cli_wants(int argc, char **argv)
{
	if (argc < 2)
		return false;
	const char *a = argv[1];
	return a[0] != '-' || strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "--version") == 0;
}

static int dispatch(int argc, char **argv, gboolean check_only)
{
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		if (!check_only)
			print_usage(stdout);
		return CL_EXIT_OK;
	}
	if (strcmp(name, "--version") == 0) {
		if (!check_only)
			printf("contactlab %s\n", CL_VERSION);
		return CL_EXIT_OK;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		if (strcmp(name, commands[i].name) == 0) {
			if (check_only)
				return commands[i].run(argc - 1, argv + 1, TRUE);
			cl_cli_session_begin(name);
			return cl_cli_session_end(commands[i].run(argc - 1, argv + 1, FALSE));
		}
	cl_cli_fail(CL_EXIT_BAD_INPUT, "unknown command \"%s\"", name);
	print_usage(stderr);
	return CL_EXIT_BAD_INPUT;
}

int cl_cli_run(int argc, char **argv)
{
	return dispatch(argc, argv, FALSE);
}

int cl_cli_check(int argc, char **argv)
{
	return dispatch(argc, argv, TRUE);
}
