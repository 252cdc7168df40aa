/* A Run: for each backend its recorded rollout (trajectory, contacts, loss,
 * adjoints of the table's columns), the perturbation study when asked, and
 * then the finite differences, the requested first columns before the
 * others, each cell published as it is taken. The result (RUN, payload
 * ClRunData) exists from the start; cl_run_data_ready(payload) tells when
 * everything but the differences is in place. */
#pragma once

#include "cl-study-job.h"
#include "run-data.h"

G_BEGIN_DECLS

typedef struct ClRunRequest {
	const ClScene *scene; /* copied */
	guint revision;       /* the document revision the scene is */
	const int *backends;
	int backend_count;
	const ClParam *columns;
	int column_count;
	ClFdChoice fd;         /* which cells get a central difference */
	const int *fd_first;   /* columns differenced before the others (the visible ones) */
	int fd_first_count;
	const char *perturb;   /* a parameter with an adjoint, or NULL: no perturbation study */
	double perturb_delta;
} ClRunRequest;

/* A study job (cl_study_job_result gives its result); NULL with an error
 * when perturb names no initial-state or control parameter. */
ClJob *cl_run_job_new(const ClRunRequest *request, GError **error);

G_END_DECLS
