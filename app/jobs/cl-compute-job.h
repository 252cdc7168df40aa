/* Everything the window shows for a scene, computed off the main thread:
 * per enabled backend the trajectory, contacts, loss, the adjoint gradient
 * with respect to every ball's initial position, velocity and control[0],
 * the backend's own central finite differences, and optionally the
 * perturbation study of one parameter (rollouts at θ ± δ and the first-order
 * prediction from forward-mode tangents). The sim API is reentrant, so the
 * job only needs its own scene copy. */
#pragma once

#include "contactlab/sim.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct ClBackendResult {
	int backend;
	ClStatus status; /* of the recorded rollout */
	int steps_done;
	double *states; /* (steps_done + 1) × state size */
	int event_count;
	ClContactEvent *events;
	double loss;
	double *gradient; /* per column; gradient[0] is the loss itself */
	double *fd;       /* per column; fd[0] is the loss itself */
	double fd_step;   /* h of the central differences (the CLI's choice) */
	ClStatus fd_status;
	/* perturbation study (NULL when not asked for) */
	double *plus_states, *minus_states; /* (steps + 1) × state size, NaN after a failure */
	ClStatus plus_status, minus_status;
	int tangent_count;
	int *tangent_steps; /* the steps n where d s_n / dθ was computed */
	double *tangents;   /* tangent_count × state size */
} ClBackendResult;

typedef struct ClComputeResult {
	ClScene *scene; /* the scene the numbers belong to */
	int column_count;
	char **column_names; /* "loss", "ball.position.x", …, NULL-terminated */
	ClParam *columns;    /* columns[k] for k ≥ 1 */
	int backend_count;
	ClBackendResult *backends;
	gboolean has_perturbation;
	ClParam perturb_param;
	char *perturb_name;
	double perturb_delta;
} ClComputeResult;

ClComputeResult *cl_compute_result_ref(ClComputeResult *result);
void cl_compute_result_unref(ClComputeResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClComputeResult, cl_compute_result_unref)
/* The row of a backend in result, or NULL when it was not computed. */
const ClBackendResult *cl_compute_result_find(const ClComputeResult *result, int backend);
/* The CSV the Gradients view copies: backend,parameter,value,fd,status. */
char *cl_compute_result_to_csv(const ClComputeResult *result);

#define CL_TYPE_COMPUTE_JOB (cl_compute_job_get_type())
G_DECLARE_FINAL_TYPE(ClComputeJob, cl_compute_job, CL, COMPUTE_JOB, GObject)

/* perturb: a parameter name with an adjoint (ball.position.x, …) or NULL. */
ClComputeJob *cl_compute_job_new(const ClScene *scene, const int *backends, int backend_count, const char *perturb,
								 double delta);
/* Fraction done in [0, 1]; may be called from any thread. */
double cl_compute_job_progress(ClComputeJob *job);
void cl_compute_job_run_async(ClComputeJob *job, GCancellable *cancellable, GAsyncReadyCallback callback,
							  gpointer user_data);
ClComputeResult *cl_compute_job_finish(ClComputeJob *job, GAsyncResult *result, GError **error);
/* The same work in the calling thread (tests). */
ClComputeResult *cl_compute_job_run(ClComputeJob *job, GCancellable *cancellable, GError **error);

G_END_DECLS
