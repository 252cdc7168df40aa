#include "agreement.h"

#include <math.h>

ClAgreement cl_agreement(double value, double reference, double *relative_error)
{
	if (relative_error)
		*relative_error = NAN;
	if (!isfinite(value) || !isfinite(reference))
		return CL_AGREEMENT_UNKNOWN;
	double error = fabs(value - reference) / fmax(fabs(reference), CL_AGREEMENT_ZERO);
	if (fabs(reference) < CL_AGREEMENT_ZERO && fabs(value) < CL_AGREEMENT_ZERO)
		error = 0;
	if (relative_error)
		*relative_error = error;
	if (fabs(value) >= CL_AGREEMENT_ZERO && fabs(reference) >= CL_AGREEMENT_ZERO && (value > 0) != (reference > 0))
		return CL_AGREEMENT_WRONG_SIGN;
	return error < 1e-3 ? CL_AGREEMENT_GOOD : error < 0.1 ? CL_AGREEMENT_FAIR : CL_AGREEMENT_POOR;
}

typedef struct {
	const char *name, *label, *sentence;
	ClPlotColor background, foreground;
} Kind;

/* Backgrounds light enough that the dark text on them passes WCAG AA (4.5:1)
 * whatever the theme: a cell carries its own colours. */
static const Kind kinds[CL_AGREEMENT_COUNT] = {
	[CL_AGREEMENT_REFERENCE] = {"reference", "reference", "the reference (exact event-driven gradient)",
								{0.84, 0.90, 0.98, 1}, {0.07, 0.07, 0.07, 1}},
	[CL_AGREEMENT_GOOD] = {"good", "agrees (< 0.1 %)", "agrees with exact (relative error below 0.1 %)",
						   {0.843, 0.941, 0.843, 1}, {0.07, 0.07, 0.07, 1}},
	[CL_AGREEMENT_FAIR] = {"fair", "< 10 %", "close to exact (relative error below 10 %)", {0.988, 0.937, 0.761, 1},
						   {0.07, 0.07, 0.07, 1}},
	[CL_AGREEMENT_POOR] = {"poor", "≥ 10 %", "same sign as exact, but off by 10 % or more", {0.984, 0.827, 0.690, 1},
						   {0.07, 0.07, 0.07, 1}},
	[CL_AGREEMENT_WRONG_SIGN] = {"wrong-sign", "wrong sign",
								 "WRONG SIGN: a descent step along it goes uphill under the true dynamics",
								 {0.965, 0.698, 0.710, 1}, {0.36, 0.04, 0.06, 1}},
	[CL_AGREEMENT_UNKNOWN] = {"unknown", "no reference", "cannot be compared (no exact value, or not finite)",
							  {0.90, 0.90, 0.90, 1}, {0.25, 0.25, 0.25, 1}},
};

static const Kind *kind(ClAgreement a)
{
	return &kinds[a >= 0 && a < CL_AGREEMENT_COUNT ? a : CL_AGREEMENT_UNKNOWN];
}

const char *cl_agreement_name(ClAgreement a)
{
	return kind(a)->name;
}

const char *cl_agreement_label(ClAgreement a)
{
	return kind(a)->label;
}

const char *cl_agreement_sentence(ClAgreement a)
{
	return kind(a)->sentence;
}

ClPlotColor cl_agreement_background(ClAgreement a)
{
	return kind(a)->background;
}

ClPlotColor cl_agreement_foreground(ClAgreement a)
{
	return kind(a)->foreground;
}
