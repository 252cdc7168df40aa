#include "cl-window.h"

#include "cl-backend-list.h"
#include "cl-convergence-view.h"
#include "cl-gradient-view.h"
#include "cl-heatmap-view.h"
#include "cl-inspector.h"
#include "cl-learning-view.h"
#include "cl-lesson-panel.h"
#include "cl-perturbation-view.h"
#include "cl-preferences.h"
#include "cl-scene-canvas.h"
#include "cl-view-actions.h"
#include "plot.h"
#include "scene-file.h"

#include <math.h>

/* How long a passing message stays in the status line. */
#define MESSAGE_SECONDS 6

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

	/* owned */
	ClDocument *doc;
	ClRunner *runner;
	GSettings *settings; /* the app's, may be NULL */
	guint message_source;

	gboolean playing;
	guint tick_id;
	gint64 last_frame;
	double time;
	gboolean updating_time;
	gboolean close_after_save;
	gboolean closing_confirmed;
};

static void cl_window_workbench_init(ClWorkbenchInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClWindow, cl_window, GTK_TYPE_APPLICATION_WINDOW,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_WORKBENCH, cl_window_workbench_init))

static void update_actions(ClWindow *self);
static void set_playing(ClWindow *self, gboolean playing);

/* ----------------------------------------------------------- workbench */

static ClDocument *get_document(ClWorkbench *workbench)
{
	return CL_WINDOW(workbench)->doc;
}

static ClRunner *get_runner(ClWorkbench *workbench)
{
	return CL_WINDOW(workbench)->runner;
}

static ClResultsView *get_view(ClWorkbench *workbench, const char *name)
{
	GtkWidget *page = gtk_stack_get_child_by_name(CL_WINDOW(workbench)->results_stack, name);
	return page && CL_IS_RESULTS_VIEW(page) ? CL_RESULTS_VIEW(page) : NULL;
}

static void present_view(ClWorkbench *workbench, const char *name)
{
	ClWindow *self = CL_WINDOW(workbench);
	if (gtk_stack_get_child_by_name(self->results_stack, name))
		gtk_stack_set_visible_child_name(self->results_stack, name);
}

static gboolean clear_message(gpointer data)
{
	ClWindow *self = data;
	gtk_label_set_text(self->message_label, "");
	self->message_source = 0;
	return G_SOURCE_REMOVE;
}

static void notify(ClWorkbench *workbench, const char *message)
{
	ClWindow *self = CL_WINDOW(workbench);
	gtk_label_set_text(self->message_label, message ? message : "");
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->message_label), message);
	g_clear_handle_id(&self->message_source, g_source_remove);
	if (message && *message)
		self->message_source = g_timeout_add_seconds(MESSAGE_SECONDS, clear_message, self);
}

/* The one error dialog; also in the log, for a script that sees no dialog. */
static void report(ClWorkbench *workbench, const char *primary, const char *detail)
{
	g_warning("%s: %s", primary, detail);
	GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(workbench), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
											   GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
	gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(dialog), "%s", detail);
	gtk_window_set_title(GTK_WINDOW(dialog), primary);
	g_signal_connect(dialog, "response", G_CALLBACK(gtk_window_destroy), NULL);
	gtk_window_present(GTK_WINDOW(dialog));
}

static void cl_window_workbench_init(ClWorkbenchInterface *iface)
{
	iface->get_document = get_document;
	iface->get_runner = get_runner;
	iface->get_view = get_view;
	iface->present_view = present_view;
	iface->notify = notify;
	iface->report = report;
}

/* -------------------------------------------------------------- title */

static void update_title(ClWindow *self)
{
	const char *path = cl_document_get_path(self->doc);
	g_autofree char *title =
		g_strdup_printf("%s%s", cl_document_get_dirty(self->doc) ? "• " : "", cl_document_get_scene(self->doc)->name);
	gtk_label_set_text(self->title_label, title);
	gtk_window_set_title(GTK_WINDOW(self), "ContactLab");
	g_autofree char *subtitle = path ? g_filename_display_basename(path) : g_strdup("not saved to a file");
	gtk_label_set_text(self->subtitle_label, subtitle);
	gtk_widget_set_tooltip_text(GTK_WIDGET(self->subtitle_label), path);
}

