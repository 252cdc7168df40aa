/* Figures and CSV of the convergence view and of lesson steps, drawn with
 * the plots/ library (the window, the handout and the CLI share them). */
#pragma once

#include "convergence-data.h"
#include "lesson.h"
#include "plot.h"

#include <glib.h>

/* Each backend's derivative against N on a log axis (markers at the step
 * counts), exact as the reference line. Backends in highlight (int registry
 * indices, may be NULL or empty) are drawn wider, the others lighter. */
ClPlotFigure *cl_figure_convergence(const ClConvergenceRun *run, const GArray *highlight);

/* The figure of a step's view: trajectories (gradients), perturbed
 * trajectories and predictions (perturbation), the heatmap with descent
 * paths, loss curves with the learned controls or trajectories (learning),
 * or the convergence plot. Highlighted backends stand out. */
ClPlotFigure *cl_lesson_figure(const ClLessonResult *result);
/* A good export size for it, in points. */
void cl_lesson_figure_size(const ClLessonResult *result, const ClPlotFigure *figure, double *width, double *height);

/* The data of a step's view as CSV with a header row:
 * gradients: backend,parameter,value,fd (and loss rows);
 * perturbation: backend,offset,step,time,ball,x,y (offset −1, 0, +1 times delta);
 * heatmap: x,y,backend,quantity,value; learning: backend,iteration,loss;
 * convergence: backend,steps,dt,value. */
GString *cl_lesson_step_csv(const ClLessonResult *result);
