/* The one kind of background computation: a function run in a worker thread
 * on data the job owns, cancellable, with a progress fraction any thread may
 * set and read, and a "progress" signal on the main context while it runs.
 * A running job holds the default GApplication, so quitting waits for a
 * cancelled job's callback instead of exiting under a running worker.
 * Worker threads come from one budget shared by every job of the process:
 * concurrent jobs together never ask for more threads than there are cores
 * (each gets at least one). No GTK, so it is tested without a display. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define CL_TYPE_JOB (cl_job_get_type())
G_DECLARE_FINAL_TYPE(ClJob, cl_job, CL, JOB, GObject)

/* Runs in the worker thread; returns FALSE with error set on failure
 * (G_IO_ERROR_CANCELLED when it stopped because it was cancelled). */
typedef gboolean (*ClJobFunc)(ClJob *job, gpointer data, GError **error);

/* threads_wanted: how many threads func would use at most (≥ 1). */
ClJob *cl_job_new(int threads_wanted, ClJobFunc func, gpointer data, GDestroyNotify data_free);
gpointer cl_job_get_data(ClJob *job);

/* For func: the threads granted from the budget (≥ 1; valid while it runs),
 * the cancellation as a flag sim's defs can poll, and the progress. */
int cl_job_threads(ClJob *job);
const _Atomic int *cl_job_cancel_flag(ClJob *job);
gboolean cl_job_is_cancelled(ClJob *job);
void cl_job_set_progress(ClJob *job, double fraction);
double cl_job_get_progress(ClJob *job);

/* For func: calls item(i, data) for every i in [0, count) on the job's
 * threads (the calling one included), each i once; stops handing out items
 * once the job is cancelled. */
void cl_job_parallel(ClJob *job, int count, void (*item)(int index, gpointer data), gpointer data);

/* Starts func in a worker thread; callback runs on the caller's main context
 * when it has returned (also after a cancel). */
void cl_job_run_async(ClJob *job, GAsyncReadyCallback callback, gpointer user_data);
gboolean cl_job_finish(ClJob *job, GAsyncResult *result, GError **error);
/* The same in the calling thread (the CLI, tests). */
gboolean cl_job_run(ClJob *job, GError **error);
gboolean cl_job_is_running(ClJob *job);
/* Asks func to stop; its callback still comes. */
void cl_job_cancel(ClJob *job);

/* Cancels the job in *slot (if any) and puts job there (a new reference, or
 * NULL): a view's "the one job I run", whose superseded callbacks it
 * recognises by job != *slot. */
void cl_job_replace(ClJob **slot, ClJob *job);

/* The budget: every core of the machine, or limit (≥ 1) for tests. */
void cl_job_set_thread_limit(int limit);
int cl_job_threads_in_use(void);

G_END_DECLS
