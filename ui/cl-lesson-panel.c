#include "cl-lesson-panel.h"

#include "cl-job.h"
#include "cl-plot-view.h"
#include "cl-results-view.h"
#include "cl-workbench.h"
#include "lesson-figures.h"
#include "lesson-handout.h"
#include "lesson.h"
#include "numbers.h"
#include "scene-file.h"

#include <string.h>

#define EXPORT_PROGRESS_MS 100

/* The results page that shows each kind of lesson view. */
static const char *const view_pages[CL_LESSON_VIEW_COUNT] = {
	[CL_LESSON_VIEW_GRADIENTS] = "gradients", [CL_LESSON_VIEW_PERTURBATION] = "perturbation",
	[CL_LESSON_VIEW_HEATMAP] = "heatmaps",	  [CL_LESSON_VIEW_LEARNING] = "learning",
	[CL_LESSON_VIEW_CONVERGENCE] = "convergence",
};

/* The open lesson, shared with the worker threads computing its steps or
 * its handout, so switching lessons never frees one in use. */
typedef struct {
	ClLesson *lesson;
} SharedLesson;

static SharedLesson *shared_lesson_new(ClLesson *lesson)
{
	SharedLesson *shared = g_atomic_rc_box_new0(SharedLesson);
	shared->lesson = lesson;
	return shared;
}

static void shared_lesson_clear(gpointer data)
{
	cl_lesson_free(((SharedLesson *)data)->lesson);
}

static void shared_lesson_unref(SharedLesson *shared)
{
	g_atomic_rc_box_release_full(shared, shared_lesson_clear);
}

/* A step's numbers and figure, computed off the main thread. */
typedef struct {
	SharedLesson *shared;
	guint step;
	ClLessonResult *result;
	ClPlotFigure *figure;
	double width, height;
} StepJob;

static void step_job_free(gpointer data)
{
	StepJob *job = data;
	if (job->result)
		cl_lesson_result_free(job->result);
	cl_plot_figure_free(job->figure);
	shared_lesson_unref(job->shared);
	g_free(job);
}

/* A handout, written off the main thread. */
typedef struct {
	SharedLesson *shared;
	char *pdf, *dir;
	GPtrArray *problems;
} ExportJob;

static void export_job_free(gpointer data)
{
	ExportJob *job = data;
	shared_lesson_unref(job->shared);
	g_free(job->pdf);
	g_free(job->dir);
	g_ptr_array_unref(job->problems);
	g_free(job);
}

struct _ClLessonPanel {
	GtkWidget parent_instance;

	/* template widgets */
	GtkStack *stack;
	GtkListBox *lesson_list;
	GtkLabel *lesson_title, *step_position, *step_title, *step_text, *problems_label, *edited_note, *settings_label;
	GtkLabel *export_status;
	GtkWidget *busy_box;
	GtkSpinner *spinner;
	ClPlotView *figure;
	GtkProgressBar *export_progress;

	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	GActionMap *actions; /* the window's, where the panel's actions are (D-Bus scripts reach them) */
	gulong changed_handler, page_handler;

	SharedLesson *open; /* NULL: the list is shown */
	guint step;
	ClJob *step_job;        /* computing the shown step */
	ClLessonResult *result; /* the shown step's numbers */
	gboolean applying;     /* our own changes to the window are under way */
	gboolean edited;       /* the user changed the scene since the step was applied */
	ClJob *export_job;
	char *exported; /* the last handout written */
	char *export_error;
	GtkWidget *covered_page; /* the sidebar page the panel was opened over */
};

G_DEFINE_FINAL_TYPE(ClLessonPanel, cl_lesson_panel, GTK_TYPE_WIDGET)

static void update_state(ClLessonPanel *self);

static const ClLessonStep *current_step(ClLessonPanel *self)
{
	return self->open ? g_ptr_array_index(self->open->lesson->steps, self->step) : NULL;
}

