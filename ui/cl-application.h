/* ClApplication: io.github.contactlab.ContactLab. App-wide actions
 * (load-preset, open-file, quit, about, preferences), accelerators, CSS,
 * GSettings and crash recovery. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define CL_APPLICATION_ID "io.github.contactlab.ContactLab"

#define CL_TYPE_APPLICATION (cl_application_get_type())
G_DECLARE_FINAL_TYPE(ClApplication, cl_application, CL, APPLICATION, AdwApplication)

ClApplication *cl_application_new(void);
/* The app's settings, or NULL when the schema is not installed. */
GSettings *cl_application_get_settings(ClApplication *app);
/* The running ClApplication's settings, or NULL (no schema, or another
 * application, as in a test). */
GSettings *cl_application_settings(void);
/* The recovery file's path (under g_get_user_state_dir()). */
const char *cl_application_recovery_path(ClApplication *app);

G_END_DECLS
