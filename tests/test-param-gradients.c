/* Backends' derivatives with respect to the physical parameters
 * (elasticity, friction, gravity, duration, radii, masses, wall points and
 * angles) against central differences of their own forward maps, on random
 * scenes with impacts between balls and on walls: exact's (the true
 * derivative of the event-driven flow) and the direct-impulse backends'
 * (their peers' autodiff of the step, in float64, where the map is
 * smooth). */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static unsigned next(unsigned *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

static double uniform(unsigned *state, double lo, double hi)
{
	return lo + (hi - lo) * (next(state) / 16777216.0);
}

/* A random box of four walls, each turned by up to ±4° about its point,
 * three balls (the first pushed by a constant force), friction, and a loss
 * of the first ball's final position, the last ball's final x and the
 * first's control effort (so that the duration enters the loss directly
 * too). NULL when the turned box overlaps a ball at t = 0. */
static ClScene *random_scene(unsigned seed)
{
	ClScene *s = cl_test_random_scene(seed, 3, 4);
	unsigned st = seed * 747796405u + 7u;
	s->friction = uniform(&st, 0.05, 0.6);
	for (int k = 0; k < s->wall_count; k++) {
		ClParam angle = {.target = CL_PARAM_WALL_ANGLE, .ball = -1, .wall = k};
		cl_param_set(s, &angle, cl_param_get(s, &angle) + uniform(&st, -4, 4));
	}
	ClLossTerm *effort = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	effort->ball = 0;
	effort->weight = 0.1;
	if (!cl_scene_validate(s, NULL, 0)) {
		cl_scene_free(s);
		return NULL;
	}
	return s;
}

/* Three balls in a row, the first shot at the second off-centre, the
 * second moving on into the third, with friction, gravity along the row
 * and a turned wall behind it: ball-ball impacts in every scene. */
static ClScene *pair_scene(unsigned seed)
{
	unsigned st = seed * 2891336453u + 11u;
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "pairs %u", seed);
	s->duration = 1.0;
	s->steps = 200;
	s->gravity = (ClVec2){uniform(&st, -1, 1), uniform(&st, -1, 1)};
	s->elasticity = uniform(&st, 0.5, 1.0);
	s->friction = uniform(&st, 0.05, 0.6);
	static const char *const ids[] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		ClBall *b = cl_scene_add_ball(s, ids[i]);
		b->radius = uniform(&st, 0.1, 0.2);
		b->mass = uniform(&st, 0.5, 2.0);
		b->position = (ClVec2){-1.2 + 1.1 * i, uniform(&st, -0.12, 0.12)};
		b->velocity = i == 0 ? (ClVec2){uniform(&st, 3, 5), uniform(&st, -0.3, 0.3)} : (ClVec2){uniform(&st, -0.5, 0.5), uniform(&st, -0.5, 0.5)};
	}
	s->balls[0].control_kind = CL_CONTROL_CONSTANT;
	s->balls[0].control_constant = (ClVec2){uniform(&st, -2, 2), uniform(&st, -2, 2)};
	ClWall *wall = cl_scene_add_wall(s, "back");
	wall->point = (ClVec2){1.8, 0};
	ClParam angle = {.target = CL_PARAM_WALL_ANGLE, .ball = -1, .wall = 0};
	cl_param_set(s, &angle, 180.0 + uniform(&st, -20, 20));
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 1;
	t->target = (ClVec2){0.3, 0.4};
	t = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	t->ball = 2;
	t->axis = 1;
	t->weight = 1;
	t = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	t->ball = 0;
	t->weight = 0.1;
	if (!cl_scene_validate(s, NULL, 0)) {
		cl_scene_free(s);
		return NULL;
	}
	return s;
}

/* A pair scene on the line y = 0 (positions, velocities, the control and
 * gravity along x, the wall facing −x): every contact normal stays ±x
 * whatever the parameters, so a gradient that holds the normals constant
 * is the derivative of the map along them. */
static ClScene *collinear_pair_scene(unsigned seed)
{
	ClScene *s = pair_scene(seed);
	if (!s)
		return NULL;
	for (int i = 0; i < s->ball_count; i++) {
		s->balls[i].position.y = s->balls[i].velocity.y = 0.0;
		s->balls[i].control_constant.y = 0.0;
	}
	s->gravity.y = 0.0;
	ClParam angle = {.target = CL_PARAM_WALL_ANGLE, .ball = -1, .wall = 0};
	cl_param_set(s, &angle, 180.0);
	return s;
}

/* A ball thrown diagonally into a right-angled corner of two walls, so
 * that it meets both within one step (simultaneous contacts, one QP in the
 * convex backends), with friction and a second ball elsewhere. */