static void set_action_enabled(ClLessonPanel *self, const char *name, gboolean enabled)
{
	GAction *action = self->actions ? g_action_map_lookup_action(self->actions, name) : NULL;
	if (action)
		g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

static void update_actions(ClLessonPanel *self)
{
	guint steps = self->open ? self->open->lesson->steps->len : 0;
	set_action_enabled(self, "lesson-next", self->open && self->step + 1 < steps);
	set_action_enabled(self, "lesson-previous", self->open && self->step > 0);
	set_action_enabled(self, "lesson-step", self->open != NULL);
	set_action_enabled(self, "lesson-leave", self->open != NULL);
	set_action_enabled(self, "lesson-export", self->open && !self->export_job);
	update_state(self);
}

/* What tests (and scripts) read over D-Bus: the panel's state as JSON. */
static void update_state(ClLessonPanel *self)
{
	GAction *action = self->actions ? g_action_map_lookup_action(self->actions, "lesson-state") : NULL;
	if (!action)
		return;
	GString *json = g_string_new("{\"lesson\": ");
	cl_json_append_string(json, self->open ? self->open->lesson->id : "");
	g_string_append_printf(json, ", \"step\": %u, \"steps\": %u, \"computing\": %s, \"text\": ",
						   self->open ? self->step + 1 : 0, self->open ? self->open->lesson->steps->len : 0,
						   self->step_job ? "true" : "false");
	cl_json_append_string(json, self->result ? self->result->text : "");
	g_string_append(json, ", \"problems\": [");
	for (guint i = 0; self->result && i < self->result->problems->len; i++) {
		g_string_append(json, i ? ", " : "");
		cl_json_append_string(json, g_ptr_array_index(self->result->problems, i));
	}
	g_string_append_printf(json, "], \"exporting\": %s, \"exported\": ", self->export_job ? "true" : "false");
	cl_json_append_string(json, self->exported ? self->exported : "");
	g_string_append(json, ", \"export_error\": ");
	cl_json_append_string(json, self->export_error ? self->export_error : "");
	g_string_append_c(json, '}');
	g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_string(json->str));
	g_string_free(json, TRUE);
}

/* ------------------------------------------------------------ the list */

static int compare_lessons(gconstpointer a, gconstpointer b)
{
	const ClLesson *x = *(ClLesson *const *)a, *y = *(ClLesson *const *)b;
	return x->order != y->order ? (x->order > y->order) - (x->order < y->order) : strcmp(x->id, y->id);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static GtkWidget *text_label(const char *text, const char *css)
{
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_wrap(GTK_LABEL(label), TRUE);
	gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	if (css)
		gtk_widget_add_css_class(label, css);
	return label;
}

static GtkWidget *lesson_row(const ClLesson *lesson)
{
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
	gtk_box_append(GTK_BOX(box), text_label(lesson->title, "lesson-row-title"));
	if (lesson->summary && *lesson->summary)
		gtk_box_append(GTK_BOX(box), text_label(lesson->summary, "lesson-row-summary"));
	char *meta = g_strdup_printf("%u steps", lesson->steps->len);
	gtk_box_append(GTK_BOX(box), text_label(meta, "lesson-position"));
	g_free(meta);
	GtkWidget *row = gtk_list_box_row_new();
	gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
	g_object_set_data_full(G_OBJECT(row), "lesson-id", g_strdup(lesson->id), g_free);
	gtk_widget_set_tooltip_text(row, "Open the lesson at its first step");
	gtk_accessible_update_property(GTK_ACCESSIBLE(row), GTK_ACCESSIBLE_PROPERTY_LABEL, lesson->title,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, lesson->summary ? lesson->summary : "", -1);
	return row;
}

/* A lesson file that does not load: its name and the loader's message. */
static GtkWidget *bad_row(const char *file, const char *message)
{
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
	GtkWidget *icon = gtk_image_new_from_icon_name("dialog-warning-symbolic");
	gtk_widget_set_valign(icon, GTK_ALIGN_START);
	gtk_box_append(GTK_BOX(box), icon);
	GtkWidget *texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
	gtk_widget_set_hexpand(texts, TRUE);
	gtk_box_append(GTK_BOX(texts), text_label(file, "lesson-row-title"));
	gtk_box_append(GTK_BOX(texts), text_label(message, "lesson-problems"));
	gtk_box_append(GTK_BOX(box), texts);
	GtkWidget *row = gtk_list_box_row_new();
	gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
	gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), FALSE);
	char *name = g_strdup_printf("%s does not load", file);
	gtk_accessible_update_property(GTK_ACCESSIBLE(row), GTK_ACCESSIBLE_PROPERTY_LABEL, name,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, message, -1);
	g_free(name);
	return row;
}

