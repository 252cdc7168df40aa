/* impulse-tds: every row of data/reference/tds-reference.csv (the numbers of
 * the real Tiny Differentiable Simulator headers on the paper's scenes,
 * backend-tds.md §9) recomputed: losses, adjoints and their central
 * differences through `contactlab gradients SCENE --backend impulse-tds
 * --set …`, final states, spin and contact steps through the engine's
 * rollout of the same scene. Then the spec's degenerate cases (§0, §10): a
 * contact on a step boundary, a ball still penetrating while separating. */
#include "backend-check.h"
#include "cli-run.h"
#include "core.h"
#include "numbers.h"
#include "scene-file.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The precision asked of each kind of row (issue 15): values and adjoints to
 * 1e-9 relative, central differences to 1e-6, contact steps exactly. A
 * reference 0 has no relative scale: there the bound is absolute, 1e-12 for
 * values and adjoints and the spec's 2e-9 for differences (§7).
 *
 * One kind of row cannot be met relatively: a derivative that is exactly 0
 * in exact arithmetic but rounding noise in TDS's forward-mode pass (Task 3
 * with erp 0, d/dball1.position: 1.2e-15, §8 says 0). ContactLab's adjoint
 * sums the same terms in another order (reverse mode through the recorded
 * Jacobians), so its noise differs (6.7e-16). An adjoint is therefore also
 * accepted within ROUNDING_ULPS ulps of the group's largest derivative,
 * which decides only where the reference is below ~1e-6 of that scale (it
 * is logged when it does). */
#define REL_VALUE 1e-9
#define REL_FD 1e-6
#define ABS_ZERO_VALUE 1e-12
#define ABS_ZERO_FD 2e-9
#define ROUNDING_ULPS 16

static char *tmp_dir;

static int tds(void)
{
	int b = cl_backend_find("impulse-tds");
	g_assert_cmpint(b, >=, 0);
	return b;
}

typedef struct RefRow {
	char *quantity;
	double value;
} RefRow;

/* The rows of one (scene, variation). */
typedef struct RefGroup {
	char *scene, *variation;
	GArray *rows; /* RefRow */
} RefGroup;

static GPtrArray *groups; /* RefGroup */

static void load_reference(void)
{
	const char *root = g_getenv("CONTACTLAB_SOURCE_ROOT");
	g_assert_nonnull(root);
	char *path = g_build_filename(root, "data", "reference", "tds-reference.csv", NULL);
	char *text = NULL;
	GError *error = NULL;
	if (!g_file_get_contents(path, &text, NULL, &error))
		g_error("%s: %s", path, error->message);
	char ***csv = cl_csv_parse(text);
	g_assert_nonnull(csv);
	g_assert_cmpstr(csv[0][0], ==, "scene");
	g_assert_cmpstr(csv[0][3], ==, "value");
	groups = g_ptr_array_new();
	for (int r = 1; csv[r]; r++) {
		char **f = csv[r];
		if (g_strv_length(f) != 4)
			g_error("%s: row %d has %u fields, not 4", path, r + 1, g_strv_length(f));
		RefGroup *g = groups->len ? g_ptr_array_index(groups, groups->len - 1) : NULL;
		if (!g || strcmp(g->scene, f[0]) != 0 || strcmp(g->variation, f[1]) != 0) {
			g = g_new0(RefGroup, 1);
			g->scene = g_strdup(f[0]);
			g->variation = g_strdup(f[1]);
			g->rows = g_array_new(FALSE, FALSE, sizeof(RefRow));
			g_ptr_array_add(groups, g);
		}
		char *end = NULL;
		RefRow row = {g_strdup(f[2]), g_ascii_strtod(f[3], &end)};
		if (!end || *end || end == f[3])
			g_error("%s: row %d: %s is not a number", path, r + 1, f[3]);
		g_array_append_val(g->rows, row);
	}
	cl_csv_free(csv);
	g_free(text);
	g_free(path);
	g_assert_cmpuint(groups->len, >, 0);
}

