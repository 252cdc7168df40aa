/* Gradient rows: a backend's loss, its adjoint of each parameter and the
 * central difference of its own forward map beside it. The CLI, the
 * window's table, lessons and reproduce all read their numbers from here. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double cl_fd_step(const ClScene *scene, int backend, const ClParam *param)
{
	double base = cl_backend_is_float32(scene, backend) ? 1e-4 : 1e-6;
	if (param->target == CL_PARAM_CONTROL)
		base /= cl_scene_dt(scene);
	return base * fmax(1.0, fabs(cl_param_get(scene, param)));
}

static const char *const fd_choice_names[CL_FD_CHOICE_COUNT] = {
	[CL_FD_NONE] = "none",
	[CL_FD_AUTO] = "auto",
	[CL_FD_ALL] = "all",
};

const char *cl_fd_choice_name(ClFdChoice choice)
{
	return choice >= 0 && choice < CL_FD_CHOICE_COUNT ? fd_choice_names[choice] : "unknown";
}

int cl_fd_choice_find(const char *name)
{
	for (int i = 0; i < CL_FD_CHOICE_COUNT; i++)
		if (strcmp(fd_choice_names[i], name) == 0)
			return i;
	return -1;
}

bool cl_fd_choice_wants(ClFdChoice choice, const ClScene *scene, const ClParam *params, int count, int k)
{
	switch (choice) {
	case CL_FD_ALL:
		return true;
	case CL_FD_AUTO:
		/* a hundred balls give 600 columns, 1 200 rollouts: only the balls in
		 * the loss or actuated are differenced, the rest on request */
		return count <= CL_FD_AUTO_ALL || params[k].ball < 0 || cl_scene_ball_matters(scene, params[k].ball);
	default:
		return false;
	}
}

/* A row of NAN cells for a run that did not take place (status says why). */
static void row_without_run(ClGradientRow *row, int backend, const ClStatus *status, int count)
{
	*row = (ClGradientRow){
		.backend = backend,
		.status = *status,
		.loss = NAN,
		.count = count,
		.cells = cl_calloc((size_t)count, sizeof(ClGradientCell)),
	};
	if (!row->cells)
		row->count = 0;
	for (int k = 0; k < row->count; k++)
		row->cells[k] = (ClGradientCell){.adjoint = NAN, .fd = NAN, .fd_step = 0, .fd_status = CL_STATUS_OK};
}

static const ClStatus out_of_memory = {.code = CL_STATUS_MEMORY_LIMIT, .step = -1, .message = "out of memory"};

void cl_gradient_row_from_rollout(ClGradientRow *row, const ClRollout *rollout, const ClParam *params, int count)
{
	const ClScene *scene = cl_rollout_scene(rollout);
	row_without_run(row, cl_rollout_backend(rollout), cl_rollout_status(rollout), count);
	/* a warning (grazing, …) keeps every step: its gradient exists and is flagged */
	row->complete = row->cells && cl_rollout_steps_done(rollout) == scene->steps;
	if (!row->complete)
		return;
	row->loss = cl_rollout_loss(rollout);
	double *g_s0 = cl_calloc((size_t)cl_state_size(scene), sizeof(double));
	double *g_u = cl_calloc((size_t)cl_control_size(scene), sizeof(double));
	if (!g_s0 || !g_u) {
		free(g_s0);
		free(g_u);
		row->status = out_of_memory;
		row->complete = false;
		return;
	}
	cl_rollout_gradient(rollout, g_s0, g_u);
	bool physical = false;
	for (int k = 0; k < count; k++)
		if (cl_param_has_adjoint(&params[k]))
			row->cells[k].adjoint = *cl_param_slot(scene, &params[k], g_s0, g_u);
		else
			physical |= cl_backend_has_param_adjoint(row->backend, &params[k]);
	free(g_s0);
	free(g_u);
	if (!physical)
		return;
	/* elasticity, radii, walls, …: from the run's parameter columns */
	double *d = cl_calloc((size_t)count, sizeof(double));
	if (!d) {
		row->status = out_of_memory;
		row->complete = false;
		return;
	}
	cl_rollout_param_gradient(rollout, params, count, d);
	for (int k = 0; k < count; k++)
		if (!cl_param_has_adjoint(&params[k]))
			row->cells[k].adjoint = d[k];
	free(d);
}

bool cl_gradient_wants_param_columns(int backend, const ClParam *params, int count)
{
	for (int k = 0; k < count; k++)
		if (!cl_param_has_adjoint(&params[k]) && cl_backend_has_param_adjoint(backend, &params[k]))
			return true;
	return false;
}

void cl_gradient_row_take_fd(ClGradientRow *row, const ClScene *scene, const ClParam *params, int k)
{
	ClGradientCell *cell = &row->cells[k];
	cell->fd_step = cl_fd_step(scene, row->backend, &params[k]);
	/* a run that stopped has no loss to difference: asked for, but NAN */
	if (!row->complete)
		return;
	ClStatus status;
	cell->fd = cl_finite_difference(scene, row->backend, &params[k], cell->fd_step, &status);
	cell->fd_status = status.code;
}

void cl_gradient_row_compute(ClGradientRow *row, const ClScene *scene, int backend, const ClParam *params, int count,
							 ClFdChoice fd)
{
	/* the recorded run and its gradient, known to fit before either is allocated */
	size_t gradient_bytes = sizeof(double) * ((size_t)cl_state_size(scene) + (size_t)cl_control_size(scene));
	char what[96];
	snprintf(what, sizeof what, "the gradient of a run of %d steps × %d balls", scene->steps, scene->ball_count);
	ClStatus too_large;
	if (!cl_memory_fits(scene, cl_rollout_bytes(scene, backend, true) + gradient_bytes, what, &too_large)) {
		row_without_run(row, backend, &too_large, count);
		return;
	}
	ClRollout *rollout = cl_rollout_new(scene, backend);
	if (!rollout) {
		row_without_run(row, backend, &out_of_memory, count);
		return;
	}
	cl_rollout_record_params(rollout, cl_gradient_wants_param_columns(backend, params, count));
	cl_rollout_run(rollout, NULL, NULL, true);
	cl_gradient_row_from_rollout(row, rollout, params, count);
	cl_rollout_free(rollout);
	for (int k = 0; k < count; k++)
		if (cl_fd_choice_wants(fd, scene, params, count, k))
			cl_gradient_row_take_fd(row, scene, params, k);
}

void cl_gradient_row_clear(ClGradientRow *row)
{
	free(row->cells);
	*row = (ClGradientRow){.backend = -1};
}
