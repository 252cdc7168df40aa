#define _DEFAULT_SOURCE /* wait4, setrlimit */

#include "cli-run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

int cl_test_run_cli(const char *dir, const char *const *args, char **out, char **err)
{
	ClTestRun run = {.dir = dir};
	cl_test_run_cli_with(&run, args);
	if (run.signaled) {
		g_autofree char *command = g_strjoinv(" ", (char **)args);
		g_test_message("contactlab %s: killed by signal %d; its stderr: %s", command, run.status - 128, run.err);
	}
	g_assert_false(run.signaled);
	*out = run.out;
	*err = run.err;
	return run.status;
}

/* Reads fd to its end into a string. */
static char *drain(int fd)
{
	GString *s = g_string_new(NULL);
	char buffer[65536];
	for (;;) {
		ssize_t n = read(fd, buffer, sizeof buffer);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		g_string_append_len(s, buffer, n);
	}
	close(fd);
	return g_string_free(s, FALSE);
}

typedef struct {
	int fd;
	char *text;
} Drain;

static gpointer drain_thread(gpointer data)
{
	Drain *d = data;
	d->text = drain(d->fd);
	return NULL;
}

int cl_test_run_cli_with(ClTestRun *run, const char *const *args)
{
	const char *exe = g_getenv("CONTACTLAB");
	g_assert_nonnull(exe);
	GPtrArray *argv = g_ptr_array_new();
	g_ptr_array_add(argv, (char *)exe);
	for (const char *const *a = args; *a; a++)
		g_ptr_array_add(argv, (char *)*a);
	g_ptr_array_add(argv, NULL);
	int out_pipe[2], err_pipe[2];
	g_assert_cmpint(pipe(out_pipe), ==, 0);
	g_assert_cmpint(pipe(err_pipe), ==, 0);
	if (run->stdout_closed)
		close(out_pipe[0]);
	gint64 start = g_get_monotonic_time();
	pid_t pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		if (run->stdout_path) {
			int fd = open(run->stdout_path, O_WRONLY);
			if (fd < 0)
				_exit(126);
			dup2(fd, STDOUT_FILENO);
		} else {
			dup2(out_pipe[1], STDOUT_FILENO);
		}
		dup2(err_pipe[1], STDERR_FILENO);
		for (const char *const *u = run->unset; u && *u; u++)
			unsetenv(*u);
		if (run->address_space) {
			struct rlimit limit = {run->address_space, run->address_space};
			setrlimit(RLIMIT_AS, &limit);
		}
		if (run->dir && chdir(run->dir) != 0)
			_exit(126);
		execv(exe, (char **)argv->pdata);
		_exit(127);
	}
	g_ptr_array_free(argv, TRUE);
	close(out_pipe[1]);
	close(err_pipe[1]);
	Drain out = {run->stdout_closed ? -1 : out_pipe[0], NULL}, err = {err_pipe[0], NULL};
	GThread *out_reader = run->stdout_closed ? NULL : g_thread_new("stdout", drain_thread, &out);
	GThread *err_reader = g_thread_new("stderr", drain_thread, &err);
	if (run->interrupt_after > 0) {
		g_usleep((gulong)(run->interrupt_after * G_USEC_PER_SEC));
		kill(pid, SIGINT);
	}
	int wait_status;
	struct rusage usage;
	while (wait4(pid, &wait_status, 0, &usage) < 0)
		g_assert_cmpint(errno, ==, EINTR);
	run->seconds = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
	if (out_reader)
		g_thread_join(out_reader);
	g_thread_join(err_reader);
	run->out = out.text ? out.text : g_strdup("");
	run->err = err.text;
	run->max_rss = (gsize)usage.ru_maxrss * 1024;
	g_assert_false(WIFEXITED(wait_status) && (WEXITSTATUS(wait_status) == 126 || WEXITSTATUS(wait_status) == 127));
	run->signaled = WIFSIGNALED(wait_status);
	run->status = run->signaled ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
	return run->status;
}

void cl_test_run_clear(ClTestRun *run)
{
	g_clear_pointer(&run->out, g_free);
	g_clear_pointer(&run->err, g_free);
}
