/* The scene drawn as the canvas shows it — grid, walls, balls with their
 * velocity arrows, targets, every backend's trajectory over the reference's
 * with its contacts, playback and legend — onto any cairo_t: the widget's
 * frames, the canvas export, and as a figure panel Export All's canvas,
 * `simulate --png`, lesson handouts and the paper's Figure 2 are one code
 * path. Cairo and Pango, no GTK. Also the world ↔ screen view it is drawn
 * through and where its handles are, for picking. */
#pragma once

#include "contactlab/sim.h"
#include "plot.h"
#include "run-data.h"

#include <cairo.h>
#include <stdbool.h>

/* A velocity arrow shows where the ball would be after this many seconds. */
#define CL_ARROW_SECONDS 0.25
/* Distance in pixels within which a handle or a wall line is picked. */
#define CL_PICK_TOLERANCE 7.0

/* World y points up; the world point (center_x, center_y) is at the middle
 * of a width × height widget, scale pixels per metre. */
typedef struct ClView {
	double center_x, center_y;
	double scale;
	double width, height;
} ClView;

ClVec2 cl_view_to_screen(const ClView *view, ClVec2 world);
ClVec2 cl_view_to_world(const ClView *view, double sx, double sy);
/* Zooms by factor keeping the world point under (sx, sy) in place. */
void cl_view_zoom_at(ClView *view, double sx, double sy, double factor);
void cl_view_pan(ClView *view, double dx_pixels, double dy_pixels);
/* Shows the box [x0, x1] × [y0, y1] with margin pixels around it. */
void cl_view_fit(ClView *view, double x0, double y0, double x1, double y1, double margin);
/* The grid spacing (1, 2 or 5 × 10^k m) that puts lines at least 48 px apart. */
double cl_view_grid_step(const ClView *view);
double cl_snap(double value, double step);

typedef enum ClPickKind {
	CL_PICK_NONE,
	CL_PICK_BALL,
	CL_PICK_VELOCITY,    /* the head of a ball's velocity arrow */
	CL_PICK_WALL,        /* the wall's line: drag moves it */
	CL_PICK_WALL_ROTATE, /* the wall's rotation handle */
	CL_PICK_TARGET,      /* the target of a final_position loss term (index = term) */
} ClPickKind;

typedef struct ClPick {
	ClPickKind kind;
	int index;
} ClPick;

/* Whether the ball's velocity knob and labels are drawn: always, but in a
 * scene of more than a dozen balls only for the selected or hovered one. */
bool cl_ball_has_handles(const ClScene *scene, int ball, ClPick selection, ClPick hover);
/* Where a ball's velocity handle is drawn: the arrow head, or a knob just
 * outside the ball when the arrow is too short to grab. */
ClVec2 cl_velocity_handle(const ClScene *scene, const ClView *view, int ball);
ClVec2 cl_wall_rotate_handle(const ClScene *scene, const ClView *view, int wall);
/* The wall's visible anchor: its point projected to the middle of the view. */
ClVec2 cl_wall_anchor(const ClScene *scene, const ClView *view, int wall);

/* The view that shows the scene, and a run's trajectories when given,
 * within a width × height area with margin pixels around them. */
void cl_view_fit_scene(ClView *view, const ClScene *scene, const ClScene *result_scene, ClRunData *result,
					   const gboolean *backend_visible, double margin);

typedef struct ClSceneRenderInput {
	const ClScene *scene;           /* the scene being edited */
	const ClScene *result_scene;    /* the scene result was computed for */
	ClRunData *result;              /* trajectories to overlay, or NULL */
	gboolean result_stale;          /* the scene changed since result was computed */
	const ClView *view;
	double time;                    /* playback time, s */
	double trail;                   /* trail length behind the balls, s */
	ClPick selection;
	ClPick hover;
	const gboolean *backend_visible; /* cl_backend_count() entries: drawn */
	const gboolean *backend_hidden;  /* or NULL: computed but hidden, listed struck through in the legend */
	gboolean dark;
	gboolean handles;                /* the editing handles (the canvas; not an export) */
	gboolean in_figure;              /* a figure's panel: the figure lists the backends; whole runs, no clock */
} ClSceneRenderInput;

void cl_scene_render(cairo_t *cr, const ClSceneRenderInput *in);
/* cl_scene_render in two layers: under, what stays while playback runs
 * (grid, walls, whole trajectories, targets, the authored balls), and
 * over, what moves with the time (the balls and trails at that time, the
 * legend and scale bar above them). */
void cl_scene_render_under(cairo_t *cr, const ClSceneRenderInput *in);
void cl_scene_render_over(cairo_t *cr, const ClSceneRenderInput *in);

/* The canvas's playback frames: the under layer kept as an image of
 * pixels device pixels a unit, drawn again only when what it shows changes
 * (revision, which the caller bumps on any change of the scene or the
 * results, the view, the size, the theme, selection, hover, the backends
 * shown, whether playback has begun); then the over layer on top. Exports
 * draw with cl_scene_render, all vector. */
typedef struct ClSceneLayer ClSceneLayer;
ClSceneLayer *cl_scene_layer_new(void);
void cl_scene_layer_free(ClSceneLayer *layer);
void cl_scene_layer_render(ClSceneLayer *layer, cairo_t *cr, const ClSceneRenderInput *in, double pixels,
						   guint64 revision);
/* A wall being drawn from → to (world), its free side along normal, over
 * what cl_scene_render drew: in the warning colour when it is refused. */
void cl_scene_draw_wall_preview(cairo_t *cr, const ClSceneRenderInput *in, ClVec2 from, ClVec2 to, ClVec2 normal,
								bool refused);
/* The backend whose legend row is at (x, y) in what in renders, or −1. */
int cl_scene_legend_pick(const ClSceneRenderInput *in, double x, double y);

/* What a figure panel drawing a Run keeps (the figure may outlive the
 * Run's owner): the scene copied, the data referenced, and its backends. */
typedef struct ClRunDrawing {
	ClScene *scene;
	ClRunData *data;
	gboolean *visible; /* cl_backend_count() entries: the data's backends */
} ClRunDrawing;

ClRunDrawing *cl_run_drawing_new(const ClScene *scene, ClRunData *data);
void cl_run_drawing_free(gpointer drawing);
/* The Run drawings are sized in screen pixels around 10-point text at
 * 96 dpi: scales cr so that text is a figure's label size (font_size + 1),
 * less in a small panel (width × height), and returns the factor by which
 * the drawing's width and height grow. */
double cl_run_drawing_scale(cairo_t *cr, double width, double height, double font_size);

/* The panel shows scene with data's trajectories (every backend of data,
 * each slot computed for scene or a copy with other values) as an export
 * does: fitted, at the end of the run, no editing handles, its text at the
 * figure's size. scene is copied and data referenced for the figure's life.
 * legend: each backend also in the figure's legend (pass FALSE when other
 * panels list the same backends). */
void cl_scene_panel_set(ClPlotPanel *panel, const ClScene *scene, ClRunData *data, gboolean legend);
/* One scene panel under the scene's name with the backends in a legend
 * below: `simulate --png` and Export All's canvas. */
ClPlotFigure *cl_scene_figure_new(const ClScene *scene, ClRunData *data);
