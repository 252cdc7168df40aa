/* Canvas frame benchmark (not a test): the 100-ball billiards break with
 * the trajectories of ten backends (2 001 steps each, computed as `simulate`
 * does, without Jacobians), drawn by the canvas's drawing function onto a
 * 1000 × 600 Cairo image surface as the canvas draws it: fitted with the
 * canvas's margin, editing handles on, the time cursor half-way. Prints the
 * best and the median of N frames in ms: full frames (what an export and
 * the first frame after any change draw) and playback frames (the time
 * moves on; the layer under the balls is kept).
 *
 *   bench-canvas [--frames N]
 */
#define _DEFAULT_SOURCE /* getloadavg */

#include "run-data.h"
#include "scene-figure.h"
#include "scene-file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WIDTH 1000
#define HEIGHT 600

static const char *const backend_ids[] = {
	"exact",	 "lcp-nimble",	   "convex-toi",	 "convex",	 "impulse-toi",
	"impulse", "compliant-warp", "compliant-brax", "pbd-warp", "pbd-brax",
};

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

typedef void (*DrawFrame)(cairo_t *cr, const ClSceneRenderInput *in, gpointer data);

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* Best and median of frames frames of draw, each onto a fresh cairo_t of
 * the one surface, as the widget gets one a frame; wall and CPU time (the
 * CPU time is what other work on the cores does not inflate). */
static void time_frames(const char *what, cairo_surface_t *surface, const ClSceneRenderInput *in, int frames,
						DrawFrame draw, gpointer data)
{
	double *ms = g_new(double, (gsize)frames), *cpu = g_new(double, (gsize)frames);
	for (int f = 0; f < frames; f++) {
		gint64 start = g_get_monotonic_time();
		double cpu_start = thread_cpu_ms();
		cairo_t *cr = cairo_create(surface);
		draw(cr, in, data);
		cairo_destroy(cr);
		cairo_surface_flush(surface);
		ms[f] = (double)(g_get_monotonic_time() - start) / 1e3;
		cpu[f] = thread_cpu_ms() - cpu_start;
	}
	qsort(ms, (size_t)frames, sizeof *ms, compare_doubles);
	qsort(cpu, (size_t)frames, sizeof *cpu, compare_doubles);
	printf("%-40s wall best %7.2f median %7.2f ms; CPU best %7.2f median %7.2f ms (%d frames)\n", what, ms[0],
		   ms[frames / 2], cpu[0], cpu[frames / 2], frames);
	g_free(ms);
	g_free(cpu);
}

static void full_frame(cairo_t *cr, const ClSceneRenderInput *in, gpointer data)
{
	(void)data;
	cl_scene_render(cr, in);
}

/* A playback frame: the time moves on, the under layer is kept. */
typedef struct {
	ClSceneLayer *layer;
	ClSceneRenderInput in;
	int frame;
} Playback;

static void playback_frame(cairo_t *cr, const ClSceneRenderInput *in, gpointer data)
{
	Playback *p = data;
	p->in = *in;
	p->in.time = in->time + 0.01 * p->frame++;
	cl_scene_layer_render(p->layer, cr, &p->in, 1.0, 1);
}

int main(int argc, char **argv)
{
	int frames = 30;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--frames") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			frames = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench-canvas [--frames N]\n");
			return 2;
		}
	}
	GError *error = NULL;
	ClScene *scene = cl_preset_load("billiards-break", &error);
	if (!scene) {
		fprintf(stderr, "bench-canvas: %s\n", error->message);
		return 1;
	}
	int count = (int)G_N_ELEMENTS(backend_ids), backends[G_N_ELEMENTS(backend_ids)];
	for (int k = 0; k < count; k++)
		if ((backends[k] = cl_backend_find(backend_ids[k])) < 0) {
			fprintf(stderr, "bench-canvas: no backend %s\n", backend_ids[k]);
			return 1;
		}
	/* as `simulate --png` computes what the canvas draws: no columns, no Jacobians */
	ClRunData *data = cl_run_data_new(scene, backends, count, NULL, 0);
	gint64 start = g_get_monotonic_time();
	for (int k = 0; k < count; k++)
		cl_run_data_compute_backend(data, scene, k);
	cl_run_data_set_ready(data);
	double compute = (double)(g_get_monotonic_time() - start) / 1e6;

	gboolean *visible = g_new0(gboolean, (gsize)cl_backend_count()), *hidden = g_new0(gboolean, (gsize)cl_backend_count());
	for (int k = 0; k < count; k++)
		visible[backends[k]] = TRUE;
	ClView view = {.scale = 120, .width = WIDTH, .height = HEIGHT};
	cl_view_fit_scene(&view, scene, scene, data, visible, 48); /* the canvas's Zoom to Fit */
	ClPick none = {CL_PICK_NONE, -1};
	ClSceneRenderInput in = {
		.scene = scene,
		.result_scene = scene,
		.result = data,
		.view = &view,
		.time = 0.5 * scene->duration,
		.trail = 0.15,
		.selection = none,
		.hover = none,
		.backend_visible = visible,
		.backend_hidden = hidden,
		.handles = TRUE,
	};

	double load[1];
	printf("billiards break: %d balls, %d steps, %d backends (computed in %.1f s); %d × %d image surface\n",
		   scene->ball_count, scene->steps, count, compute, WIDTH, HEIGHT);
	if (getloadavg(load, 1) == 1)
		printf("load average: %.2f on %ld cores\n", load[0], sysconf(_SC_NPROCESSORS_ONLN));
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
	time_frames("full frame (cl_scene_render)", surface, &in, frames, full_frame, NULL);
	Playback playback = {.layer = cl_scene_layer_new()};
	cairo_t *cr = cairo_create(surface);
	cl_scene_layer_render(playback.layer, cr, &in, 1.0, 1); /* the frame that draws the layer */
	cairo_destroy(cr);
	time_frames("playback frame (cl_scene_layer_render)", surface, &in, frames, playback_frame, &playback);
	cl_scene_layer_free(playback.layer);

	cairo_surface_destroy(surface);
	g_free(visible);
	g_free(hidden);
	cl_run_data_unref(data);
	cl_scene_free(scene);
	return 0;
}
