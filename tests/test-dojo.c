/* ncp-dojo against backend-dojo.md §9 (the numbers of an independent 2-D
 * prototype of Dojo, not of Julia Dojo), every row of
 * data/reference/dojo-reference.csv: the fixed-κ losses and gradients of
 * Tasks 1 and 2, the dojo-default and as-coded rows of Tasks 1–3 and the
 * dojo-default map's central differences. Then the fixed-κ gradient
 * against its own central differences and the 2-D reductions of Dojo's
 * collision tests (§9.5).
 *
 * One finding: the spec's fixed-κ gradients are the IFT with Dojo's Newton
 * matrix, REG = 1e-10 included (without it Task 2 at κ = 1e-8 differs by
 * 1.4%: a far wall's γ ≈ 5e-9 is moved 2% by REG). The backend does the
 * same; the spec's "FD mismatch at κ = 1e-8" in Task 2 is that REG, not
 * stiffness (in Task 1 the map is stiff as well). */
#include "backend-check.h"
#include "core.h"
#include "numbers.h"
#include "scene-file.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The precisions asked (issue 15): fixed-κ numbers to 1e-4 relative, the
 * fixed-κ gradient equal to its central differences to 1e-5 relative. The
 * dojo-default and as-coded numbers depend on the iterate path, and the
 * spec gives them to the digits it prints (and calls them indicative to 2
 * digits): they are checked to half a unit of their last printed digit. */
#define REL_FIXED 1e-4
#define REL_FD 1e-5

static int dojo(void)
{
	int b = cl_backend_find("ncp-dojo");
	g_assert_cmpint(b, >=, 0);
	return b;
}

/* Half a unit of the last digit printed in text ("-5.518e-05": 5e-9). */
static double printed_precision(const char *text)
{
	const char *dot = strchr(text, '.'), *e = strpbrk(text, "eE");
	int decimals = 0;
	if (dot)
		decimals = (int)((e ? e : text + strlen(text)) - dot - 1);
	int exponent = e ? atoi(e + 1) : 0;
	return 0.5 * pow(10.0, exponent - decimals);
}

typedef struct Row {
	char *scene;
	char *settings; /* ";"-separated --set values */
	char *quantity; /* "loss", a gradient name, or "fd:" and one */
	char *expected;
	gboolean printed; /* judged to the printed digits, else to REL_FIXED */
} Row;

#define T1 "task1-bounce-once"
#define T2 "task2-ground-wall"
#define T3 "task3-two-balls"
#define DEFAULT "ncp-dojo.solver=dojo-default"

static void free_row(gpointer data)
{
	Row *row = data;
	g_free(row->scene);
	g_free(row->settings);
	g_free(row->quantity);
	g_free(row->expected);
	g_free(row);
}

/* data/reference/dojo-reference.csv: §9's numbers, as printed there. */
static GPtrArray *load_reference(void)
{
	const char *root = g_getenv("CONTACTLAB_SOURCE_ROOT");
	g_assert_nonnull(root);
	char *path = g_build_filename(root, "data", "reference", "dojo-reference.csv", NULL);
	char *text = NULL;
	GError *error = NULL;
	if (!g_file_get_contents(path, &text, NULL, &error))
		g_error("%s: %s", path, error->message);
	char ***csv = cl_csv_parse(text);
	g_assert_nonnull(csv);
	g_assert_cmpstr(csv[0][4], ==, "precision");
	GPtrArray *rows = g_ptr_array_new_with_free_func(free_row);
	for (int r = 1; csv[r]; r++) {
		char **f = csv[r];
		if (g_strv_length(f) != 5)
			g_error("%s: row %d has %u fields, not 5", path, r + 1, g_strv_length(f));
		if (strcmp(f[4], "printed") != 0 && strcmp(f[4], "1e-4") != 0)
			g_error("%s: row %d: precision \"%s\" is neither printed nor 1e-4", path, r + 1, f[4]);
		Row *row = g_new0(Row, 1);
		*row = (Row){g_strdup(f[0]), g_strdup(f[1]), g_strdup(f[2]), g_strdup(f[3]), strcmp(f[4], "printed") == 0};
		g_ptr_array_add(rows, row);
	}
	cl_csv_free(csv);
	g_free(text);
	g_free(path);
	g_assert_cmpuint(rows->len, >, 0);
	return rows;
}

