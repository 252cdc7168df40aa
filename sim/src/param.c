/* Named scalar parameters of a scene: "ball.velocity.x", "ball1.control[3].y",
 * "floor.angle". */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(char *message, size_t size, const char *name, const char *reason)
{
	if (message && size)
		snprintf(message, size, "parameter \"%s\": %s", name, reason);
	return false;
}

#define PI 3.14159265358979323846

static int parse_axis(const char *s)
{
	if (strcmp(s, "x") == 0)
		return 0;
	if (strcmp(s, "y") == 0)
		return 1;
	return -1;
}

bool cl_param_parse(const ClScene *scene, const char *name, ClParam *param, char *message, size_t size)
{
	*param = (ClParam){.ball = -1, .step = 0, .axis = 0, .wall = -1};
	if (strcmp(name, "elasticity") == 0) {
		param->target = CL_PARAM_ELASTICITY;
		return true;
	}
	if (strcmp(name, "friction") == 0) {
		param->target = CL_PARAM_FRICTION;
		return true;
	}
	if (strcmp(name, "duration") == 0) {
		param->target = CL_PARAM_DURATION;
		return true;
	}
	if (strncmp(name, "gravity.", 8) == 0) {
		param->target = CL_PARAM_GRAVITY;
		param->axis = parse_axis(name + 8);
		return param->axis >= 0 || fail(message, size, name, "the axis must be x or y");
	}
	const char *dot = strchr(name, '.');
	if (!dot)
		return fail(message, size, name, "expected BALL.position.x, BALL.velocity.y, BALL.control[K].x, "
										 "BALL.radius, BALL.mass, WALL.point.x, WALL.angle, elasticity, "
										 "friction, duration or gravity.x");
	char id[CL_ID_MAX];
	size_t len = (size_t)(dot - name);
	const char *rest = dot + 1;
	if (len < sizeof id) {
		memcpy(id, name, len);
		id[len] = '\0';
		/* a backend's own parameter, unless a ball or wall has that id */
		int backend = cl_backend_find(id);
		if (backend >= 0 && cl_scene_find_ball(scene, id) < 0 && cl_scene_find_wall(scene, id) < 0) {
			int index = cl_backend_param_find(backend, rest);
			if (index < 0)
				return fail(message, size, name, "the backend has no parameter of this name (contactlab backends)");
			if (cl_backend_info(backend)->params[index].kind != CL_PARAM_KIND_REAL)
				return fail(message, size, name, "not a real number: a whole number or choice has no derivative");
			*param = (ClParam){.target = CL_PARAM_BACKEND, .ball = -1, .wall = -1, .backend = backend, .index = index};
			return true;
		}
	}
	bool of_wall = strncmp(rest, "point.", 6) == 0 || strcmp(rest, "angle") == 0;
	if (len >= sizeof id)
		return fail(message, size, name, of_wall ? "wall id too long" : "ball id too long");
	memcpy(id, name, len);
	id[len] = '\0';
	if (of_wall) {
		param->wall = cl_scene_find_wall(scene, id);
		if (param->wall < 0)
			return fail(message, size, name, "no wall with this id");
		if (strcmp(rest, "angle") == 0) {
			param->target = CL_PARAM_WALL_ANGLE;
			return true;
		}
		param->target = CL_PARAM_WALL_POINT;
		param->axis = parse_axis(rest + 6);
		return param->axis >= 0 || fail(message, size, name, "the axis must be x or y");
	}
	param->ball = cl_scene_find_ball(scene, id);
	if (param->ball < 0)
		return fail(message, size, name, "no ball with this id");
	if (strcmp(rest, "radius") == 0) {
		param->target = CL_PARAM_RADIUS;
		return true;
	}
	if (strcmp(rest, "mass") == 0) {
		param->target = CL_PARAM_MASS;
		return true;
	}
	const char *axis;
	if (strncmp(rest, "position.", 9) == 0) {
		param->target = CL_PARAM_POSITION;
		axis = rest + 9;
	} else if (strncmp(rest, "velocity.", 9) == 0) {
		param->target = CL_PARAM_VELOCITY;
		axis = rest + 9;
	} else if (strncmp(rest, "control[", 8) == 0) {
		param->target = CL_PARAM_CONTROL;
		char *end;
		long k = strtol(rest + 8, &end, 10);
		if (end == rest + 8 || end[0] != ']' || end[1] != '.')
			return fail(message, size, name, "expected control[K].x with an integer K");
		if (k < 0 || k >= scene->steps)
			return fail(message, size, name, "the control index is outside 0 … steps − 1");
		param->step = (int)k;
		axis = end + 2;
	} else {
		return fail(message, size, name,
					"expected position, velocity, control[K], radius or mass after the ball id (or point.x, "
					"point.y or angle after a wall id)");
	}
	param->axis = parse_axis(axis);
	return param->axis >= 0 || fail(message, size, name, "the axis must be x or y");
}

