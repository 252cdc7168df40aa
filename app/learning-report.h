/* What the Learning view shows and exports, without GTK: the figure (loss
 * curves of every backend with a reference line, and the learned
 * parameters: control profiles against the analytic optimal control, or the
 * first scalar over the iterations), the mode label of Task 2 (which walls
 * the optimized trajectory reaches) and the CSV tables. */
#pragma once

#include "cl-learning-job.h"
#include "plot.h"

#include <glib.h>

/* Where one trace's lines are in a figure, to grow them as the run goes on. */
typedef struct ClLearningCurves {
	ClPlotSeries *loss;   /* NULL: not drawn (no loss yet) */
	ClPlotSeries *second; /* its learned control profile or tracked parameter; NULL: none */
	int points;           /* the trace's iterations the lines show */
} ClLearningCurves;

/* scene: the job's scene (optimize = the run's def); params, count, tracked
 * as cl_learning_job_params / _tracked give them. reference: a horizontal
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

/* "ground → wall", "ground only", "no contact" (separator between walls);
 * NULL for scenes without walls or traces that have not finished. */
char *cl_learning_mode_label(const ClScene *scene, const ClLearningTrace *trace, const char *separator);

/* backend,iteration,loss: every iteration's loss, then (when finished) the
 * final parameters' loss at iteration = iterations, as `contactlab optimize --csv`. */
GString *cl_learning_curves_csv(const ClLearningTrace *traces, int count);
/* backend,parameter,value: the learned value of every optimized scalar. */
GString *cl_learning_parameters_csv(const ClScene *scene, const ClParam *params, int param_count,
									const ClLearningTrace *traces, int count);
/* backend,status,iterations,final_loss,exact_dynamics_loss,walls_reached */
GString *cl_learning_summary_csv(const ClScene *scene, const ClLearningTrace *traces, int count);
