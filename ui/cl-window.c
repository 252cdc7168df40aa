#include "cl-window.h"

#include "cl-backend-list.h"
#include "cl-convergence-view.h"
#include "cl-smoothing-view.h"
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

#include <adwaita.h>
#include <math.h>

/* How long a passing message stays. */
#define MESSAGE_SECONDS 5
/* Below this width the sidebar folds over the canvas (shown on demand). */
#define SIDEBAR_FOLD_WIDTH 1100
#define SIDEBAR_WIDTH 320
/* Scene files offered in Open Recent. */
#define RECENT_MAX 8

static const double playback_speeds[] = {2, 1, 0.5, 0.25, 0.1, 0.01};

struct _ClWindow {
	GtkApplicationWindow parent_instance;

	/* template widgets */
	GtkLabel *title_label;
	GtkLabel *subtitle_label;
	ClSceneCanvas *canvas;
	GtkWidget *header_bar;
	AdwToastOverlay *toasts;
	AdwFlap *flap;
	GtkPaned *main_paned;
	GtkWidget *canvas_toolbar;
	GtkWidget *results_box;
	GtkStack *sidebar_stack;
	GtkRevealer *presentation_bar;
	GtkDropDown *presentation_view;
	GtkAdjustment *scale_adjustment;
	GtkPopover *preset_popover;
	GtkMenuButton *compare_button;
	GtkMenuButton *main_menu_button;
	GMenu *recent_section; /* owned: Open Recent's items */
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
	char *path_before_load; /* what an undo toast of a load goes back to */
	double canvas_fraction;  /* of the paned's height, as the user left it */
	gboolean placing_divider, divider_placed;
	gboolean presenting;
	gboolean offering_recovery;

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
static void sync_compare(ClWindow *self);

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

static void notify(ClWorkbench *workbench, const char *message)
{
	ClWindow *self = CL_WINDOW(workbench);
	if (!message || !*message)
		return;
	AdwToast *toast = adw_toast_new(message);
	adw_toast_set_timeout(toast, MESSAGE_SECONDS);
	adw_toast_overlay_add_toast(self->toasts, toast);
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
	/* what a crash's recovery copy will be restored as (the backends are kept in enabled-backends) */
	if ((what & CL_DOCUMENT_FILE) && self->settings && !self->offering_recovery) {
		const char *path = cl_document_get_path(doc);
		g_autofree char *stored = g_settings_get_string(self->settings, "recovery-file");
		if (g_strcmp0(stored, path ? path : "") != 0)
			g_settings_set_string(self->settings, "recovery-file", path ? path : "");
	}
	if (what & CL_DOCUMENT_HISTORY)
		update_actions(self);
	if (what & CL_DOCUMENT_BACKENDS) {
		store_enabled(self);
		sync_compare(self);
	}
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

/* ------------------------------------------------------------- recent */

static void rebuild_recent(ClWindow *self)
{
	g_menu_remove_all(self->recent_section);
	g_auto(GStrv) paths = self->settings ? g_settings_get_strv(self->settings, "recent-files") : NULL;
	for (int i = 0; paths && paths[i]; i++) {
		if (!g_file_test(paths[i], G_FILE_TEST_IS_REGULAR))
			continue;
		g_autofree char *name = g_filename_display_basename(paths[i]);
		g_autoptr(GMenuItem) item = g_menu_item_new(name, NULL);
		g_menu_item_set_action_and_target_value(item, "app.open-file", g_variant_new_string(paths[i]));
		g_menu_append_item(self->recent_section, item);
	}
	if (g_menu_model_get_n_items(G_MENU_MODEL(self->recent_section)) == 0) {
		g_autoptr(GMenuItem) none = g_menu_item_new("No recent scenes", "win.none");
		g_menu_append_item(self->recent_section, none);
	}
}

/* A file opened or saved goes first in Open Recent (and its folder is where
 * the next file chooser starts). */
static void remember_file(ClWindow *self, const char *path)
{
	if (!self->settings)
		return;
	g_autofree char *dir = g_path_get_dirname(path);
	g_settings_set_string(self->settings, "last-directory", dir);
	g_autofree char *absolute = g_canonicalize_filename(path, NULL);
	g_auto(GStrv) old = g_settings_get_strv(self->settings, "recent-files");
	g_autoptr(GPtrArray) list = g_ptr_array_new();
	g_ptr_array_add(list, absolute);
	for (int i = 0; old[i] && list->len < RECENT_MAX; i++)
		if (!g_str_equal(old[i], absolute))
			g_ptr_array_add(list, old[i]);
	g_ptr_array_add(list, NULL);
	g_settings_set_strv(self->settings, "recent-files", (const char *const *)list->pdata);
}

/* ------------------------------------------------------------- loading */

static void undo_load(ClWindow *self)
{
	g_autofree char *path = g_steal_pointer(&self->path_before_load);
	if (cl_document_undo(self->doc))
		cl_document_set_path(self->doc, path);
}

/* A load that replaced unsaved edits says so, with a way back. */
static void after_load(ClWindow *self, gboolean was_dirty, const char *previous_name, const char *previous_path,
					   const char *what)
{
	g_free(self->path_before_load);
	self->path_before_load = g_strdup(previous_path);
	if (!was_dirty) /* the title says what is open */
		return;
	g_autofree char *title = g_strdup_printf("Loaded %s; the unsaved edits of “%s” were put aside", what, previous_name);
	AdwToast *toast = adw_toast_new(title);
	adw_toast_set_button_label(toast, "_Undo");
	adw_toast_set_action_name(toast, "win.undo-load");
	adw_toast_set_timeout(toast, 10);
	adw_toast_set_priority(toast, ADW_TOAST_PRIORITY_HIGH);
	adw_toast_overlay_add_toast(self->toasts, toast);
}

typedef struct {
	gboolean dirty;
	char *name;
	char *path;
} Before;

static Before before_load(ClWindow *self)
{
	return (Before){cl_document_get_dirty(self->doc), g_strdup(scene_of(self)->name),
					g_strdup(cl_document_get_path(self->doc))};
}

static void before_clear(Before *b)
{
	g_free(b->name);
	g_free(b->path);
}

void cl_window_load_preset(ClWindow *self, const char *id)
{
	g_autoptr(GError) error = NULL;
	Before before = before_load(self);
	if (!cl_document_load_preset(self->doc, id, &error))
		report_error(self, "Could not load the preset", error);
	else {
		g_autofree char *what = g_strdup_printf("“%s”", scene_of(self)->name);
		after_load(self, before.dirty, before.name, before.path, what);
	}
	before_clear(&before);
}

gboolean cl_window_open_path(ClWindow *self, const char *path)
{
	g_autoptr(GError) error = NULL;
	Before before = before_load(self);
	gboolean ok = cl_document_open(self->doc, path, &error);
	if (!ok) /* the current scene stays; the loader's message says file, field and reason */
		report_error(self, "Could not open the scene", error);
	else {
		remember_file(self, path);
		g_autofree char *name = g_filename_display_basename(path);
		after_load(self, before.dirty, before.name, before.path, name);
	}
	before_clear(&before);
	return ok;
}

static gboolean file_dropped(GtkDropTarget *target, const GValue *value, double x, double y, ClWindow *self)
{
	(void)target, (void)x, (void)y;
	GFile *file = g_value_get_object(value);
	g_autofree char *path = file ? g_file_get_path(file) : NULL;
	if (!path) {
		notify(CL_WORKBENCH(self), "Only a scene file on this computer can be opened");
		return FALSE;
	}
	return cl_window_open_path(self, path);
}

/* ------------------------------------------------------------- presets */

static void preset_clicked(GtkButton *button, ClWindow *self)
{
	gtk_popover_popdown(self->preset_popover);
	cl_window_load_preset(self, g_object_get_data(G_OBJECT(button), "preset"));
}

/* Every scene of data/presets/, its name over its one-line description. */
static void build_preset_list(ClWindow *self)
{
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
	g_autoptr(GPtrArray) presets = cl_preset_list();
	for (guint i = 0; i < presets->len; i++) {
		const ClPresetInfo *p = g_ptr_array_index(presets, i);
		GtkWidget *button = gtk_button_new();
		gtk_widget_add_css_class(button, "flat");
		GtkWidget *text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 1);
		GtkWidget *name = gtk_label_new(p->name);
		gtk_label_set_xalign(GTK_LABEL(name), 0);
		gtk_widget_add_css_class(name, "preset-name");
		gtk_box_append(GTK_BOX(text), name);
		if (*p->description) {
			GtkWidget *line = gtk_label_new(p->description);
			gtk_label_set_xalign(GTK_LABEL(line), 0);
			gtk_label_set_wrap(GTK_LABEL(line), TRUE);
			gtk_label_set_max_width_chars(GTK_LABEL(line), 48);
			gtk_widget_add_css_class(line, "preset-description");
			gtk_box_append(GTK_BOX(text), line);
		}
		gtk_button_set_child(GTK_BUTTON(button), text);
		gtk_accessible_update_property(GTK_ACCESSIBLE(button), GTK_ACCESSIBLE_PROPERTY_LABEL, p->name,
									   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, p->description, -1);
		g_object_set_data_full(G_OBJECT(button), "preset", g_strdup(p->id), g_free);
		g_signal_connect(button, "clicked", G_CALLBACK(preset_clicked), self);
		gtk_box_append(GTK_BOX(box), button);
	}
	gtk_popover_set_child(self->preset_popover, box);
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
	remember_file(self, path);
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

static void set_presenting(ClWindow *self, gboolean on);

/* Esc stops the computation, or else leaves presentation mode. */
static void action_cancel(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	ClWindow *self = data;
	if (cl_runner_is_running(self->runner))
		cl_runner_cancel(self->runner);
	else
		set_presenting(self, FALSE);
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

/* ------------------------------------------------ layout, presentation */

static void set_bool_state(ClWindow *self, const char *name, gboolean value)
{
	GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), name);
	if (action)
		g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_boolean(value));
}