void cl_param_name(const ClScene *scene, const ClParam *param, char *name, size_t size)
{
	const char *axis = param->axis ? "y" : "x";
	const char *ball = param->ball >= 0 && param->ball < scene->ball_count ? scene->balls[param->ball].id : "?";
	const char *wall = param->wall >= 0 && param->wall < scene->wall_count ? scene->walls[param->wall].id : "?";
	switch (param->target) {
	case CL_PARAM_POSITION:
		snprintf(name, size, "%s.position.%s", ball, axis);
		break;
	case CL_PARAM_VELOCITY:
		snprintf(name, size, "%s.velocity.%s", ball, axis);
		break;
	case CL_PARAM_CONTROL:
		snprintf(name, size, "%s.control[%d].%s", ball, param->step, axis);
		break;
	case CL_PARAM_ELASTICITY:
		snprintf(name, size, "elasticity");
		break;
	case CL_PARAM_FRICTION:
		snprintf(name, size, "friction");
		break;
	case CL_PARAM_DURATION:
		snprintf(name, size, "duration");
		break;
	case CL_PARAM_GRAVITY:
		snprintf(name, size, "gravity.%s", axis);
		break;
	case CL_PARAM_RADIUS:
		snprintf(name, size, "%s.radius", ball);
		break;
	case CL_PARAM_MASS:
		snprintf(name, size, "%s.mass", ball);
		break;
	case CL_PARAM_WALL_POINT:
		snprintf(name, size, "%s.point.%s", wall, axis);
		break;
	case CL_PARAM_WALL_ANGLE:
		snprintf(name, size, "%s.angle", wall);
		break;
	case CL_PARAM_BACKEND: {
		const ClBackendInfo *info = cl_backend_info(param->backend);
		snprintf(name, size, "%s.%s", info ? info->id : "?",
				 info && param->index >= 0 && param->index < info->param_count ? info->params[param->index].name : "?");
		break;
	}
	}
}

bool cl_param_equal(const ClParam *a, const ClParam *b)
{
	if (a->target != b->target)
		return false;
	switch (a->target) {
	case CL_PARAM_POSITION:
	case CL_PARAM_VELOCITY:
		return a->ball == b->ball && a->axis == b->axis;
	case CL_PARAM_CONTROL:
		return a->ball == b->ball && a->axis == b->axis && a->step == b->step;
	case CL_PARAM_RADIUS:
	case CL_PARAM_MASS:
		return a->ball == b->ball;
	case CL_PARAM_ELASTICITY:
	case CL_PARAM_FRICTION:
	case CL_PARAM_DURATION:
		return true;
	case CL_PARAM_GRAVITY:
		return a->axis == b->axis;
	case CL_PARAM_WALL_POINT:
		return a->wall == b->wall && a->axis == b->axis;
	case CL_PARAM_WALL_ANGLE:
		return a->wall == b->wall;
	case CL_PARAM_BACKEND:
		return a->backend == b->backend && a->index == b->index;
	}
	return false;
}

