/* The scene canvas: draws through cl_scene_render and turns pointer input
 * into edits (cl-scene-edit). The scene is borrowed from the window and
 * edited in place; "scene-changed" fires during a drag, "edit-done" once per
 * finished edit with the scene as it was before (for the undo stack). */
#pragma once

#include "cl-scene-render.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum {
	CL_TOOL_SELECT,
	CL_TOOL_BALL,
	CL_TOOL_WALL,
	CL_TOOL_TARGET,
} ClTool;

#define CL_TYPE_SCENE_CANVAS (cl_scene_canvas_get_type())
G_DECLARE_FINAL_TYPE(ClSceneCanvas, cl_scene_canvas, CL, SCENE_CANVAS, GtkWidget)

GtkWidget *cl_scene_canvas_new(void);
void cl_scene_canvas_set_scene(ClSceneCanvas *canvas, ClScene *scene);
void cl_scene_canvas_set_result(ClSceneCanvas *canvas, ClComputeResult *result, gboolean stale);
void cl_scene_canvas_set_time(ClSceneCanvas *canvas, double time);
void cl_scene_canvas_set_tool(ClSceneCanvas *canvas, ClTool tool);
void cl_scene_canvas_set_backend_visible(ClSceneCanvas *canvas, const gboolean *visible);
ClPick cl_scene_canvas_get_selection(ClSceneCanvas *canvas);
void cl_scene_canvas_set_selection(ClSceneCanvas *canvas, ClPick selection);
/* Frames the scene and its trajectories. */
void cl_scene_canvas_zoom_fit(ClSceneCanvas *canvas);
void cl_scene_canvas_zoom(ClSceneCanvas *canvas, double factor);
/* Renders what the canvas shows into a cairo_t of the given size (export). */
void cl_scene_canvas_render(ClSceneCanvas *canvas, cairo_t *cr, double width, double height);

G_END_DECLS