static void change_sidebar(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	g_simple_action_set_state(a, value);
	adw_flap_set_reveal_flap(self->flap, g_variant_get_boolean(value));
}

static void flap_revealed(GObject *flap, GParamSpec *pspec, ClWindow *self)
{
	(void)flap, (void)pspec;
	set_bool_state(self, "sidebar", adw_flap_get_reveal_flap(self->flap));
}

/* The divider between canvas and results is kept as a fraction of the
 * height: tabs never move it (the results scroll), a resize keeps the
 * proportion (GtkPaned scales both sides), a drag sets a new one. */
static void place_divider(ClWindow *self)
{
	int height = gtk_widget_get_height(GTK_WIDGET(self->main_paned));
	if (height <= 0)
		return;
	self->placing_divider = TRUE;
	gtk_paned_set_position(self->main_paned, (int)lround(self->canvas_fraction * height));
	self->placing_divider = FALSE;
}

static void divider_moved(GObject *paned, GParamSpec *pspec, ClWindow *self)
{
	(void)paned, (void)pspec;
	static const double lowest = 0.2, highest = 0.9;
	int height = gtk_widget_get_height(GTK_WIDGET(self->main_paned));
	if (self->placing_divider || height <= 0 || self->presenting)
		return;
	double fraction = fmin(fmax(gtk_paned_get_position(self->main_paned) / (double)height, lowest), highest);
	self->canvas_fraction = fraction;
	if (self->settings && fabs(g_settings_get_double(self->settings, "canvas-fraction") - fraction) > 1e-3)
		g_settings_set_double(self->settings, "canvas-fraction", fraction);
}