/* Degrees of arc to a unit vector, exact at multiples of 90° (a wall set to
 * 90° has the normal (0, 1), not (6e-17, 1)), without negative zeros (180°
 * gives (−1, +0), whose angle reads back as 180°, not −180°). */
static ClVec2 direction_of(double degrees)
{
	double turns = degrees / 90.0;
	double quadrant = nearbyint(turns);
	double rest = (degrees - 90.0 * quadrant) * (PI / 180.0);
	double c = cos(rest), s = sin(rest);
	if (rest == 0.0)
		c = 1.0, s = 0.0;
	ClVec2 d;
	switch ((int)fmod(fmod(quadrant, 4.0) + 4.0, 4.0)) {
	case 1:
		d = (ClVec2){-s, c};
		break;
	case 2:
		d = (ClVec2){-c, -s};
		break;
	case 3:
		d = (ClVec2){s, -c};
		break;
	default:
		d = (ClVec2){c, s};
		break;
	}
	return (ClVec2){d.x + 0.0, d.y + 0.0};
}

double cl_wall_angle(const ClWall *wall)
{
	return atan2(wall->normal.y, wall->normal.x) * (180.0 / PI);
}

static double *axis_of(ClVec2 *v, int axis)
{
	return axis ? &v->y : &v->x;
}

static ClVec2 control_at(const ClScene *scene, const ClBall *ball, int step)
{
	if (ball->control_kind == CL_CONTROL_CONSTANT)
		return ball->control_constant;
	if (ball->control_kind == CL_CONTROL_SEQUENCE && ball->control_sequence && step < scene->steps)
		return ball->control_sequence[step];
	return (ClVec2){0.0, 0.0};
}

bool cl_param_fits(const ClScene *scene, const ClParam *param)
{
	switch (param->target) {
	case CL_PARAM_CONTROL:
		return param->ball >= 0 && param->ball < scene->ball_count && param->step >= 0 &&
			   param->step < scene->steps;
	case CL_PARAM_POSITION:
	case CL_PARAM_VELOCITY:
	case CL_PARAM_RADIUS:
	case CL_PARAM_MASS:
		return param->ball >= 0 && param->ball < scene->ball_count;
	case CL_PARAM_WALL_POINT:
	case CL_PARAM_WALL_ANGLE:
		return param->wall >= 0 && param->wall < scene->wall_count;
	case CL_PARAM_ELASTICITY:
	case CL_PARAM_FRICTION:
	case CL_PARAM_DURATION:
	case CL_PARAM_GRAVITY:
		return true;
	case CL_PARAM_BACKEND: {
		const ClBackendInfo *info = cl_backend_info(param->backend);
		return info && param->index >= 0 && param->index < info->param_count;
	}
	}
	return false;
}

double cl_param_get(const ClScene *scene, const ClParam *param)
{
	ClScene *s = (ClScene *)scene; /* axis_of only reads here */
	switch (param->target) {
	case CL_PARAM_POSITION:
		return *axis_of(&s->balls[param->ball].position, param->axis);
	case CL_PARAM_VELOCITY:
		return *axis_of(&s->balls[param->ball].velocity, param->axis);
	case CL_PARAM_CONTROL: {
		ClVec2 u = control_at(scene, &scene->balls[param->ball], param->step);
		return param->axis ? u.y : u.x;
	}
	case CL_PARAM_ELASTICITY:
		return scene->elasticity;
	case CL_PARAM_FRICTION:
		return scene->friction;
	case CL_PARAM_DURATION:
		return scene->duration;
	case CL_PARAM_GRAVITY:
		return param->axis ? scene->gravity.y : scene->gravity.x;
	case CL_PARAM_RADIUS:
		return scene->balls[param->ball].radius;
	case CL_PARAM_MASS:
		return scene->balls[param->ball].mass;
	case CL_PARAM_WALL_POINT:
		return *axis_of(&s->walls[param->wall].point, param->axis);
	case CL_PARAM_WALL_ANGLE:
		return cl_wall_angle(&scene->walls[param->wall]);
	case CL_PARAM_BACKEND:
		return scene->backend_params[param->backend].values[param->index];
	}
	return NAN;
}

