/* How a backend's derivative compares with the reference's: one rule and one
 * set of colours and words, for the Gradients view, its legend, tooltips,
 * lesson handouts and their legend. */
#pragma once

#include "plot.h"

#include <stdbool.h>

typedef enum ClAgreement {
	CL_AGREEMENT_REFERENCE,  /* the reference's own value */
	CL_AGREEMENT_GOOD,       /* relative error below 0.1 % */
	CL_AGREEMENT_FAIR,       /* below 10 % */
	CL_AGREEMENT_POOR,       /* same sign, 10 % or more off */
	CL_AGREEMENT_WRONG_SIGN, /* the opposite sign */
	CL_AGREEMENT_UNKNOWN,    /* no reference value, or not finite */
	CL_AGREEMENT_COUNT
} ClAgreement;

/* Below this both values count as zero: rounding, not a derivative. */
#define CL_AGREEMENT_ZERO 1e-9

/* relative_error: |value − reference| / |reference| (NULL to skip; NAN when unknown). */
ClAgreement cl_agreement(double value, double reference, double *relative_error);
/* "good", "wrong-sign", …: a CSS class name. */
const char *cl_agreement_name(ClAgreement agreement);
/* A short legend label ("< 0.1 %", "wrong sign") and a sentence for tooltips. */
const char *cl_agreement_label(ClAgreement agreement);
const char *cl_agreement_sentence(ClAgreement agreement);
/* The cell's background and text colours (readable in light and dark). */
ClPlotColor cl_agreement_background(ClAgreement agreement);
ClPlotColor cl_agreement_foreground(ClAgreement agreement);
