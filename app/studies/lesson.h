/* Applying a lesson step: computing what its view shows and every number its
 * text cites, headless (the window, the handout and the tests share it). */
#pragma once

#include "convergence-data.h"
#include "lesson-file.h"

#include <glib.h>

/* One backend's learning run (learning view, heatmap descent paths). */
typedef struct ClLessonLearning {
	int iterations;   /* done */
	double *loss;     /* loss at each iteration, before its update */
	int value_count;  /* the optimized scalars, in cl_optimize_expand order */
	double *values;   /* learned values */
	double *path_x, *path_y; /* heatmap paths: the two swept parameters at each iteration, or NULL */
	double final_loss; /* the learned parameters under the backend's own dynamics */
	double exact_loss; /* … and under exact's */
	char *contacts;   /* what the learned trajectory hits, in order: "ground then wall" */
	ClStatus status;
} ClLessonLearning;

/* One backend's perturbation view: trajectories at θ − δ, θ, θ + δ and the
 * first-order prediction of the final state, s_N(θ) ± δ·ds_N/dθ. */
typedef struct ClLessonPerturbation {
	ClScene *scenes[3];     /* θ − δ, θ, θ + δ */
	ClRollout *rollouts[3];
	double *ds_final;       /* ds_N/dθ from the backend's own gradient (forward mode) */
} ClLessonPerturbation;

typedef struct ClLessonResult {
	const ClLessonStep *step;
	guint backend_count;   /* = step->backends->len; per-backend arrays are in that order */
	/* the forward run at the step's scene */
	double *loss;
	ClStatus *status;
	/* derivatives: columns are the gradients view's parameters, then every
	 * other parameter a placeholder cites; rows are backends */
	GPtrArray *columns; /* char* parameter names */
	double *gradient;   /* backend_count × columns->len, adjoint (or central differences) */
	double *fd;         /* the backend's own central differences */
	ClLessonLearning *learning;    /* backend_count entries when the view learns, else NULL */
	ClConvergenceRun *convergence; /* the convergence view's run, else NULL */
	ClSweepDef sweep;              /* the heatmap view's sweep (backends: the step's) … */
	ClSweepCell *cells;            /* … and its cells, else NULL */
	ClLessonPerturbation *perturbation; /* backend_count entries for the perturbation view, else NULL */
	ClSmoothResult *smoothing;          /* backend_count entries (with terms) when the step smooths, else NULL */
	double *cite_values; /* step->cites->len; NAN for {learning … contacts} */
	char **cite_texts;   /* the placeholders' text, NULL-terminated */
	char *text;          /* the step's text with every placeholder replaced */
	GPtrArray *problems; /* char*: "{gradient impulse ball.position.y}: unsupported at step 0: …" */
} ClLessonResult;

/* Computes the step (in the calling thread; cancel may be NULL and is
 * polled between computations). NULL only when cancelled. A placeholder that
 * cannot be computed (a failed run) shows "n/a" and adds a problem. */
ClLessonResult *cl_lesson_step_apply(const ClLessonStep *step, const _Atomic int *cancel);
void cl_lesson_result_free(ClLessonResult *result);

/* The column of a parameter in result->columns, −1 if absent. */
int cl_lesson_result_column(const ClLessonResult *result, const char *parameter);
/* The slot of a backend in the step's list, −1 if not enabled. */
int cl_lesson_step_backend_slot(const ClLessonStep *step, int backend);

/* A cited number as the text shows it: printf format, locale-independent,
 * with a true minus sign (U+2212); "n/a" when not finite. */
char *cl_lesson_format_number(const char *format, double value);

/* The contacts of a run, in order, consecutive repeats merged: "ground then
 * wall", "ball2", or "nothing". */
char *cl_lesson_contacts_text(const ClScene *scene, const ClRollout *rollout);
