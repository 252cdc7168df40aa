/* Properties every backend must have on random valid scenes (1–20 balls,
 * 0–6 walls, random gravity, elasticity, friction, controls): no crash; no
 * NaN or Inf in states, loss or gradients unless the status reports why;
 * the same bits on a second run, in the same rollout and in a fresh one;
 * and the adjoint agrees with forward mode through the recorded tape. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Scenes per backend: enough for every feature to appear several times
 * (checked by /properties/generator), small enough for ~20 s under ASan. */
#define SCENES 24

typedef struct Outcome {
	ClStatus status;
	int steps_done;
	double loss;
	double *states; /* (steps + 1) × state size */
	double *ds0, *du;
	int event_count;
	ClContactEvent *events;
} Outcome;

static void outcome_take(Outcome *o, const ClScene *scene, ClRollout *r)
{
	size_t ns = (size_t)cl_state_size(scene), nu = (size_t)cl_control_size(scene);
	o->status = *cl_rollout_status(r);
	o->steps_done = cl_rollout_steps_done(r);
	o->loss = cl_rollout_loss(r);
	o->states = g_memdup2(cl_rollout_states(r), sizeof(double) * ns * (size_t)(scene->steps + 1));
	o->ds0 = g_new0(double, ns);
	o->du = g_new0(double, nu + 1);
	cl_rollout_gradient(r, o->ds0, o->du);
	o->event_count = cl_rollout_event_count(r);
	o->events = g_memdup2(cl_rollout_events(r), sizeof(ClContactEvent) * (size_t)o->event_count);
}

static void outcome_clear(Outcome *o)
{
	g_free(o->states);
	g_free(o->ds0);
	g_free(o->du);
	g_free(o->events);
}

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

static void fail(const ClScene *scene, const char *backend, const char *what)
{
	g_error("%s on \"%s\" (%d balls, %d walls, %d steps, e %g, mu %g): %s", backend, scene->name, scene->ball_count,
			scene->wall_count, scene->steps, scene->elasticity, scene->friction, what);
}

static void check_outcome(const ClScene *scene, const char *backend, const Outcome *o)
{
	size_t ns = (size_t)cl_state_size(scene), nu = (size_t)cl_control_size(scene);
	if (o->status.code < 0 || o->status.code >= CL_STATUS_COUNT)
		fail(scene, backend, "status code out of range");
	if (o->steps_done < 0 || o->steps_done > scene->steps)
		fail(scene, backend, "steps done out of range");
	/* whatever happened, the states that were kept are finite: the rollout
	 * stops, with a reason, at the first that is not */
	if (!all_finite(o->states, ns * (size_t)(o->steps_done + 1)))
		fail(scene, backend, "a kept state is not finite");
	if (o->status.code != CL_STATUS_OK) {
		if (o->status.message[0] == '\0')
			fail(scene, backend, "a status other than ok without a message");
		if (cl_status_is_fatal(o->status.code) && o->steps_done == scene->steps)
			fail(scene, backend, "a fatal status, yet every step was done");
		return;
	}
	if (o->steps_done != scene->steps)
		fail(scene, backend, "status ok but the run stopped early");
	if (!isfinite(o->loss))
		fail(scene, backend, "status ok but the loss is not finite");
	if (!all_finite(o->ds0, ns) || !all_finite(o->du, nu))
		fail(scene, backend, "status ok but a gradient entry is not finite");
	for (int k = 0; k < o->event_count; k++) {
		const ClContactEvent *e = &o->events[k];
		bool other_ok = e->other >= 0 ? e->other < scene->ball_count && e->other != e->ball
									  : -1 - e->other < scene->wall_count;
		if (e->ball < 0 || e->ball >= scene->ball_count || !other_ok || e->step < 0 || e->step >= scene->steps ||
			!isfinite(e->time))
			fail(scene, backend, "a contact event names no real ball, wall or step");
	}
}

