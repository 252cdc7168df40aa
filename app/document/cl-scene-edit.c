#include "cl-scene-edit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double distance(ClVec2 a, ClVec2 b)
{
	return hypot(a.x - b.x, a.y - b.y);
}

ClPick cl_scene_pick(const ClScene *scene, const ClView *view, double sx, double sy, ClPick selection, ClPick hover)
{
	ClVec2 p = cl_view_to_world(view, sx, sy);
	double tol = CL_PICK_TOLERANCE / view->scale;
	for (int i = 0; i < scene->loss_count; i++)
		if (scene->loss[i].type == CL_LOSS_FINAL_POSITION && distance(p, scene->loss[i].target) <= 1.5 * tol)
			return (ClPick){CL_PICK_TARGET, i};
	for (int i = scene->ball_count - 1; i >= 0; i--)
		if (cl_ball_has_handles(scene, i, selection, hover) && distance(p, cl_velocity_handle(scene, view, i)) <= tol)
			return (ClPick){CL_PICK_VELOCITY, i};
	for (int i = scene->wall_count - 1; i >= 0; i--)
		if (distance(p, cl_wall_rotate_handle(scene, view, i)) <= tol)
			return (ClPick){CL_PICK_WALL_ROTATE, i};
	for (int i = scene->ball_count - 1; i >= 0; i--)
		if (distance(p, scene->balls[i].position) <= scene->balls[i].radius + 0.5 * tol)
			return (ClPick){CL_PICK_BALL, i};
	for (int i = scene->wall_count - 1; i >= 0; i--) {
		const ClWall *w = &scene->walls[i];
		double signed_distance = (p.x - w->point.x) * w->normal.x + (p.y - w->point.y) * w->normal.y;
		if (fabs(signed_distance) <= tol)
			return (ClPick){CL_PICK_WALL, i};
	}
	return (ClPick){CL_PICK_NONE, -1};
}

/* Applies a change made by the caller, or undoes it when the scene is no longer valid. */
static bool keep_if_valid(ClScene *scene, void *field, const void *saved, size_t field_size, char *message,
						  size_t size)
{
	if (cl_scene_validate(scene, message, size))
		return true;
	memcpy(field, saved, field_size);
	return false;
}

bool cl_edit_move_ball(ClScene *scene, int ball, ClVec2 position, char *message, size_t size)
{
	ClVec2 saved = scene->balls[ball].position;
	scene->balls[ball].position = position;
	return keep_if_valid(scene, &scene->balls[ball].position, &saved, sizeof saved, message, size);
}

bool cl_edit_set_velocity(ClScene *scene, int ball, ClVec2 handle, char *message, size_t size)
{
	ClBall *b = &scene->balls[ball];
	ClVec2 saved = b->velocity;
	b->velocity = (ClVec2){(handle.x - b->position.x) / CL_ARROW_SECONDS, (handle.y - b->position.y) / CL_ARROW_SECONDS};
	return keep_if_valid(scene, &b->velocity, &saved, sizeof saved, message, size);
}

bool cl_edit_move_wall(ClScene *scene, int wall, ClVec2 point, char *message, size_t size)
{
	ClWall saved = scene->walls[wall];
	scene->walls[wall].point = point;
	return keep_if_valid(scene, &scene->walls[wall], &saved, sizeof saved, message, size);
}

bool cl_edit_rotate_wall(ClScene *scene, int wall, ClVec2 anchor, ClVec2 handle, char *message, size_t size)
{
	ClVec2 d = {handle.x - anchor.x, handle.y - anchor.y};
	double length = hypot(d.x, d.y);
	if (!(length > 0)) {
		if (message && size)
			snprintf(message, size, "walls[%d].normal: must not be zero", wall);
		return false;
	}
	ClWall saved = scene->walls[wall];
	/* the line direction is the tangent; the normal is it turned clockwise */
	scene->walls[wall].point = anchor;
	scene->walls[wall].normal = (ClVec2){d.y / length, -d.x / length};
	return keep_if_valid(scene, &scene->walls[wall], &saved, sizeof saved, message, size);
}

bool cl_edit_move_target(ClScene *scene, int loss, ClVec2 target)
{
	if (loss < 0 || loss >= scene->loss_count || !isfinite(target.x) || !isfinite(target.y))
		return false;
	scene->loss[loss].target = target;
	return true;
}

