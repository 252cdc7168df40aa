/* Scale benchmark (not a test): time and peak memory of one full gradient
 * (recorded forward pass + adjoint for dL/ds0 and every dL/du_n) of the
 * billiards break with 2, 10, 30 and 100 balls, 2 000 steps, per backend.
 *
 * Each measurement runs in its own child process, so its peak resident set
 * (getrusage of the child) is that computation's alone plus a fixed baseline
 * (reported: a child that computes nothing). A child that exceeds the time
 * limit is killed and reported as too slow. The tape column counts the
 * bytes of the recorded Jacobians; the thread line compares independent
 * gradients on one thread and on two.
 *
 *   bench-scale [--balls N]... [--backend ID]... [--limit SECONDS] [--markdown]
 */
#define _DEFAULT_SOURCE /* wait4 */

#include "core.h"
#include "tasks.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct Measurement {
	double seconds;     /* wall time, best of the repetitions, one gradient */
	double cpu_seconds; /* CPU time of that process, best of the repetitions */
	double peak_mb; /* peak resident set of the child */
	double tape_mb; /* what the recorded Jacobians take */
	int events;
	ClStatusCode code;
	char status[64];
	char message[CL_MESSAGE_MAX];
	bool finished;
} Measurement;

static double clock_seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

/* Bytes of the tape of one recorded run, stepping the backend as the
 * rollout does (the rollout keeps its tape private). */
static double tape_megabytes(const ClScene *scene, int backend)
{
	const ClBackend *impl = cl_backend_get(backend);
	int nb = scene->ball_count, ns = cl_state_size(scene);
	double *inverse_mass = malloc(sizeof(double) * (size_t)nb), *u = malloc(sizeof(double) * (size_t)cl_control_size(scene));
	double *state = malloc(sizeof(double) * (size_t)ns), *next = malloc(sizeof(double) * (size_t)ns);
	for (int i = 0; i < nb; i++)
		inverse_mass[i] = 1.0 / scene->balls[i].mass;
	cl_scene_controls(scene, u);
	cl_scene_initial_state(scene, state);
	ClRollout *sink = cl_rollout_new(scene, backend); /* receives contact events */
	ClTape tape;
	ClMemoryAccount memory = {.limit = SIZE_MAX};
	cl_tape_init(&tape, nb, inverse_mass, scene->steps, &memory);
	ClStatus status = {.code = CL_STATUS_OK, .step = -1};
	const double *params = scene->backend_params[backend].values;
	ClStepContext ctx = {.scene = scene, .params = params, .dt = cl_scene_dt(scene), .tape = &tape,
						 .workspace = impl->create ? impl->create(scene, params) : NULL, .status = &status,
						 .rollout = sink};
	for (int n = 0; n < scene->steps && !cl_status_is_fatal(status.code); n++) {
		ctx.step = n;
		cl_tape_begin_step(&tape, n);
		impl->step(&ctx, state, u + (size_t)n * 2 * (size_t)nb, next);
		cl_tape_end_step(&tape, n);
		memcpy(state, next, sizeof(double) * (size_t)ns);
	}
	double bytes = (double)tape.factor_count * sizeof(ClFactor) + (double)tape.a_count * sizeof(ClBlockA) +
				   (double)tape.b_count * sizeof(ClBlockB) + (double)(scene->steps + 1) * sizeof(int);
	if (impl->destroy)
		impl->destroy(ctx.workspace);
	cl_tape_release(&tape);
	cl_rollout_free(sink);
	free(inverse_mass);
	free(u);
	free(state);
	free(next);
	return bytes / (1024.0 * 1024.0);
}

