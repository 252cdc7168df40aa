/* The scene canvas's logic without the widget: the world ↔ screen view,
 * picking what lies under the pointer, and the edits a drag or click makes.
 * Every edit keeps the scene valid (it is refused, with cl_scene_validate's
 * message, when it would not be), so this is tested without a display. */
#pragma once

#include "contactlab/sim.h"

#include <stdbool.h>
#include <stddef.h>

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

/* Handles before bodies, so a small arrow on a big ball stays reachable. */
ClPick cl_scene_pick(const ClScene *scene, const ClView *view, double sx, double sy);
/* Where a ball's velocity handle is drawn: the arrow head, or a knob just
 * outside the ball when the arrow is too short to grab. */
ClVec2 cl_velocity_handle(const ClScene *scene, const ClView *view, int ball);
ClVec2 cl_wall_rotate_handle(const ClScene *scene, const ClView *view, int wall);
/* The wall's visible anchor: its point projected to the middle of the view. */
ClVec2 cl_wall_anchor(const ClScene *scene, const ClView *view, int wall);

/* Edits: true when applied; false leaves the scene unchanged and writes why. */
bool cl_edit_move_ball(ClScene *scene, int ball, ClVec2 position, char *message, size_t size);
bool cl_edit_set_velocity(ClScene *scene, int ball, ClVec2 handle, char *message, size_t size);
bool cl_edit_move_wall(ClScene *scene, int wall, ClVec2 point, char *message, size_t size);
/* Turns the wall so its line points from its anchor towards handle. */
bool cl_edit_rotate_wall(ClScene *scene, int wall, ClVec2 anchor, ClVec2 handle, char *message, size_t size);
bool cl_edit_move_target(ClScene *scene, int loss, ClVec2 target);
/* Return the new object's index, or −1. */
int cl_edit_add_ball(ClScene *scene, ClVec2 position, double radius, char *message, size_t size);
int cl_edit_add_wall(ClScene *scene, ClVec2 point, ClVec2 normal, char *message, size_t size);
/* Moves the target of ball's final_position term (adding one when the ball
 * has none); ball < 0 means the first such term, or ball 0. Returns the term. */
int cl_edit_set_target(ClScene *scene, int ball, ClVec2 target);
bool cl_edit_delete(ClScene *scene, ClPick selection);