static void check_same_bits(const ClScene *scene, const char *backend, const Outcome *a, const Outcome *b,
							const char *which)
{
	size_t ns = (size_t)cl_state_size(scene), nu = (size_t)cl_control_size(scene);
	char what[128];
	snprintf(what, sizeof what, "%s differs from the first run", which);
	if (a->status.code != b->status.code || a->steps_done != b->steps_done ||
		strcmp(a->status.message, b->status.message) != 0 || a->event_count != b->event_count ||
		memcmp(&a->loss, &b->loss, sizeof a->loss) != 0 ||
		memcmp(a->states, b->states, sizeof(double) * ns * (size_t)(scene->steps + 1)) != 0 ||
		memcmp(a->ds0, b->ds0, sizeof(double) * ns) != 0 || memcmp(a->du, b->du, sizeof(double) * nu) != 0)
		fail(scene, backend, what);
	/* field by field: the struct's padding bytes are unspecified */
	for (int k = 0; k < a->event_count; k++) {
		const ClContactEvent *x = &a->events[k], *y = &b->events[k];
		if (x->step != y->step || x->ball != y->ball || x->other != y->other ||
			memcmp(&x->time, &y->time, sizeof x->time) != 0)
			fail(scene, backend, what);
	}
}

static double uniform(unsigned *state, double lo, double hi)
{
	*state = *state * 1664525u + 1013904223u;
	return lo + (hi - lo) * ((*state >> 8) / 16777216.0);
}

/* The adjoint and forward mode read the same tape: ⟨dL/ds0, δs⟩ + ⟨dL/du, δu⟩
 * must equal the JVP along (δs, δu), up to rounding. */
static void check_adjoint_vs_forward(const ClScene *scene, const char *backend, ClRollout *r, const Outcome *o,
									 unsigned seed)
{
	size_t ns = (size_t)cl_state_size(scene), nu = (size_t)cl_control_size(scene);
	double *ds = g_new(double, ns), *du = g_new(double, nu + 1);
	unsigned st = seed + 17u;
	double adjoint = 0.0, scale = 0.0;
	for (size_t i = 0; i < ns; i++) {
		ds[i] = uniform(&st, -1, 1);
		adjoint += o->ds0[i] * ds[i];
		scale += fabs(o->ds0[i] * ds[i]);
	}
	for (size_t i = 0; i < nu; i++) {
		du[i] = uniform(&st, -1, 1);
		adjoint += o->du[i] * du[i];
		scale += fabs(o->du[i] * du[i]);
	}
	double forward = cl_rollout_jvp(r, ds, du, NULL);
	if (!(fabs(forward - adjoint) <= 1e-9 * scale + 1e-300)) {
		char what[160];
		snprintf(what, sizeof what, "adjoint %.17g but forward mode %.17g", adjoint, forward);
		fail(scene, backend, what);
	}
	g_free(ds);
	g_free(du);
}

/* Float32 peers also run in float64 on request: choice and bool parameters
 * take random values, the others keep their defaults (their ranges include
 * settings that are slow by design, e.g. thousands of sub-steps). */
static void randomise_choices(ClScene *scene, int backend, unsigned seed)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	unsigned st = seed * 747796405u + 2891336453u;
	for (int p = 0; p < info->param_count; p++) {
		const ClParamDesc *d = &info->params[p];
		if (d->kind != CL_PARAM_KIND_CHOICE && d->kind != CL_PARAM_KIND_BOOL)
			continue;
		int options = 2;
		if (d->kind == CL_PARAM_KIND_CHOICE)
			for (options = 0; d->choices && d->choices[options]; options++)
				;
		if (options > 0)
			scene->backend_params[backend].values[p] = (double)(int)uniform(&st, 0, options);
	}
}

