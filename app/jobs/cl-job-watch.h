/* The bookkeeping of the one background job a view runs at a time: its
 * cancellable, the timer that shows its progress, and a hold on the default
 * GApplication (if any), so that closing the last window while a job runs
 * ends the app only once the cancelled job has stopped and called back.
 * Starting a job stops the previous one (cancels it, removes its timer,
 * releases its hold), so a superseded job never leaves a timer ticking or a
 * cancellable behind. The finish callback of the current job calls
 * cl_job_watch_finish; one of a superseded job must not. No GTK, so it is
 * tested without a display. */
#pragma once

#include <gio/gio.h>

typedef struct {
	GCancellable *cancellable;
	guint tick_source;
	GApplication *held;
} ClJobWatch;

/* Stops the previous job, then returns the new job's cancellable (owned by
 * the watch) and calls tick(data) every interval_ms until the job finishes. */
GCancellable *cl_job_watch_start(ClJobWatch *watch, guint interval_ms, GSourceFunc tick, gpointer data);
/* Asks the current job to stop; its timer runs until it has finished. */
void cl_job_watch_cancel(ClJobWatch *watch);
/* The current job has finished: drops its cancellable, its timer and its hold. */
void cl_job_watch_finish(ClJobWatch *watch);
/* Cancel and finish at once (for dispose). */
void cl_job_watch_clear(ClJobWatch *watch);