/* Every *.json in the lessons folder, each loaded on its own: one bad file
 * must not hide the others. */
static void list_lessons(ClLessonPanel *self)
{
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->lesson_list))))
		gtk_list_box_remove(self->lesson_list, child);
	char *dir_path = g_build_filename(cl_data_dir(), "lessons", NULL);
	GError *error = NULL;
	GDir *dir = g_dir_open(dir_path, 0, &error);
	if (!dir) {
		gtk_list_box_append(self->lesson_list, bad_row(dir_path, error->message));
		g_error_free(error);
		g_free(dir_path);
		return;
	}
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	for (const char *name; (name = g_dir_read_name(dir));)
		if (g_str_has_suffix(name, ".json"))
			g_ptr_array_add(files, g_strdup(name));
	g_dir_close(dir);
	g_ptr_array_sort(files, compare_names);
	GPtrArray *lessons = g_ptr_array_new_with_free_func((GDestroyNotify)cl_lesson_free);
	GPtrArray *bad_files = g_ptr_array_new_with_free_func(g_free), *messages = g_ptr_array_new_with_free_func(g_free);
	for (guint f = 0; f < files->len; f++) {
		const char *name = g_ptr_array_index(files, f);
		char *id = g_strndup(name, strlen(name) - strlen(".json"));
		ClLesson *lesson = cl_lesson_load(id, &error);
		if (lesson)
			g_ptr_array_add(lessons, lesson);
		else {
			g_ptr_array_add(bad_files, g_strdup(name));
			g_ptr_array_add(messages, g_strdup(error->message));
			g_clear_error(&error);
		}
		g_free(id);
	}
	g_ptr_array_free(files, TRUE);
	g_ptr_array_sort(lessons, compare_lessons);
	for (guint i = 0; i < lessons->len; i++)
		gtk_list_box_append(self->lesson_list, lesson_row(g_ptr_array_index(lessons, i)));
	for (guint i = 0; i < bad_files->len; i++)
		gtk_list_box_append(self->lesson_list,
							bad_row(g_ptr_array_index(bad_files, i), g_ptr_array_index(messages, i)));
	if (lessons->len == 0 && bad_files->len == 0)
		gtk_list_box_append(self->lesson_list, bad_row(dir_path, "no lesson files (*.json) in this folder"));
	g_ptr_array_free(lessons, TRUE);
	g_ptr_array_free(bad_files, TRUE);
	g_ptr_array_free(messages, TRUE);
	g_free(dir_path);
}

/* ---------------------------------------------------- applying a step */

static void set_highlights(ClLessonPanel *self, const ClLessonStep *step)
{
	for (int k = 0; k < CL_LESSON_VIEW_COUNT; k++) {
		ClResultsView *view = cl_workbench_get_view(self->workbench, view_pages[k]);
		if (view)
			cl_results_view_highlight(view, step);
	}
}

/* The step's state through the document, so it is ordinary state:
 * undoable, editable, and kept when the lesson is left. Everything the
 * step's numbers depend on is set here (scene, backends, the view's own
 * settings), whatever the user set before. */
