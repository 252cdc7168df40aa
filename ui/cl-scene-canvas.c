#include "cl-scene-canvas.h"

#include <math.h>

struct _ClSceneCanvas {
	GtkWidget parent_instance;
	ClScene *scene; /* borrowed */
	ClComputeResult *result;
	gboolean stale;
	double time;
	ClTool tool;
	ClView view;
	gboolean fitted;
	gboolean *visible;
	ClPick selection, hover;

	/* the drag in progress */
	ClPick dragging;
	gboolean panning;
	ClScene *before; /* snapshot for undo, owned */
	const char *edit_label;
	ClVec2 grab_offset; /* world offset of the grab point from the object */
	ClVec2 drag_start;  /* world */
	double pan_last_x, pan_last_y;
	double zoom_begin_scale;
	double pointer_x, pointer_y;
};

G_DEFINE_FINAL_TYPE(ClSceneCanvas, cl_scene_canvas, GTK_TYPE_WIDGET)

enum { SIGNAL_SCENE_CHANGED, SIGNAL_EDIT_DONE, SIGNAL_SELECTION_CHANGED, SIGNAL_EDIT_REFUSED, N_SIGNALS };
static guint signals[N_SIGNALS];

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

void cl_scene_canvas_render(ClSceneCanvas *self, cairo_t *cr, double width, double height)
{
	ClView view = self->view;
	view.width = width;
	view.height = height;
	ClSceneRenderInput in = {
		.scene = self->scene,
		.result = self->result,
		.result_stale = self->stale,
		.view = &view,
		.time = self->time,
		.trail = 0.15,
		.selection = self->selection,
		.hover = self->hover,
		.backend_visible = self->visible,
		.dark = is_dark(self),
	};
	cl_scene_render(cr, &in);
}

static void cl_scene_canvas_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
	ClSceneCanvas *self = CL_SCENE_CANVAS(widget);
	int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
	if (!self->scene || w <= 0 || h <= 0)
		return;
	sync_view_size(self);
	if (!self->fitted) {
		self->fitted = TRUE;
		cl_scene_canvas_zoom_fit(self);
	}
	cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
	cl_scene_canvas_render(self, cr, w, h);
	cairo_destroy(cr);
}