static ClScene *corner_scene(unsigned seed)
{
	unsigned st = seed * 2246822519u + 5u;
	ClScene *s = cl_scene_new();
	snprintf(s->name, sizeof s->name, "corner %u", seed);
	s->duration = 0.5;
	s->steps = 100;
	s->gravity = (ClVec2){uniform(&st, -1, 1), uniform(&st, -1, 1)};
	s->elasticity = uniform(&st, 0.5, 1.0);
	s->friction = uniform(&st, 0.05, 0.6);
	ClWall *floor = cl_scene_add_wall(s, "floor");
	floor->point = (ClVec2){0, 0};
	ClWall *side = cl_scene_add_wall(s, "side");
	side->point = (ClVec2){1, 0};
	ClParam angle = {.target = CL_PARAM_WALL_ANGLE, .ball = -1, .wall = 1};
	cl_param_set(s, &angle, 180.0);
	static const char *const ids[] = {"a", "b"};
	for (int i = 0; i < 2; i++) {
		ClBall *b = cl_scene_add_ball(s, ids[i]);
		b->radius = uniform(&st, 0.1, 0.2);
		b->mass = uniform(&st, 0.5, 2.0);
	}
	/* gaps 0.3 and 0.3·(1 ± 1%) to the walls at speed ~3 along the diagonal:
	 * the arrivals differ by less than a step most of the time */
	double speed = uniform(&st, 2.5, 3.5), gap = 0.3;
	ClBall *a = &s->balls[0];
	a->position = (ClVec2){1 - a->radius - gap, a->radius + gap * (1 + uniform(&st, -0.01, 0.01))};
	a->velocity = (ClVec2){speed, -speed * (1 + uniform(&st, -0.01, 0.01))};
	s->balls[1].position = (ClVec2){-1.5, 1.5};
	s->balls[1].velocity = (ClVec2){uniform(&st, -0.5, 0.5), uniform(&st, -0.5, 0.5)};
	a->control_kind = CL_CONTROL_CONSTANT;
	a->control_constant = (ClVec2){uniform(&st, -2, 2), uniform(&st, -2, 2)};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_POSITION);
	t->ball = 0;
	t->target = (ClVec2){0.3, 0.4};
	t = cl_scene_add_loss(s, CL_LOSS_CONTROL_EFFORT);
	t->ball = 0;
	t->weight = 0.1;
	if (!cl_scene_validate(s, NULL, 0)) {
		cl_scene_free(s);
		return NULL;
	}
	return s;
}

typedef struct Outcome {
	double loss;
	ClStatusCode status;
	int events;
	ClContactEvent *event; /* owned */
} Outcome;

static int backend; /* the backend under test */

/* A backend under test, and the friction its scenes are run at where its
 * derivative leaves out a term that friction brings in (< 0: the family's);
 * constant_normals: its gradient holds the contact normals of the impulse
 * constant (DiffCoSim's J), so it is the derivative of its map only on
 * random scenes whose contacts are all on walls and on collinear pair
 * scenes, and not along a wall's angle. */
typedef struct Case {
	const char *id;
	double friction;
	bool constant_normals;
} Case;

static Outcome run(const ClScene *scene)
{
	ClRollout *r = cl_rollout_new(scene, backend);
	cl_rollout_run(r, NULL, NULL, false);
	Outcome o = {.loss = cl_rollout_loss(r), .status = cl_rollout_status(r)->code, .events = cl_rollout_event_count(r)};
	o.event = g_memdup2(cl_rollout_events(r), sizeof(ClContactEvent) * (size_t)o.events);
	cl_rollout_free(r);
	return o;
}

static bool same_contacts(const Outcome *a, const Outcome *b)
{
	if (a->events != b->events)
		return false;
	for (int k = 0; k < a->events; k++)
		if (a->event[k].step != b->event[k].step || a->event[k].ball != b->event[k].ball ||
			a->event[k].other != b->event[k].other)
			return false;
	return true;
}

/* The loss at θ_k = value, or a not-ok outcome. */
static Outcome run_at(const ClScene *scene, const ClParam *p, double value)
{
	ClScene *copy = cl_scene_copy(scene);
	cl_param_set(copy, p, value);
	Outcome o = cl_scene_validate(copy, NULL, 0) ? run(copy) : (Outcome){.loss = NAN, .status = CL_STATUS_UNSUPPORTED};
	cl_scene_free(copy);
	return o;
}

enum { SCENES = 24, TRIES = 80 };

/* SCENES accepted scenes of a family, each derivative within 1e-6 of the
 * extrapolated central difference, relative to |FD| or 1e-3 if smaller
 * (a derivative that is zero, of a ball that never touches anything, has
 * FD noise of ~1e-10). */
