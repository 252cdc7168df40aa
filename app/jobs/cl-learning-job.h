/* Gradient descent (or Adam) on a scene's optimization problem with several
 * backends at once, off the main thread: one cl_optimize per backend in a
 * thread pool, every iteration's loss and parameters published as it
 * happens so the main thread can draw the curves live. When a backend
 * finishes, its result is re-evaluated under its own and under the exact
 * dynamics, and the walls its optimized trajectory reaches are recorded. */
#pragma once

#include "learning-report.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define CL_TYPE_LEARNING_JOB (cl_learning_job_get_type())
G_DECLARE_FINAL_TYPE(ClLearningJob, cl_learning_job, CL, LEARNING_JOB, GObject)

/* Returns NULL with a message when def does not expand to parameters. */
ClLearningJob *cl_learning_job_new(const ClScene *scene, const ClOptimizeDef *def, const int *backends,
								   int backend_count, int threads, GError **error);
const ClScene *cl_learning_job_scene(ClLearningJob *job); /* with optimize = def */
/* The expanded parameters, in the order of ClLearningTrace.values. */
const ClParam *cl_learning_job_params(ClLearningJob *job, int *count);
/* The index among them of ClLearningTrace.tracked's parameter, −1 if none. */
int cl_learning_job_tracked(ClLearningJob *job);
/* Iterations done over every backend, of iterations × backends; any thread. */
double cl_learning_job_progress(ClLearningJob *job);
/* A deep copy of every backend's trace so far; any thread. */
ClLearningTrace *cl_learning_job_copy_traces(ClLearningJob *job, int *count);
/* Brings such a copy up to date, copying only what changed since: the new
 * losses and tracked values, the parameters, the status; any thread. */
void cl_learning_job_update_traces(ClLearningJob *job, ClLearningTrace *copy, int count);
void cl_learning_job_run_async(ClLearningJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							   gpointer user_data);
gboolean cl_learning_job_finish(ClLearningJob *job, GAsyncResult *result, GError **error);
/* The same in the calling thread (tests). */
gboolean cl_learning_job_run(ClLearningJob *job, GCancellable *cancellable, GError **error);

G_END_DECLS
