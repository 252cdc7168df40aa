/* Robustness of what the app reads and writes: the billiards-break preset
 * equals its C builder; every input the fuzzers ever crashed on now gets a
 * scene, lesson or message; kill -9 during a save leaves the previous file whole
 * and nothing beside it (cl_scene_file_save in a loop, and the real
 * executable writing a CSV); the hostile and absurd inputs of issue 18, one
 * test per row of its table (rows 8-16, bad files and options, are in
 * test-cli's table), run by the real executable: bounded memory and time,
 * honest exit statuses, all outputs or none. */
#define _DEFAULT_SOURCE /* kill, usleep, forkpty */

#include "cli-run.h"
#include "cli.h"
#include "fuzz-input.h"
#include "lesson-file.h"
#include "scene-file.h"
#include "tasks.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <pty.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
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

/* tests/fuzz/regressions/{scene,lesson,lesson-text,cli}/…: each file is an
 * input that once crashed a fuzz target; the target's entry point must now
 * survive it. (folder: tests/fuzz/FOLDER instead, e.g. a target's seeds.) */
static void run_inputs(const char *folder, const char *target,
					   void (*one)(const char *data, gsize length, const char *name))
{
	const char *root = g_getenv("CONTACTLAB_SOURCE_ROOT");
	g_assert_nonnull(root);
	char *dir_path = folder ? g_build_filename(root, "tests", "fuzz", folder, NULL)
							: g_build_filename(root, "tests", "fuzz", "regressions", target, NULL);
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
	g_test_message("%s: %d inputs", target, count);
	if (dir)
		g_dir_close(dir);
	g_free(dir_path);
}