/* simultaneous_out: contacts of a ball in the same step as another of its contacts */
static void check_family(ClScene *(*make)(unsigned), const Case *test, int *wall_hits_out, int *pair_hits_out,
						 int *simultaneous_out)
{
	int simultaneous = 0;
	const char *backend_id = test->id;
	backend = cl_test_backend(backend_id);
	int accepted = 0, wall_hits = 0, pair_hits = 0, checked = 0;
	double worst = 0.0;
	char worst_name[CL_NAME_MAX + 32] = "";
	for (unsigned seed = 1; seed <= TRIES && accepted < SCENES; seed++) {
		ClScene *s = make(seed);
		if (s && test->friction >= 0)
			s->friction = test->friction;
		if (s && cl_backend_precision_param(backend) >= 0)
			g_assert_true(cl_scene_set_backend_param(s, backend, "precision", CL_PRECISION_FLOAT64, NULL, 0));
		if (!s) {
			g_test_message("seed %u: the turned walls overlap a ball at t = 0", seed);
			continue;
		}
		Outcome base = run(s);
		int count;
		ClParam *params = cl_scene_params_new(s, CL_PARAMS_BALL_PHYSICS | CL_PARAMS_GLOBAL | CL_PARAMS_WALLS, -1, &count);
		double *fd = g_new(double, count);
		/* degenerate, by structure and not by the derivatives: the run is not
		 * ok (grazing, simultaneous, Zeno, in contact: the backend's own
		 * detection), or a perturbation θ ± h runs differently (another
		 * contact, in another interval, or a status): there the forward map
		 * is not differentiable within the difference's reach */
		bool degenerate = base.status != CL_STATUS_OK;
		const char *why = degenerate ? cl_status_name(base.status) : "";
		for (int k = 0; k < base.events && test->constant_normals && make != collinear_pair_scene && !degenerate; k++)
			if (base.event[k].other >= 0) {
				degenerate = true;
				why = "a ball-ball contact, whose normal the gradient holds constant";
			}
		char name[CL_NAME_MAX];
		for (int k = 0; k < count && !degenerate; k++) {
			double x = cl_param_get(s, &params[k]);
			/* central differences at h and h/2, extrapolated (Richardson:
			 * (4·D(h/2) − D(h))/3, truncation O(h⁴)): a plain one at 1e-5
			 * is off by 4e-7 where an impact's curvature is large (the
			 * radius of seed 20), a smaller h drowns in the loss's
			 * rounding noise over 200 steps (~1e-13, /h) */
			double h = 2e-5 * fmax(1.0, fabs(x)), d[2];
			for (int half = 0; half < 2; half++) {
				double step = half ? 0.5 * h : h;
				Outcome plus = run_at(s, &params[k], x + step), minus = run_at(s, &params[k], x - step);
				if (plus.status != CL_STATUS_OK || minus.status != CL_STATUS_OK || !same_contacts(&plus, &base) ||
					!same_contacts(&minus, &base)) {
					degenerate = true;
					cl_param_name(s, &params[k], name, sizeof name);
					why = name;
				}
				d[half] = (plus.loss - minus.loss) / (2.0 * step);
				g_free(plus.event);
				g_free(minus.event);
			}
			fd[k] = (4.0 * d[1] - d[0]) / 3.0;
		}
		if (degenerate) {
			g_test_message("seed %u excluded: %s", seed, why);
		} else {
			accepted++;
			for (int k = 0; k < base.events; k++) {
				*(base.event[k].other < 0 ? &wall_hits : &pair_hits) += 1;
				for (int l = 0; l < base.events; l++)
					if (l != k && base.event[l].step == base.event[k].step &&
						(base.event[l].ball == base.event[k].ball || base.event[l].other == base.event[k].ball)) {
						simultaneous++;
						break;
					}
			}
			ClGradientRow row;
			cl_gradient_row_compute(&row, s, backend, params, count, CL_FD_NONE);
			g_assert_cmpint(row.status.code, ==, CL_STATUS_OK);
			for (int k = 0; k < count; k++) {
				cl_param_name(s, &params[k], name, sizeof name);
				double adjoint = row.cells[k].adjoint;
				if (!cl_backend_has_param_adjoint(backend, &params[k])) {
					g_assert_true(isnan(adjoint)); /* "no adjoint", not a number */
					continue;
				}
				if (test->constant_normals && params[k].target == CL_PARAM_WALL_ANGLE)
					continue;
				double error = fabs(adjoint - fd[k]) / fmax(fabs(fd[k]), 1e-3);
				checked++;
				if (error > worst) {
					worst = error;
					snprintf(worst_name, sizeof worst_name, "seed %u %s", seed, name);
				}
				if (!(error <= 1e-6))
					g_test_fail_printf("seed %u: d loss / d %s: adjoint %.12g, central FD %.12g (relative error %.2e)",
									   seed, name, adjoint, fd[k], error);
			}
			/* forward mode along each parameter (the perturbation view's
			 * tangent) is the transpose of the same columns: its final
			 * tangent against dL/ds_N gives the adjoint (but for the
			 * duration's direct part in the control effort) */
			ClRollout *r = cl_rollout_new(s, backend);
			cl_rollout_record_params(r, true);
			cl_rollout_run(r, NULL, NULL, true);
			int ns = cl_state_size(s);
			double *ds = g_new(double, ns), *dl_ds = g_new(double, ns), *u = g_new(double, cl_control_size(s));
			cl_scene_controls(s, u);
			cl_loss(s, cl_rollout_states(r) + (size_t)s->steps * (size_t)ns, u, dl_ds, NULL);
			for (int k = 0; k < count; k++) {
				bool has = cl_backend_has_param_adjoint(backend, &params[k]);
				g_assert_true(cl_rollout_param_tangent(r, &params[k], ds) == has);
				if (!has || params[k].target == CL_PARAM_DURATION)
					continue;
				double d = 0.0;
				for (int i = 0; i < ns; i++)
					d += dl_ds[i] * ds[i];
				if (!(fabs(d - row.cells[k].adjoint) <= 1e-10 * fmax(fabs(d), 1.0))) {
					cl_param_name(s, &params[k], name, sizeof name);
					g_test_fail_printf("seed %u: %s: forward mode %.15g, adjoint %.15g", seed, name, d,
									   row.cells[k].adjoint);
				}
			}
			g_free(ds);
			g_free(dl_ds);
			g_free(u);
			cl_rollout_free(r);
			cl_gradient_row_clear(&row);
		}
		g_free(fd);
		free(params);
		g_free(base.event);
		cl_scene_free(s);
	}
	g_test_message("%s: %d scenes, %d derivatives, %d wall and %d ball-ball impacts; worst relative error %.2e (%s)",
				   backend_id, accepted, checked, wall_hits, pair_hits, worst, worst_name);
	g_assert_cmpint(accepted, >=, SCENES);
	*wall_hits_out = wall_hits;
	*pair_hits_out = pair_hits;
	*simultaneous_out = simultaneous;
}