static void apply_state(ClLessonPanel *self, const ClLessonStep *step)
{
	self->applying = TRUE;
	for (int b = 0; b < cl_backend_count(); b++) {
		gboolean wanted = FALSE;
		for (guint i = 0; i < step->backends->len && !wanted; i++)
			wanted = g_array_index(step->backends, int, i) == b;
		cl_document_set_backend_enabled(self->doc, b, wanted);
	}
	g_autofree char *label = g_strdup_printf("Lesson step “%s”", step->title);
	cl_document_replace(self->doc, cl_scene_copy(step->scene), NULL, FALSE, label);
	set_highlights(self, step);
	const char *page = view_pages[step->view.kind];
	/* shown first: a shown perturbation view asks the runner for its study */
	cl_workbench_present_view(self->workbench, page);
	g_autoptr(GError) error = NULL;
	ClResultsView *view = cl_workbench_get_view(self->workbench, page);
	if (view && !cl_results_view_show_step(view, step, &error)) {
		g_autofree char *message =
			g_strdup_printf("Could not set up the %s view: %s", cl_lesson_view_name(step->view.kind), error->message);
		g_warning("%s", message);
		gtk_label_set_text(self->problems_label, message);
		gtk_widget_set_visible(GTK_WIDGET(self->problems_label), TRUE);
	}
	cl_runner_run(cl_workbench_get_runner(self->workbench));
	self->edited = FALSE;
	gtk_widget_set_visible(GTK_WIDGET(self->edited_note), FALSE);
	self->applying = FALSE;
}

/* The user's own edits after a step: the text no longer describes the scene. */
static void document_changed(ClDocument *doc, guint what, ClLessonPanel *self)
{
	(void)doc;
	if (!(what & CL_DOCUMENT_SCENE) || self->applying || !self->open || self->edited)
		return;
	self->edited = TRUE;
	gtk_widget_set_visible(GTK_WIDGET(self->edited_note), TRUE);
}

/* ------------------------------------------------- computing the text */

/* The text while its numbers are computed: each placeholder shown as "…". */
static char *pending_text(const ClLessonStep *step)
{
	GString *out = g_string_new(NULL);
	const char *text = step->text;
	gsize length = strlen(text), cite = 0;
	for (gsize i = 0; i < length;) {
		if (cite < step->cites->len && i == g_array_index(step->cites, ClCite, cite).start) {
			g_string_append(out, "…");
			i = g_array_index(step->cites, ClCite, cite++).end;
		} else if ((text[i] == '{' || text[i] == '}') && text[i + 1] == text[i]) {
			g_string_append_c(out, text[i]);
			i += 2;
		} else
			g_string_append_c(out, text[i++]);
	}
	return g_string_free(out, FALSE);
}

static void show_result(ClLessonPanel *self)
{
	const ClLessonResult *r = self->result;
	gtk_label_set_text(self->step_text, r->text);
	GString *problems = g_string_new(NULL);
	for (guint i = 0; i < r->problems->len; i++)
		g_string_append_printf(problems, "%sNot computed: %s", i ? "\n" : "", (const char *)g_ptr_array_index(r->problems, i));
	gtk_label_set_text(self->problems_label, problems->str);
	gtk_widget_set_visible(GTK_WIDGET(self->problems_label), problems->len > 0);
	g_string_free(problems, TRUE);
}

static void set_busy(ClLessonPanel *self, gboolean busy)
{
	gtk_widget_set_visible(self->busy_box, busy);
	gtk_spinner_set_spinning(self->spinner, busy);
}

static gboolean compute_step(ClJob *job, gpointer data, GError **error)
{
	StepJob *step_job = data;
	const ClLessonStep *step = g_ptr_array_index(step_job->shared->lesson->steps, step_job->step);
	step_job->result = cl_lesson_step_apply(step, cl_job_cancel_flag(job));
	if (!step_job->result) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
		return FALSE;
	}
	step_job->figure = cl_lesson_figure(step_job->result);
	cl_lesson_figure_size(step_job->result, step_job->figure, &step_job->width, &step_job->height);
	return TRUE;
}

static void step_done(GObject *source, GAsyncResult *result, gpointer data)
{
	ClLessonPanel *self = data;
	ClJob *job = CL_JOB(source);
	gboolean ok = cl_job_finish(job, result, NULL);
	/* superseded by another step, or the lesson was left */
	if (job == self->step_job) {
		g_clear_object(&self->step_job);
		set_busy(self, FALSE);
		StepJob *step_job = cl_job_get_data(job);
		if (ok) {
			if (self->result)
				cl_lesson_result_free(self->result);
			self->result = g_steal_pointer(&step_job->result);
			show_result(self);
			cl_plot_view_set_export_size(self->figure, step_job->width, step_job->height);
			cl_plot_view_set_figure(self->figure, g_steal_pointer(&step_job->figure));
		}
		update_state(self);
	}
	g_object_unref(self);
}

