/* The sidebar's inspector: the scene's settings, the selected ball or wall
 * (every field of the scene file) and the loss terms. Each entry is
 * validated as it is typed, with cl_scene_validate's message (the scene
 * file loader's), and a valid value is applied at once as an undoable
 * document edit; it follows every change of the document's scene and
 * selection, keeping the entry being typed in. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CL_TYPE_INSPECTOR (cl_inspector_get_type())
G_DECLARE_FINAL_TYPE(ClInspector, cl_inspector, CL, INSPECTOR, GtkWidget)


G_END_DECLS
