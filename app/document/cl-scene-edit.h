/* The scene canvas's logic without the widget: picking what lies under the
 * pointer, and the edits a drag or click makes.
 * Every edit keeps the scene valid (it is refused, with cl_scene_validate's
 * message, when it would not be), so this is tested without a display. */
#pragma once

#include "scene-figure.h"

#include <stdbool.h>
#include <stddef.h>

/* Handles before bodies, so a small arrow on a big ball stays reachable. */
ClPick cl_scene_pick(const ClScene *scene, const ClView *view, double sx, double sy);
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
