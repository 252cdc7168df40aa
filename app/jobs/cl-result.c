#include "cl-result.h"

struct ClResult {
	gatomicrefcount ref;
	ClResultKind kind;
	ClScene *scene;
	guint revision;
	gpointer payload;
	GDestroyNotify payload_free;
	ClResult *owner; /* a restamped result: the one that owns payload */
};

ClResult *cl_result_new(ClResultKind kind, const ClScene *scene, guint revision, gpointer payload,
						GDestroyNotify payload_free)
{
	ClResult *result = g_new0(ClResult, 1);
	g_atomic_ref_count_init(&result->ref);
	result->kind = kind;
	result->scene = cl_scene_copy(scene);
	result->revision = revision;
	result->payload = payload;
	result->payload_free = payload_free;
	return result;
}

ClResult *cl_result_ref(ClResult *result)
{
	g_atomic_ref_count_inc(&result->ref);
	return result;
}

void cl_result_unref(ClResult *result)
{
	if (!result || !g_atomic_ref_count_dec(&result->ref))
		return;
	if (result->payload_free)
		result->payload_free(result->payload);
	if (result->owner)
		cl_result_unref(result->owner);
	cl_scene_free(result->scene);
	g_free(result);
}

ClResult *cl_result_restamp(ClResult *result, const ClScene *scene, guint revision)
{
	ClResult *copy = cl_result_new(result->kind, scene, revision, result->payload, NULL);
	copy->owner = cl_result_ref(result); /* which keeps the payload */
	return copy;
}

ClResultKind cl_result_kind(const ClResult *result)
{
	return result->kind;
}

const char *cl_result_kind_name(ClResultKind kind)
{
	static const char *const names[CL_RESULT_KIND_COUNT] = {
		[CL_RESULT_RUN] = "run",
		[CL_RESULT_HEATMAP] = "heatmap",
		[CL_RESULT_LEARNING] = "learning",
		[CL_RESULT_CONVERGENCE] = "convergence",
		[CL_RESULT_SMOOTHING] = "smoothing",
	};
	return kind < CL_RESULT_KIND_COUNT ? names[kind] : "unknown";
}

const ClScene *cl_result_scene(const ClResult *result)
{
	return result->scene;
}

guint cl_result_revision(const ClResult *result)
{
	return result->revision;
}

gpointer cl_result_payload(const ClResult *result)
{
	return result->payload;
}
