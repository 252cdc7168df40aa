/* contactlab: the workbench window, or a headless subcommand. */
#include "cl-application.h"
#include "cli.h"

int main(int argc, char **argv)
{
	if (cl_cli_wants(argc, argv))
		return cl_cli_run(argc, argv);
	g_autoptr(ClApplication) app = cl_application_new();
	return g_application_run(G_APPLICATION(app), argc, argv);
}