/* The first allocation gets the stored proportion. */
static void paned_sized(GObject *paned, GParamSpec *pspec, ClWindow *self)
{
	(void)paned, (void)pspec;
	if (self->divider_placed || gtk_widget_get_height(GTK_WIDGET(self->main_paned)) <= 0)
		return;
	self->divider_placed = TRUE;
	place_divider(self);
}

static const char *const presentation_pages[] = {"gradients", "perturbation", "heatmaps", "learning", "convergence",
												 "smoothing"};
enum { PRESENT_LESSON = G_N_ELEMENTS(presentation_pages), PRESENT_NOTHING };

/* gtk-xft-dpi is 1024 × dots per inch; 96 is 100 %. */
static void apply_ui_scale(ClWindow *self, double scale)
{
	GtkSettings *settings = gtk_widget_get_settings(GTK_WIDGET(self));
	if (scale == 1.0)
		gtk_settings_reset_property(settings, "gtk-xft-dpi");
	else
		g_object_set(settings, "gtk-xft-dpi", (int)lround(96 * 1024 * scale), NULL);
}

static void show_presented_view(ClWindow *self)
{
	guint choice = gtk_drop_down_get_selected(self->presentation_view);
	gboolean lesson = choice == PRESENT_LESSON, results = choice < PRESENT_LESSON;
	gtk_widget_set_visible(self->results_box, results);
	if (results)
		gtk_stack_set_visible_child_name(self->results_stack, presentation_pages[choice]);
	adw_flap_set_fold_policy(self->flap, lesson ? ADW_FLAP_FOLD_POLICY_NEVER : ADW_FLAP_FOLD_POLICY_AUTO);
	adw_flap_set_reveal_flap(self->flap, lesson);
	if (lesson)
		gtk_stack_set_visible_child_name(self->sidebar_stack, "lessons");
}

