/* Scene authoring data: creation, copies, edits, validation. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_id(char *dst, const char *src)
{
	snprintf(dst, CL_ID_MAX, "%s", src ? src : "");
}

ClScene *cl_scene_new(void)
{
	ClScene *scene = cl_calloc(1, sizeof *scene);
	int count = cl_backend_count();
	if (!scene || !(scene->backend_params = cl_calloc((size_t)count, sizeof *scene->backend_params))) {
		free(scene);
		return NULL;
	}
	snprintf(scene->name, sizeof scene->name, "Untitled");
	scene->duration = 1.0;
	scene->steps = 480;
	scene->elasticity = 1.0;
	scene->optimize.learning_rate = 0.01;
	scene->optimize.iterations = 100;
	scene->optimize.samples = CL_OPTIMIZE_SAMPLES_DEFAULT;
	scene->optimize.seed = CL_OPTIMIZE_SEED_DEFAULT;
	scene->memory_budget = CL_MEMORY_BUDGET_DEFAULT;
	for (int b = 0; b < count; b++) {
		const ClBackendInfo *info = cl_backend_info(b);
		for (int i = 0; i < info->param_count; i++)
			scene->backend_params[b].values[i] = info->params[i].default_value;
	}
	return scene;
}

/* A copy of count items, or NULL (also for none: then *ok stays true) */
static void *duplicate(const void *items, size_t count, size_t size, bool *ok)
{
	if (!count)
		return NULL;
	void *copy = cl_calloc(count, size);
	if (copy)
		memcpy(copy, items, count * size);
	else
		*ok = false;
	return copy;
}

ClScene *cl_scene_copy(const ClScene *scene)
{
	ClScene *copy = cl_calloc(1, sizeof *copy);
	if (!copy)
		return NULL;
	*copy = *scene;
	bool ok = true;
	copy->balls = duplicate(scene->balls, (size_t)scene->ball_count, sizeof *copy->balls, &ok);
	copy->walls = duplicate(scene->walls, (size_t)scene->wall_count, sizeof *copy->walls, &ok);
	copy->loss = duplicate(scene->loss, (size_t)scene->loss_count, sizeof *copy->loss, &ok);
	copy->backend_params =
		duplicate(scene->backend_params, (size_t)cl_backend_count(), sizeof *copy->backend_params, &ok);
	for (int k = 0; k < copy->loss_count; k++)
		if (copy->loss)
			copy->loss[k].observations = duplicate(scene->loss[k].observations,
												   3 * (size_t)scene->loss[k].observation_count, sizeof(double), &ok);
	for (int i = 0; i < copy->ball_count; i++)
		if (copy->balls && scene->balls[i].control_sequence)
			copy->balls[i].control_sequence =
				duplicate(scene->balls[i].control_sequence, (size_t)scene->steps, sizeof(ClVec2), &ok);
	if (!ok || (scene->ball_count && !copy->balls) || (scene->loss_count && !copy->loss)) {
		if (!copy->balls)
			copy->ball_count = 0;
		if (!copy->loss)
			copy->loss_count = 0;
		cl_scene_free(copy);
		return NULL;
	}
	return copy;
}

void cl_scene_free(ClScene *scene)
{
	if (!scene)
		return;
	for (int i = 0; i < scene->ball_count; i++)
		free(scene->balls[i].control_sequence);
	for (int k = 0; k < scene->loss_count; k++)
		free(scene->loss[k].observations);
	free(scene->balls);
	free(scene->walls);
	free(scene->loss);
	free(scene->backend_params);
	free(scene);
}

/* Room for one more item in *array (count items of size); false when out of memory. */
static bool append(void *array, int count, size_t size)
{
	void *items;
	memcpy(&items, array, sizeof items);
	void *grown = realloc(items, size * ((size_t)count + 1));
	if (!grown)
		return false;
	memcpy(array, &grown, sizeof grown);
	return true;
}

