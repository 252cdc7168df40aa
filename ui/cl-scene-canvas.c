#include "cl-scene-canvas.h"

#include "cl-scene-edit.h"
#include "cl-workbench.h"

#include <math.h>

struct _ClSceneCanvas {
	GtkWidget parent_instance;
	ClWorkbench *workbench; /* while rooted */
	ClDocument *doc;
	gulong changed_handler;
	gboolean *visible; /* the document's shown backends, for the renderer */
	gboolean *hidden;  /* enabled but hidden: struck through in the legend */
	double time;
	ClTool tool;
	ClView view;
	gboolean fitted;      /* the first frame has framed the scene */
	gboolean fit_pending; /* frame a newly loaded scene again when its trajectories arrive */
	ClPick hover;
	/* playback frames redraw only the balls over this layer; any change of
	 * the document bumps the revision that keys it */
	ClSceneLayer *layer;
	guint64 revision;

	/* the drag in progress */
	ClPick dragging;
	gboolean panning;
	ClVec2 grab_offset; /* world offset of the grab point from the object */
	ClVec2 anchor;      /* a turned wall's pivot */
	double pan_last_x, pan_last_y;
	double zoom_begin_scale;
	double pointer_x, pointer_y;

	/* the wall being drawn by the wall tool, from the press to the pointer */
	gboolean drawing_wall, wall_flipped;
	gboolean on_legend;
	ClVec2 wall_from, wall_to;
	char wall_problem[CL_MESSAGE_MAX]; /* why it would be refused, "" when it fits */
	GtkWidget *explanation;            /* a popover beside the pointer */
};

G_DEFINE_FINAL_TYPE(ClSceneCanvas, cl_scene_canvas, GTK_TYPE_WIDGET)

static gboolean is_dark(ClSceneCanvas *self)
{
	GdkRGBA fg;
	/* gtk_widget_get_color is 4.10; the style context is the 4.8 way */
	gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(self)), &fg);
	return fg.red + fg.green + fg.blue > 1.5;
}

static void sync_view_size(ClSceneCanvas *self)
{
	self->view.width = gtk_widget_get_width(GTK_WIDGET(self));
	self->view.height = gtk_widget_get_height(GTK_WIDGET(self));
}

/* What is drawn on screen, UI scale s applied: the same world under the
 * same pixels, with text, lines and markers s times larger (the renderer
 * draws in units of s pixels). Picking asks it in the same units. */
static ClView scaled_view(ClSceneCanvas *self, double s)
{
	ClView view = self->view;
	view.width /= s, view.height /= s, view.scale /= s;
	return view;
}

/* The Run shown, if its scene has the balls the document's has. */
static ClResult *shown_run(ClSceneCanvas *self)
{
	ClResult *run = cl_document_get_result(self->doc, CL_RESULT_RUN);
	return run && cl_result_scene(run)->ball_count == cl_document_get_scene(self->doc)->ball_count ? run : NULL;
}

static const gboolean *visible_backends(ClSceneCanvas *self)
{
	for (int b = 0; b < cl_backend_count(); b++) {
		self->visible[b] = cl_document_backend_shown(self->doc, b);
		self->hidden[b] = cl_document_backend_enabled(self->doc, b) && !self->visible[b];
	}
	return self->visible;
}

static ClSceneRenderInput render_input(ClSceneCanvas *self, const ClView *view, gboolean handles)
{
	ClResult *run = shown_run(self);
	ClPick none = {CL_PICK_NONE, -1};
	return (ClSceneRenderInput){
		.scene = cl_document_get_scene(self->doc),
		.result_scene = run ? cl_result_scene(run) : NULL,
		.result = run ? cl_result_payload(run) : NULL,
		.result_stale = run && cl_document_is_stale(self->doc, run),
		.view = view,
		.time = self->time,
		.trail = 0.15,
		.selection = handles ? cl_document_get_selection(self->doc) : none,
		.hover = handles ? self->hover : none,
		.backend_visible = visible_backends(self),
		.backend_hidden = handles ? self->hidden : NULL,
		.dark = is_dark(self),
		.handles = handles,
	};
}

