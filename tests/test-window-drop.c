/* A scene file dropped on the window opens it (the Open path: the file's
 * name in the document); a file that is not on this computer is refused and
 * the scene stays. In-process, because an X server without a window manager
 * does not deliver drags. Needs a display (skips without one). */
#include "cl-application.h"
#include "cl-window.h"

#include <glib/gstdio.h>
#include <stdio.h>

static char *scene_path;
static gboolean opened, refused, kept;

static GtkDropTarget *drop_target_of(GtkWidget *widget)
{
	g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(widget);
	for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
		g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
		if (GTK_IS_DROP_TARGET(c))
			return GTK_DROP_TARGET(c);
	}
	return NULL;
}

static gboolean drop(GtkDropTarget *target, GFile *file)
{
	GValue value = G_VALUE_INIT;
	g_value_init(&value, G_TYPE_FILE);
	g_value_set_object(&value, file);
	gboolean accepted = FALSE;
	g_signal_emit_by_name(target, "drop", &value, 10.0, 10.0, &accepted);
	g_value_unset(&value);
	return accepted;
}

static gboolean drop_files(gpointer data)
{
	GtkApplication *app = data;
	GtkWindow *window = gtk_application_get_active_window(app);
	g_assert_true(CL_IS_WINDOW(window));
	ClDocument *doc = cl_workbench_get_document(CL_WORKBENCH(window));
	GtkDropTarget *target = drop_target_of(GTK_WIDGET(window));
	g_assert_nonnull(target);

	g_autoptr(GFile) file = g_file_new_for_path(scene_path);
	opened = drop(target, file) && g_strcmp0(cl_document_get_path(doc), scene_path) == 0;

	g_autoptr(GFile) remote = g_file_new_for_uri("https://example.org/scene.json");
	refused = !drop(target, remote);
	kept = g_strcmp0(cl_document_get_path(doc), scene_path) == 0;
	g_application_quit(G_APPLICATION(app));
	return G_SOURCE_REMOVE;
}

static void window_added(GtkApplication *app, GtkWindow *window)
{
	(void)window;
	g_idle_add(drop_files, app);
}

static void test_drop_opens(void)
{
	g_autofree char *dir = g_dir_make_tmp("test-window-drop-XXXXXX", NULL);
	g_setenv("XDG_STATE_HOME", dir, TRUE); /* no recovery file of the user's */
	g_autofree char *preset = g_build_filename(g_getenv("CONTACTLAB_SOURCE_ROOT"), "data", "presets",
											   "task1-bounce-once.json", NULL);
	g_autofree char *text = NULL;
	g_assert_true(g_file_get_contents(preset, &text, NULL, NULL));
	scene_path = g_build_filename(dir, "dropped.json", NULL);
	g_assert_true(g_file_set_contents(scene_path, text, -1, NULL));

	g_autoptr(ClApplication) app = cl_application_new();
	g_application_set_flags(G_APPLICATION(app), g_application_get_flags(G_APPLICATION(app)) |
													G_APPLICATION_NON_UNIQUE);
	g_signal_connect(app, "window-added", G_CALLBACK(window_added), NULL);
	char *argv[] = {"contactlab", NULL};
	g_assert_cmpint(g_application_run(G_APPLICATION(app), 1, argv), ==, 0);
	g_assert_true(opened);
	g_assert_true(refused);
	g_assert_true(kept);
	g_unlink(scene_path);
	g_free(scene_path);
	g_autofree char *state = g_build_filename(dir, "contactlab", NULL);
	g_rmdir(state);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	if (!g_getenv("DISPLAY") && !g_getenv("WAYLAND_DISPLAY")) {
		printf("1..0 # SKIP no display\n");
		return 0;
	}
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/window/drop-opens", test_drop_opens);
	return g_test_run();
}
