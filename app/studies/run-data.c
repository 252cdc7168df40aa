#include "run-data.h"

#include "gradient-data.h"
#include "numbers.h"

#include <gio/gio.h>
#include <math.h>
#include <string.h>

/* Checkpoints of the perturbation tangent d s_n / dθ: each needs a rollout
 * of n steps, so the cost is about this many / 2 full rollouts. */
#define TANGENT_CHECKPOINTS 48

ClRunData *cl_run_data_new(const ClScene *scene, const int *backends, int backend_count, const ClParam *columns,
						   int column_count)
{
	(void)scene;
	ClRunData *data = g_new0(ClRunData, 1);
	g_mutex_init(&data->lock);
	data->ref_count = 1;
	data->column_count = column_count;
	data->columns = g_memdup2(columns, sizeof *columns * (gsize)MAX(column_count, 1));
	data->backend_count = backend_count;
	data->backends = g_new0(ClRunBackend, (gsize)MAX(backend_count, 1));
	for (int b = 0; b < backend_count; b++) {
		data->backends[b].backend = backends[b];
		data->backends[b].row = (ClGradientRow){.backend = backends[b], .loss = NAN};
	}
	return data;
}

static void backend_clear(ClRunBackend *r)
{
	cl_gradient_row_clear(&r->row);
	g_free(r->states);
	g_free(r->events);
	g_free(r->plus_states);
	g_free(r->minus_states);
	g_free(r->tangent_steps);
	g_free(r->tangents);
}

ClRunData *cl_run_data_ref(ClRunData *data)
{
	g_atomic_int_inc(&data->ref_count);
	return data;
}

void cl_run_data_unref(ClRunData *data)
{
	if (!data || !g_atomic_int_dec_and_test(&data->ref_count))
		return;
	for (int b = 0; b < data->backend_count; b++)
		backend_clear(&data->backends[b]);
	g_free(data->backends);
	g_free(data->columns);
	g_free(data->fd_order);
	g_mutex_clear(&data->lock);
	g_free(data);
}

void cl_run_data_compute_backend(ClRunData *data, const ClScene *scene, int slot)
{
	ClRunBackend *r = &data->backends[slot];
	gsize ns = (gsize)cl_state_size(scene);
	ClRollout *rollout = cl_rollout_new(scene, r->backend);
	/* elasticity, a wall's angle, …: their adjoints need the run's parameter columns */
	cl_rollout_record_params(rollout, cl_gradient_wants_param_columns(r->backend, data->columns, data->column_count));
	/* without columns (trajectories only) no Jacobians are needed */
	cl_rollout_run(rollout, NULL, NULL, data->column_count > 0);
	r->steps_done = cl_rollout_steps_done(rollout);
	r->states = g_memdup2(cl_rollout_states(rollout), sizeof(double) * (gsize)(r->steps_done + 1) * ns);
	r->event_count = cl_rollout_event_count(rollout);
	r->events = g_memdup2(cl_rollout_events(rollout), sizeof(ClContactEvent) * (gsize)MAX(r->event_count, 1));
	cl_gradient_row_clear(&r->row);
	cl_gradient_row_from_rollout(&r->row, rollout, data->columns, data->column_count);
	cl_rollout_free(rollout);
}

/* The states of a run at every step, NAN after it stopped. */
static double *simulate(const ClScene *scene, int backend, ClStatus *status)
{
	gsize ns = (gsize)cl_state_size(scene), count = (gsize)(scene->steps + 1) * ns;
	double *states = g_new(double, count);
	ClRollout *rollout = cl_rollout_new(scene, backend);
	cl_rollout_run(rollout, NULL, NULL, false);
	*status = *cl_rollout_status(rollout);
	gsize done = (gsize)(cl_rollout_steps_done(rollout) + 1) * ns;
	memcpy(states, cl_rollout_states(rollout), sizeof *states * done);
	for (gsize i = done; i < count; i++)
		states[i] = NAN;
	cl_rollout_free(rollout);
	return states;
}

/* The same scene cut after its first n steps (same dt, same controls). */
static ClScene *truncated(const ClScene *scene, int n)
{
	ClScene *copy = cl_scene_copy(scene);
	copy->duration = scene->duration * n / scene->steps;
	copy->steps = n;
	return copy;
}

/* The parameter's direction in (s0, u): a unit vector in its slot, zero
 * for a physical parameter (elasticity, a wall's angle, …). */