static void run_regressions(const char *target, void (*one)(const char *data, gsize length, const char *name))
{
	run_inputs(NULL, target, one);
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

/* The lesson-text target's check: parsed, computed, printable. */
static void lesson_text_input(const char *data, gsize length, const char *name)
{
	char *failure = cl_fuzz_lesson_text(data, length);
	if (failure)
		g_test_fail_printf("%s: %s", name, failure);
	g_free(failure);
}

static void test_regressions_lesson_text(void)
{
	run_regressions("lesson-text", lesson_text_input);
	/* its seeds, which cover every view and kind of placeholder, pass too */
	run_inputs("lesson-text-seeds", "lesson-text seeds", lesson_text_input);
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

/* ------------------------------------------------------- issue 18's rows */

/* What a run may hold beyond its memory budget: the executable itself
 * (13 MB), its scene and output text; under AddressSanitizer its shadow
 * memory and the 256 MB quarantine of freed blocks too. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_MARGIN ((gsize)600 << 20)
#else
#define RSS_MARGIN ((gsize)64 << 20)
#endif

static char *write_file(const char *name, const char *text)
{
	char *path = g_build_filename(tmp_dir, name, NULL);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

/* A ball between two walls 0.2 apart at e = 1 for 10 s, at 10⁵ m/s: 10⁷
 * impacts, the exact backend's impact budget raised out of their reach. */
#define BOUNCE_SCENE                                                                                                   \
	"{\"contactlab\": 1, \"duration\": 10, \"steps\": 480, \"elasticity\": 1,\n"                                     \
	" \"balls\": [{\"id\": \"ball\", \"position\": [0, 0], \"velocity\": [100000, 0], \"radius\": 0.05}],\n"           \
	" \"walls\": [{\"id\": \"left\", \"point\": [-0.1, 0], \"normal\": [1, 0]},\n"                                   \
	"            {\"id\": \"right\", \"point\": [0.1, 0], \"normal\": [-1, 0]}],\n"                                  \
	" \"backends\": {\"exact\": {\"max_impacts\": 1000000000, \"max_events\": 1000000}}}"

static const char *const no_budget_variable[] = {"CONTACTLAB_MEMORY_LIMIT", NULL};

/* The run stopped with memory-limit, its message naming the budget and how
 * to raise it, and the process held little more than the budget. */
static void assert_memory_limited(const ClTestRun *run, const char *text, const char *budget, gsize bytes)
{
	g_assert_false(run->signaled);
	g_assert_cmpint(run->status, ==, 1);
	g_assert_nonnull(strstr(text, "memory-limit"));
	g_assert_nonnull(strstr(text, budget));
	g_assert_nonnull(strstr(text, "raise it with --memory-limit SIZE or CONTACTLAB_MEMORY_LIMIT"));
	g_test_message("peak RSS %.0f MB for a budget of %.0f MB, %.2f s", run->max_rss / 1048576.0, bytes / 1048576.0,
				   run->seconds);
	g_assert_cmpuint(run->max_rss, <, bytes + RSS_MARGIN);
}

/* Row 1: memory grew without bound, and under ulimit -v an abort(). */
static void test_row01_bouncing_memory(void)
{
	char *scene = write_file("bounce.json", BOUNCE_SCENE);
	const char *args[] = {"gradients", scene, "--backend", "exact", "--memory-limit", "64M", NULL};
	ClTestRun run = {.dir = tmp_dir, .unset = no_budget_variable};
	cl_test_run_cli_with(&run, args);
	assert_memory_limited(&run, run.out, "the memory budget of 64 MiB is used up", (gsize)64 << 20);
	cl_test_run_clear(&run);
	const char *plain[] = {"simulate", scene, "--backend", "exact", "--memory-limit", "64M", NULL};
	cl_test_run_cli_with(&run, plain);
	assert_memory_limited(&run, run.err, "the memory budget of 64 MiB is used up", (gsize)64 << 20);
	cl_test_run_clear(&run);
#if !defined(__SANITIZE_ADDRESS__) /* its shadow memory needs more address space than the limit leaves */
	/* no --memory-limit: the default budget keeps below ulimit -v */
	const char *unlimited[] = {"gradients", scene, "--backend", "exact", NULL};
	ClTestRun limited = {.dir = tmp_dir, .address_space = (gsize)1 << 30, .unset = no_budget_variable};
	cl_test_run_cli_with(&limited, unlimited);
	assert_memory_limited(&limited, limited.out, "the memory budget of 512 MiB is used up", (gsize)512 << 20);
	cl_test_run_clear(&limited);
#endif
	g_unlink(scene);
	g_free(scene);
}

/* Row 2: the same scene inside a lesson. */
static void test_row02_lesson_memory(void)
{
	char *lesson = write_file("bounce-lesson.json", "{\"contactlab_lesson\": 1, \"id\": \"bounce\", \"title\": \"B\", "
													"\"steps\": [{\"title\": \"s\", \"scene\": " BOUNCE_SCENE ", "
													"\"backends\": [\"exact\"], \"view\": {\"type\": \"gradients\"}, "
													"\"text\": \"loss {loss exact}\"}]}");
	const char *args[] = {"lesson", "show", lesson, "--memory-limit", "64M", NULL};
	ClTestRun run = {.dir = tmp_dir};
	cl_test_run_cli_with(&run, args);
	assert_memory_limited(&run, run.out, "the memory budget of 64 MiB is used up", (gsize)64 << 20);
	g_assert_nonnull(strstr(run.out, "problem: {loss exact}: memory-limit"));
	cl_test_run_clear(&run);
	g_unlink(lesson);
	g_free(lesson);
}

/* Row 3: devices were read without end. */
static void test_row03_devices(void)
{
	const char *const commands[][4] = {
		{"gradients", "/dev/zero", NULL},
		{"gradients", "/dev/urandom", NULL},
		{"lesson", "show", "/dev/zero", NULL},
		{"gradients", "/tmp", NULL},
	};
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++) {
		ClTestRun run = {0};
		g_assert_cmpint(cl_test_run_cli_with(&run, commands[i]), ==, 2);
		g_assert_nonnull(strstr(run.err, ": cannot read: a "));
		g_assert_nonnull(strstr(run.err, "only regular files and FIFOs are read"));
		g_assert_cmpfloat(run.seconds, <, 10.0);
		g_assert_cmpuint(run.max_rss, <, RSS_MARGIN);
		cl_test_run_clear(&run);
	}
	/* a file larger than the limit is refused before it is read */
	char *path = g_build_filename(tmp_dir, "huge.json", NULL);
	FILE *f = fopen(path, "w");
	g_assert_nonnull(f);
	g_assert_cmpint(ftruncate(fileno(f), (off_t)65 << 20), ==, 0);
	fclose(f);
	const char *huge[] = {"gradients", path, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, huge), ==, 2);
	g_assert_nonnull(strstr(run.err, "cannot read: the file is larger than 64 MiB"));
	g_assert_cmpuint(run.max_rss, <, RSS_MARGIN);
	cl_test_run_clear(&run);
	g_unlink(path);
	g_free(path);
}

