#include "cl-preferences.h"

struct _ClPreferences {
	GtkWindow parent_instance;

	/* template widgets */
	GtkWidget *grid;
	GtkWidget *live, *playback_speed, *loop, *perturbation_delta, *follow_system_theme, *dark_theme;
	GtkWidget *unavailable_text, *unavailable_control;
};

G_DEFINE_FINAL_TYPE(ClPreferences, cl_preferences, GTK_TYPE_WINDOW)

static void cl_preferences_dispose(GObject *object)
{
	gtk_widget_dispose_template(GTK_WIDGET(object), CL_TYPE_PREFERENCES);
	G_OBJECT_CLASS(cl_preferences_parent_class)->dispose(object);
}

static void cl_preferences_class_init(ClPreferencesClass *klass)
{
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	G_OBJECT_CLASS(klass)->dispose = cl_preferences_dispose;
	gtk_widget_class_set_template_from_resource(widget_class, "/io/github/contactlab/ContactLab/ui/cl-preferences.ui");
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, grid);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, live);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, playback_speed);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, loop);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, perturbation_delta);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, follow_system_theme);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, dark_theme);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, unavailable_text);
	gtk_widget_class_bind_template_child(widget_class, ClPreferences, unavailable_control);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void cl_preferences_init(ClPreferences *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
}

GtkWidget *cl_preferences_new(GtkWindow *parent, GSettings *settings)
{
	ClPreferences *self = g_object_new(CL_TYPE_PREFERENCES, "transient-for", parent, "modal", TRUE, NULL);
	if (!settings) {
		/* only the row that says why */
		GtkWidget *child = gtk_widget_get_first_child(self->grid);
		for (; child; child = gtk_widget_get_next_sibling(child))
			gtk_widget_set_visible(child, child == self->unavailable_text || child == self->unavailable_control);
		return GTK_WIDGET(self);
	}
	g_settings_bind(settings, "live", self->live, "active", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "playback-speed", self->playback_speed, "value", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "loop", self->loop, "active", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "perturbation-delta", self->perturbation_delta, "value", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "follow-system-theme", self->follow_system_theme, "active", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "dark-theme", self->dark_theme, "active", G_SETTINGS_BIND_DEFAULT);
	g_settings_bind(settings, "follow-system-theme", self->dark_theme, "sensitive",
					G_SETTINGS_BIND_GET | G_SETTINGS_BIND_INVERT_BOOLEAN);
	return GTK_WIDGET(self);
}
