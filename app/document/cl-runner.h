/* Keeps a document's Run result (trajectories and gradient rows of every
 * enabled backend) current. A change of the scene or of the backends
 * cancels the Run under way; when live, a new one starts as soon as the
 * main loop is idle, so a drag's previews recompute as the pointer moves.
 * The result is stored in the document once its adjoints are in place;
 * finite differences follow, the visible columns first, and each batch of
 * them is announced as a change of the document's results. */
#pragma once

#include "cl-document.h"

G_BEGIN_DECLS

#define CL_TYPE_RUNNER (cl_runner_get_type())
G_DECLARE_FINAL_TYPE(ClRunner, cl_runner, CL, RUNNER, GObject)

ClRunner *cl_runner_new(ClDocument *doc);

/* Live: recompute after every change (default TRUE). */
void cl_runner_set_live(ClRunner *runner, gboolean live);
gboolean cl_runner_get_live(ClRunner *runner);
/* Which cells get a central difference, and the columns (indices into
 * cl_runner_columns) differenced first. */
void cl_runner_set_fd(ClRunner *runner, ClFdChoice fd);
ClFdChoice cl_runner_get_fd(ClRunner *runner);
void cl_runner_set_fd_first(ClRunner *runner, const int *columns, int count);
/* The gradient table's extra columns after the default ones (names such as
 * "elasticity", "ground.angle", in the order added; NULL: none). Reruns keep
 * them; a name the scene no longer has is left out of a run, not dropped. */
void cl_runner_set_extra_columns(ClRunner *runner, const char *const *names);
const char *const *cl_runner_get_extra_columns(ClRunner *runner); /* NULL-terminated, never NULL */
/* The columns a run of scene computes: the default ones, then the extra ones
 * that fit it (free() the array). */
ClParam *cl_runner_columns(ClRunner *runner, const ClScene *scene, int *count);
/* The perturbation study to include (parameter NULL: none). */
void cl_runner_set_perturbation(ClRunner *runner, const char *parameter, double delta);

/* Starts a Run now (cancelling one under way). */
void cl_runner_run(ClRunner *runner);
void cl_runner_cancel(ClRunner *runner);
gboolean cl_runner_is_running(ClRunner *runner);
double cl_runner_get_progress(ClRunner *runner);
/* What the last Run did, for a status bar: "10 backends · 480 steps ·
 * 0.26 s", "Computing…", why it could not start, or "" before the first. */
const char *cl_runner_get_status(ClRunner *runner);
/* Runs completed since the runner was made. */
int cl_runner_get_completed(ClRunner *runner);

G_END_DECLS
