#include "cl-application.h"

#include "agreement.h"
#include "cl-accels.h"
#include "atomic-file.h"
#include "cl-window.h"
#include "scene-file.h"

#include <math.h>

struct _ClApplication {
	GtkApplication parent_instance;
	GSettings *settings;
	char *recovery_path;
};

G_DEFINE_FINAL_TYPE(ClApplication, cl_application, ADW_TYPE_APPLICATION)

GSettings *cl_application_get_settings(ClApplication *self)
{
	return self->settings;
}

GSettings *cl_application_settings(void)
{
	GApplication *app = g_application_get_default();
	return CL_IS_APPLICATION(app) ? CL_APPLICATION(app)->settings : NULL;
}

const char *cl_application_recovery_path(ClApplication *self)
{
	return self->recovery_path;
}

static ClWindow *active_window(ClApplication *self)
{
	GtkWindow *window = gtk_application_get_active_window(GTK_APPLICATION(self));
	if (CL_IS_WINDOW(window))
		return CL_WINDOW(window);
	ClWindow *created = cl_window_new(self);
	gtk_window_present(GTK_WINDOW(created));
	return created;
}

static void load_preset(GSimpleAction *action, GVariant *parameter, gpointer data)
{
	(void)action;
	cl_window_load_preset(active_window(data), g_variant_get_string(parameter, NULL));
}

static void open_file(GSimpleAction *action, GVariant *parameter, gpointer data)
{
	(void)action;
	const char *path = g_variant_get_string(parameter, NULL);
	ClWindow *window = active_window(data);
	if (*path)
		cl_window_open_path(window, path);
	else
		cl_window_choose_file_to_open(window);
}

static void quit(GSimpleAction *action, GVariant *parameter, gpointer data)
{
	(void)action, (void)parameter;
	/* closing each window asks about unsaved changes; the app ends with the
	 * last. Held by a reference: closing a window destroys the dialogs it
	 * owns, which may come later in the list. */
	GList *windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(data)));
	for (GList *l = windows; l; l = l->next)
		g_object_ref(l->data);
	for (GList *l = windows; l; l = l->next)
		gtk_window_close(l->data);
	g_list_free_full(windows, g_object_unref);
}

static void about(GSimpleAction *action, GVariant *parameter, gpointer data)
{
	(void)action, (void)parameter;
	static const char *const authors[] = {"The ContactLab authors", NULL};
	gtk_show_about_dialog(gtk_application_get_active_window(GTK_APPLICATION(data)), "program-name", "ContactLab",
						  "logo-icon-name", CL_APPLICATION_ID, "version", CL_VERSION, "comments",
						  "A workbench for seeing why differentiable physics gives wrong gradients at contacts.\n"
						  "Reproduces Zhong, Han, Brikis (2022), arXiv 2207.05060.",
						  "license-type", GTK_LICENSE_GPL_3_0, "authors", authors, "website",
						  "https://github.com/contactlab/contactlab", NULL);
}

static void preferences(GSimpleAction *action, GVariant *parameter, gpointer data)
{
	(void)action, (void)parameter;
	cl_window_show_preferences(active_window(data));
}

static const GActionEntry app_actions[] = {
	{.name = "load-preset", .activate = load_preset, .parameter_type = "s"},
	{.name = "open-file", .activate = open_file, .parameter_type = "s"},
	{.name = "quit", .activate = quit},
	{.name = "about", .activate = about},
	{.name = "preferences", .activate = preferences},
};

/* Uninstalled runs find the schema compiled in the build tree. */
static GSettings *open_settings(void)
{
	GSettingsSchemaSource *source = g_settings_schema_source_get_default();
	GSettingsSchema *schema = source ? g_settings_schema_source_lookup(source, CL_APPLICATION_ID, TRUE) : NULL;
	if (!schema) {
		GSettingsSchemaSource *build =
			g_settings_schema_source_new_from_directory(CL_SCHEMA_BUILD_DIR, source, FALSE, NULL);
		if (build) {
			schema = g_settings_schema_source_lookup(build, CL_APPLICATION_ID, FALSE);
			g_settings_schema_source_unref(build);
		}
	}
	if (!schema) {
		g_warning("GSettings schema %s not found: preferences will not be kept", CL_APPLICATION_ID);
		return NULL;
	}
	GSettings *settings = g_settings_new_full(schema, NULL, NULL);
	g_settings_schema_unref(schema);
	return settings;
}

