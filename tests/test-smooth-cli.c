/* contactlab smooth, the smoothed heatmap quantities and optimize
 * --gradient from the real executable: the CSV and JSON formats, the same
 * output on 1 and 2 threads, parameters without an adjoint, the terms file,
 * and a student's Task 1: impulse learns along ZoBG and fails along its own
 * gradient. */
#include "cli-run.h"
#include "numbers.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

static char *tmp_dir;

static char *run_ok(const char *const *args)
{
	char *out = NULL, *err = NULL;
	int status = cl_test_run_cli(tmp_dir, args, &out, &err);
	if (status != 0)
		g_error("%s: exit %d: %s", args[0], status, err);
	g_free(err);
	return out;
}

/* The mean and stderr fields of row (backend, estimator, parameter); FALSE if absent. */
static gboolean csv_row(char ***rows, const char *backend, const char *estimator, const char *parameter,
						const char **mean, const char **se)
{
	for (char ***row = rows + 1; *row; row++)
		if (g_strv_length(*row) == 5 && strcmp((*row)[0], backend) == 0 && strcmp((*row)[1], estimator) == 0 &&
			strcmp((*row)[2], parameter) == 0) {
			*mean = (*row)[3];
			*se = (*row)[4];
			return TRUE;
		}
	return FALSE;
}

static double number(const char *text)
{
	char *end;
	double x = g_ascii_strtod(text, &end);
	g_assert_true(text[0] && *end == '\0');
	return x;
}

static void test_csv(void)
{
	const char *args[] = {"smooth",	   "task1-bounce-once", "--param",	 "ball.position.y", "--param", "elasticity",
						  "--sigma",   "0.05,0.02",			"--samples", "200",				"--backend", "exact",
						  "--backend", "impulse",			"--format",	 "csv",				NULL};
	char *out = run_ok(args);
	char ***rows = cl_csv_parse(out);
	g_assert_cmpstr(rows[0][0], ==, "backend");
	char *header = g_strjoinv(",", rows[0]);
	g_assert_cmpstr(header, ==, "backend,estimator,parameter,mean,stderr");
	g_free(header);
	int count = 0;
	for (char ***row = rows + 1; *row; row++)
		count++;
	/* per backend: loss, smoothed-loss, alpha and 6 estimates (exact present: with fobg-bias) of 2 parameters */
	g_assert_cmpint(count, ==, 2 * (3 + 6 * 2));
	const char *ids[] = {"exact", "impulse"};
	for (int b = 0; b < 2; b++) {
		const char *mean, *se;
		g_assert_true(csv_row(rows, ids[b], "loss", "", &mean, &se));
		g_assert_cmpfloat(fabs(number(mean) - 1.2), <, 1e-4);
		g_assert_cmpstr(se, ==, "");
		g_assert_true(csv_row(rows, ids[b], "alpha", "", &mean, &se));
		/* impulse has no FoBG for elasticity (a constant of DiffTaichi): AoBG is ZoBG */
		double alpha = number(mean);
		g_assert_true(b == 0 ? alpha >= 0.0 && alpha <= 1.0 : alpha == 0.0);
		for (int k = 0; k < 2; k++) {
			const char *p = k ? "elasticity" : "ball.position.y";
			static const char *const estimators[] = {"point", "zobg", "zobg-nobaseline", "fobg", "aobg", "fobg-bias"};
			for (size_t e = 0; e < G_N_ELEMENTS(estimators); e++) {
				g_assert_true(csv_row(rows, ids[b], estimators[e], p, &mean, &se));
				gboolean first_order = e == 3 || e == 5;
				if (b == 1 && k == 1 && first_order) {
					/* not a number: the backend has no adjoint for it */
					g_assert_cmpstr(mean, ==, "");
					g_assert_cmpstr(se, ==, "");
				} else {
					number(mean);
					if (e == 0)
						g_assert_cmpstr(se, ==, "");
					else
						g_assert_cmpfloat(number(se), >=, 0.0);
				}
			}
			const char *zobg, *aobg, *zobg_se, *aobg_se;
			g_assert_true(csv_row(rows, ids[b], "zobg", p, &zobg, &zobg_se));
			g_assert_true(csv_row(rows, ids[b], "aobg", p, &aobg, &aobg_se));
			if (alpha == 0.0)
				g_assert_cmpstr(zobg, ==, aobg);
		}
	}
	/* Task 1: impulse's own gradient is +1, ZoBG of its loss is negative */
	const char *mean, *se;
	g_assert_true(csv_row(rows, "impulse", "point", "ball.position.y", &mean, &se));
	g_assert_cmpfloat(number(mean), ==, 1.0);
	g_assert_true(csv_row(rows, "impulse", "zobg", "ball.position.y", &mean, &se));
	g_assert_cmpfloat(number(mean), <, 0.0);
	cl_csv_free(rows);
	g_free(out);
}

