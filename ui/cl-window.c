#include "cl-window.h"

#include "plot.h"

#include "cl-compute-job.h"
#include "cl-backend-list.h"
#include "cl-convergence-view.h"
#include "cl-gradient-view.h"
#include "cl-heatmap-view.h"
#include "cl-learning-view.h"
#include "cl-view-actions.h"
#include "cl-inspector.h"
#include "cl-lesson-panel.h"
#include "cl-perturbation-view.h"
#include "cl-preferences.h"
#include "cl-scene-canvas.h"
#include "cl-undo-stack.h"
#include "scene-file.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>

/* Edits recompute this long after the last change when live is on. */
#define LIVE_DEBOUNCE_MS 250
#define AUTOSAVE_DELAY_MS 1000

static const double playback_speeds[] = {2, 1, 0.5, 0.25, 0.1, 0.01};

struct _ClWindow {
	GtkApplicationWindow parent_instance;

	/* template widgets */
	GtkLabel *title_label;
	GtkLabel *subtitle_label;
	ClSceneCanvas *canvas;
	GtkLabel *message_label;
	GtkButton *play_button;
	GtkButton *timeline_play_button;
	GtkAdjustment *time_adjustment;
	GtkLabel *time_label;
	GtkDropDown *speed_dropdown;
	GtkLabel *status_label;
	GtkProgressBar *progress_bar;
	GtkButton *cancel_button;
	GtkStack *results_stack;
	GtkWidget *results_switcher;
	GtkWidget *sidebar_switcher;
	ClGradientView *gradient_view;
	ClPerturbationView *perturbation_view;
	ClHeatmapView *heatmap_view;
	ClLearningView *learning_view;
	ClConvergenceView *convergence_view;
	ClLessonPanel *lesson_panel;
	ClInspector *inspector;
	ClBackendList *backend_list;

	/* owned */
	GSettings *settings; /* a reference to the app's, may be NULL */
	ClScene *scene;
	char *path;
	gboolean dirty;
	ClUndoStack *undo;
	gboolean *enabled;

	ClComputeResult *result;
	gboolean result_stale;
	ClComputeJob *job;
	GCancellable *cancellable;
	gint64 job_started;
	guint progress_source;
	guint debounce_source;
	guint autosave_source;
	guint message_source;

	int runs_completed;
	gboolean playing;
	guint tick_id;
	gint64 last_frame;
	double time;
	gboolean updating_time;
	gboolean close_after_save;
	gboolean recovery_offered; /* the last session's file is kept until answered */
	gboolean fit_pending; /* frame the first trajectories of a newly loaded scene */
	gboolean closing_confirmed;
};

G_DEFINE_FINAL_TYPE(ClWindow, cl_window, GTK_TYPE_APPLICATION_WINDOW)

enum { SIGNAL_SCENE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void start_compute(ClWindow *self);
static void update_actions(ClWindow *self);
static void set_playing(ClWindow *self, gboolean playing);

/* ------------------------------------------------------------- helpers */

static ClApplication *app_of(ClWindow *self)
{
	return CL_APPLICATION(gtk_window_get_application(GTK_WINDOW(self)));
}

static const char *recovery_path(ClWindow *self)
{
	ClApplication *app = app_of(self);
	return app ? cl_application_recovery_path(app) : NULL;
}

static gboolean is_live(ClWindow *self)
{
	GVariant *state = g_action_group_get_action_state(G_ACTION_GROUP(self), "live");
	gboolean live = state && g_variant_get_boolean(state);
	g_clear_pointer(&state, g_variant_unref);
	return live;
}

static void show_message(ClWindow *self, const char *message);

static gboolean clear_message(gpointer data)
{
	ClWindow *self = data;
	gtk_label_set_text(self->message_label, "");
	self->message_source = 0;
	return G_SOURCE_REMOVE;
}

static void show_message(ClWindow *self, const char *message)
{
	gtk_label_set_text(self->message_label, message ? message : "");
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->message_label), message);
	g_clear_handle_id(&self->message_source, g_source_remove);
	if (message && *message)
		self->message_source = g_timeout_add_seconds(6, clear_message, self);
}

static void error_dialog(ClWindow *self, const char *primary, const char *secondary)
{
	GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(self), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
											   GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog), "%s", secondary);
	gtk_window_set_title(GTK_WINDOW(dialog), primary);
	g_signal_connect(dialog, "response", G_CALLBACK(gtk_window_destroy), NULL);
	gtk_window_present(GTK_WINDOW(dialog));
}

static void update_title(ClWindow *self)
{
	char *title = g_strdup_printf("%s%s", self->dirty ? "• " : "", self->scene->name);
	gtk_label_set_text(self->title_label, title);
	gtk_window_set_title(GTK_WINDOW(self), "ContactLab");
	g_free(title);
	char *subtitle = self->path ? g_filename_display_basename(self->path) : g_strdup("not saved to a file");
	gtk_label_set_text(self->subtitle_label, subtitle);
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->subtitle_label), self->path);
	g_free(subtitle);
}

/* ------------------------------------------------------------- playback */

static void sync_time(ClWindow *self)
{
	double duration = self->scene->duration;
	self->updating_time = TRUE;
	gtk_adjustment_configure(self->time_adjustment, fmin(self->time, duration), 0, duration,
							 cl_scene_dt(self->scene), duration / 10, 0);
	self->updating_time = FALSE;
	int step = (int)floor(self->time / cl_scene_dt(self->scene) + 1e-9);
	char text[64];
	g_snprintf(text, sizeof text, "t = %.3f s · n = %d", self->time, MIN(step, self->scene->steps));
	gtk_label_set_text(self->time_label, text);
	cl_scene_canvas_set_time(self->canvas, self->time);
}

