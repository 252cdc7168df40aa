/* What a job computed, stamped with the scene it was computed for: the
 * scene's copy and the document revision it had, so a view, an export or a
 * lesson can tell a current result from a stale one. Reference counted and
 * immutable once made, so it may be shared between threads. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

G_BEGIN_DECLS

typedef enum ClResultKind {
	CL_RESULT_RUN,         /* trajectories and gradient rows of every enabled backend (ClRunData) */
	CL_RESULT_HEATMAP,     /* a sweep's cells */
	CL_RESULT_LEARNING,    /* gradient-descent traces */
	CL_RESULT_CONVERGENCE, /* one derivative against the step count */
	CL_RESULT_SMOOTHING,   /* smoothed gradients of every enabled backend (ClSmoothingRun) */
	CL_RESULT_KIND_COUNT
} ClResultKind;

typedef struct ClResult ClResult;

/* Takes a copy of scene and ownership of payload. */
ClResult *cl_result_new(ClResultKind kind, const ClScene *scene, guint revision, gpointer payload,
						GDestroyNotify payload_free);
ClResult *cl_result_ref(ClResult *result);
void cl_result_unref(ClResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClResult, cl_result_unref)

/* The same payload stamped for another scene and revision, for a result a
 * change leaves valid (a heatmap when only its swept parameters moved). */
ClResult *cl_result_restamp(ClResult *result, const ClScene *scene, guint revision);

ClResultKind cl_result_kind(const ClResult *result);
const char *cl_result_kind_name(ClResultKind kind); /* "run", "heatmap", … */
const ClScene *cl_result_scene(const ClResult *result);
guint cl_result_revision(const ClResult *result);
gpointer cl_result_payload(const ClResult *result);

G_END_DECLS