static void presentation_view_changed(GObject *o, GParamSpec *pspec, ClWindow *self)
{
	(void)o, (void)pspec;
	if (self->presenting)
		show_presented_view(self);
}

static void presentation_scale_changed(GtkAdjustment *adjustment, ClWindow *self)
{
	if (self->presenting)
		apply_ui_scale(self, gtk_adjustment_get_value(adjustment) / 100);
}

/* The view beside the canvas when presenting: the results tab shown, or
 * the lesson text while a lesson is open. */
static guint presentation_choice(ClWindow *self)
{
	if (adw_flap_get_reveal_flap(self->flap) &&
		g_strcmp0(gtk_stack_get_visible_child_name(self->sidebar_stack), "lessons") == 0)
		return PRESENT_LESSON;
	const char *page = gtk_stack_get_visible_child_name(self->results_stack);
	for (guint i = 0; i < G_N_ELEMENTS(presentation_pages); i++)
		if (g_strcmp0(page, presentation_pages[i]) == 0)
			return i;
	return 0;
}

static void set_presenting(ClWindow *self, gboolean on)
{
	if (on == self->presenting)
		return;
	static gboolean sidebar_before;
	GtkWidget *switcher_row = gtk_widget_get_first_child(self->results_box);
	if (on) {
		sidebar_before = adw_flap_get_reveal_flap(self->flap);
		gtk_drop_down_set_selected(self->presentation_view, presentation_choice(self));
		self->presenting = TRUE;
		gtk_window_fullscreen(GTK_WINDOW(self));
		show_presented_view(self);
		apply_ui_scale(self, gtk_adjustment_get_value(self->scale_adjustment) / 100);
	} else {
		self->presenting = FALSE;
		gtk_window_unfullscreen(GTK_WINDOW(self));
		apply_ui_scale(self, 1.0);
		gtk_widget_set_visible(self->results_box, TRUE);
		adw_flap_set_fold_policy(self->flap, ADW_FLAP_FOLD_POLICY_AUTO);
		adw_flap_set_reveal_flap(self->flap, sidebar_before && !adw_flap_get_folded(self->flap));
	}
	gtk_widget_set_visible(self->header_bar, !on);
	gtk_widget_set_visible(self->canvas_toolbar, !on);
	gtk_widget_set_visible(switcher_row, !on);
	gtk_widget_set_visible(self->sidebar_switcher, !on);
	gtk_revealer_set_reveal_child(self->presentation_bar, on);
	set_bool_state(self, "presentation", on);
	if (self->settings && on)
		g_settings_set_double(self->settings, "presentation-scale", gtk_adjustment_get_value(self->scale_adjustment));
	place_divider(self);
}

static void change_presentation(GSimpleAction *a, GVariant *value, gpointer data)
{
	(void)a;
	set_presenting(data, g_variant_get_boolean(value));
}

static void action_undo_load(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	undo_load(data);
}

/* The results tab by name (also for scripts: win.view('heatmaps')). */
static void change_view(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	const char *name = g_variant_get_string(value, NULL);
	if (gtk_stack_get_child_by_name(self->results_stack, name)) {
		gtk_stack_set_visible_child_name(self->results_stack, name);
		g_simple_action_set_state(a, value);
	}
}