/* The same seed prints the same bytes on one thread and on two. */
static void test_threads(void)
{
	const char *one[] = {"smooth",	 "task2-ground-wall", "--param",	  "ball.velocity.x", "--param",
						 "ball.velocity.y", "--sigma",	   "0.25",		  "--samples",		 "100",
						 "--antithetic",	"--format",	   "csv",		  "--threads",		 "1",
						 NULL};
	const char *two[] = {"smooth",	 "task2-ground-wall", "--param",	  "ball.velocity.x", "--param",
						 "ball.velocity.y", "--sigma",	   "0.25",		  "--samples",		 "100",
						 "--antithetic",	"--format",	   "csv",		  "--threads",		 "2",
						 NULL};
	char *a = run_ok(one), *b = run_ok(two);
	g_assert_cmpstr(a, ==, b);
	g_free(a);
	g_free(b);
}

static void test_json_and_terms(void)
{
	char *terms = g_build_filename(tmp_dir, "terms.csv", NULL);
	const char *args[] = {"smooth",	   "wedge-corner", "--param", "ball.position.x", "--sigma", "0.05",
						  "--samples", "50",		   "--seed",  "3",				 "--gamma", "2",
						  "--format",  "json",		   "--terms-csv", terms,		 NULL};
	char *out = run_ok(args);
	JsonParser *parser = json_parser_new();
	GError *error = NULL;
	g_assert_true(json_parser_load_from_data(parser, out, -1, &error));
	g_assert_no_error(error);
	JsonObject *root = json_node_get_object(json_parser_get_root(parser));
	g_assert_cmpint(json_object_get_int_member(root, "samples"), ==, 50);
	g_assert_cmpint(json_object_get_int_member(root, "seed"), ==, 3);
	g_assert_cmpstr(json_object_get_string_member(root, "generator"), ==, "splitmix64-polar");
	JsonArray *backends = json_object_get_array_member(root, "backends");
	g_assert_cmpuint(json_array_get_length(backends), ==, 12);
	char *text = NULL;
	g_assert_true(g_file_get_contents(terms, &text, NULL, NULL));
	char ***rows = cl_csv_parse(text);
	g_assert_cmpstr(rows[0][3], ==, "zobg");
	for (guint i = 0; i < json_array_get_length(backends); i++) {
		JsonObject *b = json_array_get_object_element(backends, i);
		const char *id = json_object_get_string_member(b, "backend");
		JsonObject *alpha = json_object_get_object_member(b, "alpha");
		const char *rule = json_object_get_string_member(alpha, "rule");
		g_assert_true(g_str_equal(rule, "eps>gamma") || g_str_equal(rule, "optimum") || g_str_equal(rule, "constraint"));
		g_assert_cmpfloat(json_object_get_double_member(alpha, "gamma"), ==, 2.0);
		JsonObject *g = json_object_get_object_member(json_object_get_object_member(b, "gradient"), "ball.position.x");
		g_assert_true(json_object_get_boolean_member(g, "has_adjoint"));
		/* the terms file holds the terms the ZoBG mean is taken of */
		double sum = 0;
		int n = 0;
		for (char ***row = rows + 1; *row; row++)
			if (strcmp((*row)[0], id) == 0) {
				sum += number((*row)[3]);
				n++;
			}
		g_assert_cmpint(n, ==, 50);
		double mean = json_object_get_double_member(json_object_get_object_member(g, "zobg"), "mean");
		g_assert_cmpfloat_with_epsilon(sum / n, mean, 1e-9 * fmax(1, fabs(mean)));
	}
	cl_csv_free(rows);
	g_free(text);
	g_object_unref(parser);
	g_remove(terms);
	g_free(terms);
	g_free(out);
}

static void test_table(void)
{
	const char *args[] = {"smooth",	   "task1-bounce-once", "--param",	"ball.position.y", "--sigma", "0.05",
						  "--samples", "100",				"--backend", "compliant-warp", "--quadrature", NULL};
	char *out = run_ok(args);
	g_assert_nonnull(strstr(out, "compliant-warp  (ok)"));
	g_assert_nonnull(strstr(out, "AoBG: α = "));
	g_assert_nonnull(strstr(out, "quadrature ∇F"));
	g_free(out);
}

