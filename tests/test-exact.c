/* The exact event-driven backend against closed forms, its own finite
 * differences and forward mode, and on degenerate contacts. */
#include "core.h"
#include "tasks.h"

#include <glib.h>
#include <math.h>
#include <string.h>

typedef struct Run {
	ClRollout *rollout;
	double loss;
	ClStatusCode status;
	double *ds0; /* state size */
	double *du;  /* control size */
} Run;

static Run run_exact(const ClScene *scene, const double *u)
{
	Run r = {0};
	r.rollout = cl_rollout_new(scene, cl_test_backend("exact"));
	cl_rollout_run(r.rollout, NULL, u, true);
	r.loss = cl_rollout_loss(r.rollout);
	r.status = cl_rollout_status(r.rollout)->code;
	r.ds0 = g_new0(double, cl_state_size(scene));
	r.du = g_new0(double, cl_control_size(scene));
	cl_rollout_gradient(r.rollout, r.ds0, r.du);
	return r;
}

static void run_clear(Run *r)
{
	cl_rollout_free(r->rollout);
	g_free(r->ds0);
	g_free(r->du);
}

static void assert_close(double value, double expected, double tolerance, const char *what)
{
	if (!(fabs(value - expected) <= tolerance))
		g_error("%s: %.12g, expected %.12g ± %g", what, value, expected, tolerance);
	g_test_message("%s: %.12g (expected %.12g)", what, value, expected);
}

/* Task 1: the ball falls 0.9 to the ground (t = 0.45), rises for 0.55 s at
 * speed 2: y_N = 2r − (y0 + v0·T) = 0.2 − (1 − 2) = 1.2, the free flight
 * mirrored about y = r. */
static void test_task1(void)
{
	ClScene *s = cl_test_task1();
	Run r = run_exact(s, NULL);
	double dt = cl_scene_dt(s);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 1.2, 1e-12, "task 1 p_y,N");
	assert_close(r.ds0[1], -1.0, 1e-9, "d/p_y0");
	assert_close(r.ds0[3], -1.0, 1e-9, "d/v_y0");
	assert_close(r.du[1], -(s->duration * dt - 0.5 * dt * dt), 1e-9, "d/u_y[0]");
	assert_close(r.ds0[0], 0.0, 1e-12, "d/p_x0");
	assert_close(r.ds0[2], 0.0, 1e-12, "d/v_x0");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 1);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.45, 1e-12, "task 1 impact time");
	run_clear(&r);
	cl_scene_free(s);
}

static void test_task3_table(void)
{
	ClScene *s = cl_test_task3();
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 2.059144, 1e-6, "task 3 loss");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 1);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.6914513, 1e-7, "task 3 collision time");
	assert_close(r.ds0[0], -0.3986684165, 1e-6, "d/ball1.position.x");
	assert_close(r.ds0[4], -0.3212531155, 1e-6, "d/ball2.position.x");
	assert_close(r.ds0[2], -0.4977906574, 1e-6, "d/ball1.velocity.x");
	assert_close(r.ds0[6], -0.2221308746, 1e-6, "d/ball2.velocity.x");
	assert_close(r.du[0], 0.0002138013, 1e-7, "d/ball1.control[0].x");
	/* the terminal part alone (§6.4): subtract the running cost 2εu·dt */
	assert_close(r.du[0] - 2.0 * 0.1 * 3.0 * cl_scene_dt(s), -0.0010362, 1e-7, "terminal part");
	run_clear(&r);
	cl_scene_free(s);
}

static void test_task2(void)
{
	ClScene *s = cl_test_task2(0.0);
	Run r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 8.316139, 1e-6, "task 2 loss");
	assert_close(r.ds0[2], -3.166272, 1e-6, "d/v_x0");
	assert_close(r.ds0[3], -0.2122295, 1e-6, "d/v_y0");
	assert_close(r.ds0[0], -5.2771, 1e-4, "d/p_x0");
	assert_close(r.ds0[1], 0.2163, 1e-4, "d/p_y0");
	assert_close(r.du[0], -0.006585, 1e-6, "d/u_x[0]");
	assert_close(r.du[1], -0.000443, 1e-6, "d/u_y[0]");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 2);
	assert_close(cl_rollout_events(r.rollout)[0].time, 0.156115, 1e-6, "ground impact");
	assert_close(cl_rollout_events(r.rollout)[1].time, 0.430, 1e-3, "wall impact");
	run_clear(&r);
	cl_scene_free(s);

	s = cl_test_task2(0.1);
	r = run_exact(s, NULL);
	g_assert_cmpint(r.status, ==, CL_STATUS_OK);
	assert_close(r.loss, 11.484329, 1e-6, "task 2 friction loss");
	assert_close(r.ds0[2], -3.7879283, 1e-6, "friction d/v_x0");
	assert_close(r.ds0[3], -0.7737442, 1e-6, "friction d/v_y0");
	assert_close(r.ds0[0], -6.3132, 1e-4, "friction d/p_x0");
	assert_close(r.ds0[1], -0.2288, 1e-4, "friction d/p_y0");
	assert_close(r.du[0], -0.007878, 1e-6, "friction d/u_x[0]");
	assert_close(r.du[1], -0.001611, 1e-6, "friction d/u_y[0]");
	g_assert_cmpint(cl_rollout_event_count(r.rollout), ==, 2);
	assert_close(cl_rollout_events(r.rollout)[1].time, 0.5217, 1e-4, "friction wall impact");
	run_clear(&r);
	cl_scene_free(s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/exact/task1", test_task1);
	g_test_add_func("/exact/task3-table", test_task3_table);
	g_test_add_func("/exact/task2", test_task2);
	return g_test_run();
}