static void cancel_step(ClLessonPanel *self)
{
	if (!self->step_job)
		return;
	cl_job_replace(&self->step_job, NULL);
	set_busy(self, FALSE);
}

static void start_step(ClLessonPanel *self)
{
	cancel_step(self);
	if (self->result) {
		cl_lesson_result_free(self->result);
		self->result = NULL;
	}
	StepJob *step_job = g_new0(StepJob, 1);
	step_job->shared = g_atomic_rc_box_acquire(self->open);
	step_job->step = self->step;
	self->step_job = cl_job_new(1, compute_step, step_job, step_job_free);
	cl_job_run_async(self->step_job, step_done, g_object_ref(self));
	set_busy(self, TRUE);
}

static void go_to_step(ClLessonPanel *self, guint index)
{
	const ClLesson *lesson = self->open->lesson;
	self->step = index;
	const ClLessonStep *step = current_step(self);
	gtk_label_set_text(self->lesson_title, lesson->title);
	char *position = g_strdup_printf("Step %u of %u", index + 1, lesson->steps->len);
	gtk_label_set_text(self->step_position, position);
	g_free(position);
	gtk_label_set_text(self->step_title, step->title);
	char *pending = pending_text(step);
	gtk_label_set_text(self->step_text, pending);
	g_free(pending);
	gtk_widget_set_visible(GTK_WIDGET(self->problems_label), FALSE);
	cl_plot_view_set_figure(self->figure, NULL);
	char *stem = g_strdup_printf("%s-step-%02u", lesson->id, index + 1);
	cl_plot_view_set_export_name(self->figure, stem);
	g_free(stem);
	GString *settings = g_string_new(NULL);
	g_string_append_printf(settings, "%s view · backends:", cl_lesson_view_name(step->view.kind));
	for (guint b = 0; b < step->backends->len; b++)
		g_string_append_printf(settings, "%s %s", b ? "," : "", cl_backend_info(g_array_index(step->backends, int, b))->id);
	gtk_label_set_text(self->settings_label, settings->str);
	g_string_free(settings, TRUE);
	gtk_stack_set_visible_child_name(self->stack, "step");
	apply_state(self, step);
	start_step(self);
	update_actions(self);
}

static void show_panel(ClLessonPanel *self)
{
	g_action_group_change_action_state(G_ACTION_GROUP(self->actions), "lessons", g_variant_new_boolean(TRUE));
}

static gboolean open_lesson(ClLessonPanel *self, const char *id, GError **error)
{
	ClLesson *lesson = cl_lesson_load(id, error);
	if (!lesson)
		return FALSE;
	cancel_step(self);
	if (self->open)
		shared_lesson_unref(self->open);
	self->open = shared_lesson_new(lesson);
	g_clear_pointer(&self->exported, g_free);
	g_clear_pointer(&self->export_error, g_free);
	gtk_label_set_text(self->export_status, "");
	show_panel(self);
	go_to_step(self, 0);
	return TRUE;
}

static void leave_lesson(ClLessonPanel *self)
{
	cancel_step(self);
	if (self->open)
		shared_lesson_unref(self->open);
	self->open = NULL;
	if (self->result) {
		cl_lesson_result_free(self->result);
		self->result = NULL;
	}
	/* the scene, backends and views stay; only the pointing goes */
	set_highlights(self, NULL);
	gtk_stack_set_visible_child_name(self->stack, "list");
	update_actions(self);
}

static void row_activated(GtkListBox *list, GtkListBoxRow *row, ClLessonPanel *self)
{
	(void)list;
	const char *id = g_object_get_data(G_OBJECT(row), "lesson-id");
	GError *error = NULL;
	if (id && !open_lesson(self, id, &error)) {
		/* the file changed since it was listed: list it again with its message */
		g_warning("%s", error->message);
		g_error_free(error);
		list_lessons(self);
	}
}