static void render(ClSceneCanvas *self, cairo_t *cr, double width, double height, gboolean handles)
{
	double s = handles ? cl_workbench_ui_scale(GTK_WIDGET(self)) : 1.0;
	ClView view = self->view;
	view.width = width / s, view.height = height / s, view.scale = self->view.scale / s;
	cairo_save(cr);
	cairo_scale(cr, s, s);
	ClSceneRenderInput in = render_input(self, &view, handles);
	if (handles)
		cl_scene_layer_render(self->layer, cr, &in, s * gtk_widget_get_scale_factor(GTK_WIDGET(self)), self->revision);
	else
		cl_scene_render(cr, &in);
	if (handles && self->drawing_wall) {
		ClVec2 point, normal;
		if (cl_wall_from_drag(self->wall_from, self->wall_to, self->wall_flipped, &point, &normal))
			cl_scene_draw_wall_preview(cr, &in, self->wall_from, self->wall_to, normal, self->wall_problem[0] != 0);
	}
	cairo_restore(cr);
}

/* What lies under (x, y): a legend row's backend (−1 for none) or an object. */
static int legend_backend_at(ClSceneCanvas *self, double x, double y)
{
	double s = cl_workbench_ui_scale(GTK_WIDGET(self));
	ClView view = scaled_view(self, s);
	ClSceneRenderInput in = render_input(self, &view, TRUE);
	return cl_scene_legend_pick(&in, x / s, y / s);
}

static ClPick pick_at(ClSceneCanvas *self, double x, double y)
{
	double s = cl_workbench_ui_scale(GTK_WIDGET(self));
	ClView view = scaled_view(self, s);
	return cl_scene_pick(cl_document_get_scene(self->doc), &view, x / s, y / s, cl_document_get_selection(self->doc),
						 self->hover);
}

void cl_scene_canvas_render(ClSceneCanvas *self, cairo_t *cr, double width, double height)
{
	if (self->doc)
		render(self, cr, width, height, FALSE);
}

static void cl_scene_canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
	ClSceneCanvas *self = CL_SCENE_CANVAS(widget);
	int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
	if (!self->doc || w <= 0 || h <= 0)
		return;
	sync_view_size(self);
	if (!self->fitted) {
		self->fitted = TRUE;
		cl_scene_canvas_zoom_fit(self);
	}
	cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
	render(self, cr, w, h, TRUE);
	cairo_destroy(cr);
}

