/* The backend table: the CLI, the scene files and the UI are generated from it. */
#include "core.h"

#include <stdio.h>
#include <string.h>

const char *const cl_precision_choices[] = {"float32", "float64", NULL};

static const ClBackend *const backends[] = {
	&cl_backend_exact,
	&cl_backend_lcp_nimble,
	&cl_backend_convex_toi,
	&cl_backend_convex,
	&cl_backend_impulse_toi,
	&cl_backend_impulse,
	&cl_backend_impulse_tds,
	&cl_backend_compliant_warp,
	&cl_backend_compliant_brax,
	&cl_backend_pbd_warp,
	&cl_backend_pbd_brax,
	&cl_backend_ncp_dojo,
};

int cl_backend_count(void)
{
	return (int)(sizeof backends / sizeof backends[0]);
}

int cl_backend_reference(void)
{
	for (int i = 0; i < cl_backend_count(); i++)
		if (backends[i]->info.reference)
			return i;
	return -1;
}

bool cl_backend_is_reference(int backend)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	return info && info->reference;
}

bool cl_backend_can_run(int backend, const ClScene *scene, char *why, size_t size)
{
	const ClBackend *impl = cl_backend_get(backend);
	if (why && size)
		why[0] = '\0';
	return !impl || !impl->can_run || impl->can_run(scene, why, size);
}

int cl_backend_precision_param(int backend)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	for (int i = 0; info && i < info->param_count; i++)
		if (info->params[i].choices == cl_precision_choices)
			return i;
	return -1;
}

bool cl_backend_is_float32(const ClScene *scene, int backend)
{
	int k = cl_backend_precision_param(backend);
	return k >= 0 && scene->backend_params[backend].values[k] == CL_PRECISION_FLOAT32;
}

const ClBackend *cl_backend_get(int backend)
{
	return backend >= 0 && backend < cl_backend_count() ? backends[backend] : NULL;
}

const ClBackendInfo *cl_backend_info(int backend)
{
	const ClBackend *b = cl_backend_get(backend);
	return b ? &b->info : NULL;
}

int cl_backend_find(const char *id)
{
	for (int i = 0; i < cl_backend_count(); i++)
		if (strcmp(backends[i]->info.id, id) == 0)
			return i;
	return -1;
}

int cl_backend_param_find(int backend, const char *name)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	if (!info)
		return -1;
	for (int i = 0; i < info->param_count; i++)
		if (strcmp(info->params[i].name, name) == 0)
			return i;
	return -1;
}

double cl_scene_backend_param(const ClScene *scene, int backend, const char *name)
{
	int index = cl_backend_param_find(backend, name);
	return index >= 0 ? scene->backend_params[backend].values[index] : NAN;
}

bool cl_scene_set_backend_param(ClScene *scene, int backend, const char *name, double value, char *message,
								size_t size)
{
	const ClBackendInfo *info = cl_backend_info(backend);
	int index = cl_backend_param_find(backend, name);
	if (index < 0) {
		if (message)
			snprintf(message, size, "backend \"%s\" has no parameter \"%s\"", info ? info->id : "?", name);
		return false;
	}
	const ClParamDesc *d = &info->params[index];
	if (!(isfinite(value) && value >= d->min && value <= d->max) ||
		(d->kind != CL_PARAM_KIND_REAL && value != floor(value))) {
		if (message)
			snprintf(message, size, "%s.%s: %g is outside [%g, %g]%s", info->id, name, value, d->min, d->max,
					 d->kind != CL_PARAM_KIND_REAL ? " or not a whole number" : "");
		return false;
	}
	scene->backend_params[backend].values[index] = value;
	return true;
}

const char *cl_status_name(ClStatusCode code)
{
	static const char *const names[CL_STATUS_COUNT] = {
		[CL_STATUS_OK] = "ok",
		[CL_STATUS_GRAZING] = "grazing",
		[CL_STATUS_SIMULTANEOUS] = "simultaneous-impacts",
		[CL_STATUS_ZENO] = "zeno",
		[CL_STATUS_IN_CONTACT] = "starts-in-contact",
		[CL_STATUS_DIVERGED] = "diverged",
		[CL_STATUS_NOT_FINITE] = "not-finite",
		[CL_STATUS_SOLVER_FAILED] = "solver-failed",
		[CL_STATUS_UNSUPPORTED] = "unsupported",
		[CL_STATUS_IMPACT_LIMIT] = "impact-limit",
		[CL_STATUS_MEMORY_LIMIT] = "memory-limit",
		[CL_STATUS_CANCELLED] = "cancelled",
	};
	return code >= 0 && code < CL_STATUS_COUNT ? names[code] : "unknown";
}
