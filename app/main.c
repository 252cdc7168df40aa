/* contactlab: the workbench window, or a headless subcommand. */
#include "cli.h"

#include <gtk/gtk.h>

int main(int argc, char **argv)
{
	if (cl_cli_wants(argc, argv))
		return cl_cli_run(argc, argv);
	GtkApplication *app = gtk_application_new("io.github.contactlab.ContactLab", G_APPLICATION_DEFAULT_FLAGS);
	int status = g_application_run(G_APPLICATION(app), argc, argv);
	g_object_unref(app);
	return status;
}