/* Row 4: ten million steps took 10 GB. */
static void test_row04_many_steps(void)
{
	const char *convergence[] = {"convergence", "task3-two-balls", "--param", "ball1.position.x", "--steps", "10000000",
								 "--memory-limit", "256M", NULL};
	ClTestRun run = {0};
	cl_test_run_cli_with(&run, convergence);
	g_assert_cmpint(run.status, ==, 1);
	g_assert_nonnull(strstr(run.err, "exact at N = 10000000: memory-limit"));
	g_assert_nonnull(strstr(run.err, "the memory budget of 256 MiB (--memory-limit); raise it"));
	g_assert_cmpuint(run.max_rss, <, ((gsize)256 << 20) + RSS_MARGIN);
	cl_test_run_clear(&run);
	const char *gradients[] = {"gradients", "task3-two-balls", "--set", "steps=10000000", "--memory-limit", "256M",
							   NULL};
	cl_test_run_cli_with(&run, gradients);
	assert_memory_limited(&run, run.out, "more than the memory budget of 256 MiB", (gsize)256 << 20);
	g_assert_nonnull(strstr(run.out, "the gradient of a run of 10000000 steps × 2 balls needs"));
	cl_test_run_clear(&run);
}

/* Row 5: an index past 32 bits wrapped to loss[0]. */
static void test_row05_placeholder_index(void)
{
	char *lesson = write_file("index.json",
							  "{\"contactlab_lesson\": 1, \"id\": \"index\", \"title\": \"I\", \"steps\": [{\"title\": "
							  "\"s\", \"scene\": \"task2-ground-wall\", \"backends\": [\"exact\"], \"view\": {\"type\": "
							  "\"learning\", \"iterations\": 10}, \"text\": \"{learning exact loss[4294967296]}\"}]}");
	const char *args[] = {"lesson", "show", lesson, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 2);
	g_assert_nonnull(strstr(run.err, "{learning exact loss[4294967296]}: loss[4294967296]: the view runs 10 iterations"));
	g_assert_cmpstr(run.out, ==, "");
	cl_test_run_clear(&run);
	g_unlink(lesson);
	g_free(lesson);
}

/* Row 6: output to a full disk was lost with exit status 0; a closed pipe too. */
static void test_row06_stdout_errors(void)
{
	const char *args[] = {"gradients", "task1-bounce-once", "--backend", "exact", NULL};
	ClTestRun full = {.stdout_path = "/dev/full"};
	g_assert_cmpint(cl_test_run_cli_with(&full, args), ==, 1);
	g_assert_cmpstr(full.err, ==, "contactlab: stdout: cannot write: No space left on device\n");
	cl_test_run_clear(&full);
	ClTestRun closed = {.stdout_closed = TRUE};
	cl_test_run_cli_with(&closed, args);
	g_assert_false(closed.signaled); /* not SIGPIPE */
	g_assert_cmpint(closed.status, ==, 1);
	g_assert_cmpstr(closed.err, ==, "contactlab: stdout: cannot write: Broken pipe\n");
	cl_test_run_clear(&closed);
	/* printf-written output (optimize) is checked the same way */
	const char *optimize[] = {"optimize", "task3-two-balls", "--backend", "exact", "--iters", "2", NULL};
	ClTestRun printed = {.stdout_path = "/dev/full"};
	g_assert_cmpint(cl_test_run_cli_with(&printed, optimize), ==, 1);
	g_assert_nonnull(strstr(printed.err, "stdout: cannot write: No space left on device"));
	cl_test_run_clear(&printed);
}