/* ------------------------------------------------------------- playback */

static const ClScene *scene_of(ClWindow *self)
{
	return cl_document_get_scene(self->doc);
}

static void sync_time(ClWindow *self)
{
	const ClScene *scene = scene_of(self);
	double duration = scene->duration, dt = cl_scene_dt(scene);
	self->updating_time = TRUE;
	gtk_adjustment_configure(self->time_adjustment, fmin(self->time, duration), 0, duration, dt, duration / 10, 0);
	self->updating_time = FALSE;
	int step = (int)floor(self->time / dt + 1e-9);
	char text[64];
	g_snprintf(text, sizeof text, "t = %.3f s · n = %d", self->time, MIN(step, scene->steps));
	gtk_label_set_text(self->time_label, text);
	cl_scene_canvas_set_time(self->canvas, self->time);
}

static void set_time(ClWindow *self, double time)
{
	self->time = fmax(0, fmin(time, scene_of(self)->duration));
	sync_time(self);
}

static double playback_speed(ClWindow *self)
{
	guint i = gtk_drop_down_get_selected(self->speed_dropdown);
	return i < G_N_ELEMENTS(playback_speeds) ? playback_speeds[i] : 1.0;
}

static gboolean action_state(ClWindow *self, const char *name)
{
	g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(self), name);
	return state && g_variant_get_boolean(state);
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
	(void)widget;
	ClWindow *self = data;
	gint64 now = gdk_frame_clock_get_frame_time(clock);
	double elapsed = self->last_frame ? (now - self->last_frame) / 1e6 : 0;
	self->last_frame = now;
	double t = self->time + elapsed * playback_speed(self), duration = scene_of(self)->duration;
	if (t >= duration) {
		if (action_state(self, "loop"))
			t = 0;
		else {
			set_time(self, duration);
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
		if (self->time >= scene_of(self)->duration)
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

static guint nearest_speed(double speed)
{
	guint best = 1;
	for (guint i = 0; i < G_N_ELEMENTS(playback_speeds); i++)
		if (fabs(log(playback_speeds[i] / speed)) < fabs(log(playback_speeds[best] / speed)))
			best = i;
	return best;
}

static void speed_changed(GObject *object, GParamSpec *pspec, ClWindow *self)
{
	(void)object, (void)pspec;
	if (self->settings && fabs(g_settings_get_double(self->settings, "playback-speed") - playback_speed(self)) > 1e-12)
		g_settings_set_double(self->settings, "playback-speed", playback_speed(self));
}

/* ------------------------------------------------------- the document */

static void store_enabled(ClWindow *self)
{
	if (!self->settings)
		return;
	g_autoptr(GPtrArray) ids = g_ptr_array_new();
	for (int b = 0; b < cl_backend_count(); b++)
		if (cl_document_backend_enabled(self->doc, b))
			g_ptr_array_add(ids, (gpointer)cl_backend_info(b)->id);
	g_ptr_array_add(ids, NULL);
	g_settings_set_strv(self->settings, "enabled-backends", (const char *const *)ids->pdata);
}

static void document_changed(ClDocument *doc, guint what, ClWindow *self)
{
	if (what & CL_DOCUMENT_REPLACED) {
		set_playing(self, FALSE);
		self->time = 0;
	}
	if (what & CL_DOCUMENT_SCENE)
		sync_time(self);
	if (what & (CL_DOCUMENT_FILE | CL_DOCUMENT_SCENE))
		update_title(self);
	if (what & CL_DOCUMENT_HISTORY)
		update_actions(self);
	if (what & CL_DOCUMENT_BACKENDS)
		store_enabled(self);
	/* a fresh Run ends its playback at T, so the whole trajectories show */
	ClResult *run = cl_document_get_result(doc, CL_RESULT_RUN);
	if ((what & CL_DOCUMENT_RESULTS) && run && !cl_document_is_stale(doc, run) && !self->playing && self->time == 0)
		set_time(self, scene_of(self)->duration);
}

static void runner_changed(ClRunner *runner, ClWindow *self)
{
	gboolean running = cl_runner_is_running(runner);
	gtk_label_set_text(self->status_label, cl_runner_get_status(runner));
	gtk_progress_bar_set_fraction(self->progress_bar, cl_runner_get_progress(runner));
	gtk_widget_set_visible(GTK_WIDGET(self->progress_bar), running);
	gtk_widget_set_visible(GTK_WIDGET(self->cancel_button), running);
	update_actions(self);
}

static void report_error(ClWindow *self, const char *primary, const GError *error)
{
	cl_workbench_report_error(CL_WORKBENCH(self), primary, error);
}

static void remember_folder(ClWindow *self, const char *path)
{
	if (!self->settings)
		return;
	g_autofree char *dir = g_path_get_dirname(path);
	g_settings_set_string(self->settings, "last-directory", dir);
}

void cl_window_load_preset(ClWindow *self, const char *id)
{
	g_autoptr(GError) error = NULL;
	if (!cl_document_load_preset(self->doc, id, &error))
		report_error(self, "Could not load the preset", error);
}

gboolean cl_window_open_path(ClWindow *self, const char *path)
{
	g_autoptr(GError) error = NULL;
	if (!cl_document_open(self->doc, path, &error)) {
		/* the current scene stays; the loader's message says file, field and reason */
		report_error(self, "Could not open the scene", error);
		return FALSE;
	}
	remember_folder(self, path);
	return TRUE;
}

/* --------------------------------------------------------------- files */

static gboolean save_to(ClWindow *self, const char *path)
{
	g_autoptr(GError) error = NULL;
	if (!cl_document_save(self->doc, path, &error)) {
		report_error(self, "Could not save the scene", error);
		return FALSE;
	}
	g_autofree char *name = g_filename_display_basename(path);
	g_autofree char *message = g_strdup_printf("Saved %s", name);
	notify(CL_WORKBENCH(self), message);
	remember_folder(self, path);
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

static GtkFileChooserNative *chooser_new(ClWindow *self, const char *title, GtkFileChooserAction action,
										 const char *accept)
{
	GtkFileChooserNative *chooser = gtk_file_chooser_native_new(title, GTK_WINDOW(self), action, accept, "_Cancel");
	gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
	g_autofree char *dir = self->settings ? g_settings_get_string(self->settings, "last-directory") : NULL;
	if (dir && *dir && g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		g_autoptr(GFile) folder = g_file_new_for_path(dir);
		gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(chooser), folder, NULL);
	}
	return chooser;
}

/* The path a file chooser's answer names, or NULL when cancelled. */
static char *chosen_path(GtkNativeDialog *dialog, int response)
{
	if (response != GTK_RESPONSE_ACCEPT)
		return NULL;
	g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
	return file ? g_file_get_path(file) : NULL;
}

static void save_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	g_autofree char *path = chosen_path(dialog, response);
	if (path && save_to(self, path) && self->close_after_save) {
		self->closing_confirmed = TRUE;
		gtk_window_close(GTK_WINDOW(self));
	}
	self->close_after_save = FALSE;
	g_object_unref(dialog);
}

static void choose_save_path(ClWindow *self)
{
	GtkFileChooserNative *chooser = chooser_new(self, "Save Scene", GTK_FILE_CHOOSER_ACTION_SAVE, "_Save");
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), json_filter());
	g_autofree char *name = g_strdup_printf("%s.json", scene_of(self)->name);
	g_strdelimit(name, "/\\:", '-');
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
	g_signal_connect(chooser, "response", G_CALLBACK(save_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void open_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	g_autofree char *path = chosen_path(dialog, response);
	if (path)
		cl_window_open_path(self, path);
	g_object_unref(dialog);
}

void cl_window_choose_file_to_open(ClWindow *self)
{
	GtkFileChooserNative *chooser = chooser_new(self, "Open Scene", GTK_FILE_CHOOSER_ACTION_OPEN, "_Open");
	gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), json_filter());
	g_signal_connect(chooser, "response", G_CALLBACK(open_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

/* The canvas through its one draw function, at its on-screen size: PNG at
 * twice the screen resolution, or SVG / PDF by extension, atomically. */
static gboolean draw_canvas(cairo_t *cr, double width, double height, gpointer canvas, GError **error)
{
	(void)error;
	cl_scene_canvas_render(canvas, cr, width, height);
	return TRUE;
}

static void export_canvas(ClWindow *self, const char *path)
{
	int w = MAX(gtk_widget_get_width(GTK_WIDGET(self->canvas)), 200);
	int h = MAX(gtk_widget_get_height(GTK_WIDGET(self->canvas)), 150);
	g_autoptr(GError) error = NULL;
	if (!cl_plot_export_document(path, CL_PLOT_FORMAT_AUTO, w, h, 144, draw_canvas, self->canvas, &error))
		report_error(self, "Could not export the canvas", error);
}

static void export_chosen(GtkNativeDialog *dialog, int response, ClWindow *self)
{
	g_autofree char *path = chosen_path(dialog, response);
	if (path)
		export_canvas(self, path);
	g_object_unref(dialog);
}

/* -------------------------------------------------------------- actions */

static void action_run(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	cl_runner_run(CL_WINDOW(data)->runner);
}

static void action_cancel(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	cl_runner_cancel(CL_WINDOW(data)->runner);
}

static void action_play(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	const char *name = g_action_get_name(G_ACTION(a));
	set_playing(self, g_str_equal(name, "play") || (g_str_equal(name, "toggle-play") && !self->playing));
}

static void action_step(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	set_playing(self, FALSE);
	double dt = cl_scene_dt(scene_of(self));
	int n = (int)llround(self->time / dt) + (g_str_equal(g_action_get_name(G_ACTION(a)), "step-forward") ? 1 : -1);
	set_time(self, n * dt);
}

static void action_undo(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)p;
	ClWindow *self = data;
	gboolean undo = g_str_equal(g_action_get_name(G_ACTION(a)), "undo");
	g_autofree char *label = g_strdup(undo ? cl_document_undo_label(self->doc) : cl_document_redo_label(self->doc));
	if (undo ? cl_document_undo(self->doc) : cl_document_redo(self->doc)) {
		g_autofree char *message = g_strdup_printf("%s: %s", undo ? "Undone" : "Redone", label ? label : "");
		notify(CL_WORKBENCH(self), message);
	}
}

static void action_save(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	const char *path = cl_document_get_path(self->doc);
	if (path) {
		g_autofree char *copy = g_strdup(path);
		save_to(self, copy);
	} else
		choose_save_path(self);
}

static void action_save_as(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a;
	const char *path = g_variant_get_string(p, NULL);
	if (*path)
		save_to(data, path);
	else
		choose_save_path(data);
}

static void action_export_png(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	GtkFileChooserNative *chooser = chooser_new(self, "Export Canvas", GTK_FILE_CHOOSER_ACTION_SAVE, "_Export");
	gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), "canvas.png");
	g_signal_connect(chooser, "response", G_CALLBACK(export_chosen), self);
	gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_export_canvas(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a;
	export_canvas(data, g_variant_get_string(p, NULL));
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
	int ball = cl_scene_find_ball(scene_of(self), id), wall = cl_scene_find_wall(scene_of(self), id);
	ClPick pick = ball >= 0 ? (ClPick){CL_PICK_BALL, ball}
				  : wall >= 0 ? (ClPick){CL_PICK_WALL, wall}
							  : (ClPick){CL_PICK_NONE, -1};
	cl_document_select(self->doc, pick);
}