ClBall *cl_scene_add_ball(ClScene *scene, const char *id)
{
	if (!append(&scene->balls, scene->ball_count, sizeof *scene->balls))
		return NULL;
	ClBall *ball = &scene->balls[scene->ball_count++];
	*ball = (ClBall){.radius = 0.1, .mass = 1.0};
	copy_id(ball->id, id);
	return ball;
}

ClWall *cl_scene_add_wall(ClScene *scene, const char *id)
{
	if (!append(&scene->walls, scene->wall_count, sizeof *scene->walls))
		return NULL;
	ClWall *wall = &scene->walls[scene->wall_count++];
	*wall = (ClWall){.normal = {0.0, 1.0}};
	copy_id(wall->id, id);
	return wall;
}

ClLossTerm *cl_scene_add_loss(ClScene *scene, ClLossType type)
{
	if (!append(&scene->loss, scene->loss_count, sizeof *scene->loss))
		return NULL;
	ClLossTerm *term = &scene->loss[scene->loss_count++];
	*term = (ClLossTerm){.type = type, .weight = 1.0, .axis = 1};
	return term;
}

void cl_scene_remove_ball(ClScene *scene, int index)
{
	if (index < 0 || index >= scene->ball_count)
		return;
	free(scene->balls[index].control_sequence);
	memmove(&scene->balls[index], &scene->balls[index + 1],
			sizeof *scene->balls * (size_t)(scene->ball_count - index - 1));
	scene->ball_count--;
	for (int k = scene->loss_count - 1; k >= 0; k--) {
		if (scene->loss[k].ball == index)
			cl_scene_remove_loss(scene, k);
		else if (scene->loss[k].ball > index)
			scene->loss[k].ball--;
	}
}

void cl_scene_remove_wall(ClScene *scene, int index)
{
	if (index < 0 || index >= scene->wall_count)
		return;
	memmove(&scene->walls[index], &scene->walls[index + 1],
			sizeof *scene->walls * (size_t)(scene->wall_count - index - 1));
	scene->wall_count--;
}

void cl_scene_remove_loss(ClScene *scene, int index)
{
	if (index < 0 || index >= scene->loss_count)
		return;
	free(scene->loss[index].observations);
	memmove(&scene->loss[index], &scene->loss[index + 1],
			sizeof *scene->loss * (size_t)(scene->loss_count - index - 1));
	scene->loss_count--;
}

bool cl_loss_set_observations(ClLossTerm *term, const double *triples, int count)
{
	double *copy = count > 0 ? cl_calloc(3 * (size_t)count, sizeof(double)) : NULL;
	if (count > 0 && !copy)
		return false;
	if (copy)
		memcpy(copy, triples, 3 * (size_t)count * sizeof(double));
	free(term->observations);
	term->observations = copy;
	term->observation_count = count > 0 ? count : 0;
	return true;
}

int cl_scene_find_ball(const ClScene *scene, const char *id)
{
	for (int i = 0; i < scene->ball_count; i++)
		if (strcmp(scene->balls[i].id, id) == 0)
			return i;
	return -1;
}

int cl_scene_find_wall(const ClScene *scene, const char *id)
{
	for (int i = 0; i < scene->wall_count; i++)
		if (strcmp(scene->walls[i].id, id) == 0)
			return i;
	return -1;
}

bool cl_scene_set_steps(ClScene *scene, int steps)
{
	if (steps <= 0 || steps == scene->steps)
		return true;
	ClVec2 **resampled = cl_calloc((size_t)scene->ball_count, sizeof *resampled);
	bool ok = resampled != NULL;
	for (int i = 0; ok && i < scene->ball_count; i++) {
		const ClBall *ball = &scene->balls[i];
		if (!ball->control_sequence)
			continue;
		if (!(resampled[i] = cl_calloc((size_t)steps, sizeof *resampled[i]))) {
			ok = false;
			break;
		}
		for (int n = 0; n < steps; n++) {
			/* the old interval that holds the new interval's midpoint */
			long k = (long)((n + 0.5) * scene->steps / steps);
			resampled[i][n] = ball->control_sequence[k < scene->steps ? k : scene->steps - 1];
		}
	}
	for (int i = 0; resampled && i < scene->ball_count; i++) {
		if (ok && scene->balls[i].control_sequence) {
			free(scene->balls[i].control_sequence);
			scene->balls[i].control_sequence = resampled[i];
		} else {
			free(resampled[i]);
		}
	}
	free(resampled);
	if (ok)
		scene->steps = steps;
	return ok;
}

