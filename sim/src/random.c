/* Seeded random streams and Gaussians for smoothing (no globals). */
#include "core.h"

/* SplitMix64's output function (Steele, Lea, Flood 2014). */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15u

ClRandom cl_random_stream(uint64_t seed, uint64_t index)
{
	/* mixing twice decorrelates neighbouring seeds and neighbouring indices */
	return (ClRandom){.state = mix(mix(seed + GOLDEN) ^ (index * GOLDEN + 0x632be59bd9b4e019u))};
}

uint64_t cl_random_next(ClRandom *r)
{
	r->state += GOLDEN;
	return mix(r->state);
}

double cl_random_uniform(ClRandom *r)
{
	return ((double)(cl_random_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double cl_random_gaussian(ClRandom *r)
{
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	double u, v, s;
	do {
		u = 2.0 * cl_random_uniform(r) - 1.0;
		v = 2.0 * cl_random_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	double factor = sqrt(-2.0 * log(s) / s);
	r->spare = v * factor;
	r->has_spare = true;
	return u * factor;
}
