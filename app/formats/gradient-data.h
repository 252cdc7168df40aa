/* The gradient dataset (per backend: status, loss, adjoint and FD of each
 * parameter) as CSV and JSON: one writer, for `contactlab gradients`, the
 * Gradients view's Copy CSV and every export of it. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

/* The gradient table's columns: every ball's initial state and first
 * control (CL_PARAMS_TABLE), then each name of extra (NULL-terminated, may
 * be NULL) in the order given — `contactlab gradients --param` and the
 * window's "Add parameter" columns. NULL with an error ("NAME: why") when a
 * name does not parse, is a default column or is given twice; free() it. */
ClParam *cl_gradient_columns_new(const ClScene *scene, const char *const *extra, int *count, GError **error);

/* backend,parameter,value: per backend a status row (its text), the loss,
 * each parameter's adjoint, then fd:PARAMETER for each difference asked for. */
void cl_gradient_csv_append(GString *out, const ClScene *scene, const ClParam *params, const ClGradientRow *rows,
							int row_count);
/* { "scene", "steps", "backends": [{ backend, status, message, loss,
 * gradient: { NAME: { value, fd, fd_step } } }] }, null for a number that
 * does not exist (fd and fd_step when no difference was asked for). */
void cl_gradient_json_append(GString *out, const ClScene *scene, const ClParam *params, const ClGradientRow *rows,
							 int row_count);
