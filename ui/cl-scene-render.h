/* Draws the scene canvas onto any cairo_t: the widget's snapshot and a
 * PNG/SVG/PDF export are one code path. Needs Cairo and Pango, not GTK. */
#pragma once

#include "cl-compute-job.h"
#include "cl-scene-edit.h"

#include <cairo.h>

typedef struct ClSceneRenderInput {
	const ClScene *scene;           /* the scene being edited */
	const ClComputeResult *result;  /* trajectories to overlay, or NULL */
	gboolean result_stale;          /* the scene changed since result was computed */
	const ClView *view;
	double time;                    /* playback time, s */
	double trail;                   /* trail length behind the balls, s */
	ClPick selection;
	ClPick hover;
	const gboolean *backend_visible; /* cl_backend_count() entries */
	gboolean dark;
} ClSceneRenderInput;

void cl_scene_render(cairo_t *cr, const ClSceneRenderInput *in);
/* Position of ball at time t in a backend's trajectory (linear between
 * steps); false when that part was not simulated. */
gboolean cl_trajectory_position(const ClScene *scene, const ClBackendResult *r, int ball, double t, ClVec2 *out);