static void set_time(ClWindow *self, double time)
{
	self->time = fmax(0, fmin(time, self->scene->duration));
	sync_time(self);
}

static double playback_speed(ClWindow *self)
{
	guint i = gtk_drop_down_get_selected(self->speed_dropdown);
	return i < G_N_ELEMENTS(playback_speeds) ? playback_speeds[i] : 1.0;
}

static gboolean loop_on(ClWindow *self)
{
	GVariant *state = g_action_group_get_action_state(G_ACTION_GROUP(self), "loop");
	gboolean loop = state && g_variant_get_boolean(state);
	g_clear_pointer(&state, g_variant_unref);
	return loop;
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
	(void)widget;
	ClWindow *self = data;
	gint64 now = gdk_frame_clock_get_frame_time(clock);
	double elapsed = self->last_frame ? (now - self->last_frame) / 1e6 : 0;
	self->last_frame = now;
	double t = self->time + elapsed * playback_speed(self);
	if (t >= self->scene->duration) {
		if (loop_on(self))
			t = 0;
		else {
			set_time(self, self->scene->duration);
			set_playing(self, FALSE);
			return G_SOURCE_REMOVE;
		}
	}
	set_time(self, t);
	return G_SOURCE_CONTINUE;
}

static void set_playing(ClWindow *self, gboolean playing)
{
	if (playing && !self->playing) {
		if (self->time >= self->scene->duration)
			set_time(self, 0);
		self->last_frame = 0;
		self->tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(self->canvas), tick, self, NULL);
	} else if (!playing && self->tick_id) {
		gtk_widget_remove_tick_callback(GTK_WIDGET(self->canvas), self->tick_id);
		self->tick_id = 0;
	}
	self->playing = playing;
	const char *icon = playing ? "media-playback-pause-symbolic" : "media-playback-start-symbolic";
	const char *name = playing ? "Pause" : "Play";
	GtkButton *buttons[] = {self->play_button, self->timeline_play_button};
	for (int i = 0; i < 2; i++) {
		gtk_button_set_icon_name(buttons[i], icon);
		gtk_accessible_update_property(GTK_ACCESSIBLE(buttons[i]), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
	}
}

static void time_changed(GtkAdjustment *adjustment, ClWindow *self)
{
	if (self->updating_time)
		return;
	self->time = gtk_adjustment_get_value(adjustment);
	sync_time(self);
}

static void speed_changed(GObject *object, GParamSpec *pspec, ClWindow *self)
{
	(void)object, (void)pspec;
	if (self->settings)
		g_settings_set_double(self->settings, "playback-speed", playback_speed(self));
}

/* ---------------------------------------------------------- computation */

static void stop_progress(ClWindow *self)
{
	g_clear_handle_id(&self->progress_source, g_source_remove);
	gtk_widget_set_visible(GTK_WIDGET(self->progress_bar), FALSE);
	gtk_widget_set_visible(GTK_WIDGET(self->cancel_button), FALSE);
}

static void cancel_compute(ClWindow *self)
{
	if (self->cancellable)
		g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	g_clear_object(&self->job);
	stop_progress(self);
	update_actions(self);
}

static gboolean progress_tick(gpointer data)
{
	ClWindow *self = data;
	if (self->job)
		gtk_progress_bar_set_fraction(self->progress_bar, cl_compute_job_progress(self->job));
	return G_SOURCE_CONTINUE;
}

static void show_result(ClWindow *self)
{
	cl_scene_canvas_set_result(self->canvas, self->result, self->result_stale);
	cl_gradient_view_set_result(self->gradient_view, self->result);
	cl_perturbation_view_set_result(self->perturbation_view, self->result, self->enabled);
	/* stale numbers stay readable but visibly out of date until the rerun lands */
	gtk_widget_set_opacity(GTK_WIDGET(self->gradient_view), self->result_stale ? 0.45 : 1.0);
}

static void compute_done(GObject *source, GAsyncResult *res, gpointer data)
{
	ClWindow *self = data;
	ClComputeJob *job = CL_COMPUTE_JOB(source);
	GError *error = NULL;
	ClComputeResult *result = cl_compute_job_finish(job, res, &error);
	/* a job that was superseded or cancelled must not show its numbers */
	if (job != self->job) {
		g_clear_pointer(&result, cl_compute_result_unref);
		g_clear_error(&error);
		g_object_unref(self);
		return;
	}
	g_clear_object(&self->job);
	g_clear_object(&self->cancellable);
	stop_progress(self);
	if (result) {
		g_clear_pointer(&self->result, cl_compute_result_unref);
		self->result = result;
		self->result_stale = FALSE;
		self->runs_completed++;
		int failed = 0;
		for (int i = 0; i < result->backend_count; i++)
			failed += result->backends[i].status.code != CL_STATUS_OK;
		char *status = g_strdup_printf("%d backend%s · %d steps · %.2f s%s%s", result->backend_count,
									   result->backend_count == 1 ? "" : "s", result->scene->steps,
									   (g_get_monotonic_time() - self->job_started) / 1e6, failed ? " · " : "",
									   failed ? "some results are not ok (see notes)" : "");
		gtk_label_set_text(self->status_label, status);
		g_free(status);
		show_result(self);
		if (self->fit_pending) {
			self->fit_pending = FALSE;
			cl_scene_canvas_zoom_fit(self->canvas);
		}
		if (!self->playing && self->time == 0 && result->scene->ball_count > 0)
			set_time(self, self->scene->duration);
	} else {
		gtk_label_set_text(self->status_label, error->message);
		g_error_free(error);
	}
	update_actions(self);
	g_object_unref(self);
}

