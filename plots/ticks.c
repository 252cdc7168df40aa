/* "Nice" axis ticks and their labels. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Ticks at k·step inside [lo, hi], computed from k so no error accumulates. */
static int linear_ticks_with_step(double lo, double hi, double step, ClPlotTicks *ticks)
{
	double slack = step * 1e-9;
	double first = ceil((lo - slack) / step);
	ticks->count = 0;
	ticks->step = step;
	for (double k = first; k * step <= hi + slack && ticks->count < CL_PLOT_TICKS_MAX; k++) {
		double v = k * step;
		ticks->values[ticks->count++] = fabs(v) < slack ? 0.0 : v;
	}
	return ticks->count;
}

static double nice_step(double span, int target)
{
	double raw = span / MAX(target, 1);
	double magnitude = pow(10.0, floor(log10(raw)));
	static const double mantissas[] = {1, 2, 2.5, 5, 10};
	for (size_t i = 0; i < G_N_ELEMENTS(mantissas); i++)
		if (mantissas[i] * magnitude >= raw * (1 - 1e-9))
			return mantissas[i] * magnitude;
	return 10 * magnitude;
}

static int log_ticks(double lo, double hi, int target, ClPlotTicks *ticks)
{
	double e_lo = log10(lo), e_hi = log10(hi);
	int first = (int)ceil(e_lo - 1e-9), last = (int)floor(e_hi + 1e-9);
	int decades = last - first + 1;
	ticks->count = 0;
	if (e_hi - e_lo >= 2.0 || decades > 2) {
		int every = decades > target ? (decades + target - 1) / MAX(target, 1) : 1;
		/* keep the labelled decades on multiples of `every` so 10⁰ stays in */
		int start = (int)(ceil((double)first / every) * every);
		ticks->step = every;
		for (int e = start; e <= last && ticks->count < CL_PLOT_TICKS_MAX; e += every)
			ticks->values[ticks->count++] = pow(10.0, e);
		return ticks->count;
	}
	/* less than about two decades: 1, 2, 5 × 10^k */
	ticks->step = 0;
	static const double mantissas[] = {1, 2, 5};
	for (int e = (int)floor(e_lo) - 1; e <= (int)ceil(e_hi); e++)
		for (size_t i = 0; i < G_N_ELEMENTS(mantissas); i++) {
			double v = mantissas[i] * pow(10.0, e);
			if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9) && ticks->count < CL_PLOT_TICKS_MAX)
				ticks->values[ticks->count++] = v;
		}
	if (ticks->count >= 2)
		return ticks->count;
	/* inside one decade (e.g. 2.1 … 8): linear ticks read better */
	int n = linear_ticks_with_step(lo, hi, nice_step(hi - lo, target), ticks);
	ticks->step = 0;
	return n;
}

int cl_plot_nice_ticks(double lo, double hi, ClPlotScale scale, int target, ClPlotTicks *ticks)
{
	memset(ticks, 0, sizeof *ticks);
	if (!isfinite(lo) || !isfinite(hi) || hi <= lo)
		return 0;
	if (scale == CL_PLOT_SCALE_LOG)
		return lo > 0 ? log_ticks(lo, hi, target, ticks) : 0;
	return linear_ticks_with_step(lo, hi, nice_step(hi - lo, target), ticks);
}

/* Digits after the point that show step exactly (0.25 → 2, 5 → 0). */
static int decimals_for(double step)
{
	for (int d = 0; d < 12; d++) {
		double scaled = step * pow(10.0, d);
		if (fabs(scaled - round(scaled)) < 1e-6 * MAX(scaled, 1.0))
			return d;
	}
	return 12;
}

/* printf writes "-"; typeset a real minus sign. */
static void with_minus(const char *text, char *buffer, size_t size)
{
	if (text[0] == '-')
		g_snprintf(buffer, size, "\u2212%s", text + 1);
	else
		g_strlcpy(buffer, text, size);
}

static void format_plain(double value, double step, char *buffer, size_t size)
{
	char text[64];
	int decimals = step > 0 ? decimals_for(step) : 0;
	if (step <= 0) {
		g_snprintf(text, sizeof text, "%g", value);
		/* %g of 0.0005 is "0.0005", of 2e-05 "2e-05": keep it plain or go to powers */
		if (strchr(text, 'e')) {
			int e = (int)floor(log10(fabs(value)) + 1e-9);
			double m = value / pow(10.0, e);
			char mantissa[32];
			g_snprintf(mantissa, sizeof mantissa, "%g", m);
			with_minus(mantissa, text, sizeof text);
			char exponent[32];
			g_snprintf(exponent, sizeof exponent, "%d", e);
			char signed_exponent[40];
			with_minus(exponent, signed_exponent, sizeof signed_exponent);
			g_snprintf(buffer, size, "%s×10<sup>%s</sup>", text, signed_exponent);
			return;
		}
	} else {
		g_snprintf(text, sizeof text, "%.*f", decimals, value);
	}
	if (strcmp(text, "-0") == 0 || (text[0] == '-' && strspn(text + 1, "0.") == strlen(text + 1)))
		memmove(text, text + 1, strlen(text)); /* "-0.00" → "0.00" */
	with_minus(text, buffer, size);
}

void cl_plot_format_tick(double value, const ClPlotTicks *ticks, ClPlotScale scale, char *buffer, size_t size)
{
	if (scale == CL_PLOT_SCALE_LOG) {
		if (ticks->step >= 1) {
			char exponent[32], signed_exponent[40];
			g_snprintf(exponent, sizeof exponent, "%d", (int)lround(log10(value)));
			with_minus(exponent, signed_exponent, sizeof signed_exponent);
			g_snprintf(buffer, size, "10<sup>%s</sup>", signed_exponent);
		} else {
			format_plain(value, 0, buffer, size);
		}
		return;
	}
	double largest = 0;
	for (int i = 0; i < ticks->count; i++)
		largest = MAX(largest, fabs(ticks->values[i]));
	if (value != 0 && (largest >= 1e5 || largest < 1e-3)) {
		/* one exponent for the whole axis, so labels line up */
		int e = (int)floor(log10(largest) + 1e-9);
		double scale_factor = pow(10.0, e);
		char mantissa[64], exponent[32], signed_exponent[40];
		format_plain(value / scale_factor, ticks->step / scale_factor, mantissa, sizeof mantissa);
		g_snprintf(exponent, sizeof exponent, "%d", e);
		with_minus(exponent, signed_exponent, sizeof signed_exponent);
		g_snprintf(buffer, size, "%s×10<sup>%s</sup>", mantissa, signed_exponent);
		return;
	}
	format_plain(value, ticks->step, buffer, size);
}
