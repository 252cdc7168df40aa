#include "backend-check.h"
#include "tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (!p)
		abort();
	return p;
}

double cl_test_gradient(const ClScene *scene, int backend, const char *name)
{
	ClParam p;
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, name, &p, message, sizeof message) || !cl_param_has_adjoint(&p)) {
		fprintf(stderr, "%s: %s\n", name, message);
		abort();
	}
	ClRollout *r = cl_rollout_new(scene, backend);
	if (!cl_rollout_run(r, NULL, NULL, true)) {
		fprintf(stderr, "%s\n", cl_rollout_status(r)->message);
		abort();
	}
	double *g_s = xcalloc((size_t)cl_state_size(scene), sizeof(double));
	double *g_u = xcalloc((size_t)cl_control_size(scene), sizeof(double));
	cl_rollout_gradient(r, g_s, g_u);
	double value = *cl_param_slot(scene, &p, g_s, g_u);
	free(g_s);
	free(g_u);
	cl_rollout_free(r);
	return value;
}

static void step_once(const ClScene *scene, int backend, const double *s0, const double *u, double *s1)
{
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, s0, u, false);
	memcpy(s1, cl_rollout_states(r) + cl_state_size(scene), sizeof(double) * (size_t)cl_state_size(scene));
	cl_rollout_free(r);
}

double cl_test_step_jvp_error(const ClScene *scene, int backend, const double *s0, const double *u, const double *ds,
							  const double *du, double h)
{
	int ns = cl_state_size(scene), nu = cl_control_size(scene);
	ClRollout *r = cl_rollout_new(scene, backend);
	if (!cl_rollout_run(r, s0, u, true)) {
		fprintf(stderr, "%s\n", cl_rollout_status(r)->message);
		abort();
	}
	double *column = xcalloc((size_t)ns, sizeof(double));
	cl_rollout_jvp(r, ds, du, column);
	double *s_in = xcalloc((size_t)ns, sizeof(double)), *u_in = xcalloc((size_t)nu, sizeof(double));
	double *out[2] = {xcalloc((size_t)ns, sizeof(double)), xcalloc((size_t)ns, sizeof(double))};
	for (int side = 0; side < 2; side++) {
		double sign = side ? 1.0 : -1.0;
		for (int i = 0; i < ns; i++)
			s_in[i] = s0[i] + sign * h * ds[i];
		for (int i = 0; i < nu; i++)
			u_in[i] = u[i] + sign * h * du[i];
		step_once(scene, backend, s_in, u_in, out[side]);
	}
	double worst = 0.0;
	for (int i = 0; i < ns; i++)
		worst = fmax(worst, fabs(column[i] - (out[1][i] - out[0][i]) / (2.0 * h)));
	free(column);
	free(s_in);
	free(u_in);
	free(out[0]);
	free(out[1]);
	cl_rollout_free(r);
	return worst;
}

double cl_test_step_jacobian_error(const ClScene *scene, int backend, const double *s0, const double *u, double h,
								   int *contacts)
{
	int ns = cl_state_size(scene), nu = cl_control_size(scene);
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, s0, u, false);
	*contacts = cl_rollout_event_count(r);
	cl_rollout_free(r);
	double *ds = xcalloc((size_t)ns, sizeof(double)), *du = xcalloc((size_t)nu, sizeof(double));
	double worst = 0.0;
	for (int j = 0; j < ns + nu; j++) {
		memset(ds, 0, sizeof(double) * (size_t)ns);
		memset(du, 0, sizeof(double) * (size_t)nu);
		if (j < ns)
			ds[j] = 1.0;
		else
			du[j - ns] = 1.0;
		worst = fmax(worst, cl_test_step_jvp_error(scene, backend, s0, u, ds, du, h));
	}
	free(ds);
	free(du);
	return worst;
}

bool cl_test_deterministic(const ClScene *scene, int backend, int *contacts)
{
	int ns = cl_state_size(scene), nu = cl_control_size(scene);
	size_t states = (size_t)(scene->steps + 1) * (size_t)ns, total = states + (size_t)ns + (size_t)nu;
	double *runs[2];
	bool ok = true;
	for (int run = 0; run < 2; run++) {
		runs[run] = xcalloc(total, sizeof(double));
		ClRollout *r = cl_rollout_new(scene, backend);
		ok = cl_rollout_run(r, NULL, NULL, true) && ok;
		memcpy(runs[run], cl_rollout_states(r), sizeof(double) * states);
		cl_rollout_gradient(r, runs[run] + states, runs[run] + states + ns);
		*contacts = cl_rollout_event_count(r);
		cl_rollout_free(r);
	}
	for (size_t i = 0; i < total && ok; i++)
		ok = isfinite(runs[0][i]);
	ok = ok && memcmp(runs[0], runs[1], sizeof(double) * total) == 0;
	free(runs[0]);
	free(runs[1]);
	return ok;
}

ClScene *cl_test_step_scene(const ClTestStepCase *c, const char *backend)
{
	ClScene *scene = cl_scene_new();
	scene->duration = 1.0 / 480;
	scene->steps = 1;
	scene->gravity = (ClVec2){0.3, -9.8};
	scene->elasticity = c->elasticity;
	scene->friction = c->friction;
	for (int i = 0; i < c->ball_count; i++) {
		char id[16];
		snprintf(id, sizeof id, "b%d", i);
		ClBall *b = cl_scene_add_ball(scene, id);
		b->radius = c->balls[i].radius;
		b->mass = c->balls[i].mass;
	}
	for (int w = 0; w < c->wall_count; w++) {
		char id[16];
		snprintf(id, sizeof id, "w%d", w);
		ClWall *wall = cl_scene_add_wall(scene, id);
		wall->point = c->wall_point[w];
		wall->normal = c->wall_normal[w];
	}
	if (cl_backend_precision_param(cl_test_backend(backend)) >= 0) /* else always float64 */
		cl_test_set_param(scene, backend, "precision", CL_PRECISION_FLOAT64);
	return scene;
}

