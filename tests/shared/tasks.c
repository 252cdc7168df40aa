#include "tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int cl_test_backend(const char *id)
{
	int b = cl_backend_find(id);
	if (b < 0) {
		fprintf(stderr, "unknown backend %s\n", id);
		abort();
	}
	return b;
}

void cl_test_set_param(ClScene *scene, const char *backend, const char *name, double value)
{
	if (!cl_scene_set_backend_param(scene, cl_test_backend(backend), name, value, NULL, 0))
		abort();
}

static ClWall *ground(ClScene *scene)
{
	ClWall *w = cl_scene_add_wall(scene, "ground");
	w->point = (ClVec2){0, 0};
	w->normal = (ClVec2){0, 1};
	return w;
}

ClScene *cl_test_task1(void)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "Task 1: bounce once");
	s->duration = 1.0;
	s->steps = 480;
	s->elasticity = 1.0;
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->radius = 0.1;
	b->position = (ClVec2){-1, 1};
	b->velocity = (ClVec2){2, -2};
	ground(s);
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	t->ball = 0;
	t->axis = 1;
	cl_test_set_param(s, "compliant-warp", "stiffness", 1e4);
	return s;
}

ClScene *cl_test_task2(double friction)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, friction > 0 ? "Task 2: ground and wall, friction" : "Task 2: ground and wall");
	s->duration = 0.6;
	s->steps = 288;
	s->gravity = (ClVec2){0, -9.8};
	s->elasticity = 0.92;
	s->friction = friction;
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->radius = 0.1;
	b->position = (ClVec2){-0.5, 1};
	b->velocity = (ClVec2){5, -5};
	ground(s);
	ClWall *w = cl_scene_add_wall(s, "wall");
	w->point = (ClVec2){1.75, 0};
	w->normal = (ClVec2){-1, 0};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){-2, 1.5};
	s->optimize.parameter_count = 1;
	snprintf(s->optimize.parameters[0], CL_NAME_MAX, "ball.velocity");
	s->optimize.learning_rate = 0.01;
	s->optimize.iterations = 1000;
	cl_test_set_param(s, "compliant-warp", "stiffness", 1e4);
	cl_test_set_param(s, "compliant-warp", "damping", 10);
	return s;
}

ClScene *cl_test_task3(void)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "Task 3: two-ball collision");
	s->duration = 1.0;
	s->steps = 480;
	s->elasticity = 1.0;
	ClBall *b1 = cl_scene_add_ball(s, "ball1");
	b1->radius = 0.2;
	b1->position = (ClVec2){-2, -2};
	b1->control_kind = CL_CONTROL_CONSTANT;
	b1->control_constant = (ClVec2){3, 3};
	ClBall *b2 = cl_scene_add_ball(s, "ball2");
	b2->radius = 0.2;
	b2->position = (ClVec2){-1, -1};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 1;
	t->target = (ClVec2){0, 0};
	ClLossTerm *e = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	e->ball = 0;
	e->weight = 0.1;
	s->optimize.parameter_count = 1;
	snprintf(s->optimize.parameters[0], CL_NAME_MAX, "ball1.control");
	s->optimize.learning_rate = 10;
	s->optimize.iterations = 1000;
	cl_test_set_param(s, "compliant-warp", "stiffness", 1e4);
	return s;
}

ClScene *cl_test_task3_graze(void)
{
	ClScene *s = cl_test_task3();
	snprintf(s->name, sizeof s->name, "Task 3 graze: ball1 aimed to just touch ball2");
	s->balls[0].control_constant = (ClVec2){2.029, 3.726};
	return s;
}

ClScene *cl_test_wedge(void)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "Wedge corner (120°): which wall first");
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->radius = 0.1;
	b->position = (ClVec2){0.5, 1};
	b->velocity = (ClVec2){2, -2};
	ground(s);
	ClWall *w = cl_scene_add_wall(s, "slope");
	w->point = (ClVec2){1.5, 0};
	w->normal = (ClVec2){-0.8660254037844386, 0.5};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){0, 2};
	return s;
}

static double uniform(unsigned *state, double lo, double hi)
{
	*state = *state * 1664525u + 1013904223u;
	return lo + (hi - lo) * ((*state >> 8) / 16777216.0);
}

