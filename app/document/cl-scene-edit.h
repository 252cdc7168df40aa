/* The scene canvas's logic without the widget: picking what lies under the
 * pointer, and the edits a drag or click makes.
 * Every edit keeps the scene valid (it is refused, with cl_scene_validate's
 * message, when it would not be), so this is tested without a display. */
#pragma once

#include "scene-figure.h"

#include <stdbool.h>
#include <stddef.h>

/* Handles before bodies, so a small arrow on a big ball stays reachable;
 * in a crowded scene only the velocity handles that are drawn (those of the
 * selected and the hovered ball, cl_ball_has_handles). */
ClPick cl_scene_pick(const ClScene *scene, const ClView *view, double sx, double sy, ClPick selection, ClPick hover);
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
/* The wall a drag from → to draws (world coordinates): its line runs
 * through both points, its solid side to the right of the drag as seen on
 * screen (a floor drawn left to right), the other side when flipped. false
 * when the points coincide. */
bool cl_wall_from_drag(ClVec2 from, ClVec2 to, bool flipped, ClVec2 *point, ClVec2 *normal);
/* true, with a sentence for the user, when that wall would overlap a ball. */
bool cl_wall_drag_problem(const ClScene *scene, ClVec2 point, ClVec2 normal, char *message, size_t size);
/* Moves the target of ball's final_position term (adding one when the ball
 * has none); ball < 0 means the first such term, or ball 0. Returns the term. */
int cl_edit_set_target(ClScene *scene, int ball, ClVec2 target);
bool cl_edit_delete(ClScene *scene, ClPick selection);