static void unique_id(const char *prefix, char *id, size_t size, int (*find)(const ClScene *, const char *),
					  const ClScene *scene)
{
	for (int n = 1;; n++) {
		snprintf(id, size, "%s%d", prefix, n);
		if (find(scene, id) < 0)
			return;
	}
}

int cl_edit_add_ball(ClScene *scene, ClVec2 position, double radius, char *message, size_t size)
{
	char id[CL_ID_MAX];
	unique_id("ball", id, sizeof id, cl_scene_find_ball, scene);
	ClBall *b = cl_scene_add_ball(scene, id);
	b->position = position;
	b->radius = radius;
	if (!cl_scene_validate(scene, message, size)) {
		cl_scene_remove_ball(scene, scene->ball_count - 1);
		return -1;
	}
	return scene->ball_count - 1;
}

int cl_edit_add_wall(ClScene *scene, ClVec2 point, ClVec2 normal, char *message, size_t size)
{
	char id[CL_ID_MAX];
	unique_id("wall", id, sizeof id, cl_scene_find_wall, scene);
	double length = hypot(normal.x, normal.y);
	ClWall *w = cl_scene_add_wall(scene, id);
	w->point = point;
	w->normal = length > 0 ? (ClVec2){normal.x / length, normal.y / length} : (ClVec2){0, 1};
	if (!cl_scene_validate(scene, message, size)) {
		cl_scene_remove_wall(scene, scene->wall_count - 1);
		return -1;
	}
	return scene->wall_count - 1;
}

bool cl_wall_from_drag(ClVec2 from, ClVec2 to, bool flipped, ClVec2 *point, ClVec2 *normal)
{
	ClVec2 d = {to.x - from.x, to.y - from.y};
	double length = hypot(d.x, d.y);
	if (!(length > 0) || !isfinite(length))
		return false;
	/* world y points up: the left of d is (−d.y, d.x); the free side is
	 * there, so the solid side lies to the right of the drag on screen */
	double sign = flipped ? -1 : 1;
	*normal = (ClVec2){-sign * d.y / length, sign * d.x / length};
	*point = (ClVec2){(from.x + to.x) / 2, (from.y + to.y) / 2};
	return true;
}

bool cl_wall_drag_problem(const ClScene *scene, ClVec2 point, ClVec2 normal, char *message, size_t size)
{
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *b = &scene->balls[i];
		double gap = (b->position.x - point.x) * normal.x + (b->position.y - point.y) * normal.y;
		if (gap >= b->radius)
			continue;
		if (gap <= -b->radius)
			snprintf(message, size,
					 "Ball “%s” would be inside the wall's solid side (the hatched one). Press F while dragging to "
					 "turn the wall round, or draw it on the other side of the ball.",
					 b->id);
		else
			snprintf(message, size,
					 "The wall would cut %.3g m into ball “%s”. Draw it at least %.3g m from the ball's centre, or "
					 "press F while dragging to turn it round.",
					 b->radius - gap, b->id, b->radius);
		return true;
	}
	return false;
}

int cl_edit_set_target(ClScene *scene, int ball, ClVec2 target)
{
	if (scene->ball_count == 0 || !isfinite(target.x) || !isfinite(target.y))
		return -1;
	for (int i = 0; i < scene->loss_count; i++) {
		if (scene->loss[i].type == CL_LOSS_FINAL_POSITION && (ball < 0 || scene->loss[i].ball == ball)) {
			scene->loss[i].target = target;
			return i;
		}
	}
	ClLossTerm *t = cl_scene_add_loss(scene, CL_LOSS_FINAL_POSITION);
	t->ball = ball >= 0 ? ball : 0;
	t->target = target;
	t->weight = 1.0;
	return scene->loss_count - 1;
}

bool cl_edit_delete(ClScene *scene, ClPick selection)
{
	switch (selection.kind) {
	case CL_PICK_BALL:
	case CL_PICK_VELOCITY:
		if (selection.index < 0 || selection.index >= scene->ball_count)
			return false;
		cl_scene_remove_ball(scene, selection.index);
		return true;
	case CL_PICK_WALL:
	case CL_PICK_WALL_ROTATE:
		if (selection.index < 0 || selection.index >= scene->wall_count)
			return false;
		cl_scene_remove_wall(scene, selection.index);
		return true;
	case CL_PICK_TARGET:
		if (selection.index < 0 || selection.index >= scene->loss_count)
			return false;
		cl_scene_remove_loss(scene, selection.index);
		return true;
	case CL_PICK_NONE:
		break;
	}
	return false;
}