/* The --set values of a variation (§9): a step count, or the backend's erp
 * or iteration count; NULL for one this test does not know. */
static char **variation_settings(const char *variation)
{
	static const struct {
		const char *variation;
		const char *setting;
	} known[] = {
		{"base", NULL},
		{"N960", "steps=960"},
		{"N576", "steps=576"},
		{"base/erp0", "impulse-tds.erp=0"},
		{"base/erp0.2", "impulse-tds.erp=0.2"},
		{"base/iters50", "impulse-tds.iterations=50"},
	};
	for (size_t k = 0; k < G_N_ELEMENTS(known); k++)
		if (strcmp(known[k].variation, variation) == 0) {
			char **settings = g_new0(char *, 2);
			settings[0] = g_strdup(known[k].setting);
			return settings;
		}
	return NULL;
}

/* True when computed meets the row's precision; what says which kind. */
static gboolean within(double computed, double expected, gboolean fd)
{
	double bound = expected == 0.0 ? (fd ? ABS_ZERO_FD : ABS_ZERO_VALUE) : (fd ? REL_FD : REL_VALUE) * fabs(expected);
	return fabs(computed - expected) <= bound;
}

/* The checker itself fails: a value off by more than the precision is not
 * accepted, one within it is (the test can fail). */
static void test_checker(void)
{
	g_assert_true(within(-25.3 * (1 + 0.5e-9), -25.3, FALSE));
	g_assert_false(within(-25.3 * (1 + 2e-9), -25.3, FALSE));
	g_assert_false(within(-25.3 * (1 + 2e-6), -25.3, TRUE));
	g_assert_true(within(-25.3 * (1 + 0.5e-6), -25.3, TRUE));
	g_assert_false(within(1e-11, 0.0, FALSE));
	g_assert_false(within(NAN, 1.0, FALSE));
	g_assert_false(within(-1.0, 1.0, TRUE));
}

/* `contactlab gradients` CSV: parameter → value of the impulse-tds rows. */
static GHashTable *gradients_cli(const char *scene, char **settings)
{
	GPtrArray *args = g_ptr_array_new();
	const char *fixed[] = {"gradients", scene, "--backend", "impulse-tds", "--format", "csv", "--fd", "all"};
	for (size_t k = 0; k < G_N_ELEMENTS(fixed); k++)
		g_ptr_array_add(args, (gpointer)fixed[k]);
	for (char **s = settings; s && *s; s++) {
		g_ptr_array_add(args, "--set");
		g_ptr_array_add(args, *s);
	}
	g_ptr_array_add(args, NULL);
	char *out = NULL, *err = NULL;
	int status = cl_test_run_cli(tmp_dir, (const char *const *)args->pdata, &out, &err);
	if (status != 0)
		g_error("contactlab gradients %s: exit %d: %s", scene, status, err);
	GHashTable *values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	char ***csv = cl_csv_parse(out);
	for (int r = 1; csv && csv[r]; r++) {
		if (g_strv_length(csv[r]) != 3 || strcmp(csv[r][0], "impulse-tds") != 0 || strcmp(csv[r][1], "status") == 0)
			continue;
		double *v = g_new(double, 1);
		*v = g_ascii_strtod(csv[r][2], NULL);
		g_hash_table_insert(values, g_strdup(csv[r][1]), v);
	}
	cl_csv_free(csv);
	g_free(out);
	g_free(err);
	g_ptr_array_free(args, TRUE);
	return values;
}

/* "ball1-ball2", "ball-ground": the ball and the other party (a ball index,
 * or −1 − wall index); false when the name does not split into them. */
static gboolean parse_pair(const ClScene *s, const char *pair, int *ball, int *other)
{
	for (const char *dash = strchr(pair, '-'); dash; dash = strchr(dash + 1, '-')) {
		char *left = g_strndup(pair, (gsize)(dash - pair));
		int a = cl_scene_find_ball(s, left);
		g_free(left);
		int b = cl_scene_find_ball(s, dash + 1), w = cl_scene_find_wall(s, dash + 1);
		if (a >= 0 && (b >= 0 || w >= 0)) {
			*ball = a;
			*other = b >= 0 ? b : -1 - w;
			return TRUE;
		}
	}
	return FALSE;
}

