/* The sidebar's backend list, generated from the registry: per backend an
 * enable switch, its colour, what it mirrors and its summary (what the model
 * does, where its gradient goes wrong), and a parameter panel built from its
 * ClParamDesc list (spin buttons, switches, drop-downs; help as tooltip). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef struct _ClWindow ClWindow;

#define CL_TYPE_BACKEND_LIST (cl_backend_list_get_type())
G_DECLARE_FINAL_TYPE(ClBackendList, cl_backend_list, CL, BACKEND_LIST, GtkWidget)

void cl_backend_list_set_window(ClBackendList *list, ClWindow *window);
/* Shows the scene's parameter values and the enabled set. */
void cl_backend_list_refresh(ClBackendList *list);

G_END_DECLS