static void change_tool(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	const char *tool = g_variant_get_string(value, NULL);
	static const char *const names[] = {"select", "ball", "wall", "target"};
	for (int i = 0; i < 4; i++)
		if (g_str_equal(tool, names[i])) {
			cl_scene_canvas_set_tool(self->canvas, (ClTool)i);
			g_simple_action_set_state(a, value);
		}
}

/* Without the schema (an uninstalled run that cannot find it) the switches
 * are plain window state. */
static void change_switch(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	g_simple_action_set_state(a, value);
	if (g_str_equal(g_action_get_name(G_ACTION(a)), "live"))
		cl_runner_set_live(self->runner, g_variant_get_boolean(value));
}

static const GActionEntry win_actions[] = {
	{.name = "run", .activate = action_run},
	{.name = "cancel", .activate = action_cancel},
	{.name = "play", .activate = action_play},
	{.name = "pause", .activate = action_play},
	{.name = "toggle-play", .activate = action_play},
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
};

static const GActionEntry switch_actions[] = {
	{.name = "live", .state = "true", .change_state = change_switch},
	{.name = "loop", .state = "false", .change_state = change_switch},
};

static void enable(ClWindow *self, const char *name, gboolean enabled)
{
	GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), name);
	if (G_IS_SIMPLE_ACTION(action))
		g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

