/* Gradient descent (or Adam) on a scene's optimization problem with several
 * backends, each on a thread of its own: every iteration's loss and
 * parameters recorded as it happens so views can draw the curves live; when
 * a backend finishes, its result is re-evaluated under its own and under the
 * exact dynamics, and the walls its optimized trajectory reaches are kept. */
#pragma once

#include "learning-report.h"

typedef struct ClLearningRun {
	ClParam *params; /* the expanded parameters, in the order of ClLearningTrace.values */
	int param_count;
	int tracked; /* index into params of the first non-control scalar, −1: none */
	int iterations;
	int backend_count;
	/* private */
	GMutex lock; /* guards traces */
	ClLearningTrace *traces;
	gint iterations_done; /* atomic, over every backend */
} ClLearningRun;

/* scene: with optimize = the run's def. NULL with a message when the def
 * does not expand to parameters. */
ClLearningRun *cl_learning_run_new(const ClScene *scene, const int *backends, int backend_count, GError **error);
void cl_learning_run_free(ClLearningRun *run);
/* Learns backend slot b on scene (the one the run was made for); cancel
 * (may be NULL) stops it between iterations. */
void cl_learning_run_learn(ClLearningRun *run, const ClScene *scene, int slot, const _Atomic int *cancel);
/* Iterations done over every backend, of iterations × backends; any thread. */
double cl_learning_run_progress(ClLearningRun *run);
/* A deep copy of every backend's trace so far; any thread. */
ClLearningTrace *cl_learning_run_copy_traces(ClLearningRun *run, int *count);
/* Brings such a copy up to date, copying only what changed since: the new
 * losses and tracked values, the parameters, the status; any thread. */
void cl_learning_run_update_traces(ClLearningRun *run, ClLearningTrace *copy, int count);