bool cl_scene_set_control_sequence(ClScene *scene, int ball_index, const double *u)
{
	ClBall *ball = &scene->balls[ball_index];
	if (!ball->control_sequence && !(ball->control_sequence = cl_calloc((size_t)scene->steps, sizeof(ClVec2))))
		return false;
	for (int n = 0; n < scene->steps; n++)
		ball->control_sequence[n] = (ClVec2){u[2 * n], u[2 * n + 1]};
	ball->control_kind = CL_CONTROL_SEQUENCE;
	return true;
}

void cl_scene_initial_state(const ClScene *scene, double *s0)
{
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *ball = &scene->balls[i];
		double *s = s0 + CL_BALL_STATE * i;
		s[0] = ball->position.x;
		s[1] = ball->position.y;
		s[2] = ball->velocity.x;
		s[3] = ball->velocity.y;
	}
}

void cl_scene_controls(const ClScene *scene, double *u)
{
	int nb = scene->ball_count;
	for (int n = 0; n < scene->steps; n++) {
		for (int i = 0; i < nb; i++) {
			const ClBall *ball = &scene->balls[i];
			ClVec2 f = {0.0, 0.0};
			if (ball->control_kind == CL_CONTROL_CONSTANT)
				f = ball->control_constant;
			else if (ball->control_kind == CL_CONTROL_SEQUENCE && ball->control_sequence)
				f = ball->control_sequence[n];
			u[2 * (n * nb + i)] = f.x;
			u[2 * (n * nb + i) + 1] = f.y;
		}
	}
}

double cl_scene_extent(const ClScene *scene)
{
	double length = 0.0;
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *b = &scene->balls[i];
		length = fmax(length, hypot(b->position.x, b->position.y) + b->radius);
	}
	for (int k = 0; k < scene->wall_count; k++) {
		const ClWall *wall = &scene->walls[k];
		length = fmax(length, fabs(wall->normal.x * wall->point.x + wall->normal.y * wall->point.y));
	}
	return length > 0.0 ? length : 1.0;
}

/* ------------------------------------------------------------ validation */

static bool fail(char *message, size_t size, const char *format, ...)
{
	if (message && size) {
		va_list args;
		va_start(args, format);
		vsnprintf(message, size, format, args);
		va_end(args);
	}
	return false;
}

static bool finite2(ClVec2 v)
{
	return isfinite(v.x) && isfinite(v.y);
}

/* finite and within ±limit in both components */
static bool bounded2(ClVec2 v, double limit)
{
	return fabs(v.x) <= limit && fabs(v.y) <= limit;
}

static bool check_id(const char *id, const char *what, int index, char *message, size_t size)
{
	if (!id[0])
		return fail(message, size, "%s[%d].id: must not be empty", what, index);
	for (const char *c = id; *c; c++)
		if (!(*c == '_' || *c == '-' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
			  (*c >= 'A' && *c <= 'Z')))
			return fail(message, size, "%s[%d].id: \"%s\" may contain only letters, digits, '_' and '-'", what,
						index, id);
	return true;
}

