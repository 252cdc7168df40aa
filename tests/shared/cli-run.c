#include "cli-run.h"

#include <sys/wait.h>

int cl_test_run_cli(const char *dir, const char *const *args, char **out, char **err)
{
	const char *exe = g_getenv("CONTACTLAB");
	g_assert_nonnull(exe);
	GPtrArray *argv = g_ptr_array_new();
	g_ptr_array_add(argv, (char *)exe);
	for (const char *const *a = args; *a; a++)
		g_ptr_array_add(argv, (char *)*a);
	g_ptr_array_add(argv, NULL);
	int wait_status;
	GError *error = NULL;
	gboolean spawned =
		g_spawn_sync(dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &wait_status, &error);
	g_assert_no_error(error);
	g_assert_true(spawned);
	g_ptr_array_free(argv, TRUE);
	g_assert_true(WIFEXITED(wait_status));
	return WEXITSTATUS(wait_status);
}