static void direction_of(const ClScene *scene, const ClParam *param, double *ds0, double *du)
{
	memset(ds0, 0, sizeof *ds0 * (gsize)cl_state_size(scene));
	memset(du, 0, sizeof *du * (gsize)cl_control_size(scene));
	if (cl_param_has_adjoint(param))
		*cl_param_slot(scene, param, ds0, du) = 1;
}

gboolean cl_run_data_set_perturbation(ClRunData *data, const ClScene *scene, const char *parameter, double delta,
									  GError **error)
{
	char message[CL_MESSAGE_MAX];
	if (!cl_param_parse(scene, parameter, &data->perturb_param, message, sizeof message)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", parameter, message);
		return FALSE;
	}
	data->has_perturbation = TRUE;
	data->perturb_delta = delta;
	return TRUE;
}

void cl_run_data_compute_perturbation(ClRunData *data, const ClScene *scene, int slot, const _Atomic int *cancel)
{
	ClRunBackend *r = &data->backends[slot];
	const ClParam *param = &data->perturb_param;
	int ns = cl_state_size(scene);
	double theta = cl_param_get(scene, param);
	ClScene *moved = cl_scene_copy(scene);
	cl_param_set(moved, param, theta + data->perturb_delta);
	r->plus_states = simulate(moved, r->backend, &r->plus_status);
	cl_param_set(moved, param, theta - data->perturb_delta);
	r->minus_states = simulate(moved, r->backend, &r->minus_status);
	cl_scene_free(moved);

	int count = MIN(TANGENT_CHECKPOINTS, scene->steps);
	r->tangent_steps = g_new(int, count + 1);
	r->tangents = g_new0(double, (gsize)(count + 1) * (gsize)ns);
	/* at n = 0 the tangent is the direction itself (zero for a control) */
	double *du = g_new(double, (gsize)cl_control_size(scene) + 1);
	direction_of(scene, param, r->tangents, du);
	g_free(du);
	r->tangent_steps[0] = 0;
	r->tangent_count = 1;
	for (int k = 1; k <= count && !(cancel && *cancel); k++) {
		int n = (int)((long long)scene->steps * k / count);
		ClScene *cut = truncated(scene, n);
		double *ds0 = g_new(double, (gsize)ns), *cut_du = g_new(double, (gsize)cl_control_size(cut) + 1);
		direction_of(cut, param, ds0, cut_du);
		ClRollout *rollout = cl_rollout_new(cut, r->backend);
		double *out = r->tangents + (gsize)r->tangent_count * (gsize)ns;
		/* a warning (grazing, …) still simulates every step and has a tangent;
		 * a physical parameter has one where the backend differentiates it */
		gboolean state = cl_param_has_adjoint(param);
		cl_rollout_record_params(rollout, !state);
		cl_rollout_run(rollout, NULL, NULL, true);
		if (state && cl_rollout_steps_done(rollout) == n)
			cl_rollout_jvp(rollout, ds0, cut_du, out);
		else if (state || !cl_rollout_param_tangent(rollout, param, out))
			for (int i = 0; i < ns; i++)
				out[i] = NAN;
		else if (param->target == CL_PARAM_DURATION)
			/* the first n steps last T·n/N: d/dT = (n/N)·d/d(their duration) */
			for (int i = 0; i < ns; i++)
				out[i] *= (double)n / scene->steps;
		r->tangent_steps[r->tangent_count++] = n;
		cl_rollout_free(rollout);
		g_free(ds0);
		g_free(cut_du);
		cl_scene_free(cut);
	}
}

void cl_run_data_plan_fd(ClRunData *data, const ClScene *scene, ClFdChoice fd, const int *first, int first_count)
{
	int columns = data->column_count;
	gboolean *early = g_new0(gboolean, (gsize)MAX(columns, 1));
	for (int i = 0; i < first_count; i++)
		if (first[i] >= 0 && first[i] < columns)
			early[first[i]] = TRUE;
	g_free(data->fd_order);
	data->fd_order = g_new(int, (gsize)MAX(columns * data->backend_count, 1));
	data->fd_total = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < columns; k++) {
			if (early[k] != (pass == 0) || !cl_fd_choice_wants(fd, scene, data->columns, columns, k))
				continue;
			for (int b = 0; b < data->backend_count; b++)
				data->fd_order[data->fd_total++] = b * columns + k;
		}
	g_free(early);
}

void cl_run_data_compute_fd(ClRunData *data, const ClScene *scene, int i)
{
	int slot = data->fd_order[i] / data->column_count, column = data->fd_order[i] % data->column_count;
	/* on a copy: a reader copies cells under the lock while this runs */
	ClRunBackend *r = &data->backends[slot];
	ClGradientRow row = r->row;
	ClGradientCell cell = r->row.cells[column];
	row.cells = &cell;
	ClParam param = data->columns[column];
	cl_gradient_row_take_fd(&row, scene, &param, 0);
	g_mutex_lock(&data->lock);
	r->row.cells[column] = cell;
	g_mutex_unlock(&data->lock);
	g_atomic_int_inc(&data->fd_done);
}

