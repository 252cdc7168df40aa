/* What the Learning view shows and exports, without GTK: the figure (loss
 * curves of every backend with a reference line, and the learned
 * parameters: control profiles against the analytic optimal control, or the
 * first scalar over the iterations) and the CSV tables. */
#pragma once

#include "contactlab/sim.h"
#include "contacts.h"
#include "plot.h"

#include <glib.h>

/* One backend's run of gradient descent, as a learning job records it. */

typedef struct ClLearningTrace {
	int backend;
	gboolean finished;
	int iterations;  /* losses so far */
	double *loss;    /* loss at each iteration, before its update */
	double *tracked; /* the first optimized non-control scalar at each loss (NULL if none) */
	int value_count;
	double *values;  /* the parameters after the last update */
	ClStatus status; /* of the optimization */
	/* when finished: the final parameters' loss under the backend's own
	 * dynamics and under exact (NAN when it failed) */
	double final_loss;
	ClStatus final_status;
	double exact_loss;
	ClStatus exact_status;
	char contacts[CL_CONTACTS_TEXT_MAX]; /* under the backend's own dynamics (contacts.h) */
} ClLearningTrace;

void cl_learning_trace_clear(ClLearningTrace *trace);
void cl_learning_traces_free(ClLearningTrace *traces, int count);


/* Where one trace's lines are in a figure, to grow them as the run goes on. */
typedef struct ClLearningCurves {
	ClPlotSeries *loss;   /* NULL: not drawn (no loss yet) */
	ClPlotSeries *second; /* its learned control profile or tracked parameter; NULL: none */
	int points;           /* the trace's iterations the lines show */
} ClLearningCurves;

/* scene: the run's scene (optimize = the run's def); params, count, tracked:
 * the expanded parameters and the index of the tracked one (a learning
 * job's cl_learning_job_params / _tracked). reference: a horizontal
 * line on the loss panel (NAN: none). curves: NULL, or trace_count entries
 * filled with where each trace's lines are. */
ClPlotFigure *cl_learning_figure(const ClScene *scene, const ClParam *params, int count, int tracked,
								 const ClLearningTrace *traces, int trace_count, gboolean log_loss, double reference,
								 const char *reference_label, ClLearningCurves *curves);
/* Brings that figure's lines up to traces that grew since (new losses and
 * tracked values appended, control profiles replaced): the figure
 * cl_learning_figure would make from them, without building it again.
 * FALSE, changing nothing, when it has to be rebuilt instead (a backend
 * got its first points, so it has no line yet). */
gboolean cl_learning_figure_grow(const ClScene *scene, const ClParam *params, int count, int tracked,
								  const ClLearningTrace *traces, int trace_count, ClLearningCurves *curves);

/* backend,iteration,loss: every iteration's loss, then (when finished) the
 * final parameters' loss at iteration = iterations, as `contactlab optimize --csv`. */
GString *cl_learning_curves_csv(const ClLearningTrace *traces, int count);
/* backend,parameter,value: the learned value of every optimized scalar. */
GString *cl_learning_parameters_csv(const ClScene *scene, const ClParam *params, int param_count,
									const ClLearningTrace *traces, int count);
/* backend,status,iterations,final_loss,exact_dynamics_loss,contacts (empty until finished) */
GString *cl_learning_summary_csv(const ClLearningTrace *traces, int count);
