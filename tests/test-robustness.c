/* Robustness of what the app reads and writes: the billiards-break preset
 * equals its C builder; every input the fuzzers ever crashed on now gets a
 * scene, lesson or message; kill -9 during a save leaves the previous file whole
 * and nothing beside it (cl_scene_file_save in a loop, and the real
 * executable writing a CSV). */
#define _DEFAULT_SOURCE /* kill, usleep */

#include "cli.h"
#include "fuzz-input.h"
#include "lesson-file.h"
#include "scene-file.h"
#include "tasks.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tmp_dir;

static void test_billiards_preset(void)
{
	GError *error = NULL;
	ClScene *file = cl_preset_load("billiards-break", &error);
	g_assert_no_error(error);
	ClScene *built = cl_test_billiards(100);
	g_strlcpy(built->description, file->description, sizeof built->description); /* prose, not the scene */
	g_assert_cmpint(file->ball_count, ==, 100);
	g_assert_cmpint(file->steps, ==, 2000);
	if (!cl_scene_equal(file, built))
		g_test_fail_printf("billiards-break.json differs from cl_test_billiards(100)");
	cl_scene_free(file);
	cl_scene_free(built);
}

/* ------------------------------------------------------- fuzz regressions */

/* tests/fuzz/regressions/{scene,lesson,cli}/…: each file is an input that once
 * crashed a fuzz target; the target's entry point must now survive it. */
static void run_regressions(const char *target, void (*one)(const char *data, gsize length, const char *name))
{
	const char *root = g_getenv("CONTACTLAB_SOURCE_ROOT");
	g_assert_nonnull(root);
	char *dir_path = g_build_filename(root, "tests", "fuzz", "regressions", target, NULL);
	GDir *dir = g_dir_open(dir_path, 0, NULL);
	int count = 0;
	for (const char *name; dir && (name = g_dir_read_name(dir));) {
		char *path = g_build_filename(dir_path, name, NULL), *data;
		gsize length;
		g_assert_true(g_file_get_contents(path, &data, &length, NULL));
		one(data, length, name);
		count++;
		g_free(data);
		g_free(path);
	}
	g_test_message("%s: %d regression inputs", target, count);
	if (dir)
		g_dir_close(dir);
	g_free(dir_path);
}

static void scene_input(const char *data, gsize length, const char *name)
{
	GError *error = NULL;
	ClScene *scene = cl_scene_file_parse(data, (gssize)length, name, &error);
	/* a scene, valid; or a message naming the file */
	if (scene) {
		g_assert_no_error(error);
		g_assert_true(cl_scene_validate(scene, NULL, 0));
		cl_scene_free(scene);
	} else {
		g_assert_nonnull(error);
		g_assert_nonnull(strstr(error->message, name));
		g_error_free(error);
	}
}

static void test_regressions_scene(void)
{
	run_regressions("scene", scene_input);
}

/* The command line the CLI fuzz target built from the input: parsing and
 * checking it ends in exit status 0 or 2 (the real executable is not run:
 * the input may be a valid command that computes for a long time). */
static void lesson_input(const char *data, gsize length, const char *name)
{
	GError *error = NULL;
	ClLesson *lesson = cl_lesson_file_parse(data, (gssize)length, name, &error);
	g_assert_true(!lesson != !error);
	if (error) {
		g_assert_nonnull(strstr(error->message, name));
		g_error_free(error);
	}
	cl_lesson_free(lesson);
}

static void test_regressions_lesson(void)
{
	run_regressions("lesson", lesson_input);
}

static void cli_input(const char *data, gsize length, const char *name)
{
	char **argv = cl_fuzz_command_line(data, length);
	int argc = (int)g_strv_length(argv);
	g_assert_true(cl_fuzz_command_line_is_safe(argv));
	if (cl_cli_wants(argc, argv)) {
		int status = cl_cli_check(argc, argv);
		if (status != 0 && status != 2)
			g_error("%s: exit status %d", name, status);
	}
	g_strfreev(argv);
}

static void test_regressions_cli(void)
{
	run_regressions("cli", cli_input);
}

/* --------------------------------------------------------- atomic writes */

/* A scene with a long control sequence on every ball: a megabyte of JSON,
 * so that a save takes long enough to be killed in the middle. */