static gboolean perturbation_shown(ClWindow *self)
{
	const char *page = gtk_stack_get_visible_child_name(self->results_stack);
	return page && g_str_equal(page, "perturbation");
}

static void start_compute(ClWindow *self)
{
	cancel_compute(self);
	g_clear_handle_id(&self->debounce_source, g_source_remove);
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(self->scene, message, sizeof message)) {
		gtk_label_set_text(self->status_label, message);
		return;
	}
	GArray *backends = g_array_new(FALSE, FALSE, sizeof(int));
	for (int b = 0; b < cl_backend_count(); b++)
		if (self->enabled[b])
			g_array_append_val(backends, b);
	if (backends->len == 0) {
		gtk_label_set_text(self->status_label, "No backend is enabled (see the Backends tab)");
		g_array_free(backends, TRUE);
		return;
	}
	/* the perturbation study costs several rollouts per backend: only when it is shown */
	const char *perturb = perturbation_shown(self) ? cl_perturbation_view_get_parameter(self->perturbation_view) : NULL;
	self->job = cl_compute_job_new(self->scene, (int *)(void *)backends->data, (int)backends->len, perturb,
								   cl_perturbation_view_get_delta(self->perturbation_view));
	g_array_free(backends, TRUE);
	self->cancellable = g_cancellable_new();
	self->job_started = g_get_monotonic_time();
	gtk_progress_bar_set_fraction(self->progress_bar, 0);
	gtk_widget_set_visible(GTK_WIDGET(self->progress_bar), TRUE);
	gtk_widget_set_visible(GTK_WIDGET(self->cancel_button), TRUE);
	gtk_label_set_text(self->status_label, "Computing…");
	self->progress_source = g_timeout_add(100, progress_tick, self);
	cl_compute_job_run_async(self->job, self->cancellable, compute_done, g_object_ref(self));
	update_actions(self);
}

static gboolean debounced_compute(gpointer data)
{
	ClWindow *self = data;
	self->debounce_source = 0;
	start_compute(self);
	return G_SOURCE_REMOVE;
}

/* The scene changed: old numbers are stale, a running job is obsolete. */
static void invalidate(ClWindow *self)
{
	cancel_compute(self);
	if (self->result) {
		self->result_stale = TRUE;
		show_result(self);
	}
	g_clear_handle_id(&self->debounce_source, g_source_remove);
	if (is_live(self))
		self->debounce_source = g_timeout_add(LIVE_DEBOUNCE_MS, debounced_compute, self);
	else
		gtk_label_set_text(self->status_label, "Scene changed: press Run (Ctrl+R) to recompute");
}

/* -------------------------------------------------------- scene changes */

static gboolean autosave(gpointer data)
{
	ClWindow *self = data;
	self->autosave_source = 0;
	const char *path = recovery_path(self);
	if (!path || !self->dirty || self->recovery_offered)
		return G_SOURCE_REMOVE;
	char *dir = g_path_get_dirname(path);
	g_mkdir_with_parents(dir, 0700);
	g_free(dir);
	GError *error = NULL;
	if (!cl_scene_file_save(self->scene, path, &error)) {
		g_warning("autosave to %s failed: %s", path, error->message);
		g_error_free(error);
	}
	return G_SOURCE_REMOVE;
}

static void drop_recovery(ClWindow *self)
{
	g_clear_handle_id(&self->autosave_source, g_source_remove);
	const char *path = recovery_path(self);
	if (path && !self->recovery_offered)
		g_unlink(path);
}

static void set_dirty(ClWindow *self, gboolean dirty)
{
	self->dirty = dirty;
	update_title(self);
	if (dirty) {
		g_clear_handle_id(&self->autosave_source, g_source_remove);
		self->autosave_source = g_timeout_add(AUTOSAVE_DELAY_MS, autosave, self);
	} else
		drop_recovery(self);
}

static void refresh_sidebar(ClWindow *self)
{
	cl_inspector_refresh(self->inspector, cl_scene_canvas_get_selection(self->canvas));
	cl_backend_list_refresh(self->backend_list);
}

/* Something edited self->scene in place. */
static void scene_touched(ClWindow *self)
{
	cl_perturbation_view_set_scene(self->perturbation_view, self->scene);
	gtk_widget_queue_draw(GTK_WIDGET(self->canvas));
	sync_time(self);
	update_title(self);
	invalidate(self);
	g_signal_emit(self, signals[SIGNAL_SCENE_CHANGED], 0);
}

void cl_window_scene_edited(ClWindow *self, const ClScene *before, const char *label, const char *merge_key)
{
	cl_undo_stack_push(self->undo, before, label, merge_key);
	set_dirty(self, TRUE);
	scene_touched(self);
	update_actions(self);
}

/* Replaces the scene (load, undo, redo); takes ownership of scene. */
static void replace_scene(ClWindow *self, ClScene *scene, gboolean fit)
{
	set_playing(self, FALSE);
	ClScene *old = self->scene;
	self->scene = scene;
	cl_scene_canvas_set_scene(self->canvas, scene);
	cl_scene_free(old);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	self->result_stale = FALSE;
	show_result(self);
	self->time = 0;
	sync_time(self);
	if (fit) {
		cl_scene_canvas_zoom_fit(self->canvas);
		self->fit_pending = TRUE;
	}
	cl_perturbation_view_set_scene(self->perturbation_view, scene);
	refresh_sidebar(self);
	update_title(self);
	update_actions(self);
	cancel_compute(self);
	g_signal_emit(self, signals[SIGNAL_SCENE_CHANGED], 0);
	if (is_live(self))
		start_compute(self);
	else
		gtk_label_set_text(self->status_label, "Press Run (Ctrl+R) to simulate every enabled backend");
}

