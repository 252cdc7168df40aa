#define _GNU_SOURCE /* gettid */
#include "cl-job.h"

#include <stdatomic.h>
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

/* The "progress" signal's interval while a job runs. */
#define PROGRESS_INTERVAL_MS 100
/* How far a job's worker threads step back (nice) from the window's. */
#define WORKER_NICE 10

struct _ClJob {
	GObject parent_instance;
	ClJobFunc func;
	gpointer data;
	GDestroyNotify data_free;
	int threads_wanted;
	int threads_granted; /* while func runs */
	_Atomic int cancel;
	_Atomic double progress;
	GCancellable *cancellable;
	gboolean running;
	guint progress_source;
	GApplication *held;
	GAsyncReadyCallback callback;
	gpointer user_data;
};

G_DEFINE_FINAL_TYPE(ClJob, cl_job, G_TYPE_OBJECT)

enum { SIGNAL_PROGRESS, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ------------------------------------------------------------ the budget */

static GMutex budget_lock;
static int budget_limit; /* 0: the machine's cores */
static int budget_used;

void cl_job_set_thread_limit(int limit)
{
	g_mutex_lock(&budget_lock);
	budget_limit = MAX(limit, 0);
	g_mutex_unlock(&budget_lock);
}

int cl_job_threads_in_use(void)
{
	g_mutex_lock(&budget_lock);
	int used = budget_used;
	g_mutex_unlock(&budget_lock);
	return used;
}

/* As many of wanted as are free, and one even when none is: a job always runs. */
static int budget_acquire(int wanted)
{
	g_mutex_lock(&budget_lock);
	int limit = budget_limit > 0 ? budget_limit : (int)g_get_num_processors();
	int granted = CLAMP(limit - budget_used, 1, MAX(wanted, 1));
	budget_used += granted;
	g_mutex_unlock(&budget_lock);
	return granted;
}

static void budget_release(int granted)
{
	g_mutex_lock(&budget_lock);
	budget_used -= granted;
	g_mutex_unlock(&budget_lock);
}

/* ------------------------------------------------------------------ job */

static void cl_job_finalize(GObject *object)
{
	ClJob *job = CL_JOB(object);
	g_assert(!job->running);
	if (job->data_free)
		job->data_free(job->data);
	g_clear_object(&job->cancellable);
	G_OBJECT_CLASS(cl_job_parent_class)->finalize(object);
}

static void cl_job_class_init(ClJobClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = cl_job_finalize;
	/* every PROGRESS_INTERVAL_MS while it runs, on the main context it was started from */
	signals[SIGNAL_PROGRESS] = g_signal_new("progress", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
											NULL, G_TYPE_NONE, 0);
}

static void cl_job_init(ClJob *job)
{
	job->cancellable = g_cancellable_new();
}

ClJob *cl_job_new(int threads_wanted, ClJobFunc func, gpointer data, GDestroyNotify data_free)
{
	ClJob *job = g_object_new(CL_TYPE_JOB, NULL);
	job->func = func;
	job->data = data;
	job->data_free = data_free;
	job->threads_wanted = MAX(threads_wanted, 1);
	return job;
}

gpointer cl_job_get_data(ClJob *job)
{
	return job->data;
}

int cl_job_threads(ClJob *job)
{
	return MAX(job->threads_granted, 1);
}

const _Atomic int *cl_job_cancel_flag(ClJob *job)
{
	return &job->cancel;
}

gboolean cl_job_is_cancelled(ClJob *job)
{
	return atomic_load(&job->cancel) != 0;
}

void cl_job_set_progress(ClJob *job, double fraction)
{
	atomic_store(&job->progress, CLAMP(fraction, 0.0, 1.0));
}

double cl_job_get_progress(ClJob *job)
{
	return atomic_load(&job->progress);
}

gboolean cl_job_is_running(ClJob *job)
{
	return job->running;
}

void cl_job_cancel(ClJob *job)
{
	atomic_store(&job->cancel, 1);
	g_cancellable_cancel(job->cancellable);
}

typedef struct {
	ClJob *job;
	int count;
	gint next; /* atomic */
	void (*item)(int index, gpointer data);
	gpointer data;
} Parallel;

static gpointer parallel_worker(gpointer data)
{
	Parallel *p = data;
	for (;;) {
		if (cl_job_is_cancelled(p->job))
			break;
		int i = g_atomic_int_add(&p->next, 1);
		if (i >= p->count)
			break;
		p->item(i, p->data);
	}
	return NULL;
}

/* A job keeps cores busy: its threads step back so that the window still
 * redraws and answers at once. Linux nices threads one by one, and only up:
 * the items run on threads of their own, which end with them (the calling
 * one may be a pooled thread that later serves other work). */
static gpointer niced_worker(gpointer data)
{
#ifdef __linux__
	setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);
#endif
	return parallel_worker(data);
}

void cl_job_parallel(ClJob *job, int count, void (*item)(int index, gpointer data), gpointer data)
{
	Parallel p = {.job = job, .count = count, .item = item, .data = data};
	int workers = CLAMP(cl_job_threads(job), 1, MAX(count, 1));
	GThread **threads = g_new0(GThread *, (gsize)workers);
	for (int t = 0; t < workers; t++)
		threads[t] = g_thread_new("cl-job", niced_worker, &p);
	for (int t = 0; t < workers; t++)
		g_thread_join(threads[t]);
	g_free(threads);
}

static gboolean execute(ClJob *job, GError **error)
{
	job->threads_granted = budget_acquire(job->threads_wanted);
	gboolean ok = job->func(job, job->data, error);
	budget_release(job->threads_granted);
	job->threads_granted = 0;
	if (ok)
		cl_job_set_progress(job, 1.0);
	return ok;
}

gboolean cl_job_run(ClJob *job, GError **error)
{
	g_return_val_if_fail(!job->running, FALSE);
	return execute(job, error);
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	(void)data, (void)cancellable;
	GError *error = NULL;
	if (execute(CL_JOB(source), &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

static gboolean emit_progress(gpointer data)
{
	g_signal_emit(data, signals[SIGNAL_PROGRESS], 0);
	return G_SOURCE_CONTINUE;
}

static void task_done(GObject *source, GAsyncResult *result, gpointer data)
{
	(void)data;
	ClJob *job = CL_JOB(source);
	g_clear_handle_id(&job->progress_source, g_source_remove);
	job->running = FALSE;
	GApplication *held = g_steal_pointer(&job->held);
	if (job->callback)
		job->callback(source, result, job->user_data);
	/* after the callback: quitting the app must wait for it */
	if (held) {
		g_application_release(held);
		g_object_unref(held);
	}
}

void cl_job_run_async(ClJob *job, GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(!job->running);
	job->running = TRUE;
	job->callback = callback;
	job->user_data = user_data;
	job->held = g_application_get_default();
	if (job->held)
		g_application_hold(g_object_ref(job->held));
	job->progress_source = g_timeout_add(PROGRESS_INTERVAL_MS, emit_progress, job);
	GTask *task = g_task_new(job, job->cancellable, task_done, NULL);
	/* a stale result must never arrive before its func has stopped */
	g_task_set_return_on_cancel(task, FALSE);
	g_task_run_in_thread(task, run_in_thread);
	g_object_unref(task);
}

gboolean cl_job_finish(ClJob *job, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, job), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

void cl_job_replace(ClJob **slot, ClJob *job)
{
	if (*slot)
		cl_job_cancel(*slot);
	g_clear_object(slot);
	*slot = job ? g_object_ref(job) : NULL;
}