static char *big_scene_json(int variant, ClScene **out)
{
	ClScene *s = cl_test_billiards(10);
	double *u = g_new(double, 2 * s->steps);
	for (int i = 0; i < s->ball_count; i++) {
		for (int n = 0; n < 2 * s->steps; n++)
			u[n] = variant + 1e-3 * (i + 1) + 1e-7 * n;
		cl_scene_set_control_sequence(s, i, u);
	}
	g_free(u);
	snprintf(s->name, sizeof s->name, "variant %d", variant);
	*out = s;
	return cl_scene_file_to_json(s);
}

/* Whether process pid is writing a new file in dir: it holds the unnamed
 * (O_TMPFILE) file there, or the hidden .BASE.XXXXXX.tmp of the fallback. */
static gboolean writing_in(GPid pid, const char *dir, const char *base)
{
	char *fds = g_strdup_printf("/proc/%d/fd", (int)pid);
	GDir *d = g_dir_open(fds, 0, NULL);
	char *unnamed = g_strdup_printf("%s/#", dir), *hidden = g_strdup_printf("%s/.%s.", dir, base);
	gboolean writing = FALSE;
	for (const char *name; !writing && d && (name = g_dir_read_name(d));) {
		char *fd = g_build_filename(fds, name, NULL);
		char *target = g_file_read_link(fd, NULL);
		writing = target && ((g_str_has_prefix(target, unnamed) && g_str_has_suffix(target, " (deleted)")) ||
							 (g_str_has_prefix(target, hidden) && g_str_has_suffix(target, ".tmp")));
		g_free(target);
		g_free(fd);
	}
	if (d)
		g_dir_close(d);
	g_free(unnamed);
	g_free(hidden);
	g_free(fds);
	return writing;
}

/* What a killed writer of dir/base left beside it: asserts that it is at
 * most hidden temporaries (.BASE.XXXXXX.tmp, the moment between naming the
 * complete file and renaming it), deletes them and returns how many. Never
 * a visible file a user could take for the output. */
static int remove_leftovers(const char *dir_path, const char *base)
{
	GDir *dir = g_dir_open(dir_path, 0, NULL);
	g_assert_nonnull(dir);
	char *hidden = g_strdup_printf(".%s.", base);
	int count = 0;
	for (const char *name; (name = g_dir_read_name(dir));) {
		if (g_str_has_prefix(name, base) && strcmp(name, base) != 0)
			g_error("%s: a visible leftover of a killed write: %s", dir_path, name);
		if (g_str_has_prefix(name, hidden)) {
			g_assert_true(g_str_has_suffix(name, ".tmp"));
			char *path = g_build_filename(dir_path, name, NULL);
			g_assert_cmpint(g_unlink(path), ==, 0);
			g_free(path);
			count++;
		}
	}
	g_free(hidden);
	g_dir_close(dir);
	return count;
}