/* In the child: the gradient, repeated while it is fast, best time kept. */
static void measure_child(int backend, int balls, int fd)
{
	Measurement m = {.seconds = INFINITY, .cpu_seconds = INFINITY};
	if (backend >= 0) {
		ClScene *scene = cl_test_billiards(balls);
		double *ds0 = malloc(sizeof(double) * (size_t)cl_state_size(scene));
		double *du = malloc(sizeof(double) * (size_t)cl_control_size(scene));
		double spent = 0.0;
		for (int repetition = 0; repetition < 5 && spent < 2.0; repetition++) {
			double start = now(), cpu_start = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
			ClRollout *r = cl_rollout_new(scene, backend);
			cl_rollout_run(r, NULL, NULL, true);
			cl_rollout_gradient(r, ds0, du);
			double elapsed = now() - start;
			spent += elapsed;
			m.seconds = fmin(m.seconds, elapsed);
			m.cpu_seconds = fmin(m.cpu_seconds, clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start);
			const ClStatus *status = cl_rollout_status(r);
			m.code = status->code;
			snprintf(m.status, sizeof m.status, "%s", cl_status_name(status->code));
			snprintf(m.message, sizeof m.message, "%s", status->message);
			m.events = cl_rollout_event_count(r);
			cl_rollout_free(r);
		}
		free(ds0);
		free(du);
		m.tape_mb = tape_megabytes(scene, backend);
		cl_scene_free(scene);
	} else {
		m.seconds = m.cpu_seconds = 0.0;
	}
	m.finished = true;
	if (write(fd, &m, sizeof m) != (ssize_t)sizeof m)
		_exit(1);
	_exit(0);
}

static Measurement measure(int backend, int balls, double limit)
{
	Measurement m = {.seconds = NAN, .cpu_seconds = NAN, .peak_mb = NAN, .tape_mb = NAN};
	int pipe_fd[2];
	if (pipe(pipe_fd) != 0) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(pipe_fd[0]);
		alarm((unsigned)ceil(limit));
		measure_child(backend, balls, pipe_fd[1]);
	}
	close(pipe_fd[1]);
	Measurement got;
	ssize_t n = read(pipe_fd[0], &got, sizeof got);
	close(pipe_fd[0]);
	int wstatus;
	struct rusage usage;
	if (wait4(pid, &wstatus, 0, &usage) < 0) {
		perror("wait4");
		exit(1);
	}
	if (n == (ssize_t)sizeof got && got.finished)
		m = got;
	else if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM)
		snprintf(m.status, sizeof m.status, "too slow (> %g s)", limit);
	else
		snprintf(m.status, sizeof m.status, "crashed");
	m.peak_mb = (double)usage.ru_maxrss / 1024.0; /* Linux: kilobytes */
	return m;
}

typedef struct Job {
	const ClScene *scene;
	int backend, gradients;
} Job;

static void *run_gradients(void *data)
{
	const Job *job = data;
	size_t ns = (size_t)cl_state_size(job->scene), nu = (size_t)cl_control_size(job->scene);
	double *ds0 = malloc(sizeof(double) * ns), *du = malloc(sizeof(double) * nu);
	for (int k = 0; k < job->gradients; k++) {
		ClRollout *r = cl_rollout_new(job->scene, job->backend);
		cl_rollout_run(r, NULL, NULL, true);
		cl_rollout_gradient(r, ds0, du);
		cl_rollout_free(r);
	}
	free(ds0);
	free(du);
	return NULL;
}

/* Wall time of `total` independent gradients on one thread, and split over
 * two (as sweeps and training use both cores: the engine is reentrant). */
static void thread_speedup(int backend, int balls, int total)
{
	ClScene *scene = cl_test_billiards(balls);
	Job all = {scene, backend, total}, half = {scene, backend, total / 2};
	/* best of three, alternating, since other processes share the cores */
	double one = INFINITY, two = INFINITY;
	for (int trial = 0; trial < 3; trial++) {
		double start = now();
		run_gradients(&all);
		one = fmin(one, now() - start);
		pthread_t other;
		start = now();
		if (pthread_create(&other, NULL, run_gradients, &half) != 0) {
			perror("pthread_create");
			exit(1);
		}
		run_gradients(&half);
		pthread_join(other, NULL);
		two = fmin(two, now() - start);
	}
	printf("%-16s %d gradients of the %d-ball break: 1 thread %.3f s, 2 threads %.3f s, speed-up %.2f\n",
		   cl_backend_info(backend)->id, total, balls, one, two, one / two);
	cl_scene_free(scene);
}

/* Exponent k of time ∝ balls^k between two sizes. */
static double growth(double t_small, double t_large, int n_small, int n_large)
{
	if (!(t_small > 0.0) || !(t_large > 0.0))
		return NAN;
	return log(t_large / t_small) / log((double)n_large / (double)n_small);
}

