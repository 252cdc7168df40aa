/* The sidebar's backend list, generated from the registry: per backend an
 * enable switch, its colour, what it mirrors and its summary (what the model
 * does, where its gradient goes wrong), and a parameter panel built from its
 * ClParamDesc list (spin buttons, switches, drop-downs; help as tooltip).
 * The enabled set is the document's; a parameter change is a document edit. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_BACKEND_LIST (cl_backend_list_get_type())
G_DECLARE_FINAL_TYPE(ClBackendList, cl_backend_list, CL, BACKEND_LIST, GtkWidget)


G_END_DECLS