bool cl_scene_validate(const ClScene *scene, char *message, size_t size)
{
	if (!(isfinite(scene->duration) && scene->duration > 0.0))
		return fail(message, size, "duration: must be a positive finite number of seconds");
	if (scene->steps <= 0)
		return fail(message, size, "steps: must be a positive integer");
	if (scene->steps > CL_MAX_STEPS)
		return fail(message, size, "steps: %d is more than the limit of %d", scene->steps, CL_MAX_STEPS);
	if (scene->ball_count > CL_MAX_BALLS)
		return fail(message, size, "balls: %d balls, more than the limit of %d", scene->ball_count, CL_MAX_BALLS);
	if (scene->wall_count > CL_MAX_WALLS)
		return fail(message, size, "walls: %d walls, more than the limit of %d", scene->wall_count, CL_MAX_WALLS);
	if ((long long)scene->steps * scene->ball_count > CL_MAX_BALL_STEPS)
		return fail(message, size, "steps: %d steps × %d balls is more than the limit of %d ball-steps", scene->steps,
					scene->ball_count, CL_MAX_BALL_STEPS);
	if (!finite2(scene->gravity))
		return fail(message, size, "gravity: must be finite");
	if (!bounded2(scene->gravity, CL_LENGTH_MAX))
		return fail(message, size, "gravity: (%g, %g) is beyond ±%g", scene->gravity.x, scene->gravity.y,
					CL_LENGTH_MAX);
	if (!(isfinite(scene->elasticity) && scene->elasticity >= 0.0 && scene->elasticity <= 1.0))
		return fail(message, size, "elasticity: must be between 0 and 1");
	if (!(isfinite(scene->friction) && scene->friction >= 0.0))
		return fail(message, size, "friction: must be a non-negative finite number");
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *b = &scene->balls[i];
		if (!check_id(b->id, "balls", i, message, size))
			return false;
		for (int j = 0; j < i; j++)
			if (strcmp(scene->balls[j].id, b->id) == 0)
				return fail(message, size, "balls[%d].id: \"%s\" is already used by balls[%d]", i, b->id, j);
		if (!(isfinite(b->radius) && b->radius > 0.0))
			return fail(message, size, "balls[%d].radius: must be positive and finite", i);
		if (!(isfinite(b->mass) && b->mass > 0.0))
			return fail(message, size, "balls[%d].mass: must be positive and finite", i);
		if (!finite2(b->position))
			return fail(message, size, "balls[%d].position: must be finite", i);
		if (!finite2(b->velocity))
			return fail(message, size, "balls[%d].velocity: must be finite", i);
		if (!bounded2(b->position, CL_LENGTH_MAX))
			return fail(message, size, "balls[%d].position: (%g, %g) is beyond ±%g", i, b->position.x, b->position.y,
						CL_LENGTH_MAX);
		if (!bounded2(b->velocity, CL_LENGTH_MAX))
			return fail(message, size, "balls[%d].velocity: (%g, %g) is beyond ±%g", i, b->velocity.x, b->velocity.y,
						CL_LENGTH_MAX);
		if (b->radius > CL_LENGTH_MAX)
			return fail(message, size, "balls[%d].radius: %g is more than %g", i, b->radius, CL_LENGTH_MAX);
		if (b->control_kind == CL_CONTROL_CONSTANT && !finite2(b->control_constant))
			return fail(message, size, "balls[%d].control.constant: must be finite", i);
		if (b->control_kind == CL_CONTROL_SEQUENCE) {
			if (!b->control_sequence)
				return fail(message, size, "balls[%d].control.sequence: missing", i);
			for (int n = 0; n < scene->steps; n++)
				if (!finite2(b->control_sequence[n]))
					return fail(message, size, "balls[%d].control.sequence[%d]: must be finite", i, n);
		}
	}
	for (int w = 0; w < scene->wall_count; w++) {
		const ClWall *wall = &scene->walls[w];
		if (!check_id(wall->id, "walls", w, message, size))
			return false;
		for (int j = 0; j < w; j++)
			if (strcmp(scene->walls[j].id, wall->id) == 0)
				return fail(message, size, "walls[%d].id: \"%s\" is already used by walls[%d]", w, wall->id, j);
		if (!finite2(wall->point))
			return fail(message, size, "walls[%d].point: must be finite", w);
		if (!bounded2(wall->point, CL_LENGTH_MAX))
			return fail(message, size, "walls[%d].point: (%g, %g) is beyond ±%g", w, wall->point.x, wall->point.y,
						CL_LENGTH_MAX);
		if (!finite2(wall->normal))
			return fail(message, size, "walls[%d].normal: must be finite", w);
		double len = hypot(wall->normal.x, wall->normal.y);
		if (!(len > 0.0) || fabs(len - 1.0) > 1e-9)
			return fail(message, size, "walls[%d].normal: must be a unit vector (got length %g)", w, len);
	}
	/* sizes relative to the scene's scale */
	double extent = cl_scene_extent(scene);
	for (int i = 0; i < scene->ball_count; i++)
		if (scene->balls[i].radius < CL_RADIUS_MIN_FRACTION * extent)
			return fail(message, size,
						"balls[%d].radius: %g is less than %g of the scene's extent %g: contact tolerances, relative "
						"to the extent, would be as large as the ball",
						i, scene->balls[i].radius, CL_RADIUS_MIN_FRACTION, extent);
	/* overlaps at t = 0 */
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *a = &scene->balls[i];
		for (int w = 0; w < scene->wall_count; w++) {
			const ClWall *wall = &scene->walls[w];
			double gap = wall->normal.x * (a->position.x - wall->point.x) +
						 wall->normal.y * (a->position.y - wall->point.y) - a->radius;
			if (gap < 0.0)
				return fail(message, size, "balls[%d].position: ball \"%s\" overlaps wall \"%s\" by %g at t = 0", i,
							a->id, wall->id, -gap);
		}
		for (int j = 0; j < i; j++) {
			const ClBall *b = &scene->balls[j];
			double d = hypot(a->position.x - b->position.x, a->position.y - b->position.y);
			if (d < a->radius + b->radius)
				return fail(message, size, "balls[%d].position: ball \"%s\" overlaps ball \"%s\" at t = 0", i, a->id,
							b->id);
		}
	}
	for (int k = 0; k < scene->loss_count; k++) {
		const ClLossTerm *t = &scene->loss[k];
		if (t->ball < 0 || t->ball >= scene->ball_count)
			return fail(message, size, "loss[%d].ball: no such ball", k);
		if (!isfinite(t->weight))
			return fail(message, size, "loss[%d].weight: must be finite", k);
		if (t->type == CL_LOSS_FINAL_POSITION && !finite2(t->target))
			return fail(message, size, "loss[%d].target: must be finite", k);
		if (t->axis != 0 && t->axis != 1)
			return fail(message, size, "loss[%d].axis: must be \"x\" or \"y\"", k);
		if (t->type == CL_LOSS_TRAJECTORY_MATCH) {
			if (t->observation_count < 1 || !t->observations)
				return fail(message, size, "loss[%d].observations: at least one [t, x, y] is needed", k);
			for (int j = 0; j < t->observation_count; j++) {
				const double *o = t->observations + 3 * j;
				if (!isfinite(o[0]) || !isfinite(o[1]) || !isfinite(o[2]))
					return fail(message, size, "loss[%d].observations[%d]: must be finite", k, j);
				if (o[0] < 0.0 || o[0] > scene->duration)
					return fail(message, size, "loss[%d].observations[%d]: t = %g is outside [0, %g] (the duration)",
								k, j, o[0], scene->duration);
			}
		}
	}
	if (!(isfinite(scene->optimize.learning_rate) && scene->optimize.learning_rate > 0.0))
		return fail(message, size, "optimize.learning_rate: must be positive and finite");
	if (scene->optimize.iterations < 0 || scene->optimize.iterations > 1000000)
		return fail(message, size, "optimize.iterations: must be between 0 and 1000000");
	const ClOptimizeDef *od = &scene->optimize;
	if (od->gradient < 0 || od->gradient >= CL_GRADIENT_ESTIMATOR_COUNT)
		return fail(message, size, "optimize.gradient: unknown estimator");
	bool sampled = od->gradient != CL_GRADIENT_ADJOINT && od->gradient != CL_GRADIENT_FD;
	if (sampled && !(isfinite(od->sigma) && od->sigma > 0.0))
		return fail(message, size, "optimize.sigma: must be positive and finite with optimize.gradient \"%s\"",
					cl_gradient_estimator_name(od->gradient));
	if (sampled && (od->samples < 2 || od->samples > 1000000))
		return fail(message, size, "optimize.samples: must be between 2 and 1000000");
	for (int b = 0; b < cl_backend_count(); b++) {
		const ClBackendInfo *info = cl_backend_info(b);
		for (int i = 0; i < info->param_count; i++) {
			const ClParamDesc *d = &info->params[i];
			double v = scene->backend_params[b].values[i];
			if (!(isfinite(v) && v >= d->min && v <= d->max))
				return fail(message, size, "backends.%s.%s: %g is outside [%g, %g]", info->id, d->name, v, d->min,
							d->max);
			if (d->kind != CL_PARAM_KIND_REAL && v != floor(v))
				return fail(message, size, "backends.%s.%s: must be a whole number", info->id, d->name);
		}
	}
	return true;
}