static void update_actions(ClWindow *self)
{
	enable(self, "undo", cl_document_can_undo(self->doc));
	enable(self, "redo", cl_document_can_redo(self->doc));
	enable(self, "cancel", cl_runner_is_running(self->runner));
}

/* ------------------------------------------------------- close, recover */

static void close_response(GtkDialog *dialog, int response, ClWindow *self)
{
	gtk_window_destroy(GTK_WINDOW(dialog));
	if (response == GTK_RESPONSE_REJECT) { /* discard */
		cl_document_discard_recovery(self->doc);
		self->closing_confirmed = TRUE;
		gtk_window_close(GTK_WINDOW(self));
	} else if (response == GTK_RESPONSE_ACCEPT) {
		const char *path = cl_document_get_path(self->doc);
		if (!path) {
			self->close_after_save = TRUE;
			choose_save_path(self);
			return;
		}
		g_autofree char *copy = g_strdup(path);
		if (save_to(self, copy)) {
			self->closing_confirmed = TRUE;
			gtk_window_close(GTK_WINDOW(self));
		}
	}
}

static gboolean cl_window_close_request(GtkWindow *window)
{
	ClWindow *self = CL_WINDOW(window);
	if (cl_document_get_dirty(self->doc) && !self->closing_confirmed) {
		GtkWidget *dialog = gtk_message_dialog_new(window, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
												   GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
												   "Save changes to “%s” before closing?", scene_of(self)->name);
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
	cl_runner_cancel(self->runner);
	return GTK_WINDOW_CLASS(cl_window_parent_class)->close_request(window);
}

typedef struct {
	ClWindow *window;
	char *path;
} Recovery;

static void recovery_response(GtkDialog *dialog, int response, Recovery *r)
{
	gtk_window_destroy(GTK_WINDOW(dialog));
	ClDocument *doc = r->window->doc;
	cl_document_hold_recovery(doc, FALSE);
	if (response == GTK_RESPONSE_ACCEPT) {
		g_autoptr(GError) error = NULL;
		ClScene *scene = cl_scene_file_load(r->path, &error);
		if (scene)
			cl_document_replace(doc, scene, NULL, TRUE, "Restore recovered scene");
		else
			report_error(r->window, "Could not restore the scene", error);
	} else
		cl_document_discard_recovery(doc);
	g_object_unref(r->window);
	g_free(r->path);
	g_free(r);
}

void cl_window_offer_recovery(ClWindow *self, const char *path)
{
	Recovery *r = g_new(Recovery, 1);
	cl_document_hold_recovery(self->doc, TRUE);
	r->window = g_object_ref(self);
	r->path = g_strdup(path);
	GtkWidget *dialog = gtk_message_dialog_new(GTK_WINDOW(self), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
											   GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE, "Restore the unsaved scene?");
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
	if (g_str_equal(key, "live"))
		cl_runner_set_live(self->runner, g_settings_get_boolean(settings, key));
	else if (g_str_equal(key, "playback-speed")) {
		double speed = g_settings_get_double(settings, key);
		if (fabs(speed - playback_speed(self)) > 1e-12)
			gtk_drop_down_set_selected(self->speed_dropdown, nearest_speed(speed));
	}
}

/* ------------------------------------------------------------ lifecycle */

static void cl_window_dispose(GObject *object)
{
	ClWindow *self = CL_WINDOW(object);
	set_playing(self, FALSE);
	if (self->runner)
		cl_runner_cancel(self->runner);
	g_clear_handle_id(&self->message_source, g_source_remove);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_WINDOW);
	if (self->doc)
		g_signal_handlers_disconnect_by_data(self->doc, self);
	if (self->runner)
		g_signal_handlers_disconnect_by_data(self->runner, self);
	g_clear_object(&self->settings);
	G_OBJECT_CLASS(cl_window_parent_class)->dispose(object);
}