static void apply_theme(GSettings *settings, const char *key, gpointer data)
{
	(void)key, (void)data;
	AdwColorScheme scheme = g_settings_get_boolean(settings, "follow-system-theme") ? ADW_COLOR_SCHEME_DEFAULT
							: g_settings_get_boolean(settings, "dark-theme")		   ? ADW_COLOR_SCHEME_FORCE_DARK
																					   : ADW_COLOR_SCHEME_FORCE_LIGHT;
	adw_style_manager_set_color_scheme(adw_style_manager_get_default(), scheme);
}

static void css_color(GString *css, const char *property, ClPlotColor c)
{
	g_string_append_printf(css, " %s: rgb(%d, %d, %d);", property, (int)lround(255 * c.r), (int)lround(255 * c.g),
						   (int)lround(255 * c.b));
}

/* The table cells and legend chips in the colours of the one agreement
 * table (studies/agreement.c), which the lesson handouts draw with too. */
static void add_agreement_css(void)
{
	GString *css = g_string_new(NULL);
	for (int a = 0; a < CL_AGREEMENT_COUNT; a++) {
		const char *name = cl_agreement_name((ClAgreement)a);
		g_string_append_printf(css, ".gradient-table .cell.%s, .smoothing-table .cell.%s, .legend-chip.%s {", name, name,
							   name);
		css_color(css, "background-color", cl_agreement_background((ClAgreement)a));
		css_color(css, "color", cl_agreement_foreground((ClAgreement)a));
		g_string_append(css, " }\n");
	}
	GtkCssProvider *provider = gtk_css_provider_new();
	gtk_css_provider_load_from_data(provider, css->str, (gssize)css->len);
	gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
											   GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
	g_object_unref(provider);
	g_string_free(css, TRUE);
}

static void cl_application_startup(GApplication *app)
{
	ClApplication *self = CL_APPLICATION(app);
	G_APPLICATION_CLASS(cl_application_parent_class)->startup(app);
	/* the icon is in the GResource (icons/ under the app's resource path), so
	 * the window and About have it also when the app runs uninstalled */
	gtk_window_set_default_icon_name(CL_APPLICATION_ID);
	self->settings = open_settings();
	if (self->settings) {
		apply_theme(self->settings, NULL, NULL);
		g_signal_connect(self->settings, "changed::follow-system-theme", G_CALLBACK(apply_theme), NULL);
		g_signal_connect(self->settings, "changed::dark-theme", G_CALLBACK(apply_theme), NULL);
	}
	g_action_map_add_action_entries(G_ACTION_MAP(app), app_actions, G_N_ELEMENTS(app_actions), app);
	for (unsigned i = 0; i < cl_accel_count; i++)
		gtk_application_set_accels_for_action(GTK_APPLICATION(app), cl_accels[i].action, cl_accels[i].accels);

	/* style.css (and style-dark.css) AdwApplication loads from the resources */
	add_agreement_css();

	self->recovery_path = g_build_filename(g_get_user_state_dir(), "contactlab", "recovery.json", NULL);
	/* the one instance (startup runs in the primary only): what a killed
	 * autosave left beside the recovery file is nobody's */
	cl_atomic_file_clean(self->recovery_path);
}

static void cl_application_activate(GApplication *app)
{
	ClApplication *self = CL_APPLICATION(app);
	GtkWindow *existing = gtk_application_get_active_window(GTK_APPLICATION(app));
	if (existing) {
		gtk_window_present(existing);
		return;
	}
	ClWindow *window = cl_window_new(self);
	gtk_window_present(GTK_WINDOW(window));
	/* a recovery file that outlived its session means the app did not end cleanly */
	if (g_file_test(self->recovery_path, G_FILE_TEST_EXISTS))
		cl_window_offer_recovery(window, self->recovery_path);
}

static void cl_application_shutdown(GApplication *app)
{
	ClApplication *self = CL_APPLICATION(app);
	g_clear_object(&self->settings);
	G_APPLICATION_CLASS(cl_application_parent_class)->shutdown(app);
}

static void cl_application_finalize(GObject *object)
{
	g_free(CL_APPLICATION(object)->recovery_path);
	G_OBJECT_CLASS(cl_application_parent_class)->finalize(object);
}

static void cl_application_class_init(ClApplicationClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = cl_application_finalize;
	G_APPLICATION_CLASS(klass)->startup = cl_application_startup;
	G_APPLICATION_CLASS(klass)->activate = cl_application_activate;
	G_APPLICATION_CLASS(klass)->shutdown = cl_application_shutdown;
}

static void cl_application_init(ClApplication *self)
{
	(void)self;
}

ClApplication *cl_application_new(void)
{
	return g_object_new(CL_TYPE_APPLICATION, "application-id", CL_APPLICATION_ID, "flags",
						G_APPLICATION_DEFAULT_FLAGS, NULL);
}
