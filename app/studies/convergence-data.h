/* The convergence view's data, shared by the CLI, lessons and the window:
 * step lists, running cl_convergence, and its CSV. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

/* The default step list: 60, 120, …, 7680 (doubling). */
GArray *cl_convergence_default_steps(void);
/* "60,120,240": positive step counts, at most 256 of them; on error the
 * message names the offending entry. Returns an array of int. */
/* field names the input in messages: "--steps 60,x" on the command line,
 * the entry's label in the window. */
GArray *cl_convergence_parse_steps(const char *text, const char *field, GError **error);

/* A finished (or failed) run: its definition's data and the points. */
typedef struct ClConvergenceRun {
	char parameter[CL_NAME_MAX];
	ClParam param;
	double duration;   /* T of the scene, for dt = T / N */
	GArray *steps;     /* int */
	GArray *backends;  /* int, registry indices */
	ClConvergencePoint *points; /* backends × steps, cl_convergence_index order */
	ClStatus status;
} ClConvergenceRun;

/* A run of parameter for backends × steps, nothing computed yet (points:
 * NAN, status cancelled); NULL with a message when the scene has no such
 * parameter. */
ClConvergenceRun *cl_convergence_run_prepare(const ClScene *scene, const char *parameter, const GArray *steps,
											 const GArray *backends, GError **error);
/* Computes its points on threads (progress and cancel may be NULL). */
gboolean cl_convergence_run_compute(ClConvergenceRun *run, const ClScene *scene, int threads,
									ClConvergenceProgress progress, void *user, const _Atomic int *cancel,
									GError **error);
/* Both at once, on every processor. progress and cancel may be NULL.
 * NULL (and *error set, G_IO_ERROR_CANCELLED when cancelled) when the
 * parameter or definition is invalid. */
ClConvergenceRun *cl_convergence_run_new(const ClScene *scene, const char *parameter, const GArray *steps,
										 const GArray *backends, ClConvergenceProgress progress, void *user,
										 const _Atomic int *cancel, GError **error);
void cl_convergence_run_free(ClConvergenceRun *run);

static inline const ClConvergencePoint *cl_convergence_run_point(const ClConvergenceRun *run, guint backend_slot,
																 guint step_index)
{
	return &run->points[backend_slot * run->steps->len + step_index];
}

/* backend,steps,dt,value with a header row; failed points give "nan". */
GString *cl_convergence_csv(const ClConvergenceRun *run);