static ClScene *load(const char *scene, const char *settings)
{
	GError *error = NULL;
	ClScene *s = cl_preset_load(scene, &error);
	g_assert_no_error(error);
	char **set = g_strsplit(settings, ";", -1);
	for (char **p = set; *p; p++) {
		g_assert_true(cl_scene_apply_setting(s, *p, &error));
		g_assert_no_error(error);
	}
	g_strfreev(set);
	return s;
}

static void test_precision(void)
{
	g_assert_cmpfloat(fabs(printed_precision("-5.518e-05") - 5e-9), <, 1e-20);
	g_assert_cmpfloat(fabs(printed_precision("0.321948") - 5e-7), <, 1e-18);
	g_assert_cmpfloat(fabs(printed_precision("-13.7683") - 5e-5), <, 1e-16);
	g_assert_cmpfloat(fabs(printed_precision("-1.1e-05") - 5e-7), <, 1e-18);
}

/* A row of the reference: a loss, an IFT gradient (the adjoint), or the
 * central difference of the map (h = 1e-6, as §9), which for dojo-default
 * is nothing like its gradient: that map is only piecewise smooth. */
static void test_row(gconstpointer data)
{
	const Row *row = data;
	ClScene *s = load(row->scene, row->settings);
	double computed;
	if (strcmp(row->quantity, "loss") == 0) {
		ClRollout *r = cl_rollout_new(s, dojo());
		g_assert_true(cl_rollout_run(r, NULL, NULL, false));
		computed = cl_rollout_loss(r);
		cl_rollout_free(r);
	} else if (g_str_has_prefix(row->quantity, "fd:")) {
		ClParam param;
		char message[CL_MESSAGE_MAX];
		g_assert_true(cl_param_parse(s, row->quantity + 3, &param, message, sizeof message));
		ClStatus status;
		computed = cl_finite_difference(s, dojo(), &param, 1e-6, &status);
		g_assert_cmpint(status.code, ==, CL_STATUS_OK);
		double adjoint = cl_test_gradient(s, dojo(), row->quantity + 3);
		g_test_message("its IFT gradient: %.6g", adjoint);
		g_assert_cmpfloat(fabs(adjoint - computed), >, 0.1 * fabs(computed));
	} else {
		computed = cl_test_gradient(s, dojo(), row->quantity);
	}
	double expected = g_ascii_strtod(row->expected, NULL);
	double bound = row->printed ? printed_precision(row->expected) : REL_FIXED * fabs(expected);
	if (fabs(computed - expected) <= bound)
		g_test_message("%s [%s] %s: %.10g (spec %s, within %.2g)", row->scene, row->settings, row->quantity, computed,
					   row->expected, bound);
	else
		g_test_fail_printf("%s [%s] %s: computed %.10g, spec %s (bound %.2g)", row->scene, row->settings,
						   row->quantity, computed, row->expected, bound);
	cl_scene_free(s);
}

/* The loss of the scene from s0 and u by the engine. */
static double loss_at(const ClScene *s, const double *s0, const double *u)
{
	ClRollout *r = cl_rollout_new(s, dojo());
	g_assert_true(cl_rollout_run(r, s0, u, false));
	double loss = cl_rollout_loss(r);
	cl_rollout_free(r);
	return loss;
}

/* Central differences of the rollout along the initial state (h = 1e-6, as
 * §9) and the first step's controls (h = 1e-3: a unit of control moves the
 * state by dt²/m, so 1e-6 would leave the difference to rounding). */