/* Row 7: the scene file was replaced by the CSV. */
static void test_row07_output_is_input(void)
{
	char *scene_json = NULL, *preset = g_build_filename(g_getenv("CONTACTLAB_SOURCE_ROOT"), "data", "presets",
													   "task1-bounce-once.json", NULL);
	g_assert_true(g_file_get_contents(preset, &scene_json, NULL, NULL));
	g_free(preset);
	char *scene = write_file("s.json", scene_json);
	const char *args[] = {"simulate", scene, "--csv", scene, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 2);
	g_assert_nonnull(strstr(run.err, "which this command reads; write to another file"));
	char *after = NULL;
	g_assert_true(g_file_get_contents(scene, &after, NULL, NULL));
	g_assert_cmpstr(after, ==, scene_json);
	cl_test_run_clear(&run);
	/* through another name of the same file, and two outputs into one file */
	char *link = g_build_filename(tmp_dir, "link.json", NULL);
	g_assert_cmpint(symlink(scene, link), ==, 0);
	const char *linked[] = {"simulate", scene, "--csv", link, NULL};
	g_assert_cmpint(cl_test_run_cli_with(&run, linked), ==, 2);
	cl_test_run_clear(&run);
	char *csv = g_build_filename(tmp_dir, "twice.csv", NULL);
	const char *twice[] = {"optimize", "task3-two-balls", "--backend", "exact", "--csv", csv, "--controls-csv", csv,
						   NULL};
	g_assert_cmpint(cl_test_run_cli_with(&run, twice), ==, 2);
	g_assert_nonnull(strstr(run.err, "writes that file already"));
	g_assert_false(g_file_test(csv, G_FILE_TEST_EXISTS));
	cl_test_run_clear(&run);
	g_unlink(link);
	g_unlink(scene);
	g_free(link);
	g_free(csv);
	g_free(after);
	g_free(scene);
	g_free(scene_json);
}

/* Row 17: an export over a private file made it world-readable. */
static void test_row17_permissions(void)
{
	char *csv = write_file("private.csv", "old\n");
	g_assert_cmpint(g_chmod(csv, 0600), ==, 0);
	const char *args[] = {"simulate", "task1-bounce-once", "--backend", "exact", "--csv", csv, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 0);
	GStatBuf st;
	g_assert_cmpint(g_stat(csv, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0600);
	g_assert_cmpint(st.st_size, >, 100);
	cl_test_run_clear(&run);
	g_unlink(csv);
	g_free(csv);
}

/* Row 18: a command that failed left some of its outputs. */
static void test_row18_all_or_nothing(void)
{
	char *csv = g_build_filename(tmp_dir, "m.csv", NULL), *png = g_build_filename(tmp_dir, "nonexist", "m.png", NULL);
	const char *args[] = {"simulate", "task1-bounce-once", "--backend", "exact", "--csv", csv, "--png", png, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 1);
	g_assert_nonnull(strstr(run.err, "m.png"));
	g_assert_false(g_file_test(csv, G_FILE_TEST_EXISTS));
	cl_test_run_clear(&run);
	/* an old file stays as it was */
	g_assert_true(g_file_set_contents(csv, "old\n", -1, NULL));
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 1);
	char *contents = NULL;
	g_assert_true(g_file_get_contents(csv, &contents, NULL, NULL));
	g_assert_cmpstr(contents, ==, "old\n");
	cl_test_run_clear(&run);
	/* nothing beside it either */
	GDir *dir = g_dir_open(tmp_dir, 0, NULL);
	for (const char *name; (name = g_dir_read_name(dir));)
		g_assert_false(g_str_has_prefix(name, ".m.csv"));
	g_dir_close(dir);
	g_unlink(csv);
	g_free(contents);
	g_free(csv);
	g_free(png);
}