/* The widgets let go of the document as they are unrooted, which GtkWindow's
 * dispose does: only then may it go. */
static void cl_window_finalize(GObject *object)
{
	ClWindow *self = CL_WINDOW(object);
	g_clear_object(&self->runner);
	g_clear_object(&self->doc);
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
	/* the document first: the template's widgets find it as they are rooted */
	g_autoptr(GError) error = NULL;
	/* open on the paper's Task 3, the scene the workbench is built around */
	ClScene *scene = cl_preset_load("task3-two-balls", &error);
	if (!scene)
		g_warning("%s", error->message);
	self->doc = cl_document_new(scene);
	self->runner = cl_runner_new(self->doc);
	gtk_widget_init_template(GTK_WIDGET(self));
	name_switcher_buttons(self->results_switcher);
	name_switcher_buttons(self->sidebar_switcher);
	g_action_map_add_action_entries(G_ACTION_MAP(self), win_actions, G_N_ELEMENTS(win_actions), self);
	g_signal_connect(self->time_adjustment, "value-changed", G_CALLBACK(time_changed), self);
	g_signal_connect(self->speed_dropdown, "notify::selected", G_CALLBACK(speed_changed), self);
	g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	g_signal_connect(self->runner, "state-changed", G_CALLBACK(runner_changed), self);
	cl_view_actions_install(CL_WORKBENCH(self));
}