static void document_changed(ClDocument *doc, guint what, ClSceneCanvas *self)
{
	(void)doc;
	self->revision++;
	if (what & CL_DOCUMENT_REPLACED) {
		self->hover = (ClPick){CL_PICK_NONE, -1};
		cl_scene_canvas_zoom_fit(self);
		self->fit_pending = TRUE;
	}
	if ((what & CL_DOCUMENT_RESULTS) && self->fit_pending && shown_run(self) &&
		!cl_document_is_stale(self->doc, shown_run(self))) {
		self->fit_pending = FALSE;
		cl_scene_canvas_zoom_fit(self);
	}
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* ----------------------------------------------------------------- edits */

typedef struct {
	ClPick what;
	ClVec2 point;  /* where the pointer puts it */
	ClVec2 anchor; /* a turned wall's pivot */
} Move;

static gboolean apply_move(ClScene *scene, gpointer data, char *message, gsize size)
{
	const Move *m = data;
	int i = m->what.index;
	switch (m->what.kind) {
	case CL_PICK_BALL:
		return cl_edit_move_ball(scene, i, m->point, message, size);
	case CL_PICK_VELOCITY:
		return cl_edit_set_velocity(scene, i, m->point, message, size);
	case CL_PICK_WALL:
		return cl_edit_move_wall(scene, i, m->point, message, size);
	case CL_PICK_WALL_ROTATE:
		return cl_edit_rotate_wall(scene, i, m->anchor, m->point, message, size);
	case CL_PICK_TARGET:
		return cl_edit_move_target(scene, i, m->point);
	case CL_PICK_NONE:
		break;
	}
	return FALSE;
}

typedef struct {
	ClTool tool;
	ClVec2 point;
	int ball; /* the target tool: the selected ball, or −1 */
	int index; /* out: the new object */
} Add;

static gboolean apply_add(ClScene *scene, gpointer data, char *message, gsize size)
{
	Add *a = data;
	switch (a->tool) {
	case CL_TOOL_BALL:
		a->index = cl_edit_add_ball(scene, a->point, 0.1, message, size);
		break;
	case CL_TOOL_TARGET:
		a->index = cl_edit_set_target(scene, a->ball, a->point);
		break;
	case CL_TOOL_SELECT:
	case CL_TOOL_WALL: /* drawn by a drag, added on release */
		return FALSE;
	}
	return a->index >= 0;
}

static gboolean delete_selected(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	return cl_edit_delete(scene, *(ClPick *)data);
}

static void refused(ClSceneCanvas *self, const GError *error)
{
	if (self->workbench && error)
		cl_workbench_notify(self->workbench, error->message);
}

static gboolean snapping(GtkEventController *controller)
{
	return (gtk_event_controller_get_current_event_state(controller) & GDK_CONTROL_MASK) != 0;
}

static ClVec2 snapped(ClSceneCanvas *self, ClVec2 p, gboolean snap)
{
	if (!snap)
		return p;
	double step = cl_view_grid_step(&self->view) / 5;
	return (ClVec2){cl_snap(p.x, step), cl_snap(p.y, step)};
}

static void begin_add(ClSceneCanvas *self, ClVec2 point)
{
	static const char *const labels[] = {[CL_TOOL_BALL] = "Add ball", [CL_TOOL_TARGET] = "Set target"};
	ClPick selected = cl_document_get_selection(self->doc);
	Add add = {.tool = self->tool, .point = point, .ball = selected.kind == CL_PICK_BALL ? selected.index : -1};
	g_autoptr(GError) error = NULL;
	cl_document_begin(self->doc, labels[self->tool]);
	if (!cl_document_preview(self->doc, apply_add, &add, &error)) {
		cl_document_cancel(self->doc);
		refused(self, error);
		return;
	}
	self->grab_offset = (ClVec2){0, 0};
	switch (self->tool) {
	case CL_TOOL_BALL:
		self->dragging = (ClPick){CL_PICK_BALL, add.index};
		cl_document_select(self->doc, self->dragging);
		break;
	default:
		self->dragging = (ClPick){CL_PICK_TARGET, add.index};
		break;
	}
}

/* ------------------------------------------------------------ the wall tool */

static void hide_explanation(ClSceneCanvas *self)
{
	if (self->explanation)
		gtk_popover_popdown(GTK_POPOVER(self->explanation));
}

/* A sentence beside the pointer (x, y): why a wall was not added. */
static void explain_at(ClSceneCanvas *self, double x, double y, const char *message)
{
	if (!self->explanation) {
		self->explanation = gtk_popover_new();
		gtk_widget_set_parent(self->explanation, GTK_WIDGET(self));
		gtk_popover_set_autohide(GTK_POPOVER(self->explanation), TRUE);
		GtkWidget *label = gtk_label_new(NULL);
		gtk_label_set_wrap(GTK_LABEL(label), TRUE);
		gtk_label_set_max_width_chars(GTK_LABEL(label), 36);
		gtk_label_set_xalign(GTK_LABEL(label), 0);
		gtk_popover_set_child(GTK_POPOVER(self->explanation), label);
	}
	GtkWidget *label = gtk_popover_get_child(GTK_POPOVER(self->explanation));
	g_autofree char *text = g_strdup_printf("Wall not added. %s", message);
	gtk_label_set_text(GTK_LABEL(label), text);
	gtk_accessible_update_property(GTK_ACCESSIBLE(label), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
	gtk_popover_set_pointing_to(GTK_POPOVER(self->explanation), &(GdkRectangle){(int)x, (int)y, 1, 1});
	gtk_popover_popup(GTK_POPOVER(self->explanation));
}

/* Whether the wall drawn so far would fit the scene, and why not. */
static void judge_wall(ClSceneCanvas *self)
{
	ClVec2 point, normal;
	self->wall_problem[0] = 0;
	if (cl_wall_from_drag(self->wall_from, self->wall_to, self->wall_flipped, &point, &normal))
		cl_wall_drag_problem(cl_document_get_scene(self->doc), point, normal, self->wall_problem,
							 sizeof self->wall_problem);
}

typedef struct {
	ClVec2 point, normal;
	int index; /* out */
} NewWall;

static gboolean apply_new_wall(ClScene *scene, gpointer data, char *message, gsize size)
{
	NewWall *w = data;
	w->index = cl_edit_add_wall(scene, w->point, w->normal, message, size);
	return w->index >= 0;
}

/* On release: the wall as drawn, or a sentence beside the pointer saying
 * why not; never another wall than the one drawn. */
static void finish_wall(ClSceneCanvas *self, double x, double y)
{
	self->drawing_wall = FALSE;
	gtk_widget_queue_draw(GTK_WIDGET(self));
	NewWall wall = {.index = -1};
	double pixels = hypot(self->wall_to.x - self->wall_from.x, self->wall_to.y - self->wall_from.y) * self->view.scale;
	if (pixels < 8 || !cl_wall_from_drag(self->wall_from, self->wall_to, self->wall_flipped, &wall.point, &wall.normal)) {
		explain_at(self, x, y, "Press and drag along the line the wall should follow; its solid side (hatched) is "
							   "to the right of the drag, and F turns it round.");
		return;
	}
	judge_wall(self);
	if (self->wall_problem[0]) {
		explain_at(self, x, y, self->wall_problem);
		return;
	}
	g_autoptr(GError) error = NULL;
	if (!cl_document_edit(self->doc, "Add wall", NULL, apply_new_wall, &wall, &error))
		explain_at(self, x, y, error->message);
	else
		cl_document_select(self->doc, (ClPick){CL_PICK_WALL, wall.index});
}

static gboolean key_pressed(GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state,
							ClSceneCanvas *self)
{
	(void)controller, (void)keycode, (void)state;
	if (self->drawing_wall && (keyval == GDK_KEY_f || keyval == GDK_KEY_F)) {
		self->wall_flipped = !self->wall_flipped;
		judge_wall(self);
		gtk_widget_queue_draw(GTK_WIDGET(self));
		return TRUE;
	}
	if (self->drawing_wall && keyval == GDK_KEY_Escape) {
		self->drawing_wall = FALSE;
		gtk_widget_queue_draw(GTK_WIDGET(self));
		return TRUE;
	}
	return FALSE;
}

static void drag_begin(GtkGestureDrag *gesture, double x, double y, ClSceneCanvas *self)
{
	if (!self->doc)
		return;
	gtk_widget_grab_focus(GTK_WIDGET(self));
	sync_view_size(self);
	ClVec2 w = cl_view_to_world(&self->view, x, y);
	self->dragging = (ClPick){CL_PICK_NONE, -1};
	self->panning = FALSE;
	hide_explanation(self);
	if (self->tool == CL_TOOL_WALL) {
		self->drawing_wall = TRUE;
		self->wall_flipped = FALSE;
		self->wall_from = self->wall_to = snapped(self, w, snapping(GTK_EVENT_CONTROLLER(gesture)));
		self->wall_problem[0] = 0;
		return;
	}
	if (self->tool != CL_TOOL_SELECT) {
		begin_add(self, snapped(self, w, snapping(GTK_EVENT_CONTROLLER(gesture))));
		return;
	}
	/* a click on a backend in the legend hides or shows it everywhere */
	int backend = legend_backend_at(self, x, y);
	if (backend >= 0) {
		cl_document_toggle_backend_hidden(self->doc, backend);
		gtk_gesture_set_state(GTK_GESTURE(gesture), GTK_EVENT_SEQUENCE_CLAIMED);
		return;
	}
	const ClScene *scene = cl_document_get_scene(self->doc);
	ClPick pick = pick_at(self, x, y);
	cl_document_select(self->doc, pick);
	self->dragging = pick;
	ClVec2 origin = {0, 0};
	const char *label = NULL;
	switch (pick.kind) {
	case CL_PICK_NONE:
		self->panning = TRUE;
		self->pan_last_x = self->pan_last_y = 0;
		return;
	case CL_PICK_BALL:
		origin = scene->balls[pick.index].position;
		label = "Move ball";
		break;
	case CL_PICK_VELOCITY:
		origin = w;
		label = "Set velocity";
		break;
	case CL_PICK_WALL:
		origin = scene->walls[pick.index].point;
		label = "Move wall";
		break;
	case CL_PICK_WALL_ROTATE:
		origin = w;
		self->anchor = cl_wall_anchor(scene, &self->view, pick.index);
		label = "Rotate wall";
		break;
	case CL_PICK_TARGET:
		origin = scene->loss[pick.index].target;
		label = "Move target";
		break;
	}
	self->grab_offset = (ClVec2){origin.x - w.x, origin.y - w.y};
	cl_document_begin(self->doc, label);
}

static void drag_update(GtkGestureDrag *gesture, double dx, double dy, ClSceneCanvas *self)
{
	if (!self->doc)
		return;
	if (self->panning) {
		cl_view_pan(&self->view, dx - self->pan_last_x, dy - self->pan_last_y);
		self->pan_last_x = dx, self->pan_last_y = dy;
		gtk_widget_queue_draw(GTK_WIDGET(self));
		return;
	}
	double sx, sy;
	gtk_gesture_drag_get_start_point(gesture, &sx, &sy);
	gboolean snap = snapping(GTK_EVENT_CONTROLLER(gesture));
	if (self->drawing_wall) {
		self->wall_to = snapped(self, cl_view_to_world(&self->view, sx + dx, sy + dy), snap);
		judge_wall(self);
		gtk_widget_queue_draw(GTK_WIDGET(self));
		return;
	}
	if (self->dragging.kind == CL_PICK_NONE || !cl_document_in_gesture(self->doc))
		return;
	ClVec2 w = cl_view_to_world(&self->view, sx + dx, sy + dy);
	Move move = {.what = self->dragging, .anchor = self->anchor};
	if (self->dragging.kind == CL_PICK_VELOCITY || self->dragging.kind == CL_PICK_WALL_ROTATE)
		move.point = snapped(self, w, snap);
	else
		move.point = snapped(self, (ClVec2){w.x + self->grab_offset.x, w.y + self->grab_offset.y}, snap);
	/* a turn needs a direction: a few pixels from the pivot at least */
	if (move.what.kind == CL_PICK_WALL_ROTATE &&
		hypot(w.x - self->anchor.x, w.y - self->anchor.y) * self->view.scale < 4)
		return;
	g_autoptr(GError) error = NULL;
	if (!cl_document_preview(self->doc, apply_move, &move, &error))
		refused(self, error);
}

static void drag_end(GtkGestureDrag *gesture, double dx, double dy, ClSceneCanvas *self)
{
	self->panning = FALSE;
	if (self->drawing_wall && self->doc) {
		double sx, sy;
		gtk_gesture_drag_get_start_point(gesture, &sx, &sy);
		finish_wall(self, sx + dx, sy + dy);
		return;
	}
	self->dragging = (ClPick){CL_PICK_NONE, -1};
	if (self->doc)
		cl_document_commit(self->doc);
}

static void pan_begin(GtkGestureDrag *gesture, double x, double y, ClSceneCanvas *self)
{
	(void)gesture, (void)x, (void)y;
	self->pan_last_x = self->pan_last_y = 0;
}

static void pan_update(GtkGestureDrag *gesture, double dx, double dy, ClSceneCanvas *self)
{
	(void)gesture;
	cl_view_pan(&self->view, dx - self->pan_last_x, dy - self->pan_last_y);
	self->pan_last_x = dx, self->pan_last_y = dy;
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void motion(GtkEventControllerMotion *controller, double x, double y, ClSceneCanvas *self)
{
	(void)controller;
	self->pointer_x = x, self->pointer_y = y;
	if (!self->doc)
		return;
	sync_view_size(self);
	ClPick hover = pick_at(self, x, y);
	gboolean on_legend = self->tool == CL_TOOL_SELECT && legend_backend_at(self, x, y) >= 0;
	if (on_legend != self->on_legend) {
		self->on_legend = on_legend;
		gtk_widget_set_cursor_from_name(GTK_WIDGET(self), on_legend ? "pointer" : "default");
	}
	if (!on_legend && (hover.kind != self->hover.kind || hover.index != self->hover.index)) {
		self->hover = hover;
		static const char *const cursors[] = {
			[CL_PICK_NONE] = "default", [CL_PICK_BALL] = "move",		 [CL_PICK_VELOCITY] = "crosshair",
			[CL_PICK_WALL] = "move",	[CL_PICK_WALL_ROTATE] = "grab", [CL_PICK_TARGET] = "move",
		};
		gtk_widget_set_cursor_from_name(GTK_WIDGET(self),
										self->tool == CL_TOOL_SELECT ? cursors[hover.kind] : "crosshair");
		gtk_widget_queue_draw(GTK_WIDGET(self));
	}
}

static gboolean scroll(GtkEventControllerScroll *controller, double dx, double dy, ClSceneCanvas *self)
{
	(void)controller, (void)dx;
	sync_view_size(self);
	cl_view_zoom_at(&self->view, self->pointer_x, self->pointer_y, pow(1.15, -dy));
	gtk_widget_queue_draw(GTK_WIDGET(self));
	return TRUE;
}

static void pinch_begin(GtkGesture *gesture, GdkEventSequence *sequence, ClSceneCanvas *self)
{
	(void)gesture, (void)sequence;
	self->zoom_begin_scale = self->view.scale;
}

static void pinch_changed(GtkGestureZoom *gesture, double scale, ClSceneCanvas *self)
{
	double x, y;
	gtk_gesture_get_bounding_box_center(GTK_GESTURE(gesture), &x, &y);
	sync_view_size(self);
	cl_view_zoom_at(&self->view, x, y, self->zoom_begin_scale * scale / self->view.scale);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

static gboolean delete_selection(GtkWidget *widget, GVariant *args, gpointer data)
{
	(void)args, (void)data;
	ClSceneCanvas *self = CL_SCENE_CANVAS(widget);
	ClPick selection = self->doc ? cl_document_get_selection(self->doc) : (ClPick){CL_PICK_NONE, -1};
	if (selection.kind == CL_PICK_NONE)
		return FALSE;
	g_autoptr(GError) error = NULL;
	if (!cl_document_edit(self->doc, "Delete", NULL, delete_selected, &selection, &error))
		refused(self, error);
	return TRUE;
}

/* ------------------------------------------------------------ lifecycle */

static void detach(ClSceneCanvas *self)
{
	if (self->doc) {
		cl_document_cancel(self->doc);
		g_clear_signal_handler(&self->changed_handler, self->doc);
	}
	self->doc = NULL;
	self->workbench = NULL;
}

static void cl_scene_canvas_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_scene_canvas_parent_class)->root(widget);
	ClSceneCanvas *self = CL_SCENE_CANVAS(widget);
	self->workbench = cl_workbench_of(widget);
	if (!self->workbench)
		return;
	self->doc = cl_workbench_get_document(self->workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	self->fitted = FALSE;
	self->revision++; /* another document, maybe */
}

static void cl_scene_canvas_unroot(GtkWidget *widget)
{
	detach(CL_SCENE_CANVAS(widget));
	GTK_WIDGET_CLASS(cl_scene_canvas_parent_class)->unroot(widget);
}

static void cl_scene_canvas_dispose(GObject *object)
{
	ClSceneCanvas *self = CL_SCENE_CANVAS(object);
	g_clear_pointer(&self->explanation, gtk_widget_unparent);
	G_OBJECT_CLASS(cl_scene_canvas_parent_class)->dispose(object);
}

static void cl_scene_canvas_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
	GTK_WIDGET_CLASS(cl_scene_canvas_parent_class)->size_allocate(widget, width, height, baseline);
	ClSceneCanvas *self = CL_SCENE_CANVAS(widget);
	if (self->explanation)
		gtk_popover_present(GTK_POPOVER(self->explanation));
}

static void cl_scene_canvas_finalize(GObject *object)
{
	cl_scene_layer_free(CL_SCENE_CANVAS(object)->layer);
	g_free(CL_SCENE_CANVAS(object)->visible);
	g_free(CL_SCENE_CANVAS(object)->hidden);
	G_OBJECT_CLASS(cl_scene_canvas_parent_class)->finalize(object);
}

static void cl_scene_canvas_class_init(ClSceneCanvasClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->finalize = cl_scene_canvas_finalize;
	object_class->dispose = cl_scene_canvas_dispose;
	widget_class->size_allocate = cl_scene_canvas_size_allocate;
	widget_class->snapshot = cl_scene_canvas_snapshot;
	widget_class->root = cl_scene_canvas_root;
	widget_class->unroot = cl_scene_canvas_unroot;
	gtk_widget_class_add_binding(widget_class, GDK_KEY_Delete, 0, delete_selection, NULL);
	gtk_widget_class_add_binding(widget_class, GDK_KEY_BackSpace, 0, delete_selection, NULL);
	/* playback keys live on the canvas so they never steal a typed space */
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_space, 0, "win.toggle-play", NULL);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Left, 0, "win.step-back", NULL);
	gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Right, 0, "win.step-forward", NULL);
	gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
	gtk_widget_class_set_css_name(widget_class, "scenecanvas");
}

