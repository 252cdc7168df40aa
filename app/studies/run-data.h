/* What a Run computes for a scene, the data the canvas, the Gradients and
 * the Perturbation views show and export: per backend its trajectory and
 * contacts, its gradient row over the table's columns (loss, adjoint, own
 * FD), and optionally the perturbation study of one parameter (runs at
 * θ ± δ and the first-order prediction from forward-mode tangents).
 *
 * The rows' finite differences arrive after the rest (a big scene's take
 * minutes): they are written under the data's lock while views read them,
 * everything else is fixed once cl_run_data_ready says so. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

G_BEGIN_DECLS

typedef struct ClRunBackend {
	int backend;
	ClGradientRow row; /* status, loss, adjoint of every column; FD cells under the lock */
	int steps_done;
	double *states; /* (steps_done + 1) × state size */
	int event_count;
	ClContactEvent *events;
	/* the perturbation study (NULL states when not asked for) */
	double *plus_states, *minus_states; /* (steps + 1) × state size, NAN after a failure */
	ClStatus plus_status, minus_status;
	int tangent_count;
	int *tangent_steps; /* the steps n where d s_n / dθ was computed */
	double *tangents;   /* tangent_count × state size */
} ClRunBackend;

typedef struct ClRunData {
	int column_count;
	ClParam *columns; /* the table's parameters */
	int backend_count;
	ClRunBackend *backends;
	gboolean has_perturbation;
	ClParam perturb_param;
	double perturb_delta;
	/* private: guards the rows' FD cells, set while the data is shared */
	GMutex lock;
	gint ref_count; /* atomic: a figure keeps the data it draws */
	gint ready;    /* atomic: trajectories, rows' adjoints and perturbation are in place */
	gint fd_done;  /* atomic: differences taken of fd_total */
	int fd_total;
	int *fd_order; /* the cells (slot · columns + column) to difference, in order */
} ClRunData;

/* Data for backends × columns of scene, nothing computed yet; one reference. */
ClRunData *cl_run_data_new(const ClScene *scene, const int *backends, int backend_count, const ClParam *columns,
						   int column_count);
ClRunData *cl_run_data_ref(ClRunData *data);
/* Drops a reference; the last frees the data. */
void cl_run_data_unref(ClRunData *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClRunData, cl_run_data_unref)

/* Plans the differences: the cells fd asks for, columns first[] before
 * the others (the visible ones). */
void cl_run_data_plan_fd(ClRunData *data, const ClScene *scene, ClFdChoice fd, const int *first, int first_count);
/* Computes backend slot b's recorded run (trajectory, contacts, loss,
 * adjoints). scene is the one the data was made for or a copy differing in
 * values only (same balls and steps), e.g. each backend's optimized start. */
void cl_run_data_compute_backend(ClRunData *data, const ClScene *scene, int slot);
/* Asks for the perturbation study of the named parameter at ± delta;
 * FALSE with a message naming it unless it is a parameter of scene. An
 * initial-state or control parameter has every backend's forward-mode
 * tangent, a physical one (elasticity, a wall's angle, …) the tangent of
 * the backends that differentiate it (cl_backend_has_param_adjoint), NAN
 * for the others; the ± delta runs are there for every backend. */
gboolean cl_run_data_set_perturbation(ClRunData *data, const ClScene *scene, const char *parameter, double delta,
									  GError **error);
/* The perturbation study of param at ± delta for slot b; cancel (may be NULL) stops it between rollouts. */
void cl_run_data_compute_perturbation(ClRunData *data, const ClScene *scene, int slot, const _Atomic int *cancel);
/* Takes the planned difference number i (of fd_total) and stores it under the lock. */
void cl_run_data_compute_fd(ClRunData *data, const ClScene *scene, int i);

gboolean cl_run_data_ready(const ClRunData *data);
void cl_run_data_set_ready(ClRunData *data);
/* A copy of cell (slot, column), FD included, safe while differences arrive. */
ClGradientCell cl_run_data_cell(ClRunData *data, int slot, int column);
/* Differences taken so far and in all. */
int cl_run_data_fd_done(const ClRunData *data);

/* The slot of a backend, or −1; the reference's slot, or −1 when it is not
 * there or its run stopped (a failed reference judges nothing). */
int cl_run_data_slot(const ClRunData *data, int backend);
int cl_run_data_reference_slot(const ClRunData *data);
/* Where backend slot b's ball is at time t (linear between steps); FALSE
 * when its run stopped before t. */
gboolean cl_run_data_position(const ClRunData *data, const ClScene *scene, int slot, int ball, double t, double *x,
							  double *y);

/* The gradient dataset (formats/gradient-data.c's CSV) of the data as it is. */
GString *cl_run_data_gradient_csv(ClRunData *data, const ClScene *scene);
/* The perturbation study's runs: backend,offset,step,time,ball,x,y with a
 * header row; offset −1, 0, +1 for θ − δ, θ, θ + δ; a failed run stops at
 * its last good step. Only the header without a study. */
GString *cl_run_data_perturbation_csv(const ClRunData *data, const ClScene *scene);

G_END_DECLS
