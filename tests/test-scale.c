/* The billiards break at scale: the exact backend on 2–100 balls (status,
 * energy, adjoint against forward mode, a block-sparse tape whose size grows
 * with balls + contacts), and every backend on it finite or reported. Time
 * and memory are measured by tests/bench-scale, not here. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

static double kinetic_energy(const ClScene *s, const double *state)
{
	double energy = 0.0;
	for (int i = 0; i < s->ball_count; i++) {
		const double *v = state + CL_BALL_STATE * i + 2;
		energy += 0.5 * s->balls[i].mass * (v[0] * v[0] + v[1] * v[1]);
	}
	return energy;
}

static void test_exact_break(void)
{
	static const int sizes[] = {2, 10, 30, 100};
	int exact = cl_test_backend("exact");
	for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
		ClScene *s = cl_test_billiards(sizes[k]);
		size_t ns = (size_t)cl_state_size(s), nu = (size_t)cl_control_size(s);
		g_assert_cmpint(s->ball_count, ==, sizes[k]);
		g_assert_cmpint(s->steps, ==, 2000);
		g_assert_true(cl_scene_validate(s, NULL, 0));
		ClRollout *r = cl_rollout_new(s, exact);
		cl_rollout_run(r, NULL, NULL, true);
		const ClStatus *status = cl_rollout_status(r);
		int events = cl_rollout_event_count(r);
		g_test_message("%d balls: %s, %d contacts, loss %.10g", sizes[k], cl_status_name(status->code), events,
					   cl_rollout_loss(r));
		/* the jitter of the rack keeps every impact apart: nothing to report */
		if (status->code != CL_STATUS_OK)
			g_error("%d balls: %s: %s", sizes[k], cl_status_name(status->code), status->message);
		g_assert_cmpint(events, >=, sizes[k] - 1); /* every racked ball is hit */
		/* no gravity, no control, e < 1: impacts only take energy away */
		const double *states = cl_rollout_states(r);
		double energy = kinetic_energy(s, states);
		g_assert_cmpfloat(energy, >, 0.0);
		for (int n = 1; n <= s->steps; n++) {
			double next = kinetic_energy(s, states + (size_t)n * ns);
			if (next > energy * (1.0 + 1e-12))
				g_error("%d balls: kinetic energy rose from %.17g to %.17g in step %d", sizes[k], energy, next, n);
			energy = next;
		}
		g_assert_cmpfloat(energy, <, kinetic_energy(s, states));
		double *ds0 = g_new(double, ns), *du = g_new(double, nu);
		cl_rollout_gradient(r, ds0, du);
		g_assert_true(all_finite(ds0, ns) && all_finite(du, nu));
		/* adjoint against forward mode along a direction that moves every ball */
		double *direction = g_new0(double, ns), adjoint = 0.0, scale = 0.0;
		for (size_t i = 0; i < ns; i++) {
			direction[i] = sin(1.0 + (double)i);
			adjoint += ds0[i] * direction[i];
			scale += fabs(ds0[i] * direction[i]);
		}
		double forward = cl_rollout_jvp(r, direction, NULL, NULL);
		g_test_message("%d balls: adjoint %.15g, forward mode %.15g", sizes[k], adjoint, forward);
		g_assert_cmpfloat(fabs(forward - adjoint), <=, 1e-10 * scale);
		g_free(direction);
		g_free(ds0);
		g_free(du);
		cl_rollout_free(r);
		cl_scene_free(s);
	}
}

/* Steps the exact backend with its own tape to count what it stores: a
 * drift per segment, one diagonal block per wall impact and four per pair
 * impact; never a dense (4·balls)² block per step. */