static void central_differences(const ClScene *s, double *fd_s, double *fd_u)
{
	int ns = cl_state_size(s), nu = 2 * s->ball_count;
	double *s0 = g_new(double, ns), *u = g_new(double, cl_control_size(s));
	cl_scene_initial_state(s, s0);
	cl_scene_controls(s, u);
	for (int k = 0; k < ns + nu; k++) {
		double *x = k < ns ? &s0[k] : &u[k - ns], h = k < ns ? 1e-6 : 1e-3, keep = *x;
		*x = keep + h;
		double plus = loss_at(s, s0, u);
		*x = keep - h;
		double minus = loss_at(s, s0, u);
		*x = keep;
		(k < ns ? fd_s : fd_u - ns)[k] = (plus - minus) / (2 * h);
	}
	g_free(s0);
	g_free(u);
}

/* The fixed-κ map is smooth: its IFT gradient (adjoint of the recorded
 * Jacobians) equals its own central differences, Tasks 1–3 at κ = 1e-4. */
static void test_fixed_kappa_fd(void)
{
	const char *scenes[] = {T1, T2, T3};
	for (size_t k = 0; k < G_N_ELEMENTS(scenes); k++) {
		ClScene *s = load(scenes[k], "ncp-dojo.kappa=1e-4");
		int ns = cl_state_size(s), nu = 2 * s->ball_count; /* the first step's controls */
		double *g_s = g_new0(double, ns), *g_u = g_new0(double, cl_control_size(s));
		double *fd_s = g_new0(double, ns), *fd_u = g_new0(double, nu);
		ClRollout *r = cl_rollout_new(s, dojo());
		g_assert_true(cl_rollout_run(r, NULL, NULL, true));
		cl_rollout_gradient(r, g_s, g_u);
		cl_rollout_free(r);
		central_differences(s, fd_s, fd_u);
		for (int i = 0; i < ns + nu; i++) {
			double adjoint = i < ns ? g_s[i] : g_u[i - ns], fd = i < ns ? fd_s[i] : fd_u[i - ns];
			/* an exactly zero derivative (Task 1 along x) has no relative scale */
			double bound = fd == 0.0 ? 1e-12 : REL_FD * fabs(fd);
			if (fabs(adjoint - fd) > bound)
				g_test_fail_printf("%s %s %d: adjoint %.10g, FD %.10g", scenes[k], i < ns ? "state" : "control",
								   i < ns ? i : i - ns, adjoint, fd);
			else
				g_test_message("%s %s %d: adjoint %.10g, FD %.10g (rel %.2g)", scenes[k], i < ns ? "state" : "control",
							   i < ns ? i : i - ns, adjoint, fd, fd == 0.0 ? 0.0 : fabs(adjoint / fd - 1));
		}
		g_free(g_s);
		g_free(g_u);
		g_free(fd_s);
		g_free(fd_u);
		cl_scene_free(s);
	}
}

/* §9.1: derivatives with respect to x are exactly 0 in Task 1; with walls
 * only (whose child is the fixed origin) as-coded is the full gradient. */
static void test_walls_as_coded_is_full(void)
{
	const char *scenes[] = {T1, T2};
	for (size_t k = 0; k < G_N_ELEMENTS(scenes); k++)
		for (int solver = 0; solver < 2; solver++) {
			ClScene *full = load(scenes[k], solver ? DEFAULT : "ncp-dojo.kappa=1e-4");
			ClScene *coded = load(scenes[k], solver ? DEFAULT ";ncp-dojo.gradient=as-coded"
													: "ncp-dojo.kappa=1e-4;ncp-dojo.gradient=as-coded");
			const char *names[] = {"ball.position.x", "ball.position.y", "ball.velocity.x", "ball.velocity.y"};
			for (size_t n = 0; n < G_N_ELEMENTS(names); n++)
				g_assert_cmpfloat(cl_test_gradient(full, dojo(), names[n]), ==, cl_test_gradient(coded, dojo(), names[n]));
			if (k == 0)
				g_assert_cmpfloat(cl_test_gradient(full, dojo(), "ball.position.x"), ==, 0.0);
			cl_scene_free(full);
			cl_scene_free(coded);
		}
}

/* ------------------------------------------------ Dojo's collision tests */

/* Two spheres r = 0.5, m = 1, dt = 0.1, 20 steps, default options (§9.5).
 * A fixed sphere at the origin is, along the line of centres, exactly the
 * half-plane y ≥ 0.5 (same gap, same normal); a floating one is a ball. */