/* A smoothed heatmap: one row per cell and backend, exact added for the FoBG bias. */
static void test_heatmap(void)
{
	const char *args[] = {"heatmap",   "task2-ground-wall", "--x",		   "ball.velocity.x:4:6:2", "--y",
						  "ball.velocity.y:-6:-4:2", "--quantity", "fobg-bias-x", "--sigma", "0.25",
						  "--samples", "10", "--backend", "impulse", "--csv", "-", NULL};
	char *out = run_ok(args);
	char ***rows = cl_csv_parse(out);
	int n = 0;
	for (char ***row = rows + 1; *row; row++) {
		g_assert_cmpstr((*row)[3], ==, "fobg-bias-x");
		number((*row)[4]);
		n++;
	}
	g_assert_cmpint(n, ==, 2 * 2 * 2); /* impulse and exact (its own FoBG − ZoBG) */
	cl_csv_free(rows);
	g_free(out);
}

/* The student's Task 1: learn the drop height y0 (the loss 2.2 − y0 falls
 * until y0 = 2.1) with the impulse backend. */
static void test_optimize_task1(void)
{
	char *scene = g_build_filename(tmp_dir, "task1-learn.json", NULL);
	const char *json =
		"{ \"contactlab\": 1, \"name\": \"Task 1: learn the drop height\", \"duration\": 1, \"steps\": 480,\n"
		"  \"balls\": [ { \"id\": \"ball\", \"position\": [-1, 1], \"velocity\": [2, -2], \"radius\": 0.1 } ],\n"
		"  \"walls\": [ { \"id\": \"ground\", \"point\": [0, 0], \"normal\": [0, 1] } ],\n"
		"  \"loss\": [ { \"type\": \"final_coordinate\", \"ball\": \"ball\", \"axis\": \"y\", \"weight\": 1 } ],\n"
		"  \"optimize\": { \"parameters\": [\"ball.position.y\"], \"learning_rate\": 0.05, \"iterations\": 16,\n"
		"                \"gradient\": \"zobg\", \"sigma\": 0.05, \"samples\": 100 } }\n";
	g_assert_true(g_file_set_contents(scene, json, -1, NULL));
	char *csv[2];
	const char *estimators[] = {"zobg", "adjoint"};
	for (int e = 0; e < 2; e++) {
		csv[e] = g_build_filename(tmp_dir, e ? "own.csv" : "zobg.csv", NULL);
		const char *args[] = {"optimize", scene, "--backend", "impulse", "--gradient", estimators[e], "--csv", csv[e],
							  NULL};
		char *out = run_ok(args);
		g_assert_nonnull(strstr(out, e ? "gradient descent, learning rate 0.05, 16 iterations\n"
									   : "along zobg of the loss smoothed with σ = 0.05 (100 samples"));
		g_free(out);
	}
	double first[2], last[2], y0[2];
	for (int e = 0; e < 2; e++) {
		char *text = NULL;
		g_assert_true(g_file_get_contents(csv[e], &text, NULL, NULL));
		char ***rows = cl_csv_parse(text);
		guint n = 0;
		while (rows[n + 1])
			n++;
		g_assert_cmpstr(rows[0][2], ==, "ball.position.y");
		first[e] = number(rows[1][1]);
		last[e] = number(rows[n][1]);
		y0[e] = number(rows[n][2]);
		cl_csv_free(rows);
		g_free(text);
		g_remove(csv[e]);
		g_free(csv[e]);
	}
	g_test_message("impulse, ZoBG: loss %g → %g (y0 %g); own gradient: %g → %g (y0 %g)", first[0], last[0], y0[0],
				   first[1], last[1], y0[1]);
	g_assert_cmpfloat(last[0], <, 0.5 * first[0]);
	g_assert_cmpfloat(y0[0], >, 1.5);
	g_assert_cmpfloat(last[1], >, first[1] + 0.5);
	g_assert_cmpfloat(y0[1], <, 0.5);
	g_remove(scene);
	g_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	tmp_dir = g_dir_make_tmp("contactlab-smooth-XXXXXX", NULL);
	g_test_add_func("/smooth-cli/csv", test_csv);
	g_test_add_func("/smooth-cli/threads", test_threads);
	g_test_add_func("/smooth-cli/json-and-terms", test_json_and_terms);
	g_test_add_func("/smooth-cli/table", test_table);
	g_test_add_func("/smooth-cli/heatmap", test_heatmap);
	g_test_add_func("/smooth-cli/optimize-task1", test_optimize_task1);
	int status = g_test_run();
	g_rmdir(tmp_dir);
	g_free(tmp_dir);
	return status;
}
