/* Trajectory CSV benchmark (not a test): the 100-ball billiards break with
 * the exact backend, 2 000 steps, 200 100 rows. Best of N runs of
 *   - the rollout alone (the engine's share of `contactlab simulate`),
 *   - the CSV text of it (cl_trajectory_csv_append),
 *   - writing that text over an existing file (cl_write_file: fsync, rename),
 *   - with --cli, the whole `CONTACTLAB simulate billiards-break --backend
 *     exact --csv FILE` as a process (repeatable, to compare two builds),
 * each also as a ratio to the rollout.
 *
 *   bench-csv [--cli CONTACTLAB]... [--runs N]
 */
#define _DEFAULT_SOURCE /* getloadavg */

#include "numbers.h"
#include "scene-file.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct {
	double wall, cpu; /* seconds, each the best of the runs */
} Time;

static double cpu_seconds(int who)
{
	struct rusage usage;
	getrusage(who, &usage);
	return (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec +
		   1e-6 * (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

typedef struct {
	gint64 wall;
	double cpu;
} Start;

static Start start_clock(int who)
{
	return (Start){g_get_monotonic_time(), cpu_seconds(who)};
}

static void stop_clock(Time *best, Start start, int who)
{
	best->wall = fmin(best->wall, (double)(g_get_monotonic_time() - start.wall) / 1e6);
	best->cpu = fmin(best->cpu, cpu_seconds(who) - start.cpu);
}

/* the ratio from CPU times: other sessions on the cores inflate wall times */
static void report(const char *what, Time t, Time engine)
{
	printf("%-42s %8.4f s wall %8.4f s CPU %7.2f× the rollout\n", what, t.wall, t.cpu, t.cpu / engine.cpu);
}

int main(int argc, char **argv)
{
	const char *clis[8];
	int cli_count = 0, runs = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cli") && i + 1 < argc && cli_count < 8)
			clis[cli_count++] = argv[++i];
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			runs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench-csv [--cli CONTACTLAB]... [--runs N]\n");
			return 2;
		}
	}
	GError *error = NULL;
	ClScene *scene = cl_preset_load("billiards-break", &error);
	char *folder = scene ? g_dir_make_tmp("bench-csv-XXXXXX", &error) : NULL;
	if (!folder) {
		fprintf(stderr, "bench-csv: %s\n", error->message);
		return 1;
	}
	char *path = g_build_filename(folder, "trajectories.csv", NULL);
	int backend = cl_backend_find("exact");

	Time engine = {INFINITY, INFINITY}, text = engine, write = engine;
	gsize rows = 0, bytes = 0;
	for (int run = 0; run < runs; run++) {
		Start start = start_clock(RUSAGE_SELF);
		ClRollout *rollout = cl_rollout_new(scene, backend);
		cl_rollout_run(rollout, NULL, NULL, false);
		stop_clock(&engine, start, RUSAGE_SELF);

		start = start_clock(RUSAGE_SELF);
		GString *csv = g_string_new(CL_TRAJECTORY_CSV_HEADER);
		cl_trajectory_csv_append(csv, scene, backend, cl_rollout_states(rollout), cl_rollout_steps_done(rollout));
		stop_clock(&text, start, RUSAGE_SELF);
		rows = (gsize)(cl_rollout_steps_done(rollout) + 1) * (gsize)scene->ball_count;
		bytes = csv->len;

		start = start_clock(RUSAGE_SELF);
		if (!cl_write_file(path, csv->str, csv->len, &error)) {
			fprintf(stderr, "bench-csv: %s\n", error->message);
			return 1;
		}
		if (run) /* the first run creates the file; later ones replace it, as a user's re-export does */
			stop_clock(&write, start, RUSAGE_SELF);
		g_string_free(csv, TRUE);
		cl_rollout_free(rollout);
	}

	double load[1];
	printf("billiards break: %d balls, %d steps, exact backend; %zu rows, %.1f MB of CSV; best of %d\n",
		   scene->ball_count, scene->steps, rows, (double)bytes / 1e6, runs);
	if (getloadavg(load, 1) == 1)
		printf("load average: %.2f on %ld cores\n", load[0], sysconf(_SC_NPROCESSORS_ONLN));
	report("rollout (the engine alone)", engine, engine);
	report("CSV text", text, engine);
	printf("%-42s %8.0f ns a row\n", "", text.cpu / (double)rows * 1e9);
	report("writing it over the file (fsync, rename)", write, engine);
	report("rollout + text + writing",
		   (Time){engine.wall + text.wall + write.wall, engine.cpu + text.cpu + write.cpu}, engine);

	for (int c = 0; c < cli_count; c++) {
		char *command[] = {(char *)clis[c], "simulate", "billiards-break", "--backend", "exact", "--csv", path, NULL};
		Time whole = {INFINITY, INFINITY};
		for (int run = 0; run < runs; run++) {
			int status = 0;
			Start start = start_clock(RUSAGE_CHILDREN);
			if (!g_spawn_sync(NULL, command, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &error) ||
				!g_spawn_check_wait_status(status, &error)) {
				fprintf(stderr, "bench-csv: %s: %s\n", clis[c], error->message);
				return 1;
			}
			stop_clock(&whole, start, RUSAGE_CHILDREN);
		}
		printf("%s simulate billiards-break --backend exact --csv FILE\n", clis[c]);
		report("  the whole process", whole, engine);
	}
	g_unlink(path);
	g_rmdir(folder);
	g_free(path);
	g_free(folder);
	cl_scene_free(scene);
	return 0;
}
