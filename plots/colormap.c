/* Colour maps and the categorical palette. */
#include "plot.h"

#include <math.h>
#include <string.h>

ClPlotColor cl_plot_color_hex(const char *hex)
{
	unsigned value = 0;
	if (!hex || hex[0] != '#' || strlen(hex) != 7)
		return (ClPlotColor){0, 0, 0, 1};
	for (int i = 1; i < 7; i++) {
		int digit = g_ascii_xdigit_value(hex[i]);
		if (digit < 0)
			return (ClPlotColor){0, 0, 0, 1};
		value = value * 16 + (unsigned)digit;
	}
	return (ClPlotColor){((value >> 16) & 255) / 255.0, ((value >> 8) & 255) / 255.0, (value & 255) / 255.0, 1};
}

bool cl_plot_color_is_foreground(ClPlotColor color)
{
	return color.r < 0;
}

/* WCAG 2 relative luminance of an sRGB colour. */
static double luminance(ClPlotColor c)
{
	double rgb[3] = {c.r, c.g, c.b};
	for (int i = 0; i < 3; i++)
		rgb[i] = rgb[i] <= 0.04045 ? rgb[i] / 12.92 : pow((rgb[i] + 0.055) / 1.055, 2.4);
	return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
}

double cl_plot_contrast(ClPlotColor a, ClPlotColor b)
{
	double la = luminance(a), lb = luminance(b);
	return (fmax(la, lb) + 0.05) / (fmin(la, lb) + 0.05);
}

ClPlotColor cl_plot_color_legible(ClPlotColor color, ClPlotColor background, double ratio)
{
	/* towards black on a light background, towards white on a dark one, in
	 * small steps, so the hue stays and the change is as small as it can be */
	double target = luminance(background) > 0.18 ? 0.0 : 1.0;
	ClPlotColor c = color;
	for (int step = 1; step <= 50 && cl_plot_contrast(c, background) < ratio; step++) {
		double t = step / 50.0;
		c.r = color.r + (target - color.r) * t;
		c.g = color.g + (target - color.g) * t;
		c.b = color.b + (target - color.b) * t;
	}
	return c;
}

ClPlotColor cl_plot_palette(int index)
{
	static const char *const tableau10[] = {
		"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
		"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
	};
	int n = (int)G_N_ELEMENTS(tableau10);
	return cl_plot_color_hex(tableau10[((index % n) + n) % n]);
}

/* Viridis (van der Walt & Smith, matplotlib 2.0) as the published degree-6
 * least-squares polynomial fit per channel (Zucker, 2020): within about 1/100
 * of the 256-entry table, which is below a just-noticeable difference. */
static ClPlotColor viridis(double t)
{
	static const double c[7][3] = {
		{0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
		{0.1050930431085774, 1.404613529898575, 1.384590162594685},
		{-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
		{-4.634230498983486, -5.799100973351585, -19.33244095627987},
		{6.228269936347081, 14.17993336680509, 56.69055260068105},
		{4.776384997670288, -13.74514537774601, -65.35303263337234},
		{-5.435455855934631, 4.645852612178535, 26.3124352495832},
	};
	double rgb[3];
	for (int k = 0; k < 3; k++) {
		double v = c[6][k];
		for (int p = 5; p >= 0; p--)
			v = v * t + c[p][k];
		rgb[k] = CLAMP(v, 0.0, 1.0);
	}
	return (ClPlotColor){rgb[0], rgb[1], rgb[2], 1};
}

/* --- Moreland (2009), "Diverging Color Maps for Scientific Visualization":
 * interpolate in Msh (polar CIELAB) between a blue and a red of equal
 * lightness, through an unsaturated midpoint of M = 88. */

typedef struct {
	double m, s, h;
} Msh;

static const double white_x = 0.95047, white_y = 1.0, white_z = 1.08883; /* D65 */

static double srgb_to_linear(double c)
{
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double linear_to_srgb(double c)
{
	c = c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1.0 / 2.4) - 0.055;
	return CLAMP(c, 0.0, 1.0);
}

static double lab_f(double t)
{
	return t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116.0;
}

static double lab_f_inverse(double t)
{
	return t > 0.20689 ? t * t * t : (t - 16.0 / 116.0) / 7.787;
}

static Msh rgb_to_msh(double r, double g, double b)
{
	r = srgb_to_linear(r), g = srgb_to_linear(g), b = srgb_to_linear(b);
	double x = 0.4124 * r + 0.3576 * g + 0.1805 * b;
	double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
	double z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
	double fx = lab_f(x / white_x), fy = lab_f(y / white_y), fz = lab_f(z / white_z);
	double l = 116.0 * fy - 16.0, a = 500.0 * (fx - fy), bb = 200.0 * (fy - fz);
	double m = sqrt(l * l + a * a + bb * bb);
	return (Msh){m, m > 0 ? acos(l / m) : 0, atan2(bb, a)};
}

static ClPlotColor msh_to_rgb(Msh c)
{
	double l = c.m * cos(c.s), a = c.m * sin(c.s) * cos(c.h), bb = c.m * sin(c.s) * sin(c.h);
	double fy = (l + 16.0) / 116.0, fx = fy + a / 500.0, fz = fy - bb / 200.0;
	double x = white_x * lab_f_inverse(fx), y = white_y * lab_f_inverse(fy), z = white_z * lab_f_inverse(fz);
	double r = 3.2406 * x - 1.5372 * y - 0.4986 * z;
	double g = -0.9689 * x + 1.8758 * y + 0.0415 * z;
	double b = 0.0557 * x - 0.2040 * y + 1.0570 * z;
	return (ClPlotColor){linear_to_srgb(r), linear_to_srgb(g), linear_to_srgb(b), 1};
}

/* Spins the hue of an unsaturated end so the path does not pass through a
 * perceptual kink. */
static double adjust_hue(Msh saturated, double m_unsaturated)
{
	if (saturated.m >= m_unsaturated)
		return saturated.h;
	double spin = saturated.s * sqrt(m_unsaturated * m_unsaturated - saturated.m * saturated.m) /
				  (saturated.m * sin(saturated.s));
	return saturated.h > -G_PI / 3 ? saturated.h + spin : saturated.h - spin;
}

static ClPlotColor coolwarm(double t)
{
	Msh a = rgb_to_msh(0.230, 0.299, 0.754), b = rgb_to_msh(0.706, 0.016, 0.150);
	if (a.s > 0.05 && b.s > 0.05 && fabs(a.h - b.h) > G_PI / 3) {
		double mid = MAX(MAX(a.m, b.m), 88.0);
		if (t < 0.5) {
			b = (Msh){mid, 0, 0};
			t = 2 * t;
		} else {
			a = (Msh){mid, 0, 0};
			t = 2 * t - 1;
		}
	}
	if (a.s < 0.05 && b.s > 0.05)
		a.h = adjust_hue(b, a.m);
	else if (b.s < 0.05 && a.s > 0.05)
		b.h = adjust_hue(a, b.m);
	return msh_to_rgb((Msh){(1 - t) * a.m + t * b.m, (1 - t) * a.s + t * b.s, (1 - t) * a.h + t * b.h});
}

ClPlotColor cl_plot_colormap(ClPlotColormap map, double t)
{
	t = isnan(t) ? 0.0 : CLAMP(t, 0.0, 1.0);
	switch (map) {
	case CL_PLOT_COLORMAP_COOLWARM:
		return coolwarm(t);
	case CL_PLOT_COLORMAP_VIRIDIS:
	default:
		return viridis(t);
	}
}