/* Row 19: a scene of 100 000 walls ran for minutes without a word. */
static void test_row19_many_walls(void)
{
	GString *json = g_string_new("{\"contactlab\": 1, \"duration\": 1, \"steps\": 480, \"balls\": [{\"id\": \"a\", "
								 "\"position\": [0, 0], \"radius\": 0.1}], \"walls\": [");
	for (int i = 0; i < 100000; i++)
		g_string_append_printf(json, "%s{\"id\": \"w%d\", \"point\": [0, %d], \"normal\": [0, 1]}", i ? ", " : "", i,
							   -1 - i);
	g_string_append(json, "]}");
	char *scene = write_file("walls.json", json->str);
	g_string_free(json, TRUE);
	const char *args[] = {"gradients", scene, NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 2);
	g_assert_nonnull(strstr(run.err, "walls: 100000 walls, more than the limit of 1000"));
	g_assert_cmpfloat(run.seconds, <, 20.0);
	cl_test_run_clear(&run);
	g_unlink(scene);
	g_free(scene);
}

/* Row 20: simulate --png ended in a LeakSanitizer report (fontconfig's
 * caches) in the sanitizer build. The executable is run without the
 * tests' suppressions: it must be clean on its own (its sanitizer build
 * declares fontconfig's caches, ui/sanitizer-defaults.c). */
static void test_row20_sanitizer_clean(void)
{
	char *png = g_build_filename(tmp_dir, "trajectory.png", NULL);
	const char *args[] = {"simulate", "task1-bounce-once", "--backend", "exact", "--png", png, NULL};
	static const char *const unset[] = {"LSAN_OPTIONS", "ASAN_OPTIONS", NULL};
	ClTestRun run = {.unset = unset};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 0);
	g_assert_null(strstr(run.err, "Sanitizer"));
	g_assert_true(g_file_test(png, G_FILE_TEST_IS_REGULAR));
	cl_test_run_clear(&run);
	g_unlink(png);
	g_free(png);
}

/* Row 21: lesson --help was an error; every command and subcommand has one. */
static void test_row21_help(void)
{
	const char *const commands[][3] = {
		{"gradients", "--help"}, {"optimize", "--help"}, {"simulate", "--help"},     {"heatmap", "--help"},
		{"figure", "--help"},    {"backends", "--help"}, {"reproduce", "--help"},    {"convergence", "--help"},
		{"bench", "--help"},     {"lesson", "--help"},   {"lesson", "list", "--help"}, {"lesson", "show", "--help"},
		{"lesson", "export", "--help"},
	};
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++) {
		const char *args[4] = {commands[i][0], commands[i][1], commands[i][2], NULL};
		ClTestRun run = {0};
		if (cl_test_run_cli_with(&run, args) != 0 || !strstr(run.out, "Usage:"))
			g_test_fail_printf("%s %s %s: exit status %d, stdout \"%.40s\"", args[0], args[1], args[2] ? args[2] : "",
							   run.status, run.out);
		cl_test_run_clear(&run);
	}
}

/* Row 9's kin: a figure size that is a number but absurd as a PNG (28 000
 * megapixels at 1 200 dpi) is refused before an image that large is made. */
static void test_png_size(void)
{
	char *png = g_build_filename(tmp_dir, "poster.png", NULL);
	const char *args[] = {"heatmap", "task1-bounce-once", "--x", "ball.velocity.x:1:3:2", "--y", "ball.velocity.y:-3:-1:2",
						  "--backend", "exact", "--png", png, "--width", "10000", "--height", "10000", "--dpi", "1200",
						  NULL};
	ClTestRun run = {0};
	g_assert_cmpint(cl_test_run_cli_with(&run, args), ==, 1);
	g_assert_nonnull(strstr(run.err, "is 27778 megapixels, more than the 200 a PNG may have"));
	g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
	g_assert_cmpuint(run.max_rss, <, RSS_MARGIN);
	cl_test_run_clear(&run);
	g_free(png);
}

/* Ctrl-C in the middle of a command: exit status 130 at once, and no
 * output file, neither a new one nor a change to an old one. */
