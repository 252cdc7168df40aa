/* contactlab convergence against single `contactlab gradients` runs. */
#include "cli-run.h"
#include "numbers.h"

#include <glib.h>
#include <string.h>

/* Runs contactlab with args (NULL-terminated); returns the exit status. */
static int run(const char *const *args, char **out, char **err)
{
	return cl_test_run_cli(NULL, args, out, err);
}

/* The value column of `gradients --format csv` for one backend and parameter. */
static char *gradients_value(const char *scene, const char *backend, const char *parameter, int steps)
{
	char *set = g_strdup_printf("steps=%d", steps);
	const char *args[] = {"gradients", scene, "--backend", backend, "--set", set, "--format", "csv", NULL};
	char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	char ***rows = cl_csv_parse(out);
	char *value = NULL;
	g_assert_cmpstr(rows[0][0], ==, "backend");
	g_assert_cmpstr(rows[0][2], ==, "value");
	for (char ***row = rows + 1; *row; row++)
		if (strcmp((*row)[0], backend) == 0 && strcmp((*row)[1], parameter) == 0)
			value = g_strdup((*row)[2]);
	cl_csv_free(rows);
	g_free(out);
	g_free(err);
	g_free(set);
	g_assert_nonnull(value);
	return value;
}

typedef struct {
	const char *scene;
	const char *parameter;
	const char *backends;
	double duration; /* the preset's T */
} Case;

static void test_against_gradients(gconstpointer data)
{
	const Case *c = data;
	const int steps[] = {240, 960};
	const char *args[] = {"convergence", c->scene, "--param", c->parameter, "--steps", "240,960",
						  "--backend",   c->backends, "--csv", "-", NULL};
	char *out = NULL, *err = NULL;
	g_assert_cmpint(run(args, &out, &err), ==, 0);
	char ***rows = cl_csv_parse(out);
	g_assert_cmpstr(rows[0][0], ==, "backend");
	g_assert_cmpstr(rows[0][1], ==, "steps");
	g_assert_cmpstr(rows[0][2], ==, "dt");
	g_assert_cmpstr(rows[0][3], ==, "value");
	char **backends = g_strsplit(c->backends, ",", -1);
	guint row = 1;
	for (char **b = backends; *b; b++)
		for (int k = 0; k < 2; k++, row++) {
			g_assert_nonnull(rows[row]);
			g_assert_cmpstr(rows[row][0], ==, *b);
			g_assert_cmpint(atoi(rows[row][1]), ==, steps[k]);
			g_assert_cmpfloat_with_epsilon(g_ascii_strtod(rows[row][2], NULL), c->duration / steps[k], 1e-15);
			char *expected = gradients_value(c->scene, *b, c->parameter, steps[k]);
			g_test_message("%s %s N=%d: convergence %s, gradients %s", c->scene, *b, steps[k], rows[row][3], expected);
			/* the same double, written the same shortest way */
			g_assert_cmpstr(rows[row][3], ==, expected);
			g_free(expected);
		}
	g_assert_null(rows[row]);
	g_strfreev(backends);
	cl_csv_free(rows);
	g_free(out);
	g_free(err);
}

static void test_bad_input(void)
{
	struct {
		const char *args[10];
		const char *message;
	} cases[] = {
		{{"convergence", "task1-bounce-once", "--steps", "60", NULL}, "--param NAME is required"},
		{{"convergence", "task1-bounce-once", "--param", "ball.position.z", NULL}, "--param ball.position.z"},
		{{"convergence", "task1-bounce-once", "--param", "ball.position.y", "--steps", "60,x", NULL},
		 "\"x\" is not a step count"},
		{{"convergence", "task1-bounce-once", "--param", "ball.position.y", "--steps", "60,0", NULL},
		 "\"0\" is not a step count"},
		{{"convergence", "task1-bounce-once", "--param", "ball.control[100].y", "--steps", "60,480", NULL},
		 "control interval 100 does not exist at every step count"},
		{{"convergence", "task1-bounce-once", "--param", "ball.position.y", "--backend", "bullet", NULL},
		 "unknown backend"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *out = NULL, *err = NULL;
		g_assert_cmpint(run(cases[i].args, &out, &err), ==, 2);
		g_test_message("%s", err);
		g_assert_nonnull(strstr(err, cases[i].message));
		g_assert_cmpstr(out, ==, "");
		g_free(out);
		g_free(err);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	static const Case cases[] = {
		{"task1-bounce-once", "ball.velocity.y", "exact,compliant-warp,pbd-warp,lcp-nimble", 1.0},
		{"task2-ground-wall", "ball.velocity.x", "exact,compliant-warp,pbd-warp", 0.6},
		{"task3-two-balls", "ball1.position.x", "exact,compliant-warp,pbd-warp", 1.0},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *path = g_strdup_printf("/convergence-cli/against-gradients/%s", cases[i].scene);
		g_test_add_data_func(path, &cases[i], test_against_gradients);
		g_free(path);
	}
	g_test_add_func("/convergence-cli/bad-input", test_bad_input);
	return g_test_run();
}