void cl_test_step_inputs(const ClTestStepCase *c, double *s0, double *u)
{
	for (int i = 0; i < c->ball_count; i++) {
		memcpy(s0 + CL_BALL_STATE * i, c->balls[i].state, sizeof c->balls[i].state);
		memcpy(u + 2 * i, c->balls[i].control, sizeof c->balls[i].control);
	}
}

/* Every case hits within the step, with TOI's clamps away from their switches. */
const ClTestStepCase cl_test_step_cases[] = {
	{"tilted wall", 0.2, 0.8, 1, {{0.1, 1.3, {0.6 * 0.104 - 0.8 * 0.3, 0.8 * 0.104 + 0.6 * 0.3, -1.4, -2.7}, {0.7, -1.3}}},
	 1, {{0, 0}}, {{0.6, 0.8}}, 1},
	{"two balls", 0.0, 0.9, 2,
	 {{0.1, 1.0, {0.0, 0.0, 1.5, 0.2}, {0.4, 0.1}}, {0.15, 1.7, {0.254 * 0.8, 0.254 * 0.6, -1.0, -0.9}, {-0.3, 0.6}}},
	 0, {{0, 0}}, {{0, 1}}, 1},
	{"two balls, friction", 0.3, 0.9, 2,
	 {{0.1, 1.0, {0.0, 0.0, 1.5, 0.2}, {0.4, 0.1}}, {0.15, 1.7, {0.254 * 0.8, 0.254 * 0.6, -1.0, -0.9}, {-0.3, 0.6}}},
	 0, {{0, 0}}, {{0, 1}}, 1},
	{"corner, no friction (decoupled)", 0.0, 0.7, 1, {{0.1, 1.0, {0.896, 0.104, 2.0, -3.0}, {0.5, 0.5}}}, 2,
	 {{0, 0}, {1, 0}}, {{0, 1}, {-1, 0}}, 2},
	{"corner, friction (coupled)", 0.3, 0.7, 1, {{0.1, 1.0, {0.896, 0.104, 2.0, -3.0}, {0.5, 0.5}}}, 2,
	 {{0, 0}, {1, 0}}, {{0, 1}, {-1, 0}}, 2},
	{"slanted corner, no friction (coupled)", 0.0, 0.7, 1, {{0.1, 1.0, {0.896, 0.104, 2.0, -3.0}, {0.5, 0.5}}}, 2,
	 {{0, 0}, {0.975, 0}}, {{0, 1}, {-0.96, 0.28}}, 2},
	{"slanted corner, friction (coupled)", 0.3, 0.7, 1, {{0.1, 1.0, {0.896, 0.101, 4.0, -1.0}, {0.5, 0.5}}}, 2,
	 {{0, 0}, {0.975, 0}}, {{0, 1}, {-0.96, 0.28}}, 2},
	{"obtuse corner, friction, sliding (coupled)", 0.3, 0.7, 1, {{0.1, 1.0, {0.966, 0.1008, 4.0, -0.5}, {0.5, 0.5}}},
	 2, {{0, 0}, {1, 0}}, {{0, 1}, {-0.6, 0.8}}, 2},
	{"ball between two balls", 0.0, 0.6, 3,
	 {{0.1, 1.0, {0.0, 0.0, 0.1, 0.0}, {0.0, 0.0}},
	  {0.1, 0.8, {-0.204, 0.0, 2.5, 0.1}, {0.2, 0.0}},
	  {0.12, 1.5, {0.222 * 0.6, 0.222 * 0.8, -1.2, -2.0}, {0.0, -0.4}}},
	 0, {{0, 0}}, {{0, 1}}, 2},
	{"ball between two balls, friction", 0.4, 0.6, 3,
	 {{0.1, 1.0, {0.0, 0.0, 0.1, 0.0}, {0.0, 0.0}},
	  {0.1, 0.8, {-0.204, 0.0, 2.5, 0.1}, {0.2, 0.0}},
	  {0.12, 1.5, {0.222 * 0.6, 0.222 * 0.8, -1.2, -2.0}, {0.0, -0.4}}},
	 0, {{0, 0}}, {{0, 1}}, 2},
};

const int cl_test_step_case_count = (int)(sizeof cl_test_step_cases / sizeof cl_test_step_cases[0]);

/* The contact normals of a one-step case as the backend detects them: walls
 * by their normal, ball pairs by the predicted separation. */
int cl_test_step_normals(const ClTestStepCase *c, double dt, int pairs[][2], double normals[][2])
{
	int count = 0;
	for (int i = 0; i < c->ball_count; i++)
		for (int w = 0; w < c->wall_count; w++) {
			pairs[count][0] = i;
			pairs[count][1] = -1;
			normals[count][0] = c->wall_normal[w].x;
			normals[count][1] = c->wall_normal[w].y;
			count++;
		}
	for (int i = 0; i < c->ball_count; i++)
		for (int j = i + 1; j < c->ball_count; j++) {
			const double *a = c->balls[i].state, *b = c->balls[j].state;
			double dx = (a[0] + a[2] * dt) - (b[0] + b[2] * dt), dy = (a[1] + a[3] * dt) - (b[1] + b[3] * dt);
			double rho = hypot(dx, dy);
			if (rho >= c->balls[i].radius + c->balls[j].radius)
				continue;
			pairs[count][0] = i;
			pairs[count][1] = j;
			normals[count][0] = dx / rho;
			normals[count][1] = dy / rho;
			count++;
		}
	return count;
}