/* The first contact event of the pair, NULL when there is none. */
static const ClContactEvent *first_event(const ClRollout *r, int ball, int other)
{
	const ClContactEvent *e = cl_rollout_events(r);
	for (int k = 0; k < cl_rollout_event_count(r); k++)
		if ((e[k].ball == ball && e[k].other == other) || (other >= 0 && e[k].ball == other && e[k].other == ball))
			return &e[k];
	return NULL;
}

/* The signed gap of the pair in a state, as TDS's contact generator has it
 * (§3): |Δ| − (r_a + r_b), or n·p − c − r with c = n·point. */
static double pair_distance(const ClScene *s, const double *state, int ball, int other)
{
	const double *p = state + CL_BALL_STATE * ball;
	double r = s->balls[ball].radius;
	if (other >= 0) {
		const double *q = state + CL_BALL_STATE * other;
		double dx = p[0] - q[0], dy = p[1] - q[1];
		return sqrt(dx * dx + dy * dy) - (r + s->balls[other].radius);
	}
	const ClWall *w = &s->walls[-1 - other];
	double c = w->normal.x * w->point.x + w->normal.y * w->point.y;
	return -((p[0] * -w->normal.x + p[1] * -w->normal.y) + c) - r;
}

/* A final-state quantity: "ball.position.x", "ball2.velocity.y", "ball.spin.z". */
static gboolean final_value(const ClScene *s, const ClRollout *r, const char *name, double *value)
{
	const char *dot = strchr(name, '.');
	if (!dot)
		return FALSE;
	char *id = g_strndup(name, (gsize)(dot - name));
	int ball = cl_scene_find_ball(s, id);
	g_free(id);
	if (ball < 0)
		return FALSE;
	const double *last = cl_rollout_states(r) + (size_t)s->steps * (size_t)cl_state_size(s) + CL_BALL_STATE * ball;
	static const char *const parts[] = {".position.x", ".position.y", ".velocity.x", ".velocity.y"};
	for (int k = 0; k < 4; k++)
		if (strcmp(dot, parts[k]) == 0) {
			*value = last[k];
			return TRUE;
		}
	if (strcmp(dot, ".spin.z") == 0) {
		*value = cl_rollout_spin(r, ball);
		return TRUE;
	}
	return FALSE;
}

static void report(gboolean ok, const RefGroup *g, const char *quantity, const char *computed, const char *expected)
{
	if (ok)
		g_test_message("%s %s %s: %s (TDS %s)", g->scene, g->variation, quantity, computed, expected);
	else
		g_test_fail_printf("%s %s %s: computed %s, TDS %s", g->scene, g->variation, quantity, computed, expected);
}

static void report_number(gboolean ok, const RefGroup *g, const char *quantity, double computed, double expected)
{
	char a[40], b[40];
	g_ascii_formatd(a, sizeof a, "%.17g", computed);
	g_ascii_formatd(b, sizeof b, "%.17g", expected);
	report(ok, g, quantity, a, b);
}

