/* The scene canvas: the document's scene and its Run drawn through
 * cl_scene_render, pointer input turned into the document's gestures
 * (begin, a preview per motion, commit), selection kept in the document. */
#pragma once

#include "scene-figure.h"

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

void cl_scene_canvas_set_time(ClSceneCanvas *canvas, double time);
void cl_scene_canvas_set_tool(ClSceneCanvas *canvas, ClTool tool);
/* Frames the scene and its trajectories. */
void cl_scene_canvas_zoom_fit(ClSceneCanvas *canvas);
void cl_scene_canvas_zoom(ClSceneCanvas *canvas, double factor);
/* Renders what the canvas shows, without its editing handles, into a
 * cairo_t of the given size (export). */
void cl_scene_canvas_render(ClSceneCanvas *canvas, cairo_t *cr, double width, double height);

G_END_DECLS
