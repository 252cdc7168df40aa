/* Ready-made figures, shared by the CLI and the GUI: heatmap small multiples
 * of a sweep, and the paper's Figures 2, 4 and 5. Computing (cl_figure_learn,
 * cl_sweep) is separate from building, so the GUI can compute in a worker
 * thread and rebuild the figure as results arrive. */
#pragma once

#include "contactlab/sim.h"
#include "plot.h"

#include <glib.h>

/* Default export size of the ready-made figures, in points, and PNG dpi. */
#define CL_FIGURE_WIDTH 540.0
#define CL_FIGURE_HEIGHT 360.0
#define CL_FIGURE_DPI 150.0

/* Pieces of the trajectory figures, for other figures (lessons): a run's
 * paths and final balls in the backend's style; walls, starts and targets;
 * a bounding box [x0 x1 y0 y1] grown by a run's points. */
void cl_figure_add_trajectory(ClPlotPanel *panel, const ClScene *scene, ClRollout *rollout, int backend, bool label);
void cl_figure_add_scene(ClPlotPanel *panel, const ClScene *scene);
void cl_figure_grow_box(double box[4], const ClScene *scene, ClRollout *rollout);

/* One panel: the scene's walls, starts and targets and each backend's run
 * (rollouts[k] under backends[k]) in its style, at true aspect. */
ClPlotFigure *cl_figure_trajectories(const ClScene *scene, ClRollout *const *rollouts, const int *backends, int count);

/* ---------------------------------------------------------------- heatmap */

/* One panel per backend of the sweep (without exact for quantities measured
 * against it), shared axes and one colour scale; for the loss, arrows of the
 * descent direction −∇L. exact_slot: the sweep's slot of the exact backend,
 * −1 if none (then angle-error and sign-agreement panels are empty). */
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

/* The walls ball 0 of a rollout comes within reach of (Task 2's modes: ground
 * then wall, or ground only), in the order it first does, into order (NULL
 * or wall_count entries). Returns how many. */
int cl_figure_walls_touched(const ClScene *scene, ClRollout *r, int *order);

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