int main(int argc, char **argv)
{
	int sizes[16], size_count = 0;
	int backends[32], backend_count = 0;
	double limit = 60.0;
	bool markdown = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--balls") && i + 1 < argc && size_count < 16) {
			sizes[size_count++] = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--backend") && i + 1 < argc && backend_count < 32) {
			int b = cl_backend_find(argv[++i]);
			if (b < 0) {
				fprintf(stderr, "bench-scale: unknown backend %s\n", argv[i]);
				return 2;
			}
			backends[backend_count++] = b;
		} else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			limit = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--markdown")) {
			markdown = true;
		} else {
			fprintf(stderr, "usage: bench-scale [--balls N]... [--backend ID]... [--limit SECONDS] [--markdown]\n");
			return 2;
		}
	}
	if (size_count == 0) {
		static const int standard[] = {2, 10, 30, 100};
		for (int i = 0; i < 4; i++)
			sizes[size_count++] = standard[i];
	}
	for (int i = 0; i < size_count; i++)
		if (sizes[i] < 2) {
			fprintf(stderr, "bench-scale: the billiards break needs at least 2 balls\n");
			return 2;
		}
	if (backend_count == 0)
		for (int b = 0; b < cl_backend_count() && b < 32; b++)
			backends[backend_count++] = b;

	Measurement baseline = measure(-1, 2, limit);
	printf("billiards break, 2000 steps, one gradient (forward + adjoint); best of up to 5 runs\n");
	printf("peak memory: the child process's maximum resident set; baseline %.1f MB\n", baseline.peak_mb);
	double load[1];
	if (getloadavg(load, 1) == 1) /* times and thread speed-ups mean little on a busy machine */
		printf("load average at the start: %.2f on %ld cores\n", load[0], sysconf(_SC_NPROCESSORS_ONLN));
	printf("\n");
	if (markdown) {
		printf("| backend | balls | CPU (s) | wall (s) | peak (MB) | tape (MB) | contacts | status |\n");
		printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
	} else {
		printf("%-16s %6s %10s %10s %10s %10s %9s  %s\n", "backend", "balls", "cpu(s)", "wall(s)", "peak(MB)",
			   "tape(MB)", "contacts", "status");
	}
	for (int k = 0; k < backend_count; k++) {
		const char *id = cl_backend_info(backends[k])->id;
		double times[16];
		Measurement largest = {0};
		for (int i = 0; i < size_count; i++) {
			Measurement m = measure(backends[k], sizes[i], limit);
			times[i] = m.finished ? m.cpu_seconds : NAN;
			largest = m;
			if (markdown)
				printf("| %s | %d | %.3g | %.3g | %.1f | %.3g | %d | %s |\n", id, sizes[i], m.cpu_seconds, m.seconds,
					   m.peak_mb, m.tape_mb, m.events, m.status);
			else
				printf("%-16s %6d %10.4g %10.4g %10.1f %10.3g %9d  %s%s%s\n", id, sizes[i], m.cpu_seconds, m.seconds,
					   m.peak_mb, m.tape_mb, m.events, m.status, m.message[0] ? ": " : "", m.message);
			fflush(stdout);
		}
		if (size_count >= 2) {
			int last = size_count - 1;
			fprintf(markdown ? stderr : stdout, "%-16s CPU time grows as balls^%.2f between %d and %d balls\n", id,
					growth(times[last - 1], times[last], sizes[last - 1], sizes[last]), sizes[last - 1], sizes[last]);
		}
		/* enough gradients for about half a second on one thread, at the largest
		 * size, in a child so that the parent stays small for later children */
		if (largest.finished && largest.cpu_seconds < 1.0 && !cl_status_is_fatal(largest.code)) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				thread_speedup(backends[k], sizes[size_count - 1],
							   2 * (int)fmax(1.0, ceil(0.25 / largest.cpu_seconds)));
				fflush(stdout);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) < 0) {
				perror("fork");
				exit(1);
			}
		} else
			fprintf(markdown ? stderr : stdout, "%-16s no thread measurement (%s)\n", id,
					!largest.finished ? "did not finish" : largest.cpu_seconds >= 1.0 ? "over 1 s a gradient" : "failed");
	}
	return 0;
}