ClScene *cl_test_random_scene(unsigned seed, int balls, int walls)
{
	unsigned st = seed * 2654435761u + 1u;
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "random %u", seed);
	s->duration = 1.0;
	s->steps = 200;
	s->gravity = (ClVec2){uniform(&st, -1, 1), uniform(&st, -9.8, 0)};
	s->elasticity = uniform(&st, 0.5, 0.95);
	/* walls: a box around the origin, sides chosen in order */
	static const ClVec2 normals[] = {{0, 1}, {-1, 0}, {1, 0}, {0, -1}, {0.6, 0.8}, {-0.8, 0.6}};
	for (int w = 0; w < walls && w < 6; w++) {
		char id[16];
		snprintf(id, sizeof id, "wall%d", w);
		ClWall *wall = cl_scene_add_wall(s, id);
		wall->normal = normals[w];
		wall->point = (ClVec2){-2.5 * normals[w].x, -2.5 * normals[w].y};
	}
	for (int i = 0; i < balls; i++) {
		char id[16];
		snprintf(id, sizeof id, "b%d", i);
		for (int attempt = 0; attempt < 1000; attempt++) {
			ClBall *b = cl_scene_add_ball(s, id);
			b->radius = uniform(&st, 0.1, 0.25);
			b->mass = uniform(&st, 0.5, 2.0);
			b->position = (ClVec2){uniform(&st, -1.8, 1.8), uniform(&st, -1.8, 1.8)};
			b->velocity = (ClVec2){uniform(&st, -3, 3), uniform(&st, -3, 3)};
			if (i == 0) {
				b->control_kind = CL_CONTROL_CONSTANT;
				b->control_constant = (ClVec2){uniform(&st, -2, 2), uniform(&st, -2, 2)};
			}
			if (cl_scene_validate(s, NULL, 0))
				break;
			cl_scene_remove_ball(s, s->ball_count - 1);
		}
	}
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){0.5, 0.5};
	if (balls > 1) {
		ClLossTerm *c = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
		c->ball = balls - 1;
		c->axis = 0;
	}
	return s;
}

ClScene *cl_test_billiards(int balls)
{
	const double length = 2.54, width = 1.27, radius = 0.028;
	/* a 1 mm gap between racked balls keeps them apart at t = 0; the jitter
	 * (below 0.26 mm a coordinate, rounding included) cannot close it */
	const double spacing = 2.0 * radius + 0.001, jitter = 0.00025;
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "Billiards break (%d balls)", balls);
	s->duration = 2.0;
	s->steps = 2000;
	s->elasticity = 0.95;
	static const struct {
		const char *id;
		ClVec2 point, normal;
	} cushions[] = {
		{"bottom", {0, 0}, {0, 1}},
		{"top", {0, 1.27}, {0, -1}},
		{"left", {0, 0}, {1, 0}},
		{"right", {2.54, 0}, {-1, 0}},
	};
	for (size_t k = 0; k < sizeof cushions / sizeof cushions[0]; k++) {
		ClWall *w = cl_scene_add_wall(s, cushions[k].id);
		w->point = cushions[k].point;
		w->normal = cushions[k].normal;
	}
	ClBall *cue = cl_scene_add_ball(s, "cue");
	cue->radius = radius;
	cue->mass = 0.17;
	/* slightly off the rack's axis, as a real break is */
	cue->position = (ClVec2){0.25 * length, 0.5 * width + 0.004};
	cue->velocity = (ClVec2){6.0, 0.0};
	unsigned st = 12345u;
	const double apex_x = 0.63 * length, row_step = spacing * sqrt(3.0) / 2.0;
	for (int k = 0, row = 0; k < balls - 1; row++) {
		for (int j = 0; j <= row && k < balls - 1; j++, k++) {
			char id[16];
			snprintf(id, sizeof id, "ball%d", k + 1);
			ClBall *b = cl_scene_add_ball(s, id);
			b->radius = radius;
			b->mass = 0.17;
			/* to 10 µm, so that the preset's numbers stay readable */
			double x = apex_x + row * row_step + uniform(&st, -jitter, jitter);
			double y = 0.5 * width + (j - 0.5 * row) * spacing + uniform(&st, -jitter, jitter);
			b->position = (ClVec2){round(x * 1e5) / 1e5, round(y * 1e5) / 1e5};
		}
	}
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){0.5 * length, 0.5 * width};
	ClLossTerm *c = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	c->ball = balls - 1;
	c->axis = 0;
	s->optimize.parameter_count = 1;
	snprintf(s->optimize.parameters[0], CL_NAME_MAX, "cue.velocity");
	/* Adam's bounded steps: the break is chaotic, its gradients are huge */
	s->optimize.optimizer = CL_OPTIMIZER_ADAM;
	s->optimize.learning_rate = 0.01;
	s->optimize.iterations = 100;
	return s;
}