static void test_atomic_scene_save(void)
{
	char *dir = g_build_filename(tmp_dir, "atomic-scene", NULL);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
	char *path = g_build_filename(dir, "scene.json", NULL);
	ClScene *scenes[2];
	char *json[2] = {big_scene_json(0, &scenes[0]), big_scene_json(1, &scenes[1])};
	g_assert_true(cl_scene_file_save(scenes[0], path, NULL));
	int interrupted = 0, left = 0;
	for (int trial = 0; trial < 6; trial++) {
		pid_t pid = fork();
		g_assert_cmpint(pid, >=, 0);
		if (pid == 0) {
			/* saves alternately, as fast as it can, until killed */
			for (int k = 1;; k++)
				if (!cl_scene_file_save(scenes[k % 2], path, NULL))
					_exit(3);
		}
		/* kill it as soon as it writes a save's new file: in the middle of
		 * writing it, or just after its rename when the kill is late */
		gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
		gboolean writing = FALSE;
		while (!(writing = writing_in(pid, dir, "scene.json")) && g_get_monotonic_time() < deadline)
			g_usleep(50); /* leaves the writer its core */
		g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
		int status;
		g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
		g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* the file is one of the two saves, whole, never a mixture or a prefix */
		char *data;
		gsize length;
		g_assert_true(g_file_get_contents(path, &data, &length, NULL));
		g_assert_true(strcmp(data, json[0]) == 0 || strcmp(data, json[1]) == 0);
		g_free(data);
		interrupted += writing;
		left += remove_leftovers(dir, "scene.json");
	}
	g_test_message("%d of 6 kills interrupted a write; %d hidden temporary files were left", interrupted, left);
	/* the kills must have hit writes, or the test proved nothing */
	g_assert_cmpint(interrupted, >=, 3);
	for (int v = 0; v < 2; v++) {
		cl_scene_free(scenes[v]);
		g_free(json[v]);
	}
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

/* The real executable, killed while it writes a trajectory CSV over an
 * existing one: the old CSV or the complete new one, nothing else. */
static void test_atomic_cli_csv(void)
{
	const char *exe = g_getenv("CONTACTLAB");
	g_assert_nonnull(exe);
	char *csv = g_build_filename(tmp_dir, "trajectory.csv", NULL);
	char *scene_path = g_build_filename(tmp_dir, "break.json", NULL);
	ClScene *scene = cl_test_billiards(10);
	g_assert_true(cl_scene_file_save(scene, scene_path, NULL));
	cl_scene_free(scene);
	const char *settings[2] = {"steps=500", "steps=1000"};
	char *complete[2];
	for (int v = 0; v < 2; v++) {
		const char *argv[] = {exe, "simulate", scene_path, "--backend", "exact", "--set", settings[v], "--csv", csv, NULL};
		int status;
		g_assert_true(g_spawn_sync(tmp_dir, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, NULL));
		g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		g_assert_true(g_file_get_contents(csv, &complete[v], NULL, NULL));
	}
	g_assert_cmpstr(complete[0], !=, complete[1]);
	int whole[2] = {0, 0}, interrupted = 0, left = 0;
	for (int trial = 0; trial < 3; trial++) {
		/* start from the short CSV, then kill a run that replaces it as soon
		 * as it writes the new one */
		g_assert_true(g_file_set_contents(csv, complete[0], -1, NULL));
		const char *argv[] = {exe, "simulate", scene_path, "--backend", "exact", "--set", settings[1], "--csv", csv, NULL};
		GPid pid;
		g_assert_true(g_spawn_async(tmp_dir, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
									NULL, NULL, &pid, NULL));
		gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
		gboolean writing = FALSE;
		while (!(writing = writing_in(pid, tmp_dir, "trajectory.csv")) && g_get_monotonic_time() < deadline)
			g_usleep(50);
		kill(pid, SIGKILL);
		int status;
		g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
		interrupted += writing;
		left += remove_leftovers(tmp_dir, "trajectory.csv");
		char *data;
		g_assert_true(g_file_get_contents(csv, &data, NULL, NULL));
		if (strcmp(data, complete[0]) == 0)
			whole[0]++;
		else if (strcmp(data, complete[1]) == 0)
			whole[1]++;
		else
			g_error("trial %d: the CSV is neither the old one nor the new one", trial);
		g_free(data);
	}
	g_test_message("3 kills, %d in the middle of the write: the old CSV %d times, the new complete one %d times; "
				   "%d hidden temporary files left",
				   interrupted, whole[0], whole[1], left);
	g_assert_cmpint(interrupted, >=, 1);
	for (int v = 0; v < 2; v++)
		g_free(complete[v]);
	g_unlink(csv);
	g_unlink(scene_path);
	g_free(csv);
	g_free(scene_path);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("contactlab-robustness-XXXXXX", NULL);
	g_assert_nonnull(tmp_dir);
	g_test_add_func("/robustness/billiards-preset", test_billiards_preset);
	g_test_add_func("/robustness/fuzz-regressions/scene", test_regressions_scene);
	g_test_add_func("/robustness/fuzz-regressions/lesson", test_regressions_lesson);
	g_test_add_func("/robustness/fuzz-regressions/cli", test_regressions_cli);
	g_test_add_func("/robustness/atomic/scene-save", test_atomic_scene_save);
	g_test_add_func("/robustness/atomic/cli-csv", test_atomic_cli_csv);
	int result = g_test_run();
	g_rmdir(tmp_dir);
	g_free(tmp_dir);
	return result;
}