static ClScene *collision_scene(bool fixed, double gravity, double speed, int axis)
{
	ClScene *s = cl_scene_new();
	s->duration = 2.0;
	s->steps = 20;
	s->gravity = (ClVec2){0, gravity};
	s->elasticity = 0;
	if (fixed) {
		ClWall *w = cl_scene_add_wall(s, "fixed");
		w->point = (ClVec2){0, 0.5};
		w->normal = (ClVec2){0, 1};
	} else {
		ClBall *p = cl_scene_add_ball(s, "parent");
		p->radius = 0.5;
		p->mass = 1;
	}
	ClBall *c = cl_scene_add_ball(s, "child");
	c->radius = 0.5;
	c->mass = 1;
	c->position = axis ? (ClVec2){0, 2.5} : (ClVec2){2.5, 0};
	c->velocity = axis ? (ClVec2){0, -speed} : (ClVec2){-speed, 0};
	ClLossTerm *t = cl_scene_add_loss(s, CL_LOSS_FINAL_COORDINATE);
	t->ball = s->ball_count - 1;
	t->axis = axis;
	t->weight = 1;
	GError *error = NULL;
	g_assert_true(cl_scene_apply_setting(s, DEFAULT, &error));
	g_assert_no_error(error);
	return s;
}

static const double *final_state(const ClScene *s, const ClRollout *r)
{
	return cl_rollout_states(r) + (size_t)s->steps * (size_t)cl_state_size(s);
}

static void check_printed(const char *what, double computed, const char *expected)
{
	double e = g_ascii_strtod(expected, NULL);
	g_test_message("%s: %.10g (spec %s)", what, computed, expected);
	if (!(fabs(computed - e) <= printed_precision(expected)))
		g_test_fail_printf("%s: computed %.10g, spec %s", what, computed, expected);
}