static void load_scene(ClWindow *self, ClScene *scene, const char *path, const char *label)
{
	cl_undo_stack_push(self->undo, self->scene, label, NULL);
	cl_undo_stack_seal(self->undo);
	g_free(self->path);
	self->path = g_strdup(path);
	replace_scene(self, scene, TRUE);
	set_dirty(self, FALSE);
}

void cl_window_load_preset(ClWindow *self, const char *id)
{
	GError *error = NULL;
	ClScene *scene = cl_preset_load(id, &error);
	if (!scene) {
		error_dialog(self, "Could not load the preset", error->message);
		g_error_free(error);
		return;
	}
	load_scene(self, scene, NULL, "Load preset");
}

void cl_window_replace_scene(ClWindow *self, ClScene *scene, const char *label)
{
	load_scene(self, scene, NULL, label);
}

gboolean cl_window_open_path(ClWindow *self, const char *path)
{
	GError *error = NULL;
	ClScene *scene = cl_scene_file_load(path, &error);
	if (!scene) {
		/* the current scene stays; the loader's message says file, field and reason */
		error_dialog(self, "Could not open the scene", error->message);
		g_error_free(error);
		return FALSE;
	}
	load_scene(self, scene, path, "Open file");
	if (self->settings) {
		char *dir = g_path_get_dirname(path);
		g_settings_set_string(self->settings, "last-directory", dir);
		g_free(dir);
	}
	return TRUE;
}

ClScene *cl_window_get_scene(ClWindow *self)
{
	return self->scene;
}

const gboolean *cl_window_get_enabled(ClWindow *self)
{
	return self->enabled;
}

ClComputeResult *cl_window_get_result(ClWindow *self)
{
	return self->result;
}

GtkWidget *cl_window_get_view(ClWindow *self, const char *name)
{
	return gtk_stack_get_child_by_name(self->results_stack, name);
}

static void store_enabled(ClWindow *self)
{
	if (!self->settings)
		return;
	GPtrArray *ids = g_ptr_array_new();
	for (int b = 0; b < cl_backend_count(); b++)
		if (self->enabled[b])
			g_ptr_array_add(ids, (gpointer)cl_backend_info(b)->id);
	g_ptr_array_add(ids, NULL);
	g_settings_set_strv(self->settings, "enabled-backends", (const char *const *)ids->pdata);
	g_ptr_array_free(ids, TRUE);
}

void cl_window_set_enabled(ClWindow *self, int backend, gboolean enabled)
{
	if (self->enabled[backend] == enabled)
		return;
	self->enabled[backend] = enabled;
	cl_scene_canvas_set_backend_visible(self->canvas, self->enabled);
	store_enabled(self);
	invalidate(self);
}

/* --------------------------------------------------------------- saving */

static gboolean save_to(ClWindow *self, const char *path)
{
	GError *error = NULL;
	if (!cl_scene_file_save(self->scene, path, &error)) {
		error_dialog(self, "Could not save the scene", error->message);
		g_error_free(error);
		return FALSE;
	}
	if (path != self->path) {
		g_free(self->path);
		self->path = g_strdup(path);
	}
	set_dirty(self, FALSE);
	char *name = g_filename_display_basename(path);
	char *message = g_strdup_printf("Saved %s", name);
	gtk_label_set_text(self->status_label, message);
	g_free(message);
	g_free(name);
	if (self->settings) {
		char *dir = g_path_get_dirname(path);
		g_settings_set_string(self->settings, "last-directory", dir);
		g_free(dir);
	}
	return TRUE;
}

static GtkFileFilter *json_filter(void)
{
	GtkFileFilter *filter = gtk_file_filter_new();
	gtk_file_filter_set_name(filter, "ContactLab scenes (*.json)");
	gtk_file_filter_add_pattern(filter, "*.json");
	gtk_file_filter_add_mime_type(filter, "application/json");
	return filter;
}

static void set_start_folder(ClWindow *self, GtkFileChooser *chooser)
{
	char *dir = self->settings ? g_settings_get_string(self->settings, "last-directory") : NULL;
	if (dir && *dir && g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		GFile *folder = g_file_new_for_path(dir);
		gtk_file_chooser_set_current_folder(chooser, folder, NULL);
		g_object_unref(folder);
	}
	g_free(dir);
}

static void save_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	if (response == GTK_RESPONSE_ACCEPT) {
		GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		char *path = g_file_get_path(file);
		if (path && save_to(self, path) && self->close_after_save) {
			self->closing_confirmed = TRUE;
			gtk_window_close(GTK_WINDOW(self));
		}
		g_free(path);
		g_object_unref(file);
	}
	self->close_after_save = FALSE;
	g_object_unref(dialog);
}