/* -------------------------------------------------------------- export */

static void export_progress(int done, int total, void *user)
{
	cl_job_set_progress(user, (double)done / MAX(total, 1));
}

static gboolean export_handout(ClJob *job, gpointer data, GError **error)
{
	ExportJob *export = data;
	return cl_lesson_export(export->shared->lesson, export->pdf, export->dir, export->problems, export_progress, job,
							cl_job_cancel_flag(job), error);
}

static void export_ticked(ClJob *job, ClLessonPanel *self)
{
	if (job == self->export_job)
		gtk_progress_bar_set_fraction(self->export_progress, cl_job_get_progress(job));
}

static void export_done(GObject *source, GAsyncResult *result, gpointer data)
{
	ClLessonPanel *self = data;
	ClJob *job = CL_JOB(source);
	ExportJob *export = cl_job_get_data(job);
	g_autoptr(GError) error = NULL;
	gboolean ok = cl_job_finish(job, result, &error);
	if (job == self->export_job) {
		gtk_widget_set_visible(GTK_WIDGET(self->export_progress), FALSE);
		g_autofree char *text = NULL;
		if (ok) {
			g_autofree char *pdf = g_path_get_basename(export->pdf), *dir = g_path_get_basename(export->dir);
			text = g_strdup_printf("Wrote %s (%u pages) and the folder %s/ (figures, CSV and texts)%s", pdf,
								   export->shared->lesson->steps->len + 1, dir,
								   export->problems->len ? "; some numbers could not be computed (see the pages)" : "");
			g_free(self->exported);
			self->exported = g_strdup(export->pdf);
			g_clear_pointer(&self->export_error, g_free);
		} else {
			text = g_strdup_printf("Could not export the lesson: %s", error->message);
			g_warning("%s", text);
			g_free(self->export_error);
			self->export_error = g_strdup(error->message);
		}
		gtk_label_set_text(self->export_status, text);
		g_clear_object(&self->export_job);
		update_actions(self);
	}
	g_object_unref(self);
}

/* handout.pdf gets its figures in handout/ beside it. */
static void start_export(ClLessonPanel *self, const char *pdf)
{
	if (!self->open || self->export_job)
		return;
	ExportJob *export = g_new0(ExportJob, 1);
	export->shared = g_atomic_rc_box_acquire(self->open);
	export->pdf = g_strdup(pdf);
	export->dir = g_str_has_suffix(pdf, ".pdf") ? g_strndup(pdf, strlen(pdf) - strlen(".pdf"))
												: g_strconcat(pdf, "-files", NULL);
	export->problems = g_ptr_array_new_with_free_func(g_free);
	self->export_job = cl_job_new(1, export_handout, export, export_job_free);
	g_signal_connect(self->export_job, "progress", G_CALLBACK(export_ticked), self);
	cl_job_run_async(self->export_job, export_done, g_object_ref(self));
	gtk_progress_bar_set_fraction(self->export_progress, 0);
	gtk_widget_set_visible(GTK_WIDGET(self->export_progress), TRUE);
	gtk_label_set_text(self->export_status, "Writing the handout…");
	update_actions(self);
}

static void export_chosen(GtkNativeDialog *dialog, int response, ClLessonPanel *self)
{
	if (response == GTK_RESPONSE_ACCEPT) {
		GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		char *path = file ? g_file_get_path(file) : NULL;
		if (path)
			start_export(self, path);
		g_free(path);
		g_clear_object(&file);
	}
	g_object_unref(dialog);
	g_object_unref(self);
}

