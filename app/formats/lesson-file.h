/* Lesson files: data/lessons/ID.json, version 1 ({"contactlab_lesson": 1, …}),
 * read strictly with json-glib (see docs/lessons.md for the format).
 *
 * A lesson is a list of steps; each step is a complete state to apply: the
 * scene (with its backend parameters), the enabled backends, the active view
 * with its settings, the highlighted cells or curves, and a text whose
 * numbers are placeholders computed when the step is applied (app/lesson.h). */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

#define CL_LESSON_FILE_ERROR (cl_lesson_file_error_quark())
GQuark cl_lesson_file_error_quark(void);

typedef enum {
	CL_LESSON_FILE_ERROR_SYNTAX,  /* not JSON */
	CL_LESSON_FILE_ERROR_INVALID, /* JSON, but not a valid lesson: the message names the JSON path */
	CL_LESSON_FILE_ERROR_IO,
} ClLessonFileError;

typedef enum {
	CL_LESSON_VIEW_GRADIENTS,
	CL_LESSON_VIEW_PERTURBATION,
	CL_LESSON_VIEW_HEATMAP,
	CL_LESSON_VIEW_LEARNING,
	CL_LESSON_VIEW_CONVERGENCE,
	CL_LESSON_VIEW_COUNT
} ClLessonViewKind;

const char *cl_lesson_view_name(ClLessonViewKind kind); /* "gradients", … */

typedef struct ClLessonAxis {
	char parameter[CL_NAME_MAX];
	double min, max;
	int count;
} ClLessonAxis;

typedef struct ClLessonView {
	ClLessonViewKind kind;
	/* gradients: the columns (NULL-terminated; NULL: every ball's initial
	 * position, velocity and control[0], as `contactlab gradients`) */
	char **parameters;
	/* perturbation and convergence: the derivative's parameter */
	char parameter[CL_NAME_MAX];
	double delta; /* perturbation: θ ± delta */
	/* heatmap */
	ClLessonAxis x, y;
	char quantity[32]; /* loss, grad-x, grad-y, angle-error, sign-agreement */
	gboolean paths;    /* draw each backend's descent path (learning settings below) */
	/* learning (and heatmap paths): the scene's optimize def with these applied */
	int iterations;
	double learning_rate;
	gboolean log_scale;
	gboolean show_optimum; /* the analytic optimum as a line (Task 3) */
	/* convergence */
	GArray *steps; /* int */
} ClLessonView;

/* A step's smoothing (the optional "smoothing" key): cl_smooth over some
 * of the scene's parameters for every enabled backend, the numbers the
 * {smooth …} placeholders cite. */
typedef struct ClLessonSmoothing {
	char **parameters; /* NULL-terminated; NULL when the step has none */
	double *sigma;     /* one per parameter */
	int samples;
	guint64 seed;
	gboolean antithetic;
	double gamma; /* NAN: automatic */
} ClLessonSmoothing;

/* What a {smooth BACKEND WHAT [PARAMETER]} placeholder cites. */
typedef enum {
	/* of one parameter */
	CL_SMOOTH_CITE_POINT,           /* point: the plain gradient at θ */
	CL_SMOOTH_CITE_ZOBG,            /* zobg, and zobg-se its standard error */
	CL_SMOOTH_CITE_ZOBG_SE,
	CL_SMOOTH_CITE_ZOBG_NOBASELINE, /* zobg-nobaseline, zobg-nobaseline-se */
	CL_SMOOTH_CITE_ZOBG_NOBASELINE_SE,
	CL_SMOOTH_CITE_FOBG, /* fobg, fobg-se */
	CL_SMOOTH_CITE_FOBG_SE,
	CL_SMOOTH_CITE_AOBG, /* aobg, aobg-se */
	CL_SMOOTH_CITE_AOBG_SE,
	CL_SMOOTH_CITE_FOBG_BIAS, /* fobg-bias: FoBG − exact's ZoBG, fobg-bias-se */
	CL_SMOOTH_CITE_FOBG_BIAS_SE,
	CL_SMOOTH_CITE_FOBG_MIN, /* fobg-min, fobg-max: the extreme per-sample adjoints */
	CL_SMOOTH_CITE_FOBG_MAX,
	CL_SMOOTH_CITE_FOBG_NEGATIVE, /* fobg-negative: the percentage of samples whose adjoint is negative */
	/* of the backend */
	CL_SMOOTH_CITE_LOSS,          /* loss: f(θ) */
	CL_SMOOTH_CITE_SMOOTHED_LOSS, /* smoothed-loss, smoothed-loss-se */
	CL_SMOOTH_CITE_SMOOTHED_LOSS_SE,
	CL_SMOOTH_CITE_ALPHA,      /* alpha */
	CL_SMOOTH_CITE_ALPHA_RULE, /* alpha-rule: eps>gamma, optimum, constraint or no-fobg (text) */
	CL_SMOOTH_CITE_EPSILON,    /* epsilon, gamma: the rule's ε and γ */
	CL_SMOOTH_CITE_GAMMA,
	CL_SMOOTH_CITE_NOT_OK, /* not-ok: sample runs whose status was not ok */
	CL_SMOOTH_CITE_COUNT
} ClSmoothCite;