static void results_page_changed(GObject *stack, GParamSpec *pspec, ClWindow *self)
{
	(void)stack, (void)pspec;
	GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), "view");
	const char *page = gtk_stack_get_visible_child_name(self->results_stack);
	if (action && page)
		g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_string(page));
}

/* Compare: "" shows every enabled backend, an id that one beside exact. */
static void change_compare(GSimpleAction *a, GVariant *value, gpointer data)
{
	ClWindow *self = data;
	const char *id = g_variant_get_string(value, NULL);
	cl_document_focus_backend(self->doc, *id ? cl_backend_find(id) : -1);
	g_simple_action_set_state(a, value);
}

static void sync_compare(ClWindow *self)
{
	GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), "compare");
	int focused = cl_document_focused_backend(self->doc);
	const char *id = focused >= 0 ? cl_backend_info(focused)->id : "";
	if (action)
		g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_string(id));
	g_autofree char *label = focused >= 0 ? g_strdup_printf("exact vs %s", id) : g_strdup("Compare");
	gtk_menu_button_set_label(self->compare_button, label);
}

static void build_compare_menu(ClWindow *self)
{
	g_autoptr(GMenu) menu = g_menu_new();
	g_autoptr(GMenu) all = g_menu_new();
	g_menu_append(all, "Every enabled backend", "win.compare::");
	g_menu_append_section(menu, NULL, G_MENU_MODEL(all));
	g_autoptr(GMenu) pairs = g_menu_new();
	for (int b = 0; b < cl_backend_count(); b++) {
		if (cl_backend_is_reference(b))
			continue;
		const char *id = cl_backend_info(b)->id;
		g_autofree char *label = g_strdup_printf("exact vs %s", id);
		g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
		g_menu_item_set_action_and_target_value(item, "win.compare", g_variant_new_string(id));
		g_menu_append_item(pairs, item);
	}
	g_menu_append_section(menu, "Exact against one backend", G_MENU_MODEL(pairs));
	gtk_menu_button_set_menu_model(self->compare_button, G_MENU_MODEL(menu));
}

static void action_help(GSimpleAction *a, GVariant *p, gpointer data)
{
	(void)a, (void)p;
	GtkBuilder *builder = gtk_builder_new_from_resource("/io/github/contactlab/ContactLab/ui/cl-help.ui");
	GtkWindow *help = GTK_WINDOW(gtk_builder_get_object(builder, "help_window"));
	gtk_window_set_transient_for(help, GTK_WINDOW(data));
	gtk_window_present(help);
	g_object_unref(builder);
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
	{.name = "sidebar", .state = "true", .change_state = change_sidebar},
	{.name = "presentation", .state = "false", .change_state = change_presentation},
	{.name = "view", .parameter_type = "s", .state = "'gradients'", .change_state = change_view},
	{.name = "compare", .parameter_type = "s", .state = "''", .change_state = change_compare},
	{.name = "undo-load", .activate = action_undo_load},
	{.name = "help", .activate = action_help},
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
	enable(self, "cancel", cl_runner_is_running(self->runner) || self->presenting);
}

/* ------------------------------------------------------- close, recover */

