/* The figure-making subcommands (heatmap, figure), registered in cli.c. */
#pragma once

int cl_cmd_heatmap(int argc, char **argv);
int cl_cmd_figure(int argc, char **argv);