static void test_group(gconstpointer data)
{
	const RefGroup *g = data;
	char **settings = variation_settings(g->variation);
	if (!settings) {
		g_test_fail_printf("%s: variation \"%s\" is not one the test knows how to set", g->scene, g->variation);
		return;
	}
	GHashTable *cli = gradients_cli(g->scene, settings);
	/* the largest derivative of the group: the scale of its rounding */
	double scale = 0.0;
	for (guint k = 0; k < g->rows->len; k++) {
		const RefRow *row = &g_array_index(g->rows, RefRow, k);
		if (strchr(row->quantity, '.') && !strchr(row->quantity, ' ') && !g_str_has_prefix(row->quantity, "fd:"))
			scale = fmax(scale, fabs(row->value));
	}
	double rounding = ROUNDING_ULPS * DBL_EPSILON * scale;

	/* the same scene in the engine, for states, spin and contacts */
	GError *error = NULL;
	ClScene *s = cl_preset_load(g->scene, &error);
	g_assert_no_error(error);
	for (char **set = settings; *set; set++) {
		g_assert_true(cl_scene_apply_setting(s, *set, &error));
		g_assert_no_error(error);
	}
	ClRollout *r = cl_rollout_new(s, tds());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));

	for (guint k = 0; k < g->rows->len; k++) {
		const RefRow *row = &g_array_index(g->rows, RefRow, k);
		const char *q = row->quantity;
		double computed;
		if (g_str_has_prefix(q, "final ")) {
			if (!final_value(s, r, q + strlen("final "), &computed)) {
				g_test_fail_printf("%s %s: unknown final quantity \"%s\"", g->scene, g->variation, q);
				continue;
			}
			report_number(within(computed, row->value, FALSE), g, q, computed, row->value);
		} else if (g_str_has_prefix(q, "contact step ") || g_str_has_prefix(q, "contact distance ")) {
			gboolean step = g_str_has_prefix(q, "contact step ");
			const char *pair = q + strlen(step ? "contact step " : "contact distance ");
			int ball, other;
			if (!parse_pair(s, pair, &ball, &other)) {
				g_test_fail_printf("%s %s: \"%s\" names no ball and wall or ball", g->scene, g->variation, q);
				continue;
			}
			const ClContactEvent *e = first_event(r, ball, other);
			if (!e) {
				g_test_fail_printf("%s %s: no contact %s (TDS: %g)", g->scene, g->variation, pair, row->value);
				continue;
			}
			if (step) {
				char a[16], b[16];
				g_snprintf(a, sizeof a, "%d", e->step);
				g_snprintf(b, sizeof b, "%.17g", row->value);
				report(e->step == row->value, g, q, a, b);
			} else {
				const double *start = cl_rollout_states(r) + (size_t)e->step * (size_t)cl_state_size(s);
				computed = pair_distance(s, start, ball, other);
				report_number(within(computed, row->value, FALSE), g, q, computed, row->value);
			}
		} else {
			const double *v = g_hash_table_lookup(cli, q);
			if (!v) {
				g_test_fail_printf("%s %s: `contactlab gradients` has no row \"%s\"", g->scene, g->variation, q);
				continue;
			}
			computed = *v;
			gboolean fd = g_str_has_prefix(q, "fd:"), ok = within(computed, row->value, fd);
			if (!ok && !fd && strcmp(q, "loss") != 0 && fabs(computed - row->value) <= rounding) {
				g_test_message("%s %s %s: %.3g and TDS's %.3g are both rounding noise of a zero derivative "
							   "(within %d ulps of %.3g)",
							   g->scene, g->variation, q, computed, row->value, ROUNDING_ULPS, scale);
				ok = TRUE;
			}
			report_number(ok, g, q, computed, row->value);
			/* the CLI's loss is the engine's */
			if (strcmp(q, "loss") == 0)
				g_assert_cmpfloat(computed, ==, cl_rollout_loss(r));
		}
	}
	cl_rollout_free(r);
	cl_scene_free(s);
	g_hash_table_unref(cli);
	g_strfreev(settings);
}

/* ------------------------------------------------ one-step Jacobians vs FD */

typedef struct StepBall {
	double radius, mass, state[4], control[2];
} StepBall;

/* One step of 1/480 s, gravity (0.3, −9.8), the ground y = 0 and the wall
 * x = 1 (normal −x), balls placed inside a surface or each other. */
