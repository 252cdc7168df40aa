/* Shortest round-trip decimals by integer arithmetic.
 *
 * The scaling is Ryū's (Ulf Adams, "Ryū: fast float-to-string conversion",
 * PLDI 2018). A double x = c·2^q reads back from every real strictly between
 * the midpoints to its neighbours (and from the midpoints themselves when c
 * is even, as strtod rounds ties to even). With e = q − 2, the lower
 * midpoint, x and the upper midpoint are (4c − 2)·2^e (4c − 1 for a power of
 * two, whose neighbour below is twice as close), 4c·2^e and (4c + 2)·2^e.
 * All three are scaled by 10^−k to integers below 2^64, and decimal digits
 * are then removed from the three together while the interval still holds a
 * number of that length.
 *
 * The digits wanted are those of the old printf loop: the fewest P for which
 * x rounded to P significant digits reads back. That is the shortest length
 * and the nearest number of that length (ties to even), except next to a
 * power of two, where the nearest can fall below the narrow lower half of
 * the interval although a number above x fits: then the loop took one digit
 * more, and so does this.
 *
 * The scaling multiplies by 10^−k rounded up to 128 bits. A scaled value A
 * is then at most 2^−64 above the exact one T (T < 2^64, relative error
 * below 2^−127), so whenever the fraction of A is at least 2^−64, ⌊A⌋ = ⌊T⌋
 * and T is not an integer. When it is not and 10^−k was not exact in 128
 * bits, T is compared with ⌊A⌋ in big integers: about one value in 2^64,
 * plus the large integers that are multiples of high powers of ten. (The
 * paper proves smaller tables never need this; this file does not rely on
 * that proof.)
 *
 * The powers are computed once, at first use, in big integers: 10^j =
 * 5^j·2^j exactly, and 10^−k from ⌊2^832 / 5^k⌋, by repeated division by 5
 * (exact, since ⌊⌊a/b⌋/c⌋ = ⌊a/(bc)⌋), rounded up to 128 bits.
 */
#include "decimal.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

__extension__ typedef unsigned __int128 U128;

/* The decimal scales k used: ⌊log10 2^e⌋ − 2 at e = −1075 (the smallest
 * power of two with a closer neighbour below) up to ⌊log10 2^e⌋ − 1 at
 * e = 969 (the largest doubles). */
enum { SCALE_MIN = -326, SCALE_MAX = 290 };

/* ---- big integers: the powers' set-up and the rare exact comparison ---- */

/* The largest values held: 2^832, and n·5^326 < 2^813, m·2^751 < 2^815 in
 * the comparison. */
enum { BIG_LIMBS = 28 };

typedef struct {
	uint32_t limb[BIG_LIMBS]; /* least significant first */
	int length;               /* limbs in use; the top one is not 0 */
} Big;

static void big_set(Big *b, uint64_t v)
{
	b->limb[0] = (uint32_t)v;
	b->limb[1] = (uint32_t)(v >> 32);
	b->length = v >> 32 ? 2 : v ? 1 : 0;
}

static void big_multiply_small(Big *b, uint32_t factor)
{
	uint64_t carry = 0;
	for (int i = 0; i < b->length; i++) {
		uint64_t t = (uint64_t)b->limb[i] * factor + carry;
		b->limb[i] = (uint32_t)t;
		carry = t >> 32;
	}
	if (carry)
		b->limb[b->length++] = (uint32_t)carry;
}

static void big_multiply_pow5(Big *b, int p)
{
	for (; p >= 13; p -= 13)
		big_multiply_small(b, 1220703125u); /* 5^13, the largest power of 5 below 2^32 */
	uint32_t rest = 1;
	for (; p > 0; p--)
		rest *= 5;
	big_multiply_small(b, rest);
}

/* b = ⌊b / d⌋ */
static void big_divide_small(Big *b, uint32_t d)
{
	uint64_t remainder = 0;
	for (int i = b->length - 1; i >= 0; i--) {
		uint64_t t = remainder << 32 | b->limb[i];
		b->limb[i] = (uint32_t)(t / d);
		remainder = t % d;
	}
	while (b->length && !b->limb[b->length - 1])
		b->length--;
}

static void big_shift_left(Big *b, int bits)
{
	if (!b->length)
		return;
	int limbs = bits / 32, s = bits % 32;
	uint32_t top = s ? b->limb[b->length - 1] >> (32 - s) : 0;
	for (int i = b->length - 1; i >= 0; i--)
		b->limb[i + limbs] = b->limb[i] << s | (s && i ? b->limb[i - 1] >> (32 - s) : 0);
	memset(b->limb, 0, sizeof b->limb[0] * (size_t)limbs);
	b->length += limbs;
	if (top)
		b->limb[b->length++] = top;
}