bool cl_param_set(ClScene *scene, const ClParam *param, double value)
{
	switch (param->target) {
	case CL_PARAM_POSITION:
		*axis_of(&scene->balls[param->ball].position, param->axis) = value;
		break;
	case CL_PARAM_VELOCITY:
		*axis_of(&scene->balls[param->ball].velocity, param->axis) = value;
		break;
	case CL_PARAM_CONTROL: {
		ClBall *ball = &scene->balls[param->ball];
		if (ball->control_kind != CL_CONTROL_SEQUENCE) {
			/* one entry changes: the ball needs a per-interval sequence */
			ClVec2 c = control_at(scene, ball, 0);
			ClVec2 *sequence = cl_calloc((size_t)scene->steps, sizeof(ClVec2));
			if (!sequence)
				return false;
			free(ball->control_sequence);
			ball->control_sequence = sequence;
			for (int n = 0; n < scene->steps; n++)
				ball->control_sequence[n] = c;
			ball->control_kind = CL_CONTROL_SEQUENCE;
		}
		*axis_of(&ball->control_sequence[param->step], param->axis) = value;
		break;
	}
	case CL_PARAM_ELASTICITY:
		scene->elasticity = value;
		break;
	case CL_PARAM_FRICTION:
		scene->friction = value;
		break;
	case CL_PARAM_DURATION:
		scene->duration = value;
		break;
	case CL_PARAM_GRAVITY:
		*axis_of(&scene->gravity, param->axis) = value;
		break;
	case CL_PARAM_RADIUS:
		scene->balls[param->ball].radius = value;
		break;
	case CL_PARAM_MASS:
		scene->balls[param->ball].mass = value;
		break;
	case CL_PARAM_WALL_POINT:
		*axis_of(&scene->walls[param->wall].point, param->axis) = value;
		break;
	case CL_PARAM_WALL_ANGLE: {
		ClWall *wall = &scene->walls[param->wall];
		/* the angle read back is set without rounding the normal */
		if (value != cl_wall_angle(wall))
			wall->normal = isfinite(value) ? direction_of(value) : (ClVec2){NAN, NAN};
		break;
	}
	case CL_PARAM_BACKEND:
		/* unchecked, like elasticity: a central difference may step past a bound */
		scene->backend_params[param->backend].values[param->index] = value;
		break;
	}
	return true;
}

bool cl_param_has_adjoint(const ClParam *param)
{
	return param->target == CL_PARAM_POSITION || param->target == CL_PARAM_VELOCITY ||
		   param->target == CL_PARAM_CONTROL;
}

int cl_phys_index(const ClScene *scene, const ClParam *param)
{
	switch (param->target) {
	case CL_PARAM_ELASTICITY:
		return CL_PHYS_ELASTICITY;
	case CL_PARAM_FRICTION:
		return CL_PHYS_FRICTION;
	case CL_PARAM_GRAVITY:
		return param->axis ? CL_PHYS_GRAVITY_Y : CL_PHYS_GRAVITY_X;
	case CL_PARAM_DURATION:
		return CL_PHYS_DURATION;
	case CL_PARAM_RADIUS:
		return cl_phys_radius(param->ball);
	case CL_PARAM_MASS:
		return cl_phys_mass(param->ball);
	case CL_PARAM_WALL_POINT:
		return cl_phys_wall(scene, param->wall, param->axis);
	case CL_PARAM_WALL_ANGLE:
		return cl_phys_wall(scene, param->wall, 2);
	case CL_PARAM_BACKEND:
		return cl_phys_backend(scene, param->index);
	default:
		return -1;
	}
}

