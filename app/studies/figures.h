/* Ready-made figures, shared by the CLI and the GUI: heatmap small multiples
 * of a sweep, and the paper's Figures 2, 4 and 5. Computing (cl_figure_learn,
 * cl_sweep) is separate from building, so the GUI can compute in a worker
 * thread and rebuild the figure as results arrive. */
#pragma once

#include "contactlab/sim.h"
#include "plot.h"
#include "run-data.h"

#include <glib.h>

/* Default export size of the ready-made figures, in points, and PNG dpi. */
#define CL_FIGURE_WIDTH 540.0
#define CL_FIGURE_HEIGHT 360.0
#define CL_FIGURE_DPI 150.0

/* A copy of scene with its optimization's learned values applied (as it
 * is when they do not fit the problem). */
ClScene *cl_figure_learned_scene(const ClScene *scene, const double *values, int value_count);
/* Each backends[k]'s run (trajectories only) from scene with its own
 * learned values[k] (value_counts[k] of them) applied; values NULL: all
 * from scene as it is. */
ClRunData *cl_figure_runs(const ClScene *scene, const int *backends, const double *const *values,
						  const int *value_counts, int count);
/* The scene drawn under runs that each start from their own learned values:
 * its initial velocities cleared, so no arrow claims to be their start. */
ClScene *cl_figure_start_scene(const ClScene *scene);

/* ---------------------------------------------------------------- heatmap */

/* One panel per backend of the sweep (without exact for quantities measured
 * against it), shared axes and one colour scale; for the loss, arrows of the
 * descent direction −∇L. exact_slot: the sweep's slot of the exact backend,
 * −1 if none (then angle-error and sign-agreement panels are empty). A star
 * marks scene's own point, when scene has both parameters. */
ClPlotFigure *cl_figure_heatmap(const ClScene *scene, const ClSweepDef *def, const ClSweepCell *cells,
								ClSweepQuantity quantity, int exact_slot);
/* An export size that leaves every panel of the grid readable, in points. */
void cl_figure_heatmap_size(const ClPlotFigure *figure, double *width, double *height);
/* The values that figure shows: x,y,backend,quantity,value with a header row. */
GString *cl_figure_heatmap_csv(const ClSweepDef *def, const ClSweepCell *cells, ClSweepQuantity quantity,
							   int exact_slot);

/* ------------------------------------------------------- learning curves */

typedef struct ClLearningCurve {
	int backend;
	int iterations;      /* done */
	double *loss;        /* loss at each iteration */
	double *tracked;     /* the tracked parameter at each iteration's loss, or NULL */
	int value_count;     /* the optimized parameters, as cl_optimize returns them */
	double *values;
	ClStatus status;
} ClLearningCurve;

/* Runs the scene's optimization with one backend, recording the loss and,
 * when tracked is not NULL, that scalar parameter (one of the optimized ones). */
void cl_figure_learn(const ClScene *scene, int backend, const ClParam *tracked, ClLearningCurve *curve);
void cl_learning_curve_clear(ClLearningCurve *curve);

/* One panel: the loss over iterations of each curve (log axis when every
 * loss is positive) and, where it applies, the analytic optimum of Task 3. */
ClPlotFigure *cl_figure_learning(const ClScene *scene, const ClLearningCurve *curves, int count);

/* Figure 2: Task 2's initial trajectories, the optimized trajectories that
 * hit ground then wall and those that hit only the ground, the loss and v_x
 * over iterations, and where each backend's v_0 ended. */
ClPlotFigure *cl_figure_task2(const ClScene *scene, const ClLearningCurve *curves, int count);
/* Figure 4: Task 3 learning curves with the analytic optimum, and the learned
 * control profiles (x components) with the analytic optimal control. */
ClPlotFigure *cl_figure_task3(const ClScene *scene, const ClLearningCurve *curves, int count);
/* Figure 5: learning curves of one backend for several values of one of its
 * parameters (compliant-warp stiffness). */
ClPlotFigure *cl_figure_parameter_study(const ClScene *scene, const char *parameter, const double *values,
										const ClLearningCurve *curves, int count);

/* Computes and builds the paper's Figure 2, 4 or 5 from the presets. */
ClPlotFigure *cl_figure_paper(int number, GError **error);

/* One line on what a heatmap of quantity encodes: colour, arrows, star. */
const char *cl_figure_heatmap_key(ClSweepQuantity quantity);