static int big_compare(const Big *a, const Big *b)
{
	if (a->length != b->length)
		return a->length < b->length ? -1 : 1;
	for (int i = a->length - 1; i >= 0; i--)
		if (a->limb[i] != b->limb[i])
			return a->limb[i] < b->limb[i] ? -1 : 1;
	return 0;
}

static int big_bit_length(const Big *b)
{
	return b->length ? 32 * b->length - __builtin_clz(b->limb[b->length - 1]) : 0;
}

/* Bits from..from+127 of b (from ≥ 0, and b has no bit above them); *below:
 * whether any bit under them is set. */
static U128 big_bits(const Big *b, int from, bool *below)
{
	U128 v = 0;
	*below = false;
	for (int i = 0; i < b->length; i++) {
		int at = 32 * i - from; /* where bit 0 of limb i lands */
		uint32_t limb = b->limb[i];
		if (at <= -32)
			*below |= limb != 0;
		else if (at < 0) {
			*below |= (limb & ((1u << -at) - 1)) != 0;
			v |= limb >> -at;
		} else
			v |= (U128)limb << at;
	}
	return v;
}

/* ---- the powers of ten ---- */

typedef struct {
	uint64_t high, low;  /* m = high·2^64 + low, 2^127 ≤ m < 2^128 */
	int binary_exponent; /* 10^−k ≤ m·2^binary_exponent < 10^−k·(1 + 2^−127) */
	bool exact;          /* 10^−k = m·2^binary_exponent */
} Power;

static Power powers[SCALE_MAX - SCALE_MIN + 1];

/* Stores 10^−k = value·2^binary_exponent, rounded up to 128 bits; truncated:
 * value is the floor of the true one (never an integer). */
static void set_power(int k, const Big *value, int binary_exponent, bool truncated)
{
	int from = big_bit_length(value) - 128;
	bool below;
	U128 m;
	if (from >= 0) {
		m = big_bits(value, from, &below);
	} else {
		m = big_bits(value, 0, &below) << -from;
	}
	bool round_up = below || truncated;
	if (round_up && ++m == 0) { /* 2^128 − 1 rounded up */
		m = (U128)1 << 127;
		from++;
	}
	powers[k - SCALE_MIN] = (Power){(uint64_t)(m >> 64), (uint64_t)m, binary_exponent + from, !round_up};
}

static void compute_powers(void)
{
	Big b;
	big_set(&b, 1);
	for (int j = 0; j <= -SCALE_MIN; j++) { /* 10^j = 5^j·2^j */
		set_power(-j, &b, j, false);
		big_multiply_small(&b, 5);
	}
	enum { NUMERATOR_BITS = 832 }; /* ⌊2^832 / 5^290⌋ still has 158 bits */
	big_set(&b, 1);
	big_shift_left(&b, NUMERATOR_BITS);
	for (int k = 1; k <= SCALE_MAX; k++) { /* 10^−k = 5^−k·2^−k ≈ ⌊2^832 / 5^k⌋·2^(−832−k) */
		big_divide_small(&b, 5);
		set_power(k, &b, -NUMERATOR_BITS - k, true);
	}
}

/* ---- scaling ---- */

/* ⌊e·log10 2⌋ for |e| < 2000: log10 2 to 32 bits is 7e−11 short, and no
 * e·log10 2 with 0 < |e| < 2000 is within 1e−4 of an integer. */
static int floor_log10_pow2(int e)
{
	int64_t scaled = (int64_t)e * 1292913986; /* ⌊log10 2 · 2^32⌋ */
	return (int)(scaled >= 0 ? scaled >> 32 : -((-scaled + 0xffffffff) >> 32));
}

typedef struct {
	uint64_t floor;
	bool exact; /* the scaled value is that integer */
} Scaled;

/* ⌊T⌋ for T = n·2^e·10^−k known to lie in (m − 1, m + 1), by comparing T with m. */
static Scaled resolve(uint64_t n, int e, int k, uint64_t m)
{
	Big t, candidate;
	big_set(&t, n);
	big_set(&candidate, m);
	/* T ≷ m  ⇔  n·2^(e−k)·5^−k ≷ m */
	if (k < 0)
		big_multiply_pow5(&t, -k);
	else
		big_multiply_pow5(&candidate, k);
	if (e > k)
		big_shift_left(&t, e - k);
	else
		big_shift_left(&candidate, k - e);
	int order = big_compare(&t, &candidate);
	return order >= 0 ? (Scaled){m, order == 0} : (Scaled){m - 1, false};
}