static void choose_save_path(ClWindow *self)
{
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new("Save Scene", GTK_WINDOW(self),
																GTK_FILE_CHOOSER_ACTION_SAVE, "_Save", "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), json_filter());
	set_start_folder(self, GTK_FILE_CHOOSER(chooser));
	char *name = g_strdup_printf("%s.json", self->scene->name);
	g_strdelimit(name, "/\\:", '-');
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
	g_free(name);
	g_signal_connect(chooser, "response", G_CALLBACK(save_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void open_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	if (response == GTK_RESPONSE_ACCEPT) {
		GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		char *path = g_file_get_path(file);
		if (path)
			cl_window_open_path(self, path);
		g_free(path);
		g_object_unref(file);
	}
	g_object_unref(dialog);
}

void cl_window_choose_file_to_open(ClWindow *self)
{
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new("Open Scene", GTK_WINDOW(self),
																GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), json_filter());
	set_start_folder(self, GTK_FILE_CHOOSER(chooser));
	g_signal_connect(chooser, "response", G_CALLBACK(open_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

/* Writes what the canvas shows through its one draw function: PNG at twice
 * the screen resolution, or SVG / PDF (vector, real text) by extension;
 * into a temporary file renamed over the target, so never a half file. */
static gboolean draw_canvas(cairo_t *cr, double width, double height, gpointer canvas, GError **error)
{
	(void)error;
	cl_scene_canvas_render(canvas, cr, width, height);
	return TRUE;
}

/* The canvas at its on-screen size; PNG at twice the resolution. */
static gboolean export_canvas(ClWindow *self, const char *path, GError **error)
{
	int w = MAX(gtk_widget_get_width(GTK_WIDGET(self->canvas)), 200);
	int h = MAX(gtk_widget_get_height(GTK_WIDGET(self->canvas)), 150);
	return cl_plot_export_document(path, CL_PLOT_FORMAT_AUTO, w, h, 144, draw_canvas, self->canvas, error);
}

static void export_to(ClWindow *self, const char *path)
{
	GError *error = NULL;
	if (!export_canvas(self, path, &error)) {
		error_dialog(self, "Could not export the canvas", error->message);
		g_error_free(error);
	}
}

static void export_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	if (response == GTK_RESPONSE_ACCEPT) {
		GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
		char *path = g_file_get_path(file);
		if (path)
			export_to(self, path);
		g_free(path);
		g_object_unref(file);
	}
	g_object_unref(dialog);
}

/* -------------------------------------------------------------- actions */

static void action_run(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	start_compute(data);
}

static void action_cancel(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	if (self->job) {
		cancel_compute(self);
		gtk_label_set_text(self->status_label, "Cancelled");
	}
}

static void action_play(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	set_playing(data, TRUE);
}

static void action_pause(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	set_playing(data, FALSE);
}

static void action_toggle_play(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	set_playing(self, !self->playing);
}

static void action_step(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	set_playing(self, FALSE);
	double dt = cl_scene_dt(self->scene);
	int n = (int)llround(self->time / dt) + (g_str_equal(g_action_get_name(G_ACTION(a)), "step-forward") ? 1 : -1);
	set_time(self, n * dt);
}

static void action_undo(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	gboolean undo = g_str_equal(g_action_get_name(G_ACTION(a)), "undo");
	const char *label = undo ? cl_undo_stack_undo_label(self->undo) : cl_undo_stack_redo_label(self->undo);
	char *message = label ? g_strdup_printf("%s: %s", undo ? "Undone" : "Redone", label) : NULL;
	ClScene *scene = undo ? cl_undo_stack_undo(self->undo, self->scene) : cl_undo_stack_redo(self->undo, self->scene);
	if (scene) {
		replace_scene(self, scene, FALSE);
		set_dirty(self, TRUE);
		show_message(self, message);
	}
	g_free(message);
}

static void action_save(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	if (self->path)
		save_to(self, self->path);
	else
		choose_save_path(self);
}

static void action_save_as(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a;
	ClWindow *self = data;
	const char *path = g_variant_get_string(p, NULL);
	if (*path)
		save_to(self, path);
	else
		choose_save_path(self);
}

static void action_export_png(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new("Export Canvas", GTK_WINDOW(self),
																GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), "canvas.png");
	set_start_folder(self, GTK_FILE_CHOOSER(chooser));
	g_signal_connect(chooser, "response", G_CALLBACK(export_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_export_canvas(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a;
	export_to(data, g_variant_get_string(p, NULL));
}

static void action_zoom(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	const char *name = g_action_get_name(G_ACTION(a));
	if (g_str_equal(name, "zoom-fit"))
		cl_scene_canvas_zoom_fit(self->canvas);
	else
		cl_scene_canvas_zoom(self->canvas, g_str_equal(name, "zoom-in") ? 1.25 : 0.8);
}

static void action_close(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	gtk_window_close(GTK_WINDOW(data));
}

static void action_select_object(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a;
	ClWindow *self = data;
	const char *id = g_variant_get_string(p, NULL);
	int ball = cl_scene_find_ball(self->scene, id), wall = cl_scene_find_wall(self->scene, id);
	ClPick pick = ball >= 0 ? (ClPick){CL_PICK_BALL, ball}
				  : wall >= 0 ? (ClPick){CL_PICK_WALL, wall}
							  : (ClPick){CL_PICK_NONE, -1};
	cl_scene_canvas_set_selection(self->canvas, pick);
}

static void change_tool(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	const char *tool = g_variant_get_string(value, NULL);
	static const char *const names[] = {"select", "ball", "wall", "target"};
	for (int i = 0; i < 4; i++) {
		if (g_str_equal(tool, names[i])) {
			cl_scene_canvas_set_tool(self->canvas, (ClTool)i);
			g_simple_action_set_state(a, value);
		}
	}
}

static void change_live(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	g_simple_action_set_state(a, value);
	if (self->settings)
		g_settings_set_boolean(self->settings, "live", g_variant_get_boolean(value));
	if (g_variant_get_boolean(value) && self->result_stale)
		start_compute(self);
}

static void change_loop(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	g_simple_action_set_state(a, value);
	if (self->settings)
		g_settings_set_boolean(self->settings, "loop", g_variant_get_boolean(value));
}

static const GActionEntry win_actions[] = {
	{.name = "run", .activate = action_run},
	{.name = "cancel", .activate = action_cancel},
	{.name = "play", .activate = action_play},
	{.name = "pause", .activate = action_pause},
	{.name = "toggle-play", .activate = action_toggle_play},
	{.name = "step-forward", .activate = action_step},
	{.name = "step-back", .activate = action_step},
	{.name = "undo", .activate = action_undo},
	{.name = "redo", .activate = action_undo},
	{.name = "save", .activate = action_save},
	{.name = "save-as", .activate = action_save_as, .parameter_type = "s"},
	{.name = "export-png", .activate = action_export_png},
	{.name = "export-canvas", .activate = action_export_canvas, .parameter_type = "s"},
	{.name = "zoom-fit", .activate = action_zoom},
	{.name = "zoom-in", .activate = action_zoom},
	{.name = "zoom-out", .activate = action_zoom},
	{.name = "close", .activate = action_close},
	{.name = "select-object", .activate = action_select_object, .parameter_type = "s"},
	{.name = "tool", .parameter_type = "s", .state = "'select'", .change_state = change_tool},
	{.name = "live", .state = "true", .change_state = change_live},
	{.name = "loop", .state = "false", .change_state = change_loop},
};

static void enable(ClWindow *self, const char *name, gboolean enabled)
{
	GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), name);
	if (action)
		g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

static void update_actions(ClWindow *self)
{
	cl_gradient_view_set_progress_state(self->gradient_view, self->runs_completed, self->job != NULL);
	enable(self, "undo", cl_undo_stack_can_undo(self->undo));
	enable(self, "redo", cl_undo_stack_can_redo(self->undo));
	enable(self, "cancel", self->job != NULL);
}

/* ------------------------------------------------------ canvas signals */

static void results_page_changed(GObject *stack, GParamSpec *pspec, ClWindow *self)
{
	(void)stack, (void)pspec;
	/* a result computed while the view was hidden has no perturbation study yet */
	if (perturbation_shown(self) && self->result && !self->result->has_perturbation && !self->job)
		start_compute(self);
}

static void perturbation_changed(ClPerturbationView *view, ClWindow *self)
{
	if (self->settings)
		g_settings_set_double(self->settings, "perturbation-delta", cl_perturbation_view_get_delta(view));
	invalidate(self);
}

static void canvas_changed(ClSceneCanvas *canvas, ClWindow *self)
{
	(void)canvas;
	cl_perturbation_view_set_scene(self->perturbation_view, self->scene);
	refresh_sidebar(self);
	invalidate(self);
}

static void canvas_edit_done(ClSceneCanvas *canvas, gpointer before, const char *label, ClWindow *self)
{
	(void)canvas;
	cl_undo_stack_push(self->undo, before, label, NULL);
	cl_undo_stack_seal(self->undo);
	set_dirty(self, TRUE);
	refresh_sidebar(self);
	update_actions(self);
	show_message(self, NULL);
}

static void canvas_refused(ClSceneCanvas *canvas, const char *message, ClWindow *self)
{
	(void)canvas;
	show_message(self, message);
}

static void canvas_selection(ClSceneCanvas *canvas, ClWindow *self)
{
	(void)canvas;
	refresh_sidebar(self);
}

/* ------------------------------------------------------- close, recover */

static void close_response(GtkDialog *dialog, int response, ClWindow *self)
{
	gtk_window_destroy(GTK_WINDOW(dialog));
	if (response == GTK_RESPONSE_REJECT) { /* discard */
		drop_recovery(self);
		self->closing_confirmed = TRUE;
		gtk_window_close(GTK_WINDOW(self));
	} else if (response == GTK_RESPONSE_ACCEPT) {
		if (self->path) {
			if (save_to(self, self->path)) {
				self->closing_confirmed = TRUE;
				gtk_window_close(GTK_WINDOW(self));
			}
		} else {
			self->close_after_save = TRUE;
			choose_save_path(self);
		}
	}
}

static gboolean cl_window_close_request(GtkWindow *window)
{
	ClWindow *self = CL_WINDOW(window);
	if (self->dirty && !self->closing_confirmed) {
		GtkWidget *dialog = gtk_message_dialog_new(window, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
												   GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
												   "Save changes to “%s” before closing?", self->scene->name);
		gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog),
												 "The scene has changes that are not saved to a file.");
		gtk_dialog_add_buttons(GTK_DIALOG(dialog), "_Cancel", GTK_RESPONSE_CANCEL, "_Discard", GTK_RESPONSE_REJECT,
							   "_Save", GTK_RESPONSE_ACCEPT, NULL);
		gtk_window_set_title(GTK_WINDOW(dialog), "Unsaved changes");
		g_signal_connect(dialog, "response", G_CALLBACK(close_response), self);
		gtk_window_present(GTK_WINDOW(dialog));
		return TRUE;
	}
	if (self->settings) {
		int w, h;
		gtk_window_get_default_size(window, &w, &h);
		g_settings_set_int(self->settings, "window-width", w);
		g_settings_set_int(self->settings, "window-height", h);
		g_settings_set_boolean(self->settings, "window-maximized", gtk_window_is_maximized(window));
	}
	cancel_compute(self);
	if (!self->dirty)
		drop_recovery(self);
	return GTK_WINDOW_CLASS(cl_window_parent_class)->close_request(window);
}

typedef struct {
	ClWindow *window;
	char *path;
} Recovery;

static void recovery_response(GtkDialog *dialog, int response, Recovery *r)
{
	gtk_window_destroy(GTK_WINDOW(dialog));
	r->window->recovery_offered = FALSE;
	if (response == GTK_RESPONSE_ACCEPT) {
		GError *error = NULL;
		ClScene *scene = cl_scene_file_load(r->path, &error);
		if (scene) {
			load_scene(r->window, scene, NULL, "Restore recovered scene");
			set_dirty(r->window, TRUE);
		} else {
			error_dialog(r->window, "Could not restore the scene", error->message);
			g_error_free(error);
		}
	} else
		g_unlink(r->path);
	g_object_unref(r->window);
	g_free(r->path);
	g_free(r);
}

void cl_window_offer_recovery(ClWindow *self, const char *path)
{
	Recovery *r = g_new(Recovery, 1);
	self->recovery_offered = TRUE;
	r->window = g_object_ref(self);
	r->path = g_strdup(path);
	GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(self), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
											   GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
											   "Restore the unsaved scene?");
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog),
											 "ContactLab did not close cleanly last time. A recovery copy of the scene "
											 "you were editing was kept in %s.",
											 path);
	gtk_dialog_add_buttons(GTK_DIALOG(dialog), "_Discard", GTK_RESPONSE_REJECT, "_Restore", GTK_RESPONSE_ACCEPT, NULL);
	gtk_window_set_title(GTK_WINDOW(dialog), "Recover scene");
	g_signal_connect(dialog, "response", G_CALLBACK(recovery_response), r);
	gtk_window_present(GTK_WINDOW(dialog));
}

