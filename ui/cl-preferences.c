#include "cl-preferences.h"

struct _ClPreferences {
	GtkWindow parent_instance;
	GSettings *settings;
	GtkWidget *grid;
	int rows;
};

G_DEFINE_FINAL_TYPE(ClPreferences, cl_preferences, GTK_TYPE_WINDOW)

static void add_row(ClPreferences *self, const char *title, const char *help, GtkWidget *control)
{
	GtkWidget *text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
	GtkWidget *label = gtk_label_new(title);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	GtkWidget *sub = gtk_label_new(help);
	gtk_label_set_xalign(GTK_LABEL(sub), 0);
	gtk_label_set_wrap(GTK_LABEL(sub), TRUE);
	gtk_label_set_max_width_chars(GTK_LABEL(sub), 48);
	gtk_widget_add_css_class(sub, "dim-label");
	gtk_box_append(GTK_BOX(text), label);
	gtk_box_append(GTK_BOX(text), sub);
	gtk_widget_set_hexpand(text, TRUE);
	gtk_widget_set_valign(control, GTK_ALIGN_CENTER);
	gtk_widget_set_halign(control, GTK_ALIGN_END);
	gtk_accessible_update_property(GTK_ACCESSIBLE(control), GTK_ACCESSIBLE_PROPERTY_LABEL, title,
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, help, -1);
	gtk_grid_attach(GTK_GRID(self->grid), text, 0, self->rows, 1, 1);
	gtk_grid_attach(GTK_GRID(self->grid), control, 1, self->rows, 1, 1);
	self->rows++;
}

static GtkWidget *switch_for(ClPreferences *self, const char *key)
{
	GtkWidget *sw = gtk_switch_new();
	g_settings_bind(self->settings, key, sw, "active", G_SETTINGS_BIND_DEFAULT);
	return sw;
}

static GtkWidget *spin_for(ClPreferences *self, const char *key, double min, double max, double step, int digits)
{
	GtkWidget *spin = gtk_spin_button_new_with_range(min, max, step);
	gtk_spin_button_set_digits(GTK_SPIN_BUTTON(spin), (guint)digits);
	g_settings_bind(self->settings, key, spin, "value", G_SETTINGS_BIND_DEFAULT);
	return spin;
}

static void cl_preferences_dispose(GObject *object)
{
	g_clear_object(&CL_PREFERENCES(object)->settings);
	G_OBJECT_CLASS(cl_preferences_parent_class)->dispose(object);
}

static void cl_preferences_class_init(ClPreferencesClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_preferences_dispose;
	gtk_widget_class_add_binding_action(GTK_WIDGET_CLASS(klass), GDK_KEY_Escape, 0, "window.close", NULL);
}

static void cl_preferences_init(ClPreferences *self)
{
	gtk_window_set_title(GTK_WINDOW(self), "Preferences");
	gtk_window_set_default_size(GTK_WINDOW(self), 520, -1);
	self->grid = gtk_grid_new();
	gtk_grid_set_row_spacing(GTK_GRID(self->grid), 14);
	gtk_grid_set_column_spacing(GTK_GRID(self->grid), 24);
	gtk_widget_set_margin_start(self->grid, 18);
	gtk_widget_set_margin_end(self->grid, 18);
	gtk_widget_set_margin_top(self->grid, 18);
	gtk_widget_set_margin_bottom(self->grid, 18);
	gtk_window_set_child(GTK_WINDOW(self), self->grid);
}

GtkWidget *cl_preferences_new(GtkWindow *parent, GSettings *settings)
{
	ClPreferences *self = g_object_new(CL_TYPE_PREFERENCES, "transient-for", parent, "modal", TRUE, NULL);
	if (!settings) {
		add_row(self, "Preferences are not available", "The GSettings schema is not installed.", gtk_label_new(""));
		return GTK_WIDGET(self);
	}
	self->settings = g_object_ref(settings);
	add_row(self, "Live recompute", "Recompute trajectories and gradients after every edit (debounced).",
			switch_for(self, "live"));
	add_row(self, "Playback speed", "Simulated seconds per second of playback (1 = real time).",
			spin_for(self, "playback-speed", 0.001, 10, 0.05, 3));
	add_row(self, "Loop playback", "Start again at t = 0 at the end of the scene.", switch_for(self, "loop"));
	add_row(self, "Perturbation δ", "Size of the ± step in the Perturbation view.",
			spin_for(self, "perturbation-delta", 1e-4, 2, 0.01, 4));
	add_row(self, "Theme follows the system", "Use the desktop's light or dark style.",
			switch_for(self, "follow-system-theme"));
	GtkWidget *dark = switch_for(self, "dark-theme");
	g_settings_bind(settings, "follow-system-theme", dark, "sensitive", G_SETTINGS_BIND_GET | G_SETTINGS_BIND_INVERT_BOOLEAN);
	add_row(self, "Dark theme", "When the theme does not follow the system.", dark);
	return GTK_WIDGET(self);
}