gboolean cl_run_data_ready(const ClRunData *data)
{
	return g_atomic_int_get(&data->ready);
}

void cl_run_data_set_ready(ClRunData *data)
{
	g_atomic_int_set(&data->ready, 1);
}

ClGradientCell cl_run_data_cell(ClRunData *data, int slot, int column)
{
	g_mutex_lock(&data->lock);
	ClGradientCell cell = data->backends[slot].row.cells[column];
	g_mutex_unlock(&data->lock);
	return cell;
}

int cl_run_data_fd_done(const ClRunData *data)
{
	return g_atomic_int_get(&data->fd_done);
}

int cl_run_data_slot(const ClRunData *data, int backend)
{
	for (int b = 0; data && b < data->backend_count; b++)
		if (data->backends[b].backend == backend)
			return b;
	return -1;
}

int cl_run_data_reference_slot(const ClRunData *data)
{
	int slot = cl_run_data_slot(data, cl_backend_reference());
	return slot >= 0 && data->backends[slot].row.complete ? slot : -1;
}

gboolean cl_run_data_position(const ClRunData *data, const ClScene *scene, int slot, int ball, double t, double *x,
							  double *y)
{
	const ClRunBackend *r = &data->backends[slot];
	double f = fmax(0.0, t / cl_scene_dt(scene));
	int n = (int)floor(f);
	if (n >= r->steps_done) {
		if (r->steps_done < scene->steps)
			return FALSE; /* the run stopped before t */
		n = r->steps_done;
		f = n;
	}
	gsize ns = (gsize)cl_state_size(scene);
	const double *a = r->states + (gsize)n * ns + CL_BALL_STATE * (gsize)ball;
	const double *b = n < r->steps_done ? a + ns : a;
	double w = f - n;
	*x = a[0] + w * (b[0] - a[0]);
	*y = a[1] + w * (b[1] - a[1]);
	return isfinite(*x) && isfinite(*y);
}

GString *cl_run_data_gradient_csv(ClRunData *data, const ClScene *scene)
{
	ClGradientRow *rows = g_new(ClGradientRow, (gsize)MAX(data->backend_count, 1));
	g_mutex_lock(&data->lock);
	for (int b = 0; b < data->backend_count; b++)
		rows[b] = data->backends[b].row;
	GString *out = g_string_new(NULL);
	cl_gradient_csv_append(out, scene, data->columns, rows, data->backend_count);
	g_mutex_unlock(&data->lock);
	g_free(rows);
	return out;
}

/* Steps of a perturbed run: its states are NAN after it stopped. */
static int perturbed_steps(const double *states, const ClScene *scene)
{
	gsize ns = (gsize)cl_state_size(scene);
	int n = 0;
	while (n < scene->steps && !isnan(states[(gsize)(n + 1) * ns]))
		n++;
	return n;
}

GString *cl_run_data_perturbation_csv(const ClRunData *data, const ClScene *scene)
{
	GString *out = g_string_new("backend,offset,step,time,ball,x,y\n");
	if (!data->has_perturbation)
		return out;
	gsize ns = (gsize)cl_state_size(scene);
	double dt = cl_scene_dt(scene);
	for (int b = 0; b < data->backend_count; b++) {
		const ClRunBackend *r = &data->backends[b];
		if (!r->plus_states)
			continue; /* cancelled before its study */
		const char *id = cl_backend_info(r->backend)->id;
		const double *runs[3] = {r->minus_states, r->states, r->plus_states};
		int steps[3] = {perturbed_steps(r->minus_states, scene), r->steps_done, perturbed_steps(r->plus_states, scene)};
		for (int k = 0; k < 3; k++)
			for (int n = 0; n <= steps[k]; n++)
				for (int i = 0; i < scene->ball_count; i++) {
					const double *p = runs[k] + (gsize)n * ns + CL_BALL_STATE * (gsize)i;
					g_string_append_printf(out, "%s,%d,%d,%s,%s,", id, k - 1, n, cl_format_number(n * dt).text,
										   scene->balls[i].id);
					g_string_append_printf(out, "%s,", cl_format_number(p[0]).text);
					g_string_append_printf(out, "%s\n", cl_format_number(p[1]).text);
				}
	}
	return out;
}