const char *cl_smooth_cite_name(ClSmoothCite what); /* "zobg-se", … */

typedef struct ClLessonHighlight {
	int backend;               /* registry index */
	char parameter[CL_NAME_MAX]; /* "" for the backend's whole row or curve */
} ClLessonHighlight;

/* One placeholder of a step's text, parsed and checked at load time. */
typedef enum {
	CL_CITE_GRADIENT,      /* {gradient BACKEND PARAM}: dL/dPARAM (adjoint, else central differences) */
	CL_CITE_FD,            /* {fd BACKEND PARAM}: central difference of the backend's own forward map */
	CL_CITE_LOSS,          /* {loss BACKEND} */
	CL_CITE_LEARNING_LOSS, /* {learning BACKEND loss[K]}: loss at iteration K (before its update) */
	CL_CITE_LEARNING_FINAL,     /* {learning BACKEND final}: loss of the learned parameters */
	CL_CITE_LEARNING_EXACT,     /* {learning BACKEND exact-loss}: the learned parameters under exact */
	CL_CITE_LEARNING_PARAMETER, /* {learning BACKEND PARAM}: a learned parameter's value */
	CL_CITE_LEARNING_CONTACTS,  /* {learning BACKEND contacts}: what the learned trajectory hits, in order */
	CL_CITE_CONVERGENCE,   /* {convergence BACKEND N}: the view's derivative at N steps */
	CL_CITE_OPTIMUM,       /* {optimum}: the two-ball problem's continuous optimum */
	CL_CITE_OPTIMUM_TIME,  /* {optimum time}: its collision time */
	CL_CITE_SMOOTH,        /* {smooth BACKEND WHAT [PARAM]}: the step's smoothing (index: a ClSmoothCite) */
	CL_CITE_COUNT
} ClCiteKind;

typedef struct ClCite {
	ClCiteKind kind;
	char source[160];  /* the placeholder as written, without braces */
	int backend;       /* −1 for optimum */
	char parameter[CL_NAME_MAX];
	int index;         /* learning loss[K]: K; convergence: N; smooth: what */
	char format[16];   /* printf format of the number, "%.4g" unless given ("{… .6f}") */
	gsize start, end;  /* byte range of "{…}" in the text */
} ClCite;

typedef struct ClLessonStep {
	char *title;
	char *scene_preset; /* the preset id, or NULL for an inline scene */
	ClScene *scene;     /* preset or inline scene, "set" and backend parameters applied */
	GArray *backends;   /* int, registry indices, in the file's order */
	ClLessonView view;
	ClLessonSmoothing smoothing;
	GArray *highlights; /* ClLessonHighlight */
	char *text;         /* with placeholders */
	GArray *cites;      /* ClCite, in text order */
} ClLessonStep;

typedef struct ClLesson {
	char *id;  /* the file's name without .json */
	int order; /* position in the list of lessons (then by id) */
	char *title;
	char *summary;
	char *path; /* the file it came from, or NULL */
	GPtrArray *steps; /* ClLessonStep* */
} ClLesson;

/* Parses a lesson. On error the message reads "FILE: PATH: reason", e.g.
 * "tour.json: steps[2].view.steps[1]: must be a whole number from 1 to …";
 * filename is only used for messages and may be NULL. */
ClLesson *cl_lesson_file_parse(const char *data, gssize length, const char *filename, GError **error);
ClLesson *cl_lesson_file_load(const char *path, GError **error);
void cl_lesson_free(ClLesson *lesson);

/* The shipped lessons: data/lessons/ *.json, sorted by order. On error
 * (any file that does not load) NULL and the first file's message. */
GPtrArray *cl_lessons_load_all(GError **error);
/* Loads data/lessons/ID.json. */
ClLesson *cl_lesson_load(const char *id, GError **error);
