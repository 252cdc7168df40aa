/* contactlab: the workbench window, or a headless subcommand. */
#include "cl-application.h"
#include "cli.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char **argv)
{
	if (cl_cli_wants(argc, argv))
		return cl_cli_run(argc, argv);
#ifdef __GLIBC__
	/* A session's jobs allocate and free many MB of rollout tapes and states
	 * in worker threads. With its default, glibc raises the threshold above
	 * which a block gets its own mapping as large blocks are freed, and then
	 * keeps the freed blocks in its per-thread arenas: the window's resident
	 * set stayed at up to twice its live memory after heavy jobs. A fixed
	 * threshold hands every large block back when it is freed (see
	 * docs/performance-scale.md, "Long sessions"). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	g_autoptr(ClApplication) app = cl_application_new();
	return g_application_run(G_APPLICATION(app), argc, argv);
}
