/* The sidebar's inspector: the scene's settings, the selected ball or wall
 * (every field of the scene file) and the loss terms. Each entry is
 * validated as it is typed, with cl_scene_validate's message (the scene
 * file loader's), and a valid value is applied at once as an undoable edit. */
#pragma once

#include "cl-scene-edit.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef struct _ClWindow ClWindow;

#define CL_TYPE_INSPECTOR (cl_inspector_get_type())
G_DECLARE_FINAL_TYPE(ClInspector, cl_inspector, CL, INSPECTOR, GtkWidget)

void cl_inspector_set_window(ClInspector *inspector, ClWindow *window);
/* Shows the scene and selection; keeps the entry being typed in. */
void cl_inspector_refresh(ClInspector *inspector, ClPick selection);

G_END_DECLS
