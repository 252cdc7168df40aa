/* Number text: cl_format_number against the printf/strtod loop it replaced
 * (kept here as the reference) on edge cases, ties, short decimals and
 * random bit patterns; the fast path against the exact big-integer one;
 * the trajectory CSV writer.
 *
 * CL_NUMBERS_SAMPLES=N sets how many random doubles of each kind are
 * compared (default 40 000; the reference takes about 5 µs a value). */
#include "decimal.h"
#include "numbers.h"
#include "tasks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The implementation before the fast one, verbatim: the shortest "%.Pg"
 * that strtod reads back. */
static ClNumberText reference_format(double x)
{
	ClNumberText t;
	if (isnan(x)) {
		g_strlcpy(t.text, "nan", sizeof t.text);
		return t;
	}
	if (isinf(x)) {
		g_strlcpy(t.text, x > 0 ? "inf" : "-inf", sizeof t.text);
		return t;
	}
	/* whole numbers in full ("10000000", not "1e+07") */
	if (x == floor(x) && fabs(x) < 1e15) {
		g_ascii_formatd(t.text, sizeof t.text, "%.0f", x);
		return t;
	}
	for (int digits = 1; digits <= 17; digits++) {
		char format[8];
		snprintf(format, sizeof format, "%%.%dg", digits);
		g_ascii_formatd(t.text, sizeof t.text, format, x);
		if (g_ascii_strtod(t.text, NULL) == x)
			break;
	}
	return t;
}

static double from_bits(guint64 bits)
{
	double x;
	memcpy(&x, &bits, sizeof x);
	return x;
}

static guint64 to_bits(double x)
{
	guint64 bits;
	memcpy(&bits, &x, sizeof bits);
	return bits;
}

static guint64 random_bits(GRand *rand)
{
	return (guint64)g_rand_int(rand) << 32 | g_rand_int(rand);
}

static int samples(void)
{
	const char *n = g_getenv("CL_NUMBERS_SAMPLES");
	return n ? atoi(n) : 40000;
}

typedef struct {
	guint64 compared, mismatched;
} Tally;

/* Compares both signs of x; reports the first mismatches. */
static void compare(Tally *tally, double x)
{
	for (int sign = 0; sign < 2; sign++, x = -x) {
		ClNumberText got = cl_format_number(x), want = reference_format(x);
		tally->compared++;
		if (strcmp(got.text, want.text) != 0 && tally->mismatched++ < 20)
			g_test_message("%.17g (0x%016" G_GINT64_MODIFIER "x): \"%s\", the reference \"%s\"", x, to_bits(x),
						   got.text, want.text);
	}
}

static void finish(const Tally *tally)
{
	g_test_message("%" G_GUINT64_FORMAT " values compared, %" G_GUINT64_FORMAT " differ", tally->compared,
				   tally->mismatched);
	if (tally->mismatched)
		g_test_fail_printf("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " values are formatted unlike the reference",
						   tally->mismatched, tally->compared);
}

/* x and its neighbours up to three steps away on either side */
static void compare_around(Tally *tally, double x)
{
	double up = x, down = x;
	compare(tally, x);
	for (int i = 0; i < 3; i++) {
		up = nextafter(up, INFINITY);
		down = nextafter(down, -INFINITY);
		if (isfinite(up))
			compare(tally, up);
		if (isfinite(down))
			compare(tally, down);
	}
}