static void close_response(GtkDialog *dialog, int response, ClWindow *self)
{
	/* the dialog outlives this handler (its emission holds it) and may outlive
	 * the window closed below: it must not point at the window when it goes */
	gtk_window_set_transient_for(GTK_WINDOW(dialog), NULL);
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
	GSettings *settings = r->window->settings;
	cl_document_hold_recovery(doc, FALSE);
	r->window->offering_recovery = FALSE;
	if (response == GTK_RESPONSE_ACCEPT) {
		g_autoptr(GError) error = NULL;
		ClScene *scene = cl_scene_file_load(r->path, &error);
		/* under the name of the file it was edited from, unsaved */
		g_autofree char *file = settings ? g_settings_get_string(settings, "recovery-file") : NULL;
		if (scene)
			cl_document_replace(doc, scene, file && *file ? file : NULL, TRUE, "Restore recovered scene");
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
	self->offering_recovery = TRUE;
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
	else if (g_str_equal(key, "recent-files"))
		rebuild_recent(self);
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
	if (self->presenting)
		apply_ui_scale(self, 1.0);
	set_playing(self, FALSE);
	if (self->runner)
		cl_runner_cancel(self->runner);
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
	g_free(self->path_before_load);
	g_clear_object(&self->recent_section);
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
	g_type_ensure(CL_TYPE_SMOOTHING_VIEW);
	g_type_ensure(CL_TYPE_LESSON_PANEL);
	gtk_widget_class_set_template_from_resource(widget_class, "/io/github/contactlab/ContactLab/ui/cl-window.ui");
	gtk_widget_class_bind_template_child(widget_class, ClWindow, title_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, subtitle_label);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, canvas);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, flap);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, main_paned);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, canvas_toolbar);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, results_box);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, sidebar_stack);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, presentation_bar);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, presentation_view);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, scale_adjustment);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, preset_popover);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, compare_button);
	gtk_widget_class_bind_template_child(widget_class, ClWindow, main_menu_button);
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
	/* the window's own children are not template bindings: GtkWindow unparents them itself */
	self->toasts = ADW_TOAST_OVERLAY(gtk_window_get_child(GTK_WINDOW(self)));
	self->header_bar = gtk_window_get_titlebar(GTK_WINDOW(self));
	name_switcher_buttons(self->results_switcher);
	name_switcher_buttons(self->sidebar_switcher);
	g_action_map_add_action_entries(G_ACTION_MAP(self), win_actions, G_N_ELEMENTS(win_actions), self);
	g_signal_connect(self->time_adjustment, "value-changed", G_CALLBACK(time_changed), self);
	g_signal_connect(self->speed_dropdown, "notify::selected", G_CALLBACK(speed_changed), self);
	g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	g_signal_connect(self->runner, "state-changed", G_CALLBACK(runner_changed), self);
	cl_view_actions_install(CL_WORKBENCH(self));

	/* the sidebar folds over the canvas below SIDEBAR_FOLD_WIDTH */
	gtk_widget_set_size_request(GTK_WIDGET(self->main_paned), SIDEBAR_FOLD_WIDTH - SIDEBAR_WIDTH, -1);
	g_signal_connect(self->flap, "notify::reveal-flap", G_CALLBACK(flap_revealed), self);
	self->canvas_fraction = 0.66;
	g_signal_connect(self->main_paned, "notify::position", G_CALLBACK(divider_moved), self);
	g_signal_connect(self->main_paned, "notify::max-position", G_CALLBACK(paned_sized), self);
	g_signal_connect(self->results_stack, "notify::visible-child-name", G_CALLBACK(results_page_changed), self);
	g_signal_connect(self->presentation_view, "notify::selected", G_CALLBACK(presentation_view_changed), self);
	g_signal_connect(self->scale_adjustment, "value-changed", G_CALLBACK(presentation_scale_changed), self);
	build_preset_list(self);
	build_compare_menu(self);
	/* Open Recent, second in the main menu's file section */
	GMenuModel *main_menu = gtk_menu_button_get_menu_model(self->main_menu_button);
	g_autoptr(GMenuModel) files = g_menu_model_get_item_link(main_menu, 0, G_MENU_LINK_SECTION);
	g_autoptr(GMenu) recent = g_menu_new();
	self->recent_section = g_menu_new();
	g_menu_append_section(recent, NULL, G_MENU_MODEL(self->recent_section));
	g_menu_insert_submenu(G_MENU(files), 1, "Open _Recent", G_MENU_MODEL(recent));
	sync_compare(self);

	GtkDropTarget *drop = gtk_drop_target_new(G_TYPE_FILE, GDK_ACTION_COPY);
	g_signal_connect(drop, "drop", G_CALLBACK(file_dropped), self);
	gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drop));
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
	self->canvas_fraction = g_settings_get_double(s, "canvas-fraction");
	gtk_adjustment_set_value(self->scale_adjustment, g_settings_get_double(s, "presentation-scale"));
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
	rebuild_recent(self);
	update_title(self);
	sync_time(self);
	update_actions(self);
	if (cl_runner_get_live(self->runner))
		cl_runner_run(self->runner);
	return self;
}