static void choose_export(ClLessonPanel *self)
{
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new("Export Lesson Handout",
																GTK_WINDOW(gtk_widget_get_root(GTK_WIDGET(self))),
																GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	GtkFileFilter *filter = gtk_file_filter_new();
	gtk_file_filter_set_name(filter, "PDF handouts (*.pdf)");
	gtk_file_filter_add_pattern(filter, "*.pdf");
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
	g_object_unref(filter);
	char *name = g_strdup_printf("%s.pdf", self->open->lesson->id);
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
	g_free(name);
	g_signal_connect(chooser, "response", G_CALLBACK(export_chosen), g_object_ref(self));
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

/* ------------------------------------------------------------- actions */

static ClLessonPanel *panel_of(gpointer window)
{
	return g_object_get_data(G_OBJECT(window), "cl-lesson-panel");
}

/* The panel is a page of the sidebar: showing it remembers the page it
 * covers, hiding it goes back there. */
static void change_lessons(GSimpleAction *action, GVariant *value, gpointer data)
{
	ClLessonPanel *self = panel_of(data);
	g_simple_action_set_state(action, value);
	GtkWidget *stack = gtk_widget_get_parent(GTK_WIDGET(self));
	if (!GTK_IS_STACK(stack))
		return;
	GtkWidget *shown = gtk_stack_get_visible_child(GTK_STACK(stack));
	if (g_variant_get_boolean(value) && shown != GTK_WIDGET(self)) {
		self->covered_page = shown;
		gtk_stack_set_visible_child(GTK_STACK(stack), GTK_WIDGET(self));
	} else if (!g_variant_get_boolean(value) && shown == GTK_WIDGET(self)) {
		GtkWidget *back = self->covered_page ? self->covered_page : gtk_widget_get_first_child(stack);
		gtk_stack_set_visible_child(GTK_STACK(stack), back);
	}
}

/* The sidebar's own switcher shows or hides the panel too. */
static void sidebar_page_changed(GtkStack *stack, GParamSpec *pspec, ClLessonPanel *self)
{
	(void)pspec;
	gboolean shown = gtk_stack_get_visible_child(stack) == GTK_WIDGET(self);
	GVariant *state = g_action_group_get_action_state(G_ACTION_GROUP(self->actions), "lessons");
	if (state && g_variant_get_boolean(state) != shown)
		g_simple_action_set_state(G_SIMPLE_ACTION(g_action_map_lookup_action(self->actions, "lessons")),
								  g_variant_new_boolean(shown));
	g_clear_pointer(&state, g_variant_unref);
}

static void action_open(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ClLessonPanel *self = panel_of(data);
	GError *error = NULL;
	if (!open_lesson(self, g_variant_get_string(parameter, NULL), &error)) {
		cl_workbench_report_error(self->workbench, "Could not open the lesson", error);
		g_error_free(error);
	}
}

static void action_step(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ClLessonPanel *self = panel_of(data);
	gint32 k = g_variant_get_int32(parameter);
	if (self->open && k >= 1 && (guint)k <= self->open->lesson->steps->len)
		go_to_step(self, (guint)k - 1);
	else
		g_warning("lesson-step %d: no such step", k);
}

static void action_next(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)parameter;
	ClLessonPanel *self = panel_of(data);
	gboolean next = g_str_equal(g_action_get_name(G_ACTION(a)), "lesson-next");
	if (!self->open)
		return;
	if (next && self->step + 1 < self->open->lesson->steps->len)
		go_to_step(self, self->step + 1);
	else if (!next && self->step > 0)
		go_to_step(self, self->step - 1);
}

static void action_leave(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a, (void)parameter;
	leave_lesson(panel_of(data));
}

static void action_export(GSimpleAction *a, GVariant *parameter, gpointer data)
{
	(void)a;
	ClLessonPanel *self = panel_of(data);
	const char *path = g_variant_get_string(parameter, NULL);
	if (!self->open)
		return;
	if (*path)
		start_export(self, path);
	else
		choose_export(self);
}

static const GActionEntry lesson_actions[] = {
	{.name = "lessons", .state = "false", .change_state = change_lessons},
	{.name = "lesson-open", .activate = action_open, .parameter_type = "s"},
	{.name = "lesson-step", .activate = action_step, .parameter_type = "i"},
	{.name = "lesson-next", .activate = action_next},
	{.name = "lesson-previous", .activate = action_next},
	{.name = "lesson-leave", .activate = action_leave},
	{.name = "lesson-export", .activate = action_export, .parameter_type = "s"},
	{.name = "lesson-state", .state = "''"},
};

/* The step and the handout: their callbacks then only drop their references. */
static void stop_work(ClLessonPanel *self)
{
	cancel_step(self);
	cl_job_replace(&self->export_job, NULL);
}

/* The panel's actions live on its window's action map (scripts reach them
 * over D-Bus as win.lesson-*); they find the panel through the window. */
static void cl_lesson_panel_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_lesson_panel_parent_class)->root(widget);
	ClLessonPanel *self = CL_LESSON_PANEL(widget);
	self->workbench = cl_workbench_of(widget);
	GtkRoot *root = gtk_widget_get_root(widget);
	if (!self->workbench || !G_IS_ACTION_MAP(root))
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	self->actions = G_ACTION_MAP(root);
	g_object_set_data(G_OBJECT(root), "cl-lesson-panel", self);
	g_action_map_add_action_entries(self->actions, lesson_actions, G_N_ELEMENTS(lesson_actions), root);
	GtkWidget *stack = gtk_widget_get_parent(widget);
	if (GTK_IS_STACK(stack))
		self->page_handler = g_signal_connect(stack, "notify::visible-child", G_CALLBACK(sidebar_page_changed), self);
	/* read over D-Bus (org.gtk.Actions.Describe), never activated */
	set_action_enabled(self, "lesson-state", FALSE);
	list_lessons(self);
	update_actions(self);
}