static void test_interrupt(void)
{
	char *csv = write_file("interrupted.csv", "old\n"), *png = g_build_filename(tmp_dir, "interrupted.png", NULL);
	const char *args[] = {"heatmap", "billiards-break", "--x", "ball1.velocity.x:3:7:40", "--y",
						  "ball1.velocity.y:-1:1:40", "--backend", "exact", "--csv", csv, "--png", png, NULL};
	ClTestRun run = {.interrupt_after = 1.0};
	cl_test_run_cli_with(&run, args);
	g_assert_cmpint(run.status, ==, 130);
	g_assert_false(run.signaled); /* it ended itself, cleaning up */
	g_assert_nonnull(strstr(run.err, "contactlab: interrupted; no output file was written"));
	g_assert_cmpfloat(run.seconds, <, 10.0);
	char *contents = NULL;
	g_assert_true(g_file_get_contents(csv, &contents, NULL, NULL));
	g_assert_cmpstr(contents, ==, "old\n");
	g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
	cl_test_run_clear(&run);
	g_unlink(csv);
	g_free(contents);
	g_free(csv);
	g_free(png);
}

/* On a terminal, a command that runs longer than a second shows its
 * progress on stderr; off a terminal it does not (test-cli's outputs). */
static void test_progress_on_terminal(void)
{
	const char *exe = g_getenv("CONTACTLAB");
	int terminal;
	pid_t pid = forkpty(&terminal, NULL, NULL, NULL);
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		execl(exe, exe, "heatmap", "billiards-break", "--x", "ball1.velocity.x:3:7:8", "--y",
			  "ball1.velocity.y:-1:1:8", "--backend", "exact", "--csv", "/dev/null", "-j", "1", (char *)NULL);
		_exit(127);
	}
	GString *seen = g_string_new(NULL);
	char buffer[4096];
	for (;;) {
		ssize_t n = read(terminal, buffer, sizeof buffer);
		if (n <= 0)
			break; /* EIO once the child has gone */
		g_string_append_len(seen, buffer, n);
	}
	int status;
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	close(terminal);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!strstr(seen->str, "contactlab: heatmap: cells "))
		g_test_fail_printf("no progress line on the terminal: \"%s\"", seen->str);
	g_string_free(seen, TRUE);
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
	g_test_add_func("/robustness/fuzz-regressions/lesson-text", test_regressions_lesson_text);
	g_test_add_func("/robustness/atomic/scene-save", test_atomic_scene_save);
	g_test_add_func("/robustness/atomic/cli-csv", test_atomic_cli_csv);
	g_test_add_func("/robustness/hostile/row01-bouncing-memory", test_row01_bouncing_memory);
	g_test_add_func("/robustness/hostile/row02-lesson-memory", test_row02_lesson_memory);
	g_test_add_func("/robustness/hostile/row03-devices", test_row03_devices);
	g_test_add_func("/robustness/hostile/row04-many-steps", test_row04_many_steps);
	g_test_add_func("/robustness/hostile/row05-placeholder-index", test_row05_placeholder_index);
	g_test_add_func("/robustness/hostile/row06-stdout-errors", test_row06_stdout_errors);
	g_test_add_func("/robustness/hostile/row07-output-is-input", test_row07_output_is_input);
	g_test_add_func("/robustness/hostile/row17-permissions", test_row17_permissions);
	g_test_add_func("/robustness/hostile/row18-all-or-nothing", test_row18_all_or_nothing);
	g_test_add_func("/robustness/hostile/row19-many-walls", test_row19_many_walls);
	g_test_add_func("/robustness/hostile/row20-sanitizer-clean", test_row20_sanitizer_clean);
	g_test_add_func("/robustness/hostile/row21-help", test_row21_help);
	g_test_add_func("/robustness/hostile/png-size", test_png_size);
	g_test_add_func("/robustness/hostile/interrupt", test_interrupt);
	g_test_add_func("/robustness/hostile/progress-on-terminal", test_progress_on_terminal);
	int result = g_test_run();
	g_rmdir(tmp_dir);
	g_free(tmp_dir);
	return result;
}
