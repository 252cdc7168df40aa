#include "cl-runner.h"

#include "cl-run-job.h"
#include "gradient-data.h"

#include <stdlib.h>

struct _ClRunner {
	GObject parent_instance;
	ClDocument *doc; /* borrowed: the document owns… nothing of the runner; the window owns both */
	gulong changed_handler;
	gboolean live;
	ClFdChoice fd;
	int *fd_first;
	int fd_first_count;
	char *perturb;
	double perturb_delta;
	char **extra_columns;

	ClJob *job;
	guint idle_source;
	gboolean published; /* the job's result is in the document */
	int fd_shown;       /* differences announced so far */
	gint64 started;
	char *status;
	int completed;
};

G_DEFINE_FINAL_TYPE(ClRunner, cl_runner, G_TYPE_OBJECT)

enum { SIGNAL_STATE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void set_status(ClRunner *self, char *status)
{
	g_free(self->status);
	self->status = status;
	g_signal_emit(self, signals[SIGNAL_STATE_CHANGED], 0);
}

/* The result is shown once its adjoints are in place; later, every batch of differences. */
static void publish(ClRunner *self)
{
	ClResult *result = cl_study_job_result(self->job);
	ClRunData *data = cl_result_payload(result);
	if (!cl_run_data_ready(data))
		return;
	int done = cl_run_data_fd_done(data);
	if (!self->published) {
		self->published = TRUE;
		self->fd_shown = done;
		cl_document_set_result(self->doc, result);
	} else if (done != self->fd_shown) {
		self->fd_shown = done;
		cl_document_result_updated(self->doc, result);
	}
}

static void job_progress(ClJob *job, ClRunner *self)
{
	if (job != self->job)
		return;
	publish(self);
	g_signal_emit(self, signals[SIGNAL_STATE_CHANGED], 0);
}

static void job_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClRunner *self = data;
	ClJob *job = CL_JOB(source);
	g_autoptr(GError) error = NULL;
	gboolean ok = cl_job_finish(job, res, &error);
	if (job != self->job) { /* superseded: its numbers belong to an older scene */
		g_object_unref(self);
		return;
	}
	publish(self);
	if (ok) {
		self->completed++;
		ClRunData *run = cl_result_payload(cl_study_job_result(job));
		int failed = 0;
		for (int b = 0; b < run->backend_count; b++)
			failed += run->backends[b].row.status.code != CL_STATUS_OK;
		const ClScene *scene = cl_result_scene(cl_study_job_result(job));
		set_status(self, g_strdup_printf("%d backend%s · %d steps · %.2f s%s", run->backend_count,
										 run->backend_count == 1 ? "" : "s", scene->steps,
										 (g_get_monotonic_time() - self->started) / 1e6,
										 failed ? " · some results are not ok (see the notes)" : ""));
	} else
		set_status(self, g_strdup(error->message));
	g_clear_object(&self->job);
	g_signal_emit(self, signals[SIGNAL_STATE_CHANGED], 0);
	g_object_unref(self);
}

void cl_runner_cancel(ClRunner *self)
{
	g_clear_handle_id(&self->idle_source, g_source_remove);
	if (!self->job)
		return;
	cl_job_replace(&self->job, NULL);
	set_status(self, g_strdup("Cancelled"));
}

void cl_runner_run(ClRunner *self)
{
	g_clear_handle_id(&self->idle_source, g_source_remove);
	cl_job_replace(&self->job, NULL);
	const ClScene *scene = cl_document_get_scene(self->doc);
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(scene, message, sizeof message)) {
		set_status(self, g_strdup(message));
		return;
	}
	g_autoptr(GArray) backends = cl_document_enabled_backends(self->doc);
	if (backends->len == 0) {
		set_status(self, g_strdup("No backend is enabled (see the Backends tab)"));
		return;
	}
	int count;
	ClParam *columns = cl_runner_columns(self, scene, &count);
	ClRunRequest request = {
		.scene = scene,
		.revision = cl_document_get_revision(self->doc),
		.backends = (const int *)(const void *)backends->data,
		.backend_count = (int)backends->len,
		.columns = columns,
		.column_count = count,
		.fd = self->fd,
		.fd_first = self->fd_first,
		.fd_first_count = self->fd_first_count,
		.perturb = self->perturb,
		.perturb_delta = self->perturb_delta,
	};
	g_autoptr(GError) error = NULL;
	self->job = cl_run_job_new(&request, &error);
	free(columns);
	if (!self->job) {
		set_status(self, g_strdup(error->message));
		return;
	}
	self->published = FALSE;
	self->started = g_get_monotonic_time();
	g_signal_connect(self->job, "progress", G_CALLBACK(job_progress), self);
	cl_job_run_async(self->job, job_done, g_object_ref(self));
	set_status(self, g_strdup("Computing…"));
}

static gboolean run_when_idle(gpointer data)
{
	ClRunner *self = data;
	self->idle_source = 0;
	cl_runner_run(self);
	return G_SOURCE_REMOVE;
}