static bool vec_equal(ClVec2 a, ClVec2 b)
{
	return a.x == b.x && a.y == b.y;
}

bool cl_scene_equal(const ClScene *a, const ClScene *b)
{
	if (strcmp(a->name, b->name) || strcmp(a->description, b->description) || a->duration != b->duration || a->steps != b->steps ||
		!vec_equal(a->gravity, b->gravity) || a->elasticity != b->elasticity || a->friction != b->friction ||
		a->ball_count != b->ball_count || a->wall_count != b->wall_count || a->loss_count != b->loss_count)
		return false;
	for (int i = 0; i < a->ball_count; i++) {
		const ClBall *x = &a->balls[i], *y = &b->balls[i];
		if (strcmp(x->id, y->id) || x->radius != y->radius || x->mass != y->mass ||
			!vec_equal(x->position, y->position) || !vec_equal(x->velocity, y->velocity) ||
			x->control_kind != y->control_kind)
			return false;
		if (x->control_kind == CL_CONTROL_CONSTANT && !vec_equal(x->control_constant, y->control_constant))
			return false;
		if (x->control_kind == CL_CONTROL_SEQUENCE)
			for (int n = 0; n < a->steps; n++)
				if (!vec_equal(x->control_sequence[n], y->control_sequence[n]))
					return false;
	}
	for (int w = 0; w < a->wall_count; w++)
		if (strcmp(a->walls[w].id, b->walls[w].id) || !vec_equal(a->walls[w].point, b->walls[w].point) ||
			!vec_equal(a->walls[w].normal, b->walls[w].normal))
			return false;
	for (int k = 0; k < a->loss_count; k++) {
		const ClLossTerm *x = &a->loss[k], *y = &b->loss[k];
		if (x->type != y->type || x->ball != y->ball || x->weight != y->weight)
			return false;
		if (x->type == CL_LOSS_FINAL_POSITION && !vec_equal(x->target, y->target))
			return false;
		if (x->type == CL_LOSS_FINAL_COORDINATE && x->axis != y->axis)
			return false;
		if (x->type == CL_LOSS_TRAJECTORY_MATCH &&
			(x->observation_count != y->observation_count ||
			 (x->observation_count &&
			  memcmp(x->observations, y->observations, 3 * sizeof(double) * (size_t)x->observation_count))))
			return false;
	}
	const ClOptimizeDef *oa = &a->optimize, *ob = &b->optimize;
	if (oa->parameter_count != ob->parameter_count || oa->learning_rate != ob->learning_rate ||
		oa->iterations != ob->iterations || oa->optimizer != ob->optimizer || oa->gradient != ob->gradient ||
		oa->sigma != ob->sigma || oa->samples != ob->samples || oa->seed != ob->seed)
		return false;
	for (int k = 0; k < oa->parameter_count; k++)
		if (strcmp(oa->parameters[k], ob->parameters[k]))
			return false;
	return memcmp(a->backend_params, b->backend_params, sizeof *a->backend_params * (size_t)cl_backend_count()) == 0;
}