/* n·2^e·10^−k rounded down (below 2^64 for the e and k used here). */
static Scaled scale(uint64_t n, int e, int k, bool check_exactly)
{
	const Power *p = &powers[k - SCALE_MIN];
	U128 low = (U128)n * p->low, high = (U128)n * p->high;
	U128 middle = (low >> 64) + (uint64_t)high;
	uint64_t p0 = (uint64_t)low, p1 = (uint64_t)middle;
	uint64_t p2 = (uint64_t)(high >> 64) + (uint64_t)(middle >> 64);
	/* A = (p2·2^128 + p1·2^64 + p0)·2^−(64 + f), f in [54, 60] for these e and k */
	int f = -(e + p->binary_exponent) - 64;
	uint64_t fraction_high = p1 & ((UINT64_C(1) << f) - 1);
	Scaled scaled = {p2 << (64 - f) | p1 >> f, false};
	if (check_exactly)
		return resolve(n, e, k, scaled.floor);
	if (p->exact) {
		scaled.exact = fraction_high == 0 && p0 == 0;
		return scaled;
	}
	if (fraction_high != 0 || p0 >> f != 0) /* the fraction of A is at least 2^−64 */
		return scaled;
	return resolve(n, e, k, scaled.floor);
}

/* ---- digits ---- */

typedef struct {
	uint64_t kept;
	int last;       /* the last digit removed */
	bool rest_zero; /* all removed after it were 0 and the scaling was exact */
} Truncated;

static void remove_digit(Truncated *t)
{
	t->rest_zero &= t->last == 0;
	t->last = (int)(t->kept % 10);
	t->kept /= 10;
}

/* to nearest, ties to even */
static uint64_t rounded(const Truncated *t)
{
	return t->kept + (t->last > 5 || (t->last == 5 && (!t->rest_zero || (t->kept & 1))));
}

static ClDecimal shortest(double x, bool check_exactly)
{
	static gsize computed;
	if (g_once_init_enter(&computed)) {
		compute_powers();
		g_once_init_leave(&computed, 1);
	}
	uint64_t bits;
	memcpy(&bits, &x, sizeof bits);
	uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
	int biased = (int)(bits >> 52 & 0x7ff);
	uint64_t c = biased ? fraction | UINT64_C(1) << 52 : fraction;
	int e = (biased ? biased : 1) - 1075 - 2;
	bool closer_below = fraction == 0 && biased > 1;
	bool ends_read_back = (c & 1) == 0;
	/* 10^k ≤ 2^e/10 (2^e/100 next to a power of two): the interval spans at
	 * least 39 units (299), so one digit (two) always goes, and all three
	 * scaled values stay below 2^64 */
	int k = floor_log10_pow2(e) - (closer_below ? 2 : 1);
	Scaled low = scale(4 * c - (closer_below ? 1 : 2), e, k, check_exactly);
	Scaled middle = scale(4 * c, e, k, check_exactly);
	Scaled high = scale(4 * c + 2, e, k, check_exactly);

	/* the interval's ends rounded down; hi the largest integer that reads back */
	uint64_t lo = low.floor, hi = high.floor;
	if (high.exact && !ends_read_back)
		hi--;
	bool lo_zero = low.exact; /* lo is exactly the end (with the digits removed) */
	Truncated v = {middle.floor, 0, middle.exact}, finer = v; /* finer: one digit more */
	int removed = 0;
	while (hi / 10 > lo / 10) { /* a shorter number above lo fits */
		finer = v;
		lo_zero &= lo % 10 == 0;
		remove_digit(&v);
		hi /= 10;
		lo /= 10;
		removed++;
	}
	bool lo_fits = lo_zero && ends_read_back;
	if (lo_fits)
		while (lo % 10 == 0) { /* the end itself, shorter */
			remove_digit(&v);
			hi /= 10;
			lo /= 10;
			removed++;
		}
	uint64_t digits = rounded(&v);
	if (digits == lo && !lo_fits) { /* the nearest does not read back (only next to a power of two) */
		digits = rounded(&finer);
		removed--;
	}
	return (ClDecimal){digits, k + removed};
}

ClDecimal cl_decimal_shortest(double x)
{
	return shortest(x, false);
}

ClDecimal cl_decimal_shortest_exact(double x)
{
	return shortest(x, true);
}