ClScene *cl_test_property_scene(unsigned seed)
{
	const double two_pi = 6.283185307179586;
	unsigned st = seed * 2246822519u + 374761393u;
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "property %u", seed);
	int balls = 1 + (int)uniform(&st, 0, 20);
	int walls = (int)uniform(&st, 0, 7);
	s->duration = uniform(&st, 0.2, 2.0);
	s->steps = 10 + (int)uniform(&st, 0, 111);
	double angle = uniform(&st, 0, two_pi), g = uniform(&st, 0, 1) < 0.25 ? 0.0 : uniform(&st, 0, 15);
	s->gravity = (ClVec2){g * cos(angle), g * sin(angle)};
	/* the ends of the range are the hard cases: perfectly elastic, perfectly plastic */
	double pick = uniform(&st, 0, 1);
	s->elasticity = pick < 0.15 ? 0.0 : pick < 0.3 ? 1.0 : uniform(&st, 0, 1);
	s->friction = uniform(&st, 0, 1) < 0.5 ? 0.0 : uniform(&st, 0, 0.5);
	/* walls: tangent lines of a circle of radius 2.2–3 around the origin, inward normals */
	for (int w = 0; w < walls; w++) {
		char id[16];
		snprintf(id, sizeof id, "wall%d", w);
		ClWall *wall = cl_scene_add_wall(s, id);
		double phi = uniform(&st, 0, two_pi), distance = uniform(&st, 2.2, 3.0);
		wall->normal = (ClVec2){-cos(phi), -sin(phi)};
		wall->point = (ClVec2){distance * cos(phi), distance * sin(phi)};
	}
	for (int i = 0; i < balls; i++) {
		char id[16];
		snprintf(id, sizeof id, "b%d", i);
		for (int attempt = 0; attempt < 200; attempt++) {
			ClBall *b = cl_scene_add_ball(s, id);
			b->radius = uniform(&st, 0.05, 0.3);
			b->mass = uniform(&st, 0.2, 5.0);
			b->position = (ClVec2){uniform(&st, -1.9, 1.9), uniform(&st, -1.9, 1.9)};
			b->velocity = (ClVec2){uniform(&st, -4, 4), uniform(&st, -4, 4)};
			double kind = uniform(&st, 0, 1);
			if (kind < 0.3) {
				b->control_kind = CL_CONTROL_CONSTANT;
				b->control_constant = (ClVec2){uniform(&st, -5, 5), uniform(&st, -5, 5)};
			}
			if (cl_scene_validate(s, NULL, 0)) {
				if (kind >= 0.3 && kind < 0.5) {
					double *u = malloc(sizeof(double) * 2 * (size_t)s->steps);
					for (int n = 0; n < 2 * s->steps; n++)
						u[n] = uniform(&st, -5, 5);
					cl_scene_set_control_sequence(s, s->ball_count - 1, u);
					free(u);
				}
				break;
			}
			cl_scene_remove_ball(s, s->ball_count - 1);
		}
	}
	for (int k = 0, terms = 1 + (int)uniform(&st, 0, 3); k < terms && s->ball_count > 0; k++) {
		/* the final-state and effort terms (trajectory_match, with its
		 * observations, has tests of its own): the draws are those of before it */
		ClLossTerm *t = cl_scene_add_loss(s, (ClLossType)(int)uniform(&st, 0, CL_LOSS_TRAJECTORY_MATCH));
		t->ball = (int)uniform(&st, 0, s->ball_count);
		t->axis = (int)uniform(&st, 0, 2);
		t->target = (ClVec2){uniform(&st, -2, 2), uniform(&st, -2, 2)};
		t->weight = uniform(&st, 0.1, 2.0);
	}
	return s;
}

static ClScene *empty_scene(const char *name, double duration, int steps)
{
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "%s", name);
	s->duration = duration;
	s->steps = steps;
	return s;
}

static void add_ball(ClScene *s, const char *id, double x, double y, double vx, double vy, double radius)
{
	ClBall *b = cl_scene_add_ball(s, id);
	b->position = (ClVec2){x, y};
	b->velocity = (ClVec2){vx, vy};
	b->radius = radius;
}