static void test_random_scenes(gconstpointer test)
{
	int walls, pairs, simultaneous;
	check_family(random_scene, test, &walls, &pairs, &simultaneous);
	g_assert_cmpint(walls, >=, SCENES); /* the check goes through impacts */
}

static void test_pair_scenes(gconstpointer test)
{
	int walls, pairs, simultaneous;
	check_family(((const Case *)test)->constant_normals ? collinear_pair_scene : pair_scene, test, &walls, &pairs,
				 &simultaneous);
	g_assert_cmpint(pairs, >=, SCENES); /* a ball-ball impact a scene on average */
}

/* The convex backends' coupled QP: its derivative along the friction and
 * the masses on its active set. */
static void test_corner_scenes(gconstpointer test)
{
	int walls, pairs, simultaneous;
	check_family(corner_scene, test, &walls, &pairs, &simultaneous);
	g_assert_cmpint(simultaneous, >=, SCENES); /* both walls in one step, in most scenes */
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	static const Case cases[] = {
		{"exact", -1, false},
		{"impulse", -1, false},
		{"impulse-toi", -1, false},
		/* TDS's spin is outside the engine's state, so its derivative is not
		 * carried into a later sticking contact (the backend's description;
		 * at the families' friction 0.05–0.6 that is off by up to 1e-1, at
		 * 0.01 a pair scene still sticks); at μ = 0.001 the contacts slide,
		 * where the spin does not matter */
		{"impulse-tds", 0.001, false},
		{"convex", -1, true},
		{"convex-toi", -1, true},
	};
	for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
		char *path = g_strdup_printf("/param-gradients/%s/random-scenes", cases[k].id);
		g_test_add_data_func(path, &cases[k], test_random_scenes);
		g_free(path);
		path = g_strdup_printf("/param-gradients/%s/pair-scenes", cases[k].id);
		g_test_add_data_func(path, &cases[k], test_pair_scenes);
		g_free(path);
		if (cases[k].constant_normals) {
			path = g_strdup_printf("/param-gradients/%s/corner-scenes", cases[k].id);
			g_test_add_data_func(path, &cases[k], test_corner_scenes);
			g_free(path);
		}
	}
	return g_test_run();
}
