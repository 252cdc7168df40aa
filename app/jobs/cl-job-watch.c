#include "cl-job-watch.h"

GCancellable *cl_job_watch_start(ClJobWatch *watch, guint interval_ms, GSourceFunc tick, gpointer data)
{
	cl_job_watch_clear(watch);
	watch->cancellable = g_cancellable_new();
	watch->tick_source = g_timeout_add(interval_ms, tick, data);
	watch->held = g_application_get_default();
	if (watch->held)
		g_application_hold(g_object_ref(watch->held));
	return watch->cancellable;
}

void cl_job_watch_cancel(ClJobWatch *watch)
{
	if (watch->cancellable)
		g_cancellable_cancel(watch->cancellable);
}

void cl_job_watch_finish(ClJobWatch *watch)
{
	g_clear_object(&watch->cancellable);
	g_clear_handle_id(&watch->tick_source, g_source_remove);
	if (watch->held) {
		g_application_release(watch->held);
		g_clear_object(&watch->held);
	}
}

void cl_job_watch_clear(ClJobWatch *watch)
{
	cl_job_watch_cancel(watch);
	cl_job_watch_finish(watch);
}