void cl_window_show_preferences(ClWindow *self)
{
	gtk_window_present(GTK_WINDOW(cl_preferences_new(GTK_WINDOW(self), self->settings)));
}

/* The preferences window writes settings; the window follows them. */
static void setting_changed(GSettings *settings, const char *key, ClWindow *self)
{
	if (g_str_equal(key, "live") || g_str_equal(key, "loop")) {
		gboolean value = g_settings_get_boolean(settings, key);
		GVariant *state = g_action_group_get_action_state(G_ACTION_GROUP(self), key);
		if (state && g_variant_get_boolean(state) != value)
			g_action_group_change_action_state(G_ACTION_GROUP(self), key, g_variant_new_boolean(value));
		g_clear_pointer(&state, g_variant_unref);
	} else if (g_str_equal(key, "playback-speed")) {
		double speed = g_settings_get_double(settings, key);
		if (fabs(speed - playback_speed(self)) > 1e-12) {
			guint best = 1;
			for (guint i = 0; i < G_N_ELEMENTS(playback_speeds); i++)
				if (fabs(log(playback_speeds[i] / speed)) < fabs(log(playback_speeds[best] / speed)))
					best = i;
			gtk_drop_down_set_selected(self->speed_dropdown, best);
		}
	} else if (g_str_equal(key, "perturbation-delta")) {
		double delta = g_settings_get_double(settings, key);
		if (fabs(delta - cl_perturbation_view_get_delta(self->perturbation_view)) > 1e-15) {
			cl_perturbation_view_set_delta(self->perturbation_view, delta);
			invalidate(self);
		}
	}
}