static void cl_scene_canvas_init(ClSceneCanvas *self)
{
	GtkWidget *widget = GTK_WIDGET(self);
	self->view = (ClView){.center_x = 0, .center_y = 0, .scale = 120, .width = 400, .height = 300};
	self->hover = self->dragging = (ClPick){CL_PICK_NONE, -1};
	self->layer = cl_scene_layer_new();
	self->visible = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	self->hidden = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	gtk_widget_set_focusable(widget, TRUE);
	gtk_widget_set_hexpand(widget, TRUE);
	gtk_widget_set_vexpand(widget, TRUE);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, "Scene canvas",
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
								   "Balls, walls, target and trajectories. Drag to edit; scroll to zoom; click a backend in the legend to hide or show it.", -1);

	GtkGesture *drag = gtk_gesture_drag_new();
	gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), GDK_BUTTON_PRIMARY);
	g_signal_connect(drag, "drag-begin", G_CALLBACK(drag_begin), self);
	g_signal_connect(drag, "drag-update", G_CALLBACK(drag_update), self);
	g_signal_connect(drag, "drag-end", G_CALLBACK(drag_end), self);
	gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));

	GtkGesture *pan = gtk_gesture_drag_new();
	gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(pan), GDK_BUTTON_MIDDLE);
	g_signal_connect(pan, "drag-begin", G_CALLBACK(pan_begin), self);
	g_signal_connect(pan, "drag-update", G_CALLBACK(pan_update), self);
	gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pan));

	GtkEventController *move = gtk_event_controller_motion_new();
	g_signal_connect(move, "motion", G_CALLBACK(motion), self);
	gtk_widget_add_controller(widget, move);

	GtkEventController *wheel = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
	g_signal_connect(wheel, "scroll", G_CALLBACK(scroll), self);
	gtk_widget_add_controller(widget, wheel);

	GtkEventController *keys = gtk_event_controller_key_new();
	g_signal_connect(keys, "key-pressed", G_CALLBACK(key_pressed), self);
	gtk_widget_add_controller(widget, keys);

	GtkGesture *pinch = gtk_gesture_zoom_new();
	g_signal_connect(pinch, "begin", G_CALLBACK(pinch_begin), self);
	g_signal_connect(pinch, "scale-changed", G_CALLBACK(pinch_changed), self);
	gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pinch));
}

void cl_scene_canvas_set_time(ClSceneCanvas *self, double time)
{
	self->time = time;
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_scene_canvas_set_tool(ClSceneCanvas *self, ClTool tool)
{
	self->tool = tool;
	gtk_widget_set_cursor_from_name(GTK_WIDGET(self), tool == CL_TOOL_SELECT ? "default" : "crosshair");
}

void cl_scene_canvas_zoom_fit(ClSceneCanvas *self)
{
	if (!self->doc)
		return;
	sync_view_size(self);
	ClResult *run = shown_run(self);
	/* a margin that keeps room for the legend in the top-left corner */
	cl_view_fit_scene(&self->view, cl_document_get_scene(self->doc), run ? cl_result_scene(run) : NULL,
					  run ? cl_result_payload(run) : NULL, visible_backends(self), 48);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_scene_canvas_zoom(ClSceneCanvas *self, double factor)
{
	sync_view_size(self);
	cl_view_zoom_at(&self->view, self->view.width / 2, self->view.height / 2, factor);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}