static void set_selection(ClSceneCanvas *self, ClPick pick)
{
	if (pick.kind == self->selection.kind && pick.index == self->selection.index)
		return;
	self->selection = pick;
	g_signal_emit(self, signals[SIGNAL_SELECTION_CHANGED], 0);
	gtk_widget_queue_draw(GTK_WIDGET(self));
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

static void begin_edit(ClSceneCanvas *self, const char *label)
{
	g_clear_pointer(&self->before, cl_scene_free);
	self->before = cl_scene_copy(self->scene);
	self->edit_label = label;
}

static void finish_edit(ClSceneCanvas *self)
{
	if (!self->before)
		return;
	if (!cl_scene_equal(self->before, self->scene))
		g_signal_emit(self, signals[SIGNAL_EDIT_DONE], 0, self->before, self->edit_label);
	g_clear_pointer(&self->before, cl_scene_free);
}

static void refused(ClSceneCanvas *self, const char *message)
{
	g_signal_emit(self, signals[SIGNAL_EDIT_REFUSED], 0, message);
}

static void changed(ClSceneCanvas *self)
{
	g_signal_emit(self, signals[SIGNAL_SCENE_CHANGED], 0);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void drag_begin(GtkGestureDrag *gesture, double x, double y, ClSceneCanvas *self)
{
	if (!self->scene)
		return;
	gtk_widget_grab_focus(GTK_WIDGET(self));
	sync_view_size(self);
	ClVec2 w = cl_view_to_world(&self->view, x, y);
	gboolean snap = snapping(GTK_EVENT_CONTROLLER(gesture));
	char message[CL_MESSAGE_MAX] = "";
	self->drag_start = w;
	self->dragging = (ClPick){CL_PICK_NONE, -1};
	self->panning = FALSE;
	switch (self->tool) {
	case CL_TOOL_BALL: {
		begin_edit(self, "Add ball");
		int i = cl_edit_add_ball(self->scene, snapped(self, w, snap), 0.1, message, sizeof message);
		if (i < 0) {
			refused(self, message);
			return;
		}
		self->dragging = (ClPick){CL_PICK_BALL, i};
		self->grab_offset = (ClVec2){0, 0};
		set_selection(self, self->dragging);
		changed(self);
		return;
	}
	case CL_TOOL_WALL: {
		begin_edit(self, "Add wall");
		int i = cl_edit_add_wall(self->scene, snapped(self, w, snap), (ClVec2){0, 1}, message, sizeof message);
		if (i < 0) {
			refused(self, message);
			return;
		}
		/* dragging from the press point sets the wall's direction */
		self->dragging = (ClPick){CL_PICK_WALL_ROTATE, i};
		set_selection(self, (ClPick){CL_PICK_WALL, i});
		changed(self);
		return;
	}
	case CL_TOOL_TARGET: {
		begin_edit(self, "Set target");
		int ball = self->selection.kind == CL_PICK_BALL ? self->selection.index : -1;
		int i = cl_edit_set_target(self->scene, ball, snapped(self, w, snap));
		if (i >= 0) {
			self->dragging = (ClPick){CL_PICK_TARGET, i};
			self->grab_offset = (ClVec2){0, 0};
			changed(self);
		}
		return;
	}
	case CL_TOOL_SELECT:
		break;
	}
	ClPick pick = cl_scene_pick(self->scene, &self->view, x, y);
	set_selection(self, pick);
	self->dragging = pick;
	switch (pick.kind) {
	case CL_PICK_NONE:
		self->panning = TRUE;
		self->pan_last_x = self->pan_last_y = 0;
		return;
	case CL_PICK_BALL:
		self->grab_offset = (ClVec2){self->scene->balls[pick.index].position.x - w.x,
									 self->scene->balls[pick.index].position.y - w.y};
		begin_edit(self, "Move ball");
		break;
	case CL_PICK_VELOCITY:
		begin_edit(self, "Set velocity");
		break;
	case CL_PICK_WALL:
		self->grab_offset = (ClVec2){self->scene->walls[pick.index].point.x - w.x,
									 self->scene->walls[pick.index].point.y - w.y};
		begin_edit(self, "Move wall");
		break;
	case CL_PICK_WALL_ROTATE:
		self->grab_offset = cl_wall_anchor(self->scene, &self->view, pick.index);
		begin_edit(self, "Rotate wall");
		break;
	case CL_PICK_TARGET:
		self->grab_offset = (ClVec2){self->scene->loss[pick.index].target.x - w.x,
									 self->scene->loss[pick.index].target.y - w.y};
		begin_edit(self, "Move target");
		break;
	}
}

static void drag_update(GtkGestureDrag *gesture, double dx, double dy, ClSceneCanvas *self)
{
	if (!self->scene)
		return;
	double sx, sy;
	gtk_gesture_drag_get_start_point(gesture, &sx, &sy);
	if (self->panning) {
		cl_view_pan(&self->view, dx - self->pan_last_x, dy - self->pan_last_y);
		self->pan_last_x = dx, self->pan_last_y = dy;
		gtk_widget_queue_draw(GTK_WIDGET(self));
		return;
	}
	gboolean snap = snapping(GTK_EVENT_CONTROLLER(gesture));
	ClVec2 w = cl_view_to_world(&self->view, sx + dx, sy + dy);
	ClVec2 grabbed = snapped(self, (ClVec2){w.x + self->grab_offset.x, w.y + self->grab_offset.y}, snap);
	char message[CL_MESSAGE_MAX] = "";
	gboolean ok = TRUE;
	int i = self->dragging.index;
	switch (self->dragging.kind) {
	case CL_PICK_NONE:
		return;
	case CL_PICK_BALL:
		ok = cl_edit_move_ball(self->scene, i, grabbed, message, sizeof message);
		break;
	case CL_PICK_VELOCITY:
		ok = cl_edit_set_velocity(self->scene, i, snapped(self, w, snap), message, sizeof message);
		break;
	case CL_PICK_WALL:
		ok = cl_edit_move_wall(self->scene, i, grabbed, message, sizeof message);
		break;
	case CL_PICK_WALL_ROTATE: {
		/* a new wall turns about its press point, an existing one about its anchor */
		ClVec2 anchor = self->tool == CL_TOOL_WALL ? self->scene->walls[i].point : self->grab_offset;
		if (hypot(w.x - anchor.x, w.y - anchor.y) * self->view.scale < 4)
			return;
		ok = cl_edit_rotate_wall(self->scene, i, anchor, w, message, sizeof message);
		break;
	}
	case CL_PICK_TARGET:
		ok = cl_edit_move_target(self->scene, i, grabbed);
		break;
	}
	if (ok)
		changed(self);
	else
		refused(self, message);
}

static void drag_end(GtkGestureDrag *gesture, double dx, double dy, ClSceneCanvas *self)
{
	(void)gesture, (void)dx, (void)dy;
	self->panning = FALSE;
	self->dragging = (ClPick){CL_PICK_NONE, -1};
	finish_edit(self);
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
	if (!self->scene)
		return;
	sync_view_size(self);
	ClPick hover = cl_scene_pick(self->scene, &self->view, x, y);
	if (hover.kind != self->hover.kind || hover.index != self->hover.index) {
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
	if (!self->scene || self->selection.kind == CL_PICK_NONE)
		return FALSE;
	begin_edit(self, "Delete");
	if (cl_edit_delete(self->scene, self->selection)) {
		set_selection(self, (ClPick){CL_PICK_NONE, -1});
		changed(self);
	}
	finish_edit(self);
	return TRUE;
}

static void cl_scene_canvas_dispose(GObject *object)
{
	ClSceneCanvas *self = CL_SCENE_CANVAS(object);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	g_clear_pointer(&self->before, cl_scene_free);
	g_clear_pointer(&self->visible, g_free);
	G_OBJECT_CLASS(cl_scene_canvas_parent_class)->dispose(object);
}

static void cl_scene_canvas_class_init(ClSceneCanvasClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	object_class->dispose = cl_scene_canvas_dispose;
	widget_class->snapshot = cl_scene_canvas_snapshot;
	signals[SIGNAL_SCENE_CHANGED] =
		g_signal_new("scene-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
	/* (before: ClScene*, label: const char*) */
	signals[SIGNAL_EDIT_DONE] = g_signal_new("edit-done", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
											 NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_STRING);
	signals[SIGNAL_SELECTION_CHANGED] = g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
													 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
	signals[SIGNAL_EDIT_REFUSED] = g_signal_new("edit-refused", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
												NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
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
	self->selection = self->hover = self->dragging = (ClPick){CL_PICK_NONE, -1};
	self->visible = g_new0(gboolean, (gsize)cl_backend_count());
	gtk_widget_set_focusable(widget, TRUE);
	gtk_widget_set_hexpand(widget, TRUE);
	gtk_widget_set_vexpand(widget, TRUE);
	gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, "Scene canvas",
								   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
								   "Balls, walls, target and trajectories. Drag to edit; scroll to zoom.", -1);

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

	GtkGesture *pinch = gtk_gesture_zoom_new();
	g_signal_connect(pinch, "begin", G_CALLBACK(pinch_begin), self);
	g_signal_connect(pinch, "scale-changed", G_CALLBACK(pinch_changed), self);
	gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(pinch));
}

GtkWidget *cl_scene_canvas_new(void)
{
	return g_object_new(CL_TYPE_SCENE_CANVAS, NULL);
}

void cl_scene_canvas_set_scene(ClSceneCanvas *self, ClScene *scene)
{
	gboolean first = !self->scene;
	self->scene = scene;
	g_clear_pointer(&self->before, cl_scene_free);
	if (self->selection.kind != CL_PICK_NONE) {
		int count = self->selection.kind == CL_PICK_BALL || self->selection.kind == CL_PICK_VELOCITY ? scene->ball_count
					: self->selection.kind == CL_PICK_TARGET ? scene->loss_count
															  : scene->wall_count;
		if (self->selection.index >= count)
			set_selection(self, (ClPick){CL_PICK_NONE, -1});
	}
	if (first)
		self->fitted = FALSE;
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_scene_canvas_set_result(ClSceneCanvas *self, ClComputeResult *result, gboolean stale)
{
	if (result)
		cl_compute_result_ref(result);
	g_clear_pointer(&self->result, cl_compute_result_unref);
	self->result = result;
	self->stale = stale;
	gtk_widget_queue_draw(GTK_WIDGET(self));
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

void cl_scene_canvas_set_backend_visible(ClSceneCanvas *self, const gboolean *visible)
{
	memcpy(self->visible, visible, sizeof *visible * (gsize)cl_backend_count());
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

ClPick cl_scene_canvas_get_selection(ClSceneCanvas *self)
{
	return self->selection;
}

void cl_scene_canvas_set_selection(ClSceneCanvas *self, ClPick selection)
{
	set_selection(self, selection);
}

static void extend(double box[4], double x, double y)
{
	if (!isfinite(x) || !isfinite(y) || fabs(x) > 1e4 || fabs(y) > 1e4)
		return;
	box[0] = fmin(box[0], x), box[1] = fmin(box[1], y);
	box[2] = fmax(box[2], x), box[3] = fmax(box[3], y);
}

void cl_scene_canvas_zoom_fit(ClSceneCanvas *self)
{
	if (!self->scene)
		return;
	sync_view_size(self);
	double box[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
	const ClScene *s = self->scene;
	for (int i = 0; i < s->ball_count; i++) {
		const ClBall *b = &s->balls[i];
		extend(box, b->position.x - b->radius, b->position.y - b->radius);
		extend(box, b->position.x + b->radius, b->position.y + b->radius);
		extend(box, b->position.x + b->velocity.x * CL_ARROW_SECONDS, b->position.y + b->velocity.y * CL_ARROW_SECONDS);
	}
	for (int i = 0; i < s->wall_count; i++)
		extend(box, s->walls[i].point.x, s->walls[i].point.y);
	for (int i = 0; i < s->loss_count; i++)
		if (s->loss[i].type == CL_LOSS_FINAL_POSITION)
			extend(box, s->loss[i].target.x, s->loss[i].target.y);
	if (self->result && self->result->scene->ball_count == s->ball_count) {
		int ns = cl_state_size(self->result->scene);
		for (int k = 0; k < self->result->backend_count; k++) {
			const ClBackendResult *r = &self->result->backends[k];
			if (!self->visible[r->backend])
				continue;
			for (int n = 0; n <= r->steps_done; n++)
				for (int i = 0; i < s->ball_count; i++) {
					const double *p = r->states + (gsize)n * (gsize)ns + CL_BALL_STATE * (gsize)i;
					extend(box, p[0], p[1]);
				}
		}
	}
	if (!isfinite(box[0]))
		box[0] = box[1] = -1, box[2] = box[3] = 1;
	/* keep room for the legend in the top-left corner */
	cl_view_fit(&self->view, box[0], box[1], box[2], box[3], 48);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}

void cl_scene_canvas_zoom(ClSceneCanvas *self, double factor)
{
	sync_view_size(self);
	cl_view_zoom_at(&self->view, self->view.width / 2, self->view.height / 2, factor);
	gtk_widget_queue_draw(GTK_WIDGET(self));
}