/* The window as the settings left it: size, switches, speed, backends. */
static void apply_settings(ClWindow *self)
{
	GSettings *s = self->settings;
	if (!s) {
		g_action_map_add_action_entries(G_ACTION_MAP(self), switch_actions, G_N_ELEMENTS(switch_actions), self);
		return;
	}
	static const char *const switches[] = {"live", "loop"};
	for (gsize i = 0; i < G_N_ELEMENTS(switches); i++) {
		g_autoptr(GAction) action = g_settings_create_action(s, switches[i]);
		g_action_map_add_action(G_ACTION_MAP(self), action);
	}
	gtk_window_set_default_size(GTK_WINDOW(self), g_settings_get_int(s, "window-width"),
								g_settings_get_int(s, "window-height"));
	if (g_settings_get_boolean(s, "window-maximized"))
		gtk_window_maximize(GTK_WINDOW(self));
	gtk_drop_down_set_selected(self->speed_dropdown, nearest_speed(g_settings_get_double(s, "playback-speed")));
	g_auto(GStrv) ids = g_settings_get_strv(s, "enabled-backends");
	if (ids[0])
		for (int b = 0; b < cl_backend_count(); b++)
			cl_document_set_backend_enabled(self->doc, b, g_strv_contains((const char *const *)ids, cl_backend_info(b)->id));
	g_signal_connect_object(s, "changed", G_CALLBACK(setting_changed), self, 0);
	cl_runner_set_live(self->runner, g_settings_get_boolean(s, "live"));
}

ClWindow *cl_window_new(ClApplication *app)
{
	ClWindow *self = g_object_new(CL_TYPE_WINDOW, "application", app, "show-menubar", FALSE, NULL);
	GSettings *settings = cl_application_get_settings(app);
	self->settings = settings ? g_object_ref(settings) : NULL;
	cl_document_set_recovery_path(self->doc, cl_application_recovery_path(app));
	apply_settings(self);
	update_title(self);
	sync_time(self);
	update_actions(self);
	if (cl_runner_get_live(self->runner))
		cl_runner_run(self->runner);
	return self;
}