static void document_changed(ClDocument *doc, guint what, ClRunner *self)
{
	(void)doc;
	if (!(what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_BACKENDS)))
		return;
	cl_job_replace(&self->job, NULL);
	if (self->live) {
		if (!self->idle_source)
			self->idle_source = g_idle_add(run_when_idle, self);
	} else
		set_status(self, g_strdup("Scene changed: press Run (Ctrl+R) to recompute"));
}

void cl_runner_set_live(ClRunner *self, gboolean live)
{
	self->live = live;
	ClResult *current = cl_document_get_result(self->doc, CL_RESULT_RUN);
	if (live && !self->job && (!current || cl_document_is_stale(self->doc, current)))
		cl_runner_run(self);
}

gboolean cl_runner_get_live(ClRunner *self)
{
	return self->live;
}

void cl_runner_set_fd(ClRunner *self, ClFdChoice fd)
{
	if (self->fd == fd)
		return;
	self->fd = fd;
	if (self->live)
		cl_runner_run(self);
}

ClFdChoice cl_runner_get_fd(ClRunner *self)
{
	return self->fd;
}

void cl_runner_set_fd_first(ClRunner *self, const int *columns, int count)
{
	g_free(self->fd_first);
	self->fd_first = g_memdup2(columns, sizeof *columns * (gsize)MAX(count, 1));
	self->fd_first_count = count;
}

void cl_runner_set_extra_columns(ClRunner *self, const char *const *names)
{
	static const char *const none[] = {NULL};
	if (g_strv_equal((const char *const *)self->extra_columns, names ? names : none))
		return;
	g_strfreev(self->extra_columns);
	self->extra_columns = g_strdupv((char **)(names ? names : none));
	/* when idle: the caller may first say which columns to difference first */
	if (self->live) {
		cl_job_replace(&self->job, NULL);
		if (!self->idle_source)
			self->idle_source = g_idle_add(run_when_idle, self);
	} else
		set_status(self, g_strdup("Columns changed: press Run (Ctrl+R) to recompute"));
}

const char *const *cl_runner_get_extra_columns(ClRunner *self)
{
	return (const char *const *)self->extra_columns;
}

ClParam *cl_runner_columns(ClRunner *self, const ClScene *scene, int *count)
{
	/* the names this scene has (an edit may have removed a ball or a wall) */
	g_autoptr(GPtrArray) fitting = g_ptr_array_new();
	for (char **name = self->extra_columns; *name; name++) {
		ClParam p;
		if (cl_param_parse(scene, *name, &p, NULL, 0) && cl_param_fits(scene, &p))
			g_ptr_array_add(fitting, *name);
	}
	g_ptr_array_add(fitting, NULL);
	ClParam *columns = cl_gradient_columns_new(scene, (const char *const *)fitting->pdata, count, NULL);
	/* a name given twice or one of the defaults: the defaults alone */
	return columns ? columns : cl_scene_params_new(scene, CL_PARAMS_TABLE, -1, count);
}

void cl_runner_set_perturbation(ClRunner *self, const char *parameter, double delta)
{
	if (g_strcmp0(parameter, self->perturb) == 0 && delta == self->perturb_delta)
		return;
	g_free(self->perturb);
	self->perturb = g_strdup(parameter);
	self->perturb_delta = delta;
	if (self->live)
		cl_runner_run(self);
}

gboolean cl_runner_is_running(ClRunner *self)
{
	return self->job != NULL;
}

double cl_runner_get_progress(ClRunner *self)
{
	return self->job ? cl_job_get_progress(self->job) : 0;
}

const char *cl_runner_get_status(ClRunner *self)
{
	return self->status ? self->status : "";
}

int cl_runner_get_completed(ClRunner *self)
{
	return self->completed;
}

static void cl_runner_dispose(GObject *object)
{
	ClRunner *self = CL_RUNNER(object);
	g_clear_handle_id(&self->idle_source, g_source_remove);
	cl_job_replace(&self->job, NULL);
	if (self->doc) {
		g_clear_signal_handler(&self->changed_handler, self->doc);
		g_clear_object(&self->doc);
	}
	G_OBJECT_CLASS(cl_runner_parent_class)->dispose(object);
}

static void cl_runner_finalize(GObject *object)
{
	ClRunner *self = CL_RUNNER(object);
	g_free(self->fd_first);
	g_free(self->perturb);
	g_strfreev(self->extra_columns);
	g_free(self->status);
	G_OBJECT_CLASS(cl_runner_parent_class)->finalize(object);
}

static void cl_runner_class_init(ClRunnerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->dispose = cl_runner_dispose;
	object_class->finalize = cl_runner_finalize;
	/* a Run started, progressed or ended; the status text may have changed */
	signals[SIGNAL_STATE_CHANGED] = g_signal_new("state-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
												 NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void cl_runner_init(ClRunner *self)
{
	self->live = TRUE;
	self->fd = CL_FD_AUTO;
	self->extra_columns = g_new0(char *, 1);
}

ClRunner *cl_runner_new(ClDocument *doc)
{
	ClRunner *self = g_object_new(CL_TYPE_RUNNER, NULL);
	self->doc = g_object_ref(doc);
	self->changed_handler = g_signal_connect(doc, "changed", G_CALLBACK(document_changed), self);
	return self;
}