static void test_examples(void)
{
	static const struct {
		double x;
		const char *text;
	} cases[] = {
		{0.1, "0.1"},
		{-0.39866841646142, "-0.39866841646142"},
		{1e4, "10000"},
		{480, "480"},
		{1e15, "1e+15"},
		{1.5e15, "1.5e+15"},
		{1e15 + 0.5, "1000000000000000.5"},
		{1234567890123456.0 + 0.25, "1234567890123456.2"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.0 / 3.0, "0.3333333333333333"},
		{5e-324, "5e-324"},
		{DBL_MAX, "1.7976931348623157e+308"},
		{-0.0, "-0"},
		{0.0, "0"},
		{123456.5, "123456.5"},
		{1e22, "1e+22"},
		{0x1p54, "18014398509481984"}, /* 2^54: 17 digits, fixed */
		{1.0 + 1.0 / 65536, "1.0000152587890625"}, /* exact in 17 digits */
		{8.0 + 1.0 / 65536, "8.000015258789062"},  /* 8.0000152587890625: a tie at 16 digits, to even */
		{8.0 + 3.0 / 65536, "8.000045776367188"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_assert_cmpstr(cl_format_number(cases[i].x).text, ==, cases[i].text);
		g_assert_cmpstr(reference_format(cases[i].x).text, ==, cases[i].text);
	}
	g_assert_cmpstr(cl_format_number(NAN).text, ==, "nan");
	g_assert_cmpstr(cl_format_number(-NAN).text, ==, "nan");
	g_assert_cmpstr(cl_format_number(INFINITY).text, ==, "inf");
	g_assert_cmpstr(cl_format_number(-INFINITY).text, ==, "-inf");
}

/* Every binary exponent: its power of two (the asymmetric interval), the
 * smallest and largest significands, and neighbours; every power of ten;
 * the ends of the range; integers around 10^15 and 2^53. */
static void test_edges(void)
{
	Tally tally = {0};
	for (guint64 biased = 0; biased < 2047; biased++) {
		guint64 base = biased << 52;
		compare_around(&tally, from_bits(base | 1));
		compare_around(&tally, from_bits(base | ((G_GUINT64_CONSTANT(1) << 52) - 1)));
		compare_around(&tally, from_bits(base | G_GUINT64_CONSTANT(1) << 51));
		if (biased)
			compare_around(&tally, from_bits(base));
	}
	for (int p = -325; p <= 308; p++) {
		char text[16];
		g_snprintf(text, sizeof text, "1e%d", p);
		compare_around(&tally, g_ascii_strtod(text, NULL));
		g_snprintf(text, sizeof text, "5e%d", p);
		compare_around(&tally, g_ascii_strtod(text, NULL));
	}
	compare_around(&tally, DBL_MAX);
	compare_around(&tally, DBL_MIN);
	compare_around(&tally, DBL_TRUE_MIN);
	for (int i = 0; i <= 10000; i++) {
		compare(&tally, i);
		compare(&tally, i + 0.5);
		compare(&tally, i / 1000.0);
	}
	for (int i = -2000; i <= 2000; i++) {
		compare(&tally, 1e15 + i);
		compare(&tally, 1e15 + i / 8.0);
		compare(&tally, 9007199254740992.0 + 2 * i);
		compare(&tally, ldexp(1, 63) + ldexp(i, 11));
	}
	finish(&tally);
}

/* Rounding ties: doubles whose exact value has a 5 just past the digits
 * that round trip (few significand bits, small exponents), and doubles next
 * to a midpoint that is a short integer (the midpoint reads back to the one
 * with the even significand). */
static void test_ties(void)
{
	Tally tally = {0};
	GRand *rand = g_rand_new_with_seed(20260114);
	for (int i = 0; i < samples() / 4; i++) {
		int bits = g_rand_int_range(rand, 1, 54);
		guint64 m = random_bits(rand) >> (64 - bits) | 1;
		compare(&tally, ldexp((double)m, g_rand_int_range(rand, -80, 40)));
	}
	for (int k = 1; k < 65536; k += 2) {
		compare(&tally, 1 + k / 65536.0);
		compare(&tally, 8 + k / 65536.0);
	}
	/* in [2^(52+s), 2^(53+s)) the spacing is 2^s: midpoints D = doubles ± 2^(s−1) */
	for (int s = 1; s <= 11; s++)
		for (int i = 0; i < 2000; i++) {
			/* a D with few significant digits: d·10^t, d < 10^6 */
			guint64 low = G_GUINT64_CONSTANT(1) << (52 + s), scale = 1;
			while (scale * 1000000 < low)
				scale *= 10;
			guint64 d = low / scale + (guint64)g_rand_int_range(rand, 0, 1000000);
			guint64 midpoint = d * scale;
			midpoint -= midpoint % (G_GUINT64_CONSTANT(1) << s);
			midpoint += G_GUINT64_CONSTANT(1) << (s - 1);
			if (midpoint >= low && midpoint < low * 2) {
				compare(&tally, (double)(midpoint - (G_GUINT64_CONSTANT(1) << (s - 1))));
				compare(&tally, (double)(midpoint + (G_GUINT64_CONSTANT(1) << (s - 1))));
			}
		}
	g_rand_free(rand);
	finish(&tally);
}

/* Decimals of 1 to 17 digits at every exponent, read by strtod: short
 * outputs, exact lower ends, ends that are short decimals. */
static double draw_short_decimal(GRand *rand)
{
	int digits = g_rand_int_range(rand, 1, 18);
	char text[40], *p = text;
	*p++ = (char)('1' + g_rand_int_range(rand, 0, 9));
	for (int k = 1; k < digits; k++)
		*p++ = (char)('0' + g_rand_int_range(rand, 0, 10));
	g_snprintf(p, sizeof text - (size_t)(p - text), "e%d", g_rand_int_range(rand, -340, 310));
	return g_ascii_strtod(text, NULL);
}

static double draw_bits(GRand *rand)
{
	return from_bits(random_bits(rand));
}

/* like a trajectory's positions and velocities, of order 1 */
static double draw_moderate(GRand *rand)
{
	return g_rand_double_range(rand, -10, 10) * pow(10, g_rand_int_range(rand, -6, 4));
}

typedef struct {
	guint32 seed;
	double (*draw)(GRand *rand);
} Draws;

static void test_drawn(gconstpointer data)
{
	const Draws *draws = data;
	Tally tally = {0};
	GRand *rand = g_rand_new_with_seed(draws->seed);
	for (int i = 0; i < samples(); i++) {
		double x = draws->draw(rand);
		if (isfinite(x))
			compare(&tally, x);
	}
	g_rand_free(rand);
	finish(&tally);
}

/* The fast path decides most roundings by a bound on its error; the exact
 * path compares every one in big integers. */
static void test_exact_path(void)
{
	GRand *rand = g_rand_new_with_seed(20260118);
	guint64 compared = 0;
	for (int i = 0; i < samples() / 2; i++) {
		guint64 bits = random_bits(rand) >> 1;
		if (i % 4 == 1) /* subnormals */
			bits &= (G_GUINT64_CONSTANT(1) << 52) - 1;
		else if (i % 4 == 2) /* powers of two */
			bits &= ~((G_GUINT64_CONSTANT(1) << 52) - 1);
		else if (i % 4 == 3) /* whole numbers above 10^15, some multiples of powers of ten */
			bits = to_bits(ldexp((double)(bits >> 40), g_rand_int_range(rand, 30, 200)));
		double x = from_bits(bits);
		if (!isfinite(x) || x == 0)
			continue;
		ClDecimal fast = cl_decimal_shortest(x), exact = cl_decimal_shortest_exact(x);
		compared++;
		if (fast.digits != exact.digits || fast.exponent != exact.exponent)
			g_error("%.17g: fast %" G_GUINT64_FORMAT "e%d, exact %" G_GUINT64_FORMAT "e%d", x, fast.digits,
					fast.exponent, exact.digits, exact.exponent);
	}
	for (int p = -323; p <= 308; p++) {
		double x = pow(10, p);
		ClDecimal fast = cl_decimal_shortest(x), exact = cl_decimal_shortest_exact(x);
		g_assert_cmpuint(fast.digits, ==, exact.digits);
		g_assert_cmpint(fast.exponent, ==, exact.exponent);
		compared++;
	}
	g_test_message("%" G_GUINT64_FORMAT " values compared", compared);
	g_rand_free(rand);
}

/* Every row: the step, its time, the ball's id quoted when it must be, the
 * state's four numbers reading back exactly. */
static void test_trajectory_csv(void)
{
	ClScene *scene = cl_test_task3();
	g_strlcpy(scene->balls[0].id, "left, \"red\"", sizeof scene->balls[0].id);
	int size = cl_state_size(scene), steps_done = 3, backend = cl_backend_find("impulse");
	double *states = g_new(double, (gsize)(steps_done + 1) * (gsize)size);
	GRand *rand = g_rand_new_with_seed(20260119);
	for (int i = 0; i < (steps_done + 1) * size; i++)
		states[i] = g_rand_double_range(rand, -3, 3);
	g_rand_free(rand);
	GString *csv = g_string_new(CL_TRAJECTORY_CSV_HEADER);
	cl_trajectory_csv_append(csv, scene, backend, states, steps_done);
	char ***rows = cl_csv_parse(csv->str);
	g_assert_cmpstr(rows[0][3], ==, "ball");
	int r = 1;
	for (int n = 0; n <= steps_done; n++)
		for (int b = 0; b < scene->ball_count; b++, r++) {
			char **f = rows[r];
			g_assert_nonnull(f);
			g_assert_cmpuint(g_strv_length(f), ==, 8);
			g_assert_cmpstr(f[0], ==, "impulse");
			g_assert_cmpint(atoi(f[1]), ==, n);
			g_assert_cmpstr(f[2], ==, cl_format_number(n * cl_scene_dt(scene)).text);
			g_assert_cmpstr(f[3], ==, scene->balls[b].id);
			for (int c = 0; c < 4; c++)
				g_assert_cmpfloat(g_ascii_strtod(f[4 + c], NULL), ==, states[n * size + CL_BALL_STATE * b + c]);
		}
	g_assert_null(rows[r]);
	g_assert_true(g_str_has_suffix(csv->str, "\n"));
	cl_csv_free(rows);
	g_string_free(csv, TRUE);
	g_free(states);
	cl_scene_free(scene);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/numbers/examples", test_examples);
	g_test_add_func("/numbers/edges", test_edges);
	g_test_add_func("/numbers/ties", test_ties);
	static const Draws short_decimals = {20260115, draw_short_decimal}, bits = {20260116, draw_bits},
					   moderate = {20260117, draw_moderate};
	g_test_add_data_func("/numbers/short-decimals", &short_decimals, test_drawn);
	g_test_add_data_func("/numbers/random-bits", &bits, test_drawn);
	g_test_add_data_func("/numbers/random-moderate", &moderate, test_drawn);
	g_test_add_func("/numbers/exact-path", test_exact_path);
	g_test_add_func("/numbers/trajectory-csv", test_trajectory_csv);
	return g_test_run();
}