/* A running step or export holds a reference to this panel, so the window can
 * go first (app.quit while computing): the work stops with it, and nothing
 * reaches the window after. */
static void cl_lesson_panel_unroot(GtkWidget *widget)
{
	ClLessonPanel *self = CL_LESSON_PANEL(widget);
	stop_work(self);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	GtkWidget *stack = gtk_widget_get_parent(widget);
	if (self->page_handler && stack)
		g_clear_signal_handler(&self->page_handler, stack);
	if (self->actions) {
		for (gsize i = 0; i < G_N_ELEMENTS(lesson_actions); i++)
			g_action_map_remove_action(self->actions, lesson_actions[i].name);
		g_object_set_data(G_OBJECT(self->actions), "cl-lesson-panel", NULL);
	}
	self->actions = NULL;
	self->doc = NULL;
	self->workbench = NULL;
	GTK_WIDGET_CLASS(cl_lesson_panel_parent_class)->unroot(widget);
}

/* ----------------------------------------------------------- lifecycle */

static void cl_lesson_panel_dispose(GObject *object)
{
	ClLessonPanel *self = CL_LESSON_PANEL(object);
	stop_work(self);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_LESSON_PANEL);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_lesson_panel_parent_class)->dispose(object);
}

static void cl_lesson_panel_finalize(GObject *object)
{
	ClLessonPanel *self = CL_LESSON_PANEL(object);
	if (self->open)
		shared_lesson_unref(self->open);
	if (self->result)
		cl_lesson_result_free(self->result);
	g_free(self->exported);
	g_free(self->export_error);
	G_OBJECT_CLASS(cl_lesson_panel_parent_class)->finalize(object);
}

static void cl_lesson_panel_class_init(ClLessonPanelClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_lesson_panel_dispose;
	object_class->finalize = cl_lesson_panel_finalize;
	widget_class->root = cl_lesson_panel_root;
	widget_class->unroot = cl_lesson_panel_unroot;
	g_type_ensure(CL_TYPE_PLOT_VIEW);
	gtk_widget_class_set_template_from_resource(widget_class, "/io/github/contactlab/ContactLab/ui/cl-lesson-panel.ui");
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, stack);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, lesson_list);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, lesson_title);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, step_position);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, step_title);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, step_text);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, problems_label);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, edited_note);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, settings_label);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, export_status);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, busy_box);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, spinner);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, figure);
	gtk_widget_class_bind_template_child(widget_class, ClLessonPanel, export_progress);
	gtk_widget_class_set_css_name(widget_class, "lessonpanel");
}

static void cl_lesson_panel_init(ClLessonPanel *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	cl_plot_view_set_placeholder(self->figure, "The step's figure appears when its numbers are computed.");
	g_signal_connect(self->lesson_list, "row-activated", G_CALLBACK(row_activated), self);
}