static void test_backend(gconstpointer data)
{
	int backend = GPOINTER_TO_INT(data);
	const char *id = cl_backend_info(backend)->id;
	int counts[CL_STATUS_COUNT] = {0};
	for (unsigned seed = 0; seed < SCENES; seed++) {
		ClScene *scene = cl_test_property_scene(seed);
		randomise_choices(scene, backend, seed);
		ClRollout *r = cl_rollout_new(scene, backend);
		Outcome first = {0}, again = {0}, fresh = {0};
		cl_rollout_run(r, NULL, NULL, true);
		outcome_take(&first, scene, r);
		check_outcome(scene, id, &first);
		if (first.status.code == CL_STATUS_OK)
			check_adjoint_vs_forward(scene, id, r, &first, seed);
		cl_rollout_run(r, NULL, NULL, true);
		outcome_take(&again, scene, r);
		check_same_bits(scene, id, &first, &again, "a second run of the same rollout");
		ClRollout *r2 = cl_rollout_new(scene, backend);
		cl_rollout_run(r2, NULL, NULL, true);
		outcome_take(&fresh, scene, r2);
		check_same_bits(scene, id, &first, &fresh, "a run in a fresh rollout");
		counts[first.status.code]++;
		outcome_clear(&first);
		outcome_clear(&again);
		outcome_clear(&fresh);
		cl_rollout_free(r);
		cl_rollout_free(r2);
		cl_scene_free(scene);
	}
	GString *summary = g_string_new(NULL);
	for (int c = 0; c < CL_STATUS_COUNT; c++)
		if (counts[c])
			g_string_append_printf(summary, " %s %d", cl_status_name(c), counts[c]);
	g_test_message("%s over %d scenes:%s", id, SCENES, summary->str);
	g_string_free(summary, TRUE);
}

/* The generator really produces what the properties are claimed over. */
static void test_generator(void)
{
	int with_friction = 0, plastic = 0, elastic = 0, constant = 0, sequence = 0, no_gravity = 0;
	int min_balls = 100, max_balls = 0, max_walls = 0, loss_types[CL_LOSS_TYPE_COUNT] = {0};
	for (unsigned seed = 0; seed < SCENES; seed++) {
		ClScene *s = cl_test_property_scene(seed);
		char message[CL_MESSAGE_MAX];
		if (!cl_scene_validate(s, message, sizeof message))
			g_error("property scene %u is invalid: %s", seed, message);
		min_balls = MIN(min_balls, s->ball_count);
		max_balls = MAX(max_balls, s->ball_count);
		max_walls = MAX(max_walls, s->wall_count);
		g_assert_cmpint(s->wall_count, <=, 6);
		with_friction += s->friction > 0.0;
		plastic += s->elasticity == 0.0;
		elastic += s->elasticity == 1.0;
		no_gravity += s->gravity.x == 0.0 && s->gravity.y == 0.0;
		for (int i = 0; i < s->ball_count; i++) {
			constant += s->balls[i].control_kind == CL_CONTROL_CONSTANT;
			sequence += s->balls[i].control_kind == CL_CONTROL_SEQUENCE;
		}
		for (int k = 0; k < s->loss_count; k++)
			loss_types[s->loss[k].type]++;
		cl_scene_free(s);
	}
	g_test_message("balls %d..%d, walls up to %d, friction %d, e=0 %d, e=1 %d, no gravity %d, controls %d+%d",
				   min_balls, max_balls, max_walls, with_friction, plastic, elastic, no_gravity, constant, sequence);
	g_assert_cmpint(min_balls, >=, 1);
	g_assert_cmpint(max_balls, <=, 20);
	g_assert_cmpint(max_balls, >=, 15);
	g_assert_cmpint(max_walls, ==, 6);
	g_assert_cmpint(with_friction, >=, 3);
	g_assert_cmpint(plastic, >=, 1);
	g_assert_cmpint(elastic, >=, 1);
	g_assert_cmpint(no_gravity, >=, 1);
	g_assert_cmpint(constant, >=, 3);
	g_assert_cmpint(sequence, >=, 3);
	for (int t = 0; t < CL_LOSS_TRAJECTORY_MATCH; t++) /* the types the property scenes draw */
		g_assert_cmpint(loss_types[t], >=, 1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/properties/generator", test_generator);
	for (int b = 0; b < cl_backend_count(); b++) {
		char *path = g_strdup_printf("/properties/%s", cl_backend_info(b)->id);
		g_test_add_data_func(path, GINT_TO_POINTER(b), test_backend);
		g_free(path);
	}
	return g_test_run();
}