static ClScene *step_scene(double friction, double elasticity, int count, const StepBall *balls, double *s0, double *u)
{
	ClScene *s = cl_scene_new();
	s->duration = 1.0 / 480;
	s->steps = 1;
	s->gravity = (ClVec2){0.3, -9.8};
	s->friction = friction;
	s->elasticity = elasticity;
	for (int i = 0; i < count; i++) {
		char id[8];
		g_snprintf(id, sizeof id, "b%d", i);
		ClBall *b = cl_scene_add_ball(s, id);
		b->radius = balls[i].radius;
		b->mass = balls[i].mass;
		memcpy(s0 + CL_BALL_STATE * i, balls[i].state, sizeof balls[i].state);
		memcpy(u + 2 * i, balls[i].control, sizeof balls[i].control);
	}
	ClWall *ground = cl_scene_add_wall(s, "ground");
	ground->normal = (ClVec2){0, 1};
	ClWall *wall = cl_scene_add_wall(s, "wall");
	wall->point = (ClVec2){1, 0};
	wall->normal = (ClVec2){-1, 0};
	return s;
}

/* ---------------------------------------------------------- degenerate cases */

/* One ball of radius 0.1 above the ground (y = 0 plane) falling at 2 m/s, no
 * gravity, T = 1, N = 480; erp as given. */
static ClScene *falling_ball(double y0, double elasticity, double erp)
{
	ClScene *s = cl_scene_new();
	g_assert_nonnull(s);
	s->elasticity = elasticity;
	ClBall *b = cl_scene_add_ball(s, "ball");
	b->radius = 0.1;
	b->mass = 1;
	b->position = (ClVec2){-1, y0};
	b->velocity = (ClVec2){2, -2};
	ClWall *w = cl_scene_add_wall(s, "ground");
	w->point = (ClVec2){0, 0};
	w->normal = (ClVec2){0, 1};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	t->ball = 0;
	t->axis = 1;
	t->weight = 1;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_scene_set_backend_param(s, tds(), "erp", erp, message, sizeof message));
	return s;
}

static double gap_at(const ClScene *s, const ClRollout *r, int step)
{
	return pair_distance(s, cl_rollout_states(r) + (size_t)step * (size_t)cl_state_size(s), 0, -1);
}

/* §0.1: Task 1 reaches the ground on a step boundary, +2.3e-15 above it
 * after rounding: not a contact. It is caught one step later with the whole
 * step's penetration, and leaves at 2 + erp·|d|/dt = 2.2 m/s. */