/* A child dropped onto a fixed sphere rests on it: Dojo asks |x − 1| < 1e-4. */
static void test_drop_on_fixed(void)
{
	ClScene *s = collision_scene(true, -9.81, 0.0, 1);
	ClRollout *r = cl_rollout_new(s, dojo());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	const double *x = final_state(s, r);
	g_assert_cmpfloat(fabs(x[1] - 1.0), <, 1e-4);
	check_printed("dropped child's height", x[1], "1.0000113");
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* At −5 m/s into a fixed sphere it stops on it, lifted above 1 by the
 * relaxation barrier: Dojo asks > 1.0. */
static void test_hit_fixed(void)
{
	ClScene *s = collision_scene(true, 0.0, 5.0, 1);
	ClRollout *r = cl_rollout_new(s, dojo());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	const double *x = final_state(s, r);
	g_assert_cmpfloat(x[1], >, 1.0);
	check_printed("child's height after hitting the fixed sphere", x[1], "1.0672");
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* At −5 m/s into a floating sphere, along y and along x: the two move on
 * together, the gap above 1 and the parent pushed below 0 (Dojo's checks),
 * momentum conserved, the approach inelastic up to the barrier. */
static void test_hit_floating(void)
{
	for (int axis = 0; axis < 2; axis++) {
		ClScene *s = collision_scene(false, 0.0, 5.0, axis);
		ClRollout *r = cl_rollout_new(s, dojo());
		g_assert_true(cl_rollout_run(r, NULL, NULL, false));
		const double *x = final_state(s, r);
		double parent = x[axis], child = x[CL_BALL_STATE + axis];
		double v_parent = x[2 + axis], v_child = x[CL_BALL_STATE + 2 + axis];
		g_assert_cmpfloat(child - parent, >, 1.0);
		g_assert_cmpfloat(parent, <, 0.0);
		g_assert_cmpfloat(fabs(v_parent + v_child + 5.0), <, 1e-12);
		g_assert_cmpfloat(x[1 - axis], ==, 0.0);
		check_printed("child's final position", child, "-3.2065");
		check_printed("parent's final position", parent, "-4.2935");
		/* the spec lists the velocities unnamed: the barrier still pushes the
		 * ball in front (the parent) away, so it is the faster one */
		check_printed("parent's final velocity", v_parent, "-2.534");
		check_printed("child's final velocity", v_child, "-2.466");
		cl_rollout_free(r);
		cl_scene_free(s);
	}
}

/* ------------------------------------------------------------ the step */

/* Every frictionless one-step case: the fixed-κ step's Jacobian equals the
 * step's central differences. In contact the step is stiff (∂v₊/∂x is of
 * order 1/dt, and h = 1e-6 leaves a truncation error of ~1e-5), so h =
 * 1e-7; and Dojo's REG = 1e-10 in the matrix (γ + REG)/(s + REG), with s ≈
 * √(κ dt) ≈ 5e-4 in contact, moves entries of order 1/dt by ~3e-5, which
 * is 1e-7 of that scale: the bound (without REG the agreement is 4e-7). */
static void test_step_jacobians(void)
{
	for (int k = 0; k < cl_test_step_case_count; k++) {
		const ClTestStepCase *c = &cl_test_step_cases[k];
		if (c->friction > 0)
			continue;
		ClScene *scene = cl_test_step_scene(c, "ncp-dojo");
		double s0[12], u[6];
		cl_test_step_inputs(c, s0, u);
		int contacts;
		double error = cl_test_step_jacobian_error(scene, dojo(), s0, u, 1e-7, &contacts);
		g_test_message("%-44s %d contacts, max |J - J_fd| = %.3g", c->name, contacts, error);
		g_assert_cmpint(contacts, ==, c->contacts);
		g_assert_cmpfloat(error, <, 1e-7 / cl_scene_dt(scene));
		cl_scene_free(scene);
	}
}

/* A scene with friction is refused with the reason, not run without it. */
static void test_friction_unsupported(void)
{
	ClScene *s = load("task2-ground-wall-friction", "ncp-dojo.kappa=1e-4");
	ClRollout *r = cl_rollout_new(s, dojo());
	g_assert_false(cl_rollout_run(r, NULL, NULL, true));
	const ClStatus *status = cl_rollout_status(r);
	g_assert_cmpint(status->code, ==, CL_STATUS_UNSUPPORTED);
	g_assert_nonnull(strstr(status->message, "friction"));
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* Task 1 reports its one approach to the ground; the ball ends lifted by
 * the relaxation, not bounced (inelastic whatever the elasticity). */
static void test_task1_contact(void)
{
	ClScene *s = load(T1, "ncp-dojo.kappa=1e-4");
	ClRollout *r = cl_rollout_new(s, dojo());
	g_assert_true(cl_rollout_run(r, NULL, NULL, false));
	g_assert_cmpint(cl_rollout_event_count(r), ==, 1);
	const double *x = final_state(s, r);
	g_assert_cmpfloat(x[3], <, 1.0); /* elastic: +2 m/s */
	cl_rollout_free(r);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/dojo/printed-precision", test_precision);
	GPtrArray *rows = load_reference();
	for (guint k = 0; k < rows->len; k++) {
		const Row *row = rows->pdata[k];
		char *path = g_strdup_printf("/dojo/reference/%s/%s/%s", row->scene, row->settings, row->quantity);
		g_test_add_data_func(path, row, test_row);
		g_free(path);
	}
	g_test_add_func("/dojo/fixed-kappa-equals-fd", test_fixed_kappa_fd);
	g_test_add_func("/dojo/walls-as-coded-is-full", test_walls_as_coded_is_full);
	g_test_add_func("/dojo/collisions/drop-on-fixed", test_drop_on_fixed);
	g_test_add_func("/dojo/collisions/hit-fixed", test_hit_fixed);
	g_test_add_func("/dojo/collisions/hit-floating", test_hit_floating);
	g_test_add_func("/dojo/step-jacobians", test_step_jacobians);
	g_test_add_func("/dojo/friction-unsupported", test_friction_unsupported);
	g_test_add_func("/dojo/task1-one-contact", test_task1_contact);
	int status = g_test_run();
	g_ptr_array_free(rows, TRUE);
	return status;
}