static void add_wall(ClScene *s, const char *id, double px, double py, double nx, double ny)
{
	ClWall *w = cl_scene_add_wall(s, id);
	w->point = (ClVec2){px, py};
	w->normal = (ClVec2){nx, ny};
}

static void add_final_position(ClScene *s, int ball, double x, double y)
{
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = ball;
	t->target = (ClVec2){x, y};
}

ClScene *cl_test_degenerate(ClTestDegenerate which)
{
	ClScene *s = NULL;
	switch (which) {
	case CL_TEST_GRAZING_PAIR:
		/* "a" passes "b" exactly tangentially at t = 1 */
		s = empty_scene("tangent pass", 1.5, 160);
		add_ball(s, "a", -1.0, 0.2, 1.0, 0.0, 0.2);
		add_ball(s, "b", 0.0, -0.2, 0.0, 0.0, 0.2);
		add_final_position(s, 1, 1.0, 0.0);
		break;
	case CL_TEST_GRAZING_WALL:
		/* x(t) = √1.8·t − t²/2 peaks at 0.9 = 1 − r */
		s = empty_scene("tangent parabola", 2.0, 150);
		s->gravity = (ClVec2){-1.0, 0.0};
		add_ball(s, "ball", 0.0, 0.0, sqrt(1.8), 0.5, 0.1);
		add_wall(s, "wall", 1.0, 0.0, -1.0, 0.0);
		add_final_position(s, 0, -1.0, 0.0);
		break;
	case CL_TEST_CORNER:
		s = empty_scene("corner", 2.0, 110);
		s->elasticity = 0.8;
		add_ball(s, "ball", 1.0, 1.0, -1.0, -1.0, 0.1);
		add_wall(s, "ground", 0.0, 0.0, 0.0, 1.0);
		add_wall(s, "side", 0.0, 0.0, 1.0, 0.0);
		add_final_position(s, 0, 2.0, 0.5);
		break;
	case CL_TEST_THREE_BALLS:
		s = empty_scene("three balls at once", 1.5, 130);
		add_ball(s, "left", -1.0, 0.0, 1.0, 0.0, 0.2);
		add_ball(s, "middle", 0.0, 0.0, 0.0, 0.0, 0.2);
		add_ball(s, "right", 1.0, 0.0, -1.0, 0.0, 0.2);
		add_final_position(s, 0, -2.0, 0.3);
		add_final_position(s, 2, 2.0, -0.3);
		break;
	case CL_TEST_ZENO:
		/* dropped from 5 cm with e = 0.5: infinitely many bounces by t ≈ 0.30 s */
		s = empty_scene("bouncing to rest", 1.0, 100);
		s->gravity = (ClVec2){0.0, -9.8};
		s->elasticity = 0.5;
		add_ball(s, "ball", 0.0, 0.15, 0.5, 0.0, 0.1);
		add_wall(s, "ground", 0.0, 0.0, 0.0, 1.0);
		add_final_position(s, 0, 1.0, 1.0);
		break;
	case CL_TEST_STARTS_IN_CONTACT:
		s = empty_scene("starts in contact", 1.0, 100);
		s->gravity = (ClVec2){0.0, -9.8};
		s->elasticity = 0.9;
		add_ball(s, "ball", 0.0, 0.1, 1.0, -1.0, 0.1);
		add_wall(s, "ground", 0.0, 0.0, 0.0, 1.0);
		add_final_position(s, 0, 1.0, 1.0);
		break;
	case CL_TEST_STARTS_RESTING:
		s = empty_scene("starts resting", 1.0, 100);
		s->gravity = (ClVec2){0.0, -9.8};
		s->elasticity = 0.5;
		add_ball(s, "ball", 0.0, 0.1, 1.0, 0.0, 0.1);
		add_wall(s, "ground", 0.0, 0.0, 0.0, 1.0);
		add_final_position(s, 0, 1.0, 1.0);
		break;
	case CL_TEST_BALLS_START_TOUCHING:
		s = empty_scene("balls start touching", 1.0, 100);
		add_ball(s, "a", 0.0, 0.0, 1.0, 0.0, 0.2);
		add_ball(s, "b", 0.4, 0.0, 0.0, 0.0, 0.2);
		add_final_position(s, 1, 2.0, 0.0);
		break;
	case CL_TEST_DEGENERATE_COUNT:
		abort();
	}
	return s;
}