static void test_step_boundary(void)
{
	ClScene *s = falling_ball(1, 1, 0.1);
	ClRollout *r = cl_rollout_new(s, tds());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
	g_assert_cmpint(cl_rollout_events(r)[0].step, ==, 217);
	double before = gap_at(s, r, 216), at = gap_at(s, r, 217);
	g_test_message("gap at the start of step 216: %g, of step 217: %g", before, at);
	g_assert_cmpfloat(before, >=, 0.0);
	g_assert_cmpfloat(before, <, 1e-12);
	g_assert_cmpfloat(fabs(at + 2 * cl_scene_dt(s)), <, 1e-12);
	const double *after = cl_rollout_states(r) + 218 * CL_BALL_STATE;
	g_assert_cmpfloat(fabs(after[3] - 2.2), <, 1e-12);
	cl_rollout_free(r);
	cl_scene_free(s);

	/* a ball starting exactly on the surface (d = 0, strict d < 0) is not
	 * in contact in step 0, only in step 1, two steps' travel deep */
	s = falling_ball(0.1, 1, 0.1);
	r = cl_rollout_new(s, tds());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpfloat(gap_at(s, r, 0), ==, 0.0);
	g_assert_cmpint(cl_rollout_event_count(r), >=, 1);
	g_assert_cmpint(cl_rollout_events(r)[0].step, ==, 1);
	after = cl_rollout_states(r) + 1 * CL_BALL_STATE;
	g_assert_cmpfloat(after[3], ==, -2.0); /* step 0 did nothing */
	after = cl_rollout_states(r) + 2 * CL_BALL_STATE;
	g_assert_cmpfloat(fabs(after[3] - 2.2), <, 1e-12); /* |d| = 2·dt: 2 + 0.1·2 */
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* §10: a ball still penetrating while it separates gets nothing. With e =
 * 0.1 and erp = 0, Task 1's ball leaves the ground at 0.2 m/s, 2·dt deep;
 * it needs ten steps to come out, in which its velocity must not change
 * and no further contact is reported. */
static void test_penetrating_while_separating(void)
{
	ClScene *s = falling_ball(1, 0.1, 0.0);
	ClRollout *r = cl_rollout_new(s, tds());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
	g_assert_cmpint(cl_rollout_events(r)[0].step, ==, 217);
	const double *states = cl_rollout_states(r);
	double v = states[218 * CL_BALL_STATE + 3];
	g_assert_cmpfloat(fabs(v - 0.2), <, 1e-12);
	int inside = 0;
	for (int n = 218; n <= s->steps; n++) {
		g_assert_cmpfloat(states[n * CL_BALL_STATE + 3], ==, v);
		if (gap_at(s, r, n) < 0)
			inside++;
	}
	g_test_message("steps that start inside while separating: %d", inside);
	g_assert_cmpint(inside, >=, 9);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* §3.1: centres closer than 1e-5 give no contact (no normal), so two balls
 * almost on top of each other pass through; at 1e-4 they are pushed apart. */
static void test_coincident_centres(void)
{
	for (int apart = 0; apart < 2; apart++) {
		StepBall balls[2] = {{0.1, 1, {0, 0.5, 1, 0}, {0, 0}}, {0.1, 1, {apart ? 1e-4 : 5e-6, 0.5, -1, 0}, {0, 0}}};
		double s0[8], u[4];
		ClScene *s = step_scene(0, 1, 2, balls, s0, u);
		s->gravity = (ClVec2){0, 0};
		ClRollout *r = cl_rollout_new(s, tds());
		g_assert_true(cl_rollout_run(r, s0, u, false));
		g_assert_cmpint(cl_rollout_event_count(r), ==, apart);
		double v = cl_rollout_states(r)[cl_state_size(s) + 2]; /* ball 0's v_x after the step */
		if (apart)
			g_assert_cmpfloat(v, <, 0.0);
		else
			g_assert_cmpfloat(v, ==, 1.0);
		cl_rollout_free(r);
		cl_scene_free(s);
	}
}

/* §7: where no perturbation moves the contact step the recorded gradient
 * is the derivative of TDS's forward map: a start just above Task 1's
 * boundary (y0 = 1.001, contact in step 217 still) agrees with central
 * differences, and its d/dy0 is 1 − erp·k. */
static void test_gradient_off_the_boundary(void)
{
	ClScene *s = falling_ball(1.001, 1, 0.1);
	ClRollout *r = cl_rollout_new(s, tds());
	g_assert_true(cl_rollout_run(r, NULL, NULL, true));
	g_assert_cmpint(cl_rollout_events(r)[0].step, ==, 217);
	double *g_s0 = g_new0(double, cl_state_size(s));
	cl_rollout_gradient(r, g_s0, NULL);
	ClParam p;
	char message[CL_MESSAGE_MAX];
	g_assert_true(cl_param_parse(s, "ball.position.y", &p, message, sizeof message));
	ClStatus status;
	double fd = cl_finite_difference(s, tds(), &p, cl_fd_step(s, tds(), &p), &status);
	g_test_message("d/dy0 = %.12g, FD %.12g, 1 - 0.1*263 = %.12g", g_s0[1], fd, 1 - 0.1 * 263);
	g_assert_cmpfloat(fabs(g_s0[1] - (1 - 0.1 * 263)), <, 1e-9);
	g_assert_cmpfloat(fabs(fd - g_s0[1]), <, 1e-6 * fabs(g_s0[1]));
	g_free(g_s0);
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Where no perturbation changes a branch the recorded step Jacobian is the
 * derivative of the step (§7): through v_n, the depth (Baumgarte), the
 * ball–ball normal, and friction sliding (f = μj) or sticking (f = |v_t|/K),
 * one contact or several resolved in sequence. */
static void test_step_jacobians(void)
{
	static const struct {
		const char *name;
		double friction, elasticity;
		int iterations, count, contacts;
		StepBall balls[3];
	} cases[] = {
		{"ground, sliding", 0.1, 0.8, 1, 1, 1, {{0.1, 1, {0, 0.098, 1, -2}, {0.5, -1}}}},
		{"ground, sticking", 0.9, 0.8, 1, 1, 1, {{0.1, 2, {0, 0.097, 0.3, -2}, {0.5, -1}}}},
		{"oblique balls, friction", 0.2, 0.9, 1, 2, 1,
		 {{0.1, 1, {0, 0.5, 1, 0.2}, {0.3, 0}}, {0.1, 2, {0.19, 0.55, -0.5, 0}, {0, 0}}}},
		{"corner, sliding", 0.3, 1, 1, 1, 2, {{0.1, 1, {0.902, 0.099, 2, -1}, {0, 0}}}},
		{"corner, five passes", 0.3, 1, 5, 1, 2, {{0.1, 1, {0.902, 0.099, 2, -1}, {0, 0}}}},
		/* one pass, then three: with depths 1 and 2 mm the second pass finds
		 * the first pair approaching again (with equal depths it would meet
		 * v_n = 0 exactly, a branch point where FD jumps) */
		{"three balls in a row", 0, 1, 1, 3, 2,
		 {{0.1, 1, {0, 0.5, 2, 0}, {0, 0}}, {0.1, 1, {0.199, 0.5, 0, 0}, {0, 0}}, {0.1, 1, {0.397, 0.5, 0, 0}, {0, 0}}}},
		{"three balls in a row, three passes", 0, 1, 3, 3, 2,
		 {{0.1, 1, {0, 0.5, 2, 0}, {0, 0}}, {0.1, 1, {0.199, 0.5, 0, 0}, {0, 0}}, {0.1, 1, {0.397, 0.5, 0, 0}, {0, 0}}}},
	};
	for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
		double s0[12], u[6];
		ClScene *s = step_scene(cases[k].friction, cases[k].elasticity, cases[k].count, cases[k].balls, s0, u);
		char message[CL_MESSAGE_MAX];
		g_assert_true(cl_scene_set_backend_param(s, tds(), "iterations", cases[k].iterations, message, sizeof message));
		int contacts;
		double error = cl_test_step_jacobian_error(s, tds(), s0, u, 1e-7, &contacts);
		g_test_message("%s: %d contacts, largest |J - FD| %.3g", cases[k].name, contacts, error);
		g_assert_cmpint(contacts, ==, cases[k].contacts);
		if (!(error < 1e-6))
			g_test_fail_printf("%s: the step Jacobian differs from central differences by %g", cases[k].name, error);
		cl_scene_free(s);
	}

	/* the later passes of the three-ball case act: ball 0 ends differently */
	double final[2];
	for (int pass = 0; pass < 2; pass++) {
		size_t k = G_N_ELEMENTS(cases) - 2 + (size_t)pass;
		double s0[12], u[6];
		ClScene *s = step_scene(cases[k].friction, cases[k].elasticity, cases[k].count, cases[k].balls, s0, u);
		char message[CL_MESSAGE_MAX];
		g_assert_true(cl_scene_set_backend_param(s, tds(), "iterations", cases[k].iterations, message, sizeof message));
		ClRollout *r = cl_rollout_new(s, tds());
		g_assert_true(cl_rollout_run(r, s0, u, false));
		final[pass] = cl_rollout_states(r)[cl_state_size(s) + 2];
		cl_rollout_free(r);
		cl_scene_free(s);
	}
	g_test_message("ball 0's velocity after one pass %.9g, after three %.9g", final[0], final[1]);
	g_assert_cmpfloat(fabs(final[0] - final[1]), >, 1e-3);
}

/* The spin's derivative is not carried (the engine's state has no slot for
 * it), as the summary says. A ball slides on the ground (and so spins),
 * then hits the wall in the next step. With μ = 0.1 it slides there too, the
 * friction is μ·j whatever the spin, and the adjoint equals the central
 * difference; with μ = 0.5 it sticks on the wall, the friction is |v_t|/K
 * with v_t = v_y + w·r, and the gradient lacks the spin's share. */
static void test_spin_derivative_not_carried(void)
{
	double difference[2];
	for (int sticking = 0; sticking < 2; sticking++) {
		ClScene *s = cl_scene_new();
		s->duration = 0.02;
		s->steps = 2;
		s->friction = sticking ? 0.5 : 0.1;
		s->elasticity = 1;
		ClBall *b = cl_scene_add_ball(s, "ball");
		b->radius = 0.1;
		b->mass = 1;
		b->position = (ClVec2){0.895, 0.099};
		b->velocity = (ClVec2){3, -1};
		ClWall *ground = cl_scene_add_wall(s, "ground");
		ground->normal = (ClVec2){0, 1};
		ClWall *wall = cl_scene_add_wall(s, "wall");
		wall->point = (ClVec2){1, 0};
		wall->normal = (ClVec2){-1, 0};
		ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
		t->ball = 0;
		t->axis = 1;
		t->weight = 1;
		ClRollout *r = cl_rollout_new(s, tds());
		g_assert_true(cl_rollout_run(r, NULL, NULL, true));
		g_assert_cmpint(cl_rollout_event_count(r), ==, 2);
		g_assert_cmpint(cl_rollout_events(r)[1].step, ==, 1);
		g_assert_cmpint(cl_rollout_events(r)[1].other, ==, -2);
		g_assert_cmpfloat(cl_rollout_spin(r, 0), !=, 0.0);
		double g_s0[CL_BALL_STATE];
		cl_rollout_gradient(r, g_s0, NULL);
		ClParam p;
		char message[CL_MESSAGE_MAX];
		g_assert_true(cl_param_parse(s, "ball.position.y", &p, message, sizeof message));
		ClStatus status;
		double fd = cl_finite_difference(s, tds(), &p, cl_fd_step(s, tds(), &p), &status);
		difference[sticking] = fabs(g_s0[1] - fd);
		g_test_message("%s on the wall: d(final y)/dy0 adjoint %.9g, FD %.9g (spin %.6g rad/s)",
					   sticking ? "sticking" : "sliding", g_s0[1], fd, cl_rollout_spin(r, 0));
		cl_rollout_free(r);
		cl_scene_free(s);
	}
	g_assert_cmpfloat(difference[0], <, 1e-7);
	g_assert_cmpfloat(difference[1], >, 1e-4);
	g_assert_nonnull(strstr(cl_backend_info(tds())->summary, "derivative is not carried"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("test-tds-XXXXXX", NULL);
	load_reference();
	g_test_add_func("/tds/checker", test_checker);
	for (guint k = 0; k < groups->len; k++) {
		RefGroup *g = g_ptr_array_index(groups, k);
		char *path = g_strdup_printf("/tds/reference/%s/%s", g->scene, g->variation);
		g_test_add_data_func(path, g, test_group);
		g_free(path);
	}
	g_test_add_func("/tds/degenerate/step-boundary", test_step_boundary);
	g_test_add_func("/tds/degenerate/penetrating-while-separating", test_penetrating_while_separating);
	g_test_add_func("/tds/degenerate/coincident-centres", test_coincident_centres);
	g_test_add_func("/tds/gradient-off-the-boundary", test_gradient_off_the_boundary);
	g_test_add_func("/tds/step-jacobians", test_step_jacobians);
	g_test_add_func("/tds/spin-derivative-not-carried", test_spin_derivative_not_carried);
	int status = g_test_run();
	g_rmdir(tmp_dir);
	g_free(tmp_dir);
	return status;
}