/* ------------------------------------------------------------ lifecycle */

static void cl_window_dispose(GObject *object)
{
	ClWindow *self = CL_WINDOW(object);
	set_playing(self, FALSE);
	cancel_compute(self);
	g_clear_handle_id(&self->debounce_source, g_source_remove);
	g_clear_handle_id(&self->autosave_source, g_source_remove);
	g_clear_handle_id(&self->message_source, g_source_remove);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	g_clear_object(&self->settings);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_WINDOW);
	G_OBJECT_CLASS(cl_window_parent_class)->dispose(object);
}

static void cl_window_finalize(GObject *object)
{
	ClWindow *self = CL_WINDOW(object);
	cl_scene_free(self->scene);
	cl_undo_stack_free(self->undo);
	g_free(self->enabled);
	g_free(self->path);
	G_OBJECT_CLASS(cl_window_parent_class)->finalize(object);
}

static void cl_window_class_init(ClWindowClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_window_dispose;
	object_class->finalize = cl_window_finalize;
	GTK_WINDOW_CLASS(klass)->close_request = cl_window_close_request;

	g_type_ensure(CL_TYPE_SCENE_CANVAS);
	g_type_ensure(CL_TYPE_GRADIENT_VIEW);
	g_type_ensure(CL_TYPE_INSPECTOR);
	g_type_ensure(CL_TYPE_PERTURBATION_VIEW);
	g_type_ensure(CL_TYPE_BACKEND_LIST);
	g_type_ensure(CL_TYPE_HEATMAP_VIEW);
	g_type_ensure(CL_TYPE_LEARNING_VIEW);
	g_type_ensure(CL_TYPE_CONVERGENCE_VIEW);
	g_type_ensure(CL_TYPE_LESSON_PANEL);
	/* the scene was edited or replaced (views that depend on it listen) */
	signals[SIGNAL_SCENE_CHANGED] = g_signal_new("scene-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
												 NULL, NULL, NULL, G_TYPE_NONE, 0);
	gtk_widget_class_set_template_from_resource(widget_class, "/io/github/contactlab/ContactLab/ui/cl-window.ui");
	gtk_widget_class_bind_template_child(widget_class, ClWindow, title_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, subtitle_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, canvas);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, message_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, play_button);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, timeline_play_button);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, time_adjustment);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, time_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, speed_dropdown);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, status_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, progress_bar);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, cancel_button);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, results_stack);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, results_switcher);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, sidebar_switcher);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, gradient_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, perturbation_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, heatmap_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, learning_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, convergence_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, lesson_panel);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, inspector);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, backend_list);
}

