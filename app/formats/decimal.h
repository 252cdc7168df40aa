/* The shortest decimal that reads back to a double, found by arithmetic
 * (no printf, no strtod): digits × 10^exponent. */
#pragma once

#include <stdint.h>

typedef struct {
	uint64_t digits; /* at most 17 decimal digits, the last one not 0 */
	int exponent;
} ClDecimal;

/* For a finite x > 0: the fewest significant digits P for which x rounded
 * to P digits (round half to even, as printf "%.*g" does) reads back to x
 * (as strtod reads, ties to even), and that rounding. */
ClDecimal cl_decimal_shortest(double x);

/* The same answer with every rounding the fast path decides checked by
 * exact big-integer arithmetic (slow; tests compare the two). */
ClDecimal cl_decimal_shortest_exact(double x);