double *cl_param_slot(const ClScene *scene, const ClParam *param, double *s0, double *u)
{
	if (param->target == CL_PARAM_CONTROL)
		return u + 2 * ((size_t)param->step * (size_t)scene->ball_count + (size_t)param->ball) + (size_t)param->axis;
	return s0 + CL_BALL_STATE * (size_t)param->ball + (param->target == CL_PARAM_VELOCITY ? 2 : 0) +
		   (size_t)param->axis;
}

/* Appends p when there is room; counts it either way. */
static void put_param(ClParam *out, int capacity, int *count, ClParam p)
{
	if (out && *count < capacity)
		out[*count] = p;
	(*count)++;
}

static void put(ClParam *out, int capacity, int *count, ClParamTarget target, int ball, int axis)
{
	put_param(out, capacity, count, (ClParam){.target = target, .ball = ball, .step = 0, .axis = axis, .wall = -1});
}

int cl_scene_params(const ClScene *scene, unsigned groups, int ball, ClParam *out, int capacity)
{
	int count = 0;
	for (int b = 0; b < scene->ball_count; b++) {
		if (ball >= 0 && b != ball)
			continue;
		if (groups & CL_PARAMS_INITIAL_STATE)
			for (int axis = 0; axis < 4; axis++)
				put(out, capacity, &count, axis < 2 ? CL_PARAM_POSITION : CL_PARAM_VELOCITY, b, axis % 2);
		if (groups & CL_PARAMS_FIRST_CONTROL)
			for (int axis = 0; axis < 2; axis++)
				put(out, capacity, &count, CL_PARAM_CONTROL, b, axis);
		if (groups & CL_PARAMS_BALL_PHYSICS) {
			put(out, capacity, &count, CL_PARAM_RADIUS, b, 0);
			put(out, capacity, &count, CL_PARAM_MASS, b, 0);
		}
	}
	if (groups & CL_PARAMS_GLOBAL) {
		put(out, capacity, &count, CL_PARAM_ELASTICITY, -1, 0);
		put(out, capacity, &count, CL_PARAM_FRICTION, -1, 0);
		put(out, capacity, &count, CL_PARAM_GRAVITY, -1, 0);
		put(out, capacity, &count, CL_PARAM_GRAVITY, -1, 1);
		put(out, capacity, &count, CL_PARAM_DURATION, -1, 0);
	}
	if (groups & CL_PARAMS_WALLS)
		for (int k = 0; k < scene->wall_count; k++) {
			for (int axis = 0; axis < 2; axis++)
				put_param(out, capacity, &count, (ClParam){.target = CL_PARAM_WALL_POINT, .ball = -1, .axis = axis, .wall = k});
			put_param(out, capacity, &count, (ClParam){.target = CL_PARAM_WALL_ANGLE, .ball = -1, .wall = k});
		}
	if (groups & CL_PARAMS_BACKENDS)
		for (int b = 0; b < cl_backend_count(); b++) {
			const ClBackendInfo *info = cl_backend_info(b);
			for (int i = 0; i < info->param_count; i++)
				if (info->params[i].kind == CL_PARAM_KIND_REAL)
					put_param(out, capacity, &count,
							  (ClParam){.target = CL_PARAM_BACKEND, .ball = -1, .wall = -1, .backend = b, .index = i});
		}
	return count;
}

ClParam *cl_scene_params_new(const ClScene *scene, unsigned groups, int ball, int *count)
{
	*count = cl_scene_params(scene, groups, ball, NULL, 0);
	ClParam *params = cl_calloc((size_t)*count, sizeof *params);
	if (!params)
		*count = 0;
	else
		cl_scene_params(scene, groups, ball, params, *count);
	return params;
}

bool cl_scene_ball_matters(const ClScene *scene, int ball)
{
	if (scene->balls[ball].control_kind != CL_CONTROL_NONE)
		return true;
	for (int i = 0; i < scene->loss_count; i++)
		if (scene->loss[i].ball == ball)
			return true;
	return false;
}
