/* The figure-making subcommands (heatmap, figure), registered in cli.c. */
#pragma once

#include <glib.h>

/* check_only: see cli-common.h */
int cl_cmd_heatmap(int argc, char **argv, gboolean check_only);
int cl_cmd_figure(int argc, char **argv, gboolean check_only);
