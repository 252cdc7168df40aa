/* The preferences window: every key of the app's GSettings a user changes,
 * bound directly so the window and the settings never disagree. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_PREFERENCES (cl_preferences_get_type())
G_DECLARE_FINAL_TYPE(ClPreferences, cl_preferences, CL, PREFERENCES, GtkWindow)

GtkWidget *cl_preferences_new(GtkWindow *parent, GSettings *settings);

G_END_DECLS