static void test_tape_is_block_sparse(void)
{
	static const int sizes[] = {10, 30, 100};
	int exact = cl_test_backend("exact");
	const ClBackend *impl = cl_backend_get(exact);
	for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
		ClScene *s = cl_test_billiards(sizes[k]);
		int nb = s->ball_count, ns = cl_state_size(s);
		double *inverse_mass = g_new(double, nb), *u = g_new(double, cl_control_size(s));
		for (int i = 0; i < nb; i++)
			inverse_mass[i] = 1.0 / s->balls[i].mass;
		cl_scene_controls(s, u);
		double *state = g_new(double, ns), *next = g_new(double, ns);
		cl_scene_initial_state(s, state);
		ClRollout *sink = cl_rollout_new(s, exact); /* receives the contact events */
		ClTape tape;
		ClMemoryAccount memory = {.limit = SIZE_MAX};
		cl_tape_init(&tape, nb, inverse_mass, s->steps, &memory);
		ClStatus status = {.code = CL_STATUS_OK, .step = -1};
		const double *params = s->backend_params[exact].values;
		void *workspace = impl->create(s, params);
		ClStepContext ctx = {.scene = s, .params = params, .dt = cl_scene_dt(s), .tape = &tape,
							 .workspace = workspace, .status = &status, .rollout = sink};
		for (int n = 0; n < s->steps; n++) {
			ctx.step = n;
			cl_tape_begin_step(&tape, n);
			impl->step(&ctx, state, u + (size_t)n * 2 * (size_t)nb, next);
			cl_tape_end_step(&tape, n);
			memcpy(state, next, sizeof(double) * (size_t)ns);
		}
		g_assert_cmpint(status.code, ==, CL_STATUS_OK);
		int contacts = cl_rollout_event_count(sink);
		size_t bytes = (size_t)tape.factor_count * sizeof(ClFactor) + (size_t)tape.a_count * sizeof(ClBlockA) +
					   (size_t)tape.b_count * sizeof(ClBlockB) + (size_t)(s->steps + 1) * sizeof(int);
		g_test_message("%d balls: %d contacts, %d factors, %d A blocks, %d B blocks: %zu tape bytes "
					   "(a dense Jacobian per step would take %.3g)",
					   nb, contacts, tape.factor_count, tape.a_count, tape.b_count, bytes,
					   (double)s->steps * 8.0 * (CL_BALL_STATE + 2.0) * CL_BALL_STATE * nb * nb);
		g_assert_cmpint(tape.b_count, ==, 0);   /* controls enter through the drifts */
		g_assert_cmpint(tape.a_count, <=, 4 * contacts);
		g_assert_cmpint(tape.factor_count, <=, s->steps + 2 * contacts);
		/* so the bytes per step and per contact do not depend on the ball count */
		g_assert_cmpuint(bytes, <=, (size_t)s->steps * (sizeof(ClFactor) + sizeof(int)) +
										(size_t)contacts * (2 * sizeof(ClFactor) + 4 * sizeof(ClBlockA)) +
										sizeof(int));
		impl->destroy(workspace);
		cl_tape_release(&tape);
		cl_rollout_free(sink);
		g_free(state);
		g_free(next);
		g_free(inverse_mass);
		g_free(u);
		cl_scene_free(s);
	}
}

/* Every backend runs the break (30 balls here; 100 in the benchmark) to a
 * finite result or a reported reason. */
static void test_every_backend(gconstpointer data)
{
	int backend = GPOINTER_TO_INT(data);
	ClScene *s = cl_test_billiards(30);
	size_t ns = (size_t)cl_state_size(s), nu = (size_t)cl_control_size(s);
	ClRollout *r = cl_rollout_new(s, backend);
	cl_rollout_run(r, NULL, NULL, true);
	const ClStatus *status = cl_rollout_status(r);
	g_test_message("%s: %s %s, %d contacts", cl_backend_info(backend)->id, cl_status_name(status->code),
				   status->message, cl_rollout_event_count(r));
	g_assert_true(all_finite(cl_rollout_states(r), ns * (size_t)(cl_rollout_steps_done(r) + 1)));
	if (status->code == CL_STATUS_OK) {
		double *ds0 = g_new(double, ns), *du = g_new(double, nu);
		cl_rollout_gradient(r, ds0, du);
		g_assert_true(isfinite(cl_rollout_loss(r)));
		g_assert_true(all_finite(ds0, ns) && all_finite(du, nu));
		g_free(ds0);
		g_free(du);
	} else {
		g_assert_cmpstr(status->message, !=, "");
	}
	cl_rollout_free(r);
	cl_scene_free(s);
}

/* A nearly inelastic rack: its impacts do not die out (max_events in
 * interval after interval), so the exact run stops at its impact budget
 * with a reason instead of taking minutes; a smaller budget stops it sooner. */
static void test_impact_budget(void)
{
	int exact = cl_test_backend("exact");
	ClScene *s = cl_test_billiards(30);
	s->elasticity = 0.004;
	int steps_done[2];
	for (int k = 0; k < 2; k++) {
		if (k == 1)
			g_assert_true(cl_scene_set_backend_param(s, exact, "max_impacts", 5000, NULL, 0));
		ClRollout *r = cl_rollout_new(s, exact);
		g_assert_false(cl_rollout_run(r, NULL, NULL, true));
		const ClStatus *status = cl_rollout_status(r);
		g_test_message("max_impacts %g: %s at step %d: %s", cl_scene_backend_param(s, exact, "max_impacts"),
					   cl_status_name(status->code), status->step, status->message);
		g_assert_cmpint(status->code, ==, CL_STATUS_IMPACT_LIMIT);
		g_assert_true(cl_status_is_fatal(status->code));
		g_assert_nonnull(strstr(status->message, "max_impacts"));
		g_assert_cmpint(cl_rollout_event_count(r), ==, (int)cl_scene_backend_param(s, exact, "max_impacts") + 1);
		steps_done[k] = cl_rollout_steps_done(r);
		g_assert_cmpint(steps_done[k], <, s->steps);
		g_assert_true(isnan(cl_rollout_loss(r)));
		cl_rollout_free(r);
	}
	g_assert_cmpint(steps_done[1], <, steps_done[0]);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/scale/exact-break", test_exact_break);
	g_test_add_func("/scale/tape-is-block-sparse", test_tape_is_block_sparse);
	g_test_add_func("/scale/impact-budget", test_impact_budget);
	for (int b = 0; b < cl_backend_count(); b++) {
		char *path = g_strdup_printf("/scale/break-30/%s", cl_backend_info(b)->id);
		g_test_add_data_func(path, GINT_TO_POINTER(b), test_every_backend);
		g_free(path);
	}
	return g_test_run();
}