/* GtkStackSwitcher's buttons carry only a label child: name them after it. */
static void name_switcher_buttons(GtkWidget *switcher)
{
	for (GtkWidget *b = gtk_widget_get_first_child(switcher); b; b = gtk_widget_get_next_sibling(b)) {
		GtkWidget *label = gtk_widget_get_first_child(b);
		if (GTK_IS_LABEL(label))
			gtk_accessible_update_property(GTK_ACCESSIBLE(b), GTK_ACCESSIBLE_PROPERTY_LABEL,
										   gtk_label_get_text(GTK_LABEL(label)), -1);
	}
}

static void cl_window_init(ClWindow *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	name_switcher_buttons(self->results_switcher);
	name_switcher_buttons(self->sidebar_switcher);
	self->undo = cl_undo_stack_new(200);
	self->enabled = g_new(gboolean, (gsize)cl_backend_count());
	for (int b = 0; b < cl_backend_count(); b++)
		self->enabled[b] = TRUE;
	g_action_map_add_action_entries(G_ACTION_MAP(self), win_actions, G_N_ELEMENTS(win_actions), self);
	g_signal_connect(self->time_adjustment, "value-changed", G_CALLBACK(time_changed), self);
	g_signal_connect(self->speed_dropdown, "notify::selected", G_CALLBACK(speed_changed), self);
	g_signal_connect(self->canvas, "scene-changed", G_CALLBACK(canvas_changed), self);
	g_signal_connect(self->perturbation_view, "changed", G_CALLBACK(perturbation_changed), self);
	g_signal_connect(self->results_stack, "notify::visible-child-name", G_CALLBACK(results_page_changed), self);
	g_signal_connect(self->canvas, "edit-done", G_CALLBACK(canvas_edit_done), self);
	g_signal_connect(self->canvas, "edit-refused", G_CALLBACK(canvas_refused), self);
	g_signal_connect(self->canvas, "selection-changed", G_CALLBACK(canvas_selection), self);
}

static void apply_settings(ClWindow *self)
{
	GSettings *s = self->settings;
	if (!s)
		return;
	gtk_window_set_default_size(GTK_WINDOW(self), g_settings_get_int(s, "window-width"),
								g_settings_get_int(s, "window-height"));
	if (g_settings_get_boolean(s, "window-maximized"))
		gtk_window_maximize(GTK_WINDOW(self));
	g_action_group_change_action_state(G_ACTION_GROUP(self), "live",
									   g_variant_new_boolean(g_settings_get_boolean(s, "live")));
	g_action_group_change_action_state(G_ACTION_GROUP(self), "loop",
									   g_variant_new_boolean(g_settings_get_boolean(s, "loop")));
	double speed = g_settings_get_double(s, "playback-speed");
	guint best = 1;
	for (guint i = 0; i < G_N_ELEMENTS(playback_speeds); i++)
		if (fabs(log(playback_speeds[i] / speed)) < fabs(log(playback_speeds[best] / speed)))
			best = i;
	gtk_drop_down_set_selected(self->speed_dropdown, best);
	cl_perturbation_view_set_delta(self->perturbation_view, g_settings_get_double(s, "perturbation-delta"));
	char **ids = g_settings_get_strv(s, "enabled-backends");
	if (ids[0]) {
		for (int b = 0; b < cl_backend_count(); b++)
			self->enabled[b] = g_strv_contains((const char *const *)ids, cl_backend_info(b)->id);
	}
	g_strfreev(ids);
}

ClWindow *cl_window_new(ClApplication *app)
{
	ClWindow *self = g_object_new(CL_TYPE_WINDOW, "application", app, "show-menubar", FALSE, NULL);
	GSettings *settings = cl_application_get_settings(app);
	self->settings = settings ? g_object_ref(settings) : NULL;
	apply_settings(self);
	if (self->settings)
		g_signal_connect_object(self->settings, "changed", G_CALLBACK(setting_changed), self, 0);
	cl_scene_canvas_set_backend_visible(self->canvas, self->enabled);
	/* open on the paper's Task 3, the scene the workbench is built around */
	GError *error = NULL;
	ClScene *scene = cl_preset_load("task3-two-balls", &error);
	if (!scene) {
		g_warning("%s", error->message);
		g_clear_error(&error);
		scene = cl_scene_new();
	}
	self->scene = scene;
	cl_scene_canvas_set_scene(self->canvas, self->scene);
	cl_perturbation_view_set_scene(self->perturbation_view, self->scene);
	cl_inspector_set_window(self->inspector, self);
	cl_backend_list_set_window(self->backend_list, self);
	cl_heatmap_view_set_window(self->heatmap_view, self);
	cl_learning_view_set_window(self->learning_view, self);
	cl_convergence_view_set_window(self->convergence_view, self);
	cl_lesson_panel_set_window(self->lesson_panel, self);
	cl_view_actions_install(self, self->heatmap_view, self->learning_view);
	update_title(self);
	sync_time(self);
	update_actions(self);
	if (is_live(self))
		start_compute(self);
	return self;
}
