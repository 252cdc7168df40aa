#include "cl-inspector.h"

#include "cl-scene-edit.h"
#include "cl-workbench.h"
#include "numbers.h"
#include "scene-file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The scene's, the selected ball's and the selected wall's scalars come
 * from the one parameter enumeration (cl_scene_params) and are edited
 * through cl_param_get/set; ids, steps, the constant force, a wall's normal
 * components and loss terms are fields of their own. */
typedef enum {
	F_PARAM,
	F_NAME,
	F_STEPS,
	F_BALL_ID,
	F_BALL_UX,
	F_BALL_UY,
	F_WALL_ID,
	F_WALL_NX,
	F_WALL_NY,
	F_LOSS_WEIGHT,
	F_LOSS_TX,
	F_LOSS_TY,
} FieldKind;

/* How a parameter reads in the inspector: its unit, the decimals its unit
 * is shown to (full precision while typing), and how much a pixel of
 * dragging its name changes it. */
typedef struct {
	const char *text[2]; /* per axis, or [0] alone */
	const char *accessible[2];
	const char *unit;
	int decimals;
	double per_pixel;
	const char *tip;
} ParamLook;

static const ParamLook *param_look(const ClParam *p)
{
	static const ParamLook looks[] = {
		[CL_PARAM_POSITION] = {{"Position x", "Position y"}, {"position x", "position y"}, "m", 3, 0.01, "At t = 0"},
		[CL_PARAM_VELOCITY] = {{"Velocity x", "Velocity y"}, {"velocity x", "velocity y"}, "m/s", 3, 0.02,
							   "At t = 0; or drag the arrow head"},
		[CL_PARAM_RADIUS] = {{"Radius"}, {"radius"}, "m", 3, 0.002, NULL},
		[CL_PARAM_MASS] = {{"Mass"}, {"mass"}, "kg", 3, 0.01, NULL},
		[CL_PARAM_ELASTICITY] = {{"Elasticity e"}, {"Elasticity"}, NULL, 2, 0.005,
								 "One restitution coefficient for every contact, in [0, 1]"},
		[CL_PARAM_FRICTION] = {{"Friction μ"}, {"Friction"}, NULL, 2, 0.005, "One Coulomb coefficient for every contact"},
		[CL_PARAM_GRAVITY] = {{"Gravity x", "Gravity y"}, {"Gravity x", "Gravity y"}, "m/s²", 2, 0.05, NULL},
		[CL_PARAM_DURATION] = {{"Duration T"}, {"Duration"}, "s", 3, 0.005, "Simulated time"},
		[CL_PARAM_WALL_POINT] = {{"Point x", "Point y"}, {"point x", "point y"}, "m", 3, 0.01,
								 "A point on the wall's line"},
		[CL_PARAM_WALL_ANGLE] = {{"Angle"}, {"angle"}, "°", 2, 0.25,
								 "Direction of the normal (into the free side), counter-clockwise from +x"},
	};
	return p->target < G_N_ELEMENTS(looks) && looks[p->target].text[0] ? &looks[p->target] : NULL;
}

typedef struct {
	FieldKind kind;
	int index; /* ball, wall or loss term */
	ClParam param; /* F_PARAM */
	int decimals;  /* shown while not being typed into; −1: full precision */
	double per_pixel;
	double scrub_start;
	GtkWidget *entry;
	GtkWidget *error;
	char *key; /* merges typing in one field into one undo step */
	char *label;
	GtkWidget *scrub_label;
} Field;

struct _ClInspector {
	GtkWidget parent_instance;
	GtkWidget *box;
	ClDocument *doc; /* while rooted */
	gulong changed_handler;
	GPtrArray *fields;
	ClPick shown;
	int shown_balls, shown_walls, shown_loss;
	gboolean updating;
};

G_DEFINE_FINAL_TYPE(ClInspector, cl_inspector, GTK_TYPE_WIDGET)

static void field_free(gpointer data)
{
	Field *f = data;
	g_free(f->key);
	g_free(f->label);
	g_free(f);
}

static gboolean is_text(FieldKind kind)
{
	return kind == F_NAME || kind == F_BALL_ID || kind == F_WALL_ID;
}

/* A value as the inspector shows it: to its unit's precision ("0.1",
 * "-7.5"), in full while it is typed into (decimals < 0). */
static void format_value(double v, int decimals, char *out, size_t size)
{
	if (decimals < 0 || !isfinite(v)) {
		g_strlcpy(out, cl_format_number(v).text, size);
		return;
	}
	double unit = pow(10, -decimals);
	if (v != 0 && fabs(v) < unit / 2) { /* not a 0 for a small nonzero value */
		g_ascii_formatd(out, (int)size, "%.2e", v);
		return;
	}
	char format[16];
	g_snprintf(format, sizeof format, "%%.%df", decimals);
	g_ascii_formatd(out, (int)size, format, v);
	if (strchr(out, '.')) { /* 0.100 → 0.1 */
		char *end = out + strlen(out) - 1;
		while (*end == '0')
			*end-- = 0;
		if (*end == '.')
			*end = 0;
	}
	if (g_str_equal(out, "-0"))
		g_strlcpy(out, "0", size);
}

static double field_value(const ClScene *s, const Field *f)
{
	switch (f->kind) {
	case F_PARAM: return cl_param_get(s, &f->param);
	case F_BALL_UX: return s->balls[f->index].control_constant.x;
	case F_BALL_UY: return s->balls[f->index].control_constant.y;
	case F_WALL_NX: return s->walls[f->index].normal.x;
	case F_WALL_NY: return s->walls[f->index].normal.y;
	case F_LOSS_WEIGHT: return s->loss[f->index].weight;
	case F_LOSS_TX: return s->loss[f->index].target.x;
	case F_LOSS_TY: return s->loss[f->index].target.y;
	default: return 0;
	}
}

static void format_field(const ClScene *s, const Field *f, int decimals, char *out, size_t size)
{
	switch (f->kind) {
	case F_NAME:
		g_snprintf(out, size, "%s", s->name);
		return;
	case F_BALL_ID:
		g_snprintf(out, size, "%s", s->balls[f->index].id);
		return;
	case F_WALL_ID:
		g_snprintf(out, size, "%s", s->walls[f->index].id);
		return;
	case F_STEPS:
		g_snprintf(out, size, "%d", s->steps);
		return;
	default:
		format_value(field_value(s, f), decimals, out, size);
	}
}

static gboolean set_value(ClScene *s, const Field *f, double v, char *message, size_t size);

/* Writes a typed value into a scene; false with a message when the text is not one. */
static gboolean apply_field(ClScene *s, const Field *f, const char *text, char *message, size_t size)
{
	if (is_text(f->kind)) {
		if (f->kind != F_NAME && !*text) {
			g_snprintf(message, size, "%s: must not be empty", f->label);
			return FALSE;
		}
		char *dst = f->kind == F_NAME ? s->name : f->kind == F_BALL_ID ? s->balls[f->index].id : s->walls[f->index].id;
		g_strlcpy(dst, text, f->kind == F_NAME ? CL_NAME_MAX : CL_ID_MAX);
		return TRUE;
	}
	char *end = NULL;
	double v = g_ascii_strtod(text, &end);
	if (!*text || !end || *end) {
		g_snprintf(message, size, "%s: “%s” is not a number", f->label, text);
		return FALSE;
	}
	return set_value(s, f, v, message, size);
}

static gboolean set_value(ClScene *s, const Field *f, double v, char *message, size_t size)
{
	switch (f->kind) {
	case F_STEPS:
		if (v != floor(v) || !(v >= 1 && v <= CL_MAX_STEPS)) {
			g_snprintf(message, size, "Steps N: must be a whole number from 1 to %d", CL_MAX_STEPS);
			return FALSE;
		}
		cl_scene_set_steps(s, (int)v);
		return TRUE;
	case F_PARAM:
		if (!cl_param_fits(s, &f->param))
			return FALSE;
		cl_param_set(s, &f->param, v);
		break;
	case F_BALL_UX: s->balls[f->index].control_constant.x = v; break;
	case F_BALL_UY: s->balls[f->index].control_constant.y = v; break;
	case F_WALL_NX: s->walls[f->index].normal.x = v; break;
	case F_WALL_NY: s->walls[f->index].normal.y = v; break;
	case F_LOSS_WEIGHT: s->loss[f->index].weight = v; break;
	case F_LOSS_TX: s->loss[f->index].target.x = v; break;
	case F_LOSS_TY: s->loss[f->index].target.y = v; break;
	default: break;
	}
	return TRUE;
}

static void show_error(Field *f, const char *message)
{
	gtk_label_set_text(GTK_LABEL(f->error), message ? message : "");
	gtk_widget_set_visible(f->error, message != NULL);
	if (message)
		gtk_widget_add_css_class(f->entry, "invalid");
	else
		gtk_widget_remove_css_class(f->entry, "invalid");
	gtk_accessible_update_property(GTK_ACCESSIBLE(f->entry), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
								   message ? message : "", -1);
}

typedef struct {
	const Field *field;
	const char *text;
} FieldEdit;

static gboolean apply_typed(ClScene *scene, gpointer data, char *message, gsize size)
{
	const FieldEdit *e = data;
	return apply_field(scene, e->field, e->text, message, size);
}

static void entry_changed(GtkEditable *editable, ClInspector *self)
{
	if (self->updating || !self->doc)
		return;
	Field *f = g_object_get_data(G_OBJECT(editable), "field");
	const ClScene *scene = cl_document_get_scene(self->doc);
	FieldEdit edit = {f, gtk_editable_get_text(editable)};
	/* "1.0" → "1.00": the same value, no edit */
	char current[CL_NAME_MAX], typed[CL_NAME_MAX], message[CL_MESSAGE_MAX] = "";
	g_autoptr(ClScene) trial = cl_scene_copy(scene);
	if (apply_field(trial, f, edit.text, message, sizeof message)) {
		format_field(scene, f, -1, current, sizeof current);
		format_field(trial, f, -1, typed, sizeof typed);
		if (g_str_equal(current, typed)) {
			show_error(f, NULL);
			return;
		}
	}
	g_autofree char *label = g_strdup_printf("Set %s", f->label);
	g_autoptr(GError) error = NULL;
	/* the document validates: an invalid value never reaches the scene */
	if (cl_document_edit(self->doc, label, f->key, apply_typed, &edit, &error))
		show_error(f, NULL);
	else
		show_error(f, error->message);
}

static GtkWidget *heading(const char *text)
{
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_add_css_class(label, "inspector-heading");
	return label;
}

/* ---------------------------------------------------------- scrubbing */

typedef struct {
	const Field *field;
	double value;
} ValueEdit;

static gboolean apply_value(ClScene *scene, gpointer data, char *message, gsize size)
{
	const ValueEdit *e = data;
	return set_value(scene, e->field, e->value, message, size);
}

/* Dragging a field's name left or right changes its value live, one
 * gesture of the document (one undo step); Shift for fine steps. */
static void scrub_begin(GtkGestureDrag *gesture, double x, double y, ClInspector *self)
{
	(void)x, (void)y;
	Field *f = g_object_get_data(G_OBJECT(gesture), "field");
	if (!self->doc || !f)
		return;
	f->scrub_start = field_value(cl_document_get_scene(self->doc), f);
	g_autofree char *label = g_strdup_printf("Set %s", f->label);
	cl_document_begin(self->doc, label);
}

static void scrub_update(GtkGestureDrag *gesture, double dx, double dy, ClInspector *self)
{
	(void)dy;
	Field *f = g_object_get_data(G_OBJECT(gesture), "field");
	if (!self->doc || !f || !cl_document_in_gesture(self->doc))
		return;
	gboolean fine = (gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture)) & GDK_SHIFT_MASK) != 0;
	double step = f->per_pixel * (fine ? 0.1 : 1);
	ValueEdit edit = {f, cl_snap(f->scrub_start + dx * step, step)};
	/* a refused value (e above 1, a ball into a wall) leaves the last good one */
	cl_document_preview(self->doc, apply_value, &edit, NULL);
}

static void scrub_end(GtkGestureDrag *gesture, double dx, double dy, ClInspector *self)
{
	(void)gesture, (void)dx, (void)dy;
	if (self->doc)
		cl_document_commit(self->doc);
}

/* Typing sees the full value; otherwise it is shown to its unit's precision. */
static void focus_changed(GtkEventControllerFocus *focus, ClInspector *self)
{
	Field *f = g_object_get_data(G_OBJECT(focus), "field");
	if (!self->doc || !f || f->decimals < 0)
		return;
	gboolean typing = gtk_event_controller_focus_contains_focus(focus);
	char text[CL_NAME_MAX];
	format_field(cl_document_get_scene(self->doc), f, typing ? -1 : f->decimals, text, sizeof text);
	if (!typing && gtk_widget_has_css_class(f->entry, "invalid"))
		return; /* keep what was typed beside its message */
	self->updating = TRUE;
	gtk_editable_set_text(GTK_EDITABLE(f->entry), text);
	self->updating = FALSE;
}

/* A labelled entry in a two-column grid; accessible as "<label>". Numbers
 * show decimals digits and scrub per_pixel per pixel (0: no scrubbing). */
static Field *add_field(ClInspector *self, GtkGrid *grid, int *row, FieldKind kind, int index, const char *text,
						const char *accessible, const char *unit, const char *tooltip)
{
	Field *f = g_new0(Field, 1);
	f->kind = kind;
	f->index = index;
	f->label = g_strdup(accessible);
	f->key = g_strdup_printf("field:%d:%d:%s", kind, index, accessible);
	f->decimals = is_text(kind) || kind == F_STEPS ? -1 : 3;
	f->per_pixel = kind == F_WALL_NX || kind == F_WALL_NY || f->decimals < 0 ? 0 : 0.01;
	GtkWidget *label = gtk_label_new(text);
	gtk_label_set_xalign(GTK_LABEL(label), 0);
	gtk_widget_add_css_class(label, "dim-label");
	f->entry = gtk_entry_new();
	gtk_widget_set_hexpand(f->entry, TRUE);
	gtk_editable_set_width_chars(GTK_EDITABLE(f->entry), 6);
	if (!is_text(kind))
		gtk_entry_set_input_purpose(GTK_ENTRY(f->entry), GTK_INPUT_PURPOSE_NUMBER);
	gtk_accessible_update_property(GTK_ACCESSIBLE(f->entry), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);
	gtk_widget_set_tooltip_text(f->entry, tooltip);
	g_object_set_data(G_OBJECT(f->entry), "field", f);
	g_signal_connect(f->entry, "changed", G_CALLBACK(entry_changed), self);
	GtkEventController *focus = gtk_event_controller_focus_new();
	g_object_set_data(G_OBJECT(focus), "field", f);
	g_signal_connect(focus, "notify::contains-focus", G_CALLBACK(focus_changed), self);
	gtk_widget_add_controller(f->entry, focus);
	f->error = gtk_label_new(NULL);
	gtk_label_set_wrap(GTK_LABEL(f->error), TRUE);
	gtk_label_set_xalign(GTK_LABEL(f->error), 0);
	gtk_widget_add_css_class(f->error, "field-error");
	gtk_widget_set_visible(f->error, FALSE);
	gtk_grid_attach(grid, label, 0, *row, 1, 1);
	gtk_grid_attach(grid, f->entry, 1, *row, 1, 1);
	if (unit) {
		GtkWidget *u = gtk_label_new(unit);
		gtk_label_set_xalign(GTK_LABEL(u), 0);
		gtk_widget_add_css_class(u, "dim-label");
		gtk_grid_attach(grid, u, 2, *row, 1, 1);
	}
	gtk_grid_attach(grid, f->error, 0, *row + 1, 3, 1);
	*row += 2;
	g_ptr_array_add(self->fields, f);
	f->scrub_label = label;
	return f;
}

/* Makes the field's name a handle that scrubs its value. */
static void make_scrubbable(ClInspector *self, Field *f)
{
	if (!(f->per_pixel > 0))
		return;
	GtkGesture *drag = gtk_gesture_drag_new();
	g_object_set_data(G_OBJECT(drag), "field", f);
	g_signal_connect(drag, "drag-begin", G_CALLBACK(scrub_begin), self);
	g_signal_connect(drag, "drag-update", G_CALLBACK(scrub_update), self);
	g_signal_connect(drag, "drag-end", G_CALLBACK(scrub_end), self);
	gtk_widget_add_controller(f->scrub_label, GTK_EVENT_CONTROLLER(drag));
	gtk_widget_set_cursor_from_name(f->scrub_label, "ew-resize");
	gtk_widget_add_css_class(f->scrub_label, "scrub");
	g_autofree char *tip = g_strdup_printf("Drag left or right to change %s live (Shift: finer); type in the box for "
										   "an exact value",
										   f->label);
	gtk_widget_set_tooltip_text(f->scrub_label, tip);
}

/* The fields of the scene's (ball −1) or a ball's parameters, in the
 * enumeration's order; the other group's parameters are left out. */
static void add_param_fields(ClInspector *self, GtkGrid *grid, int *row, const ClScene *s, int ball)
{
	int count;
	ClParam *params = cl_scene_params_new(s, ball < 0 ? CL_PARAMS_GLOBAL : CL_PARAMS_INITIAL_STATE | CL_PARAMS_BALL_PHYSICS,
										  ball, &count);
	for (int k = 0; k < count; k++) {
		const ClParam *p = &params[k];
		const ParamLook *look = param_look(p);
		gboolean global = p->target == CL_PARAM_ELASTICITY || p->target == CL_PARAM_FRICTION ||
						  p->target == CL_PARAM_GRAVITY || p->target == CL_PARAM_DURATION;
		if (!look || global != (ball < 0))
			continue;
		if (p->target == CL_PARAM_WALL_POINT || p->target == CL_PARAM_WALL_ANGLE)
			continue;
		int axis = look->text[1] && p->axis == 1 ? 1 : 0;
		g_autofree char *accessible = ball < 0 ? g_strdup(look->accessible[axis])
											   : g_strdup_printf("Ball %s %s", s->balls[ball].id, look->accessible[axis]);
		Field *f = add_field(self, grid, row, F_PARAM, ball, look->text[axis], accessible, look->unit, look->tip);
		f->param = *p;
		f->decimals = look->decimals;
		f->per_pixel = look->per_pixel;
		make_scrubbable(self, f);
	}
	free(params);
}

/* The fields of a wall's parameters (point, angle), in the enumeration's order. */
static void add_wall_param_fields(ClInspector *self, GtkGrid *grid, int *row, const ClScene *s, int wall)
{
	int count;
	ClParam *params = cl_scene_params_new(s, CL_PARAMS_WALLS, -1, &count);
	for (int k = 0; k < count; k++) {
		const ClParam *p = &params[k];
		const ParamLook *look = param_look(p);
		if (!look || p->wall != wall)
			continue;
		int axis = look->text[1] && p->axis == 1 ? 1 : 0;
		g_autofree char *accessible = g_strdup_printf("Wall %s %s", s->walls[wall].id, look->accessible[axis]);
		Field *f = add_field(self, grid, row, F_PARAM, wall, look->text[axis], accessible, look->unit, look->tip);
		f->param = *p;
		f->decimals = look->decimals;
		f->per_pixel = look->per_pixel;
		make_scrubbable(self, f);
	}
	free(params);
}

static GtkWidget *new_grid(void)
{
	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
	gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
	return grid;
}

static void edit(ClInspector *self, const char *label, ClSceneEditFunc func, gpointer data)
{
	g_autoptr(GError) error = NULL;
	if (!cl_document_edit(self->doc, label, NULL, func, data, &error)) {
		ClWorkbench *workbench = cl_workbench_of(GTK_WIDGET(self));
		if (workbench)
			cl_workbench_notify(workbench, error->message);
	}
}

static gboolean remove_loss_term(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	cl_scene_remove_loss(scene, GPOINTER_TO_INT(data));
	return TRUE;
}

static void remove_loss(GtkButton *button, ClInspector *self)
{
	edit(self, "Remove loss term", remove_loss_term, g_object_get_data(G_OBJECT(button), "loss"));
}

typedef struct {
	ClLossType type;
	int ball;
} NewTerm;

static gboolean add_loss_term(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	const NewTerm *t = data;
	cl_scene_add_loss(scene, t->type)->ball = t->ball;
	return TRUE;
}

static void add_loss(GtkButton *button, ClInspector *self)
{
	if (cl_document_get_scene(self->doc)->ball_count == 0)
		return;
	ClPick selected = cl_document_get_selection(self->doc);
	NewTerm t = {GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "type")),
				 selected.kind == CL_PICK_BALL ? selected.index : 0};
	edit(self, "Add loss term", add_loss_term, &t);
}

typedef struct {
	int index;
	int value;
} Choice;

static gboolean set_axis(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	const Choice *c = data;
	scene->loss[c->index].axis = c->value;
	return TRUE;
}

static void axis_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClInspector *self)
{
	(void)pspec;
	if (self->updating)
		return;
	Choice c = {GPOINTER_TO_INT(g_object_get_data(G_OBJECT(dropdown), "loss")), (int)gtk_drop_down_get_selected(dropdown)};
	edit(self, "Set loss axis", set_axis, &c);
}

static gboolean set_control_kind(ClScene *scene, gpointer data, char *message, gsize size)
{
	(void)message, (void)size;
	const Choice *c = data;
	ClBall *ball = &scene->balls[c->index];
	if (c->value == CL_CONTROL_SEQUENCE && !ball->control_sequence) {
		/* a sequence starts as the current constant force in every interval */
		double *u = g_new(double, 2 * (gsize)scene->steps);
		for (int n = 0; n < scene->steps; n++) {
			u[2 * n] = ball->control_constant.x;
			u[2 * n + 1] = ball->control_constant.y;
		}
		cl_scene_set_control_sequence(scene, c->index, u);
		g_free(u);
	} else
		ball->control_kind = (ClControlKind)c->value;
	return TRUE;
}

static void control_kind_changed(GtkDropDown *dropdown, GParamSpec *pspec, ClInspector *self)
{
	(void)pspec;
	if (self->updating)
		return;
	Choice c = {GPOINTER_TO_INT(g_object_get_data(G_OBJECT(dropdown), "ball")), (int)gtk_drop_down_get_selected(dropdown)};
	edit(self, "Set control", set_control_kind, &c);
}

static void build_scene_section(ClInspector *self, const ClScene *s)
{
	gtk_box_append(GTK_BOX(self->box), heading("Scene"));
	GtkWidget *grid = new_grid();
	int row = 0;
	add_field(self, GTK_GRID(grid), &row, F_NAME, 0, "Name", "Scene name", NULL, "Shown in the title bar and files");
	add_field(self, GTK_GRID(grid), &row, F_STEPS, 0, "Steps N", "Steps", NULL,
			  "Control intervals; dt = T / N (sequences are resampled)");
	add_param_fields(self, GTK_GRID(grid), &row, s, -1);
	gtk_box_append(GTK_BOX(self->box), grid);
}

static void build_selection_section(ClInspector *self, const ClScene *s, ClPick pick)
{
	gboolean ball = (pick.kind == CL_PICK_BALL || pick.kind == CL_PICK_VELOCITY) && pick.index < s->ball_count;
	gboolean wall = (pick.kind == CL_PICK_WALL || pick.kind == CL_PICK_WALL_ROTATE) && pick.index < s->wall_count;
	if (!ball && !wall) {
		gtk_box_append(GTK_BOX(self->box), heading("Selection"));
		GtkWidget *hint = gtk_label_new("Click a ball or a wall on the canvas to edit it here.");
		gtk_label_set_wrap(GTK_LABEL(hint), TRUE);
		gtk_label_set_xalign(GTK_LABEL(hint), 0);
		gtk_widget_add_css_class(hint, "dim-label");
		gtk_box_append(GTK_BOX(self->box), hint);
		return;
	}
	GtkWidget *grid = new_grid();
	int row = 0;
	if (ball) {
		int i = pick.index;
		const char *id = s->balls[i].id;
		char *title = g_strdup_printf("Ball “%s”", id);
		gtk_box_append(GTK_BOX(self->box), heading(title));
		g_free(title);
		char name[CL_ID_MAX + 32];
#define BALL_FIELD(kind, text, what, unit, tip)                                                                        \
	g_snprintf(name, sizeof name, "Ball %s " what, id);                                                                \
	add_field(self, GTK_GRID(grid), &row, kind, i, text, name, unit, tip)
		BALL_FIELD(F_BALL_ID, "Id", "id", NULL, "Names this ball in parameters (ID.position.x)");
		add_param_fields(self, GTK_GRID(grid), &row, s, i);
		GtkWidget *label = gtk_label_new("Control");
		gtk_label_set_xalign(GTK_LABEL(label), 0);
		gtk_widget_add_css_class(label, "dim-label");
		static const char *const kinds[] = {"none", "constant force", "sequence (one per interval)", NULL};
		GtkWidget *dropdown = gtk_drop_down_new_from_strings(kinds);
		gtk_drop_down_set_selected(GTK_DROP_DOWN(dropdown), s->balls[i].control_kind);
		g_object_set_data(G_OBJECT(dropdown), "ball", GINT_TO_POINTER(i));
		g_snprintf(name, sizeof name, "Ball %s control", id);
		gtk_accessible_update_property(GTK_ACCESSIBLE(dropdown), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
		g_signal_connect(dropdown, "notify::selected", G_CALLBACK(control_kind_changed), self);
		gtk_grid_attach(GTK_GRID(grid), label, 0, row, 1, 1);
		gtk_grid_attach(GTK_GRID(grid), dropdown, 1, row, 2, 1);
		row++;
		if (s->balls[i].control_kind == CL_CONTROL_CONSTANT) {
			BALL_FIELD(F_BALL_UX, "Force x", "control x", "N", "Constant force in every interval");
			make_scrubbable(self, g_ptr_array_index(self->fields, self->fields->len - 1));
			BALL_FIELD(F_BALL_UY, "Force y", "control y", "N", "Constant force in every interval");
			make_scrubbable(self, g_ptr_array_index(self->fields, self->fields->len - 1));
		} else if (s->balls[i].control_kind == CL_CONTROL_SEQUENCE) {
			GtkWidget *note = gtk_label_new("A force per control interval (edited by optimization or in the file).");
			gtk_label_set_wrap(GTK_LABEL(note), TRUE);
			gtk_label_set_xalign(GTK_LABEL(note), 0);
			gtk_widget_add_css_class(note, "dim-label");
			gtk_grid_attach(GTK_GRID(grid), note, 0, row++, 3, 1);
		}
#undef BALL_FIELD
	} else {
		int i = pick.index;
		const char *id = s->walls[i].id;
		char *title = g_strdup_printf("Wall “%s” (half-plane)", id);
		gtk_box_append(GTK_BOX(self->box), heading(title));
		g_free(title);
		char name[CL_ID_MAX + 32];
#define WALL_FIELD(kind, text, what, unit, tip)                                                                        \
	g_snprintf(name, sizeof name, "Wall %s " what, id);                                                                \
	add_field(self, GTK_GRID(grid), &row, kind, i, text, name, unit, tip)
		WALL_FIELD(F_WALL_ID, "Id", "id", NULL, NULL);
		add_wall_param_fields(self, GTK_GRID(grid), &row, s, i);
		WALL_FIELD(F_WALL_NX, "Normal x", "normal x", NULL, "Points into the free side; normalised by the loader");
		WALL_FIELD(F_WALL_NY, "Normal y", "normal y", NULL, "Points into the free side; normalised by the loader");
#undef WALL_FIELD
	}
	gtk_box_append(GTK_BOX(self->box), grid);
}

static void build_loss_section(ClInspector *self, const ClScene *s)
{
	gtk_box_append(GTK_BOX(self->box), heading("Loss L = Σ terms"));
	for (int k = 0; k < s->loss_count; k++) {
		const ClLossTerm *t = &s->loss[k];
		const char *ball = t->ball >= 0 && t->ball < s->ball_count ? s->balls[t->ball].id : "?";
		GtkWidget *grid = new_grid();
		gtk_widget_set_margin_top(grid, 4);
		char *what = t->type == CL_LOSS_FINAL_POSITION	 ? g_strdup_printf("w·‖p_N − target‖² of %s", ball)
					 : t->type == CL_LOSS_FINAL_COORDINATE ? g_strdup_printf("w·p_N of %s (one axis)", ball)
					 : t->type == CL_LOSS_TRAJECTORY_MATCH
						 ? g_strdup_printf("w·Σ‖p(t_k) − o_k‖² of %s (%d observations)", ball, t->observation_count)
						 : g_strdup_printf("w·Σ‖u‖²dt of %s", ball);
		GtkWidget *title = gtk_label_new(what);
		gtk_label_set_xalign(GTK_LABEL(title), 0);
		gtk_widget_set_hexpand(title, TRUE);
		GtkWidget *remove = gtk_button_new_from_icon_name("list-remove-symbolic");
		gtk_widget_add_css_class(remove, "flat");
		char *name = g_strdup_printf("Remove loss term %d", k + 1);
		gtk_accessible_update_property(GTK_ACCESSIBLE(remove), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
		gtk_widget_set_tooltip_text(remove, name);
		g_free(name);
		g_object_set_data(G_OBJECT(remove), "loss", GINT_TO_POINTER(k));
		g_signal_connect(remove, "clicked", G_CALLBACK(remove_loss), self);
		gtk_grid_attach(GTK_GRID(grid), title, 0, 0, 2, 1);
		gtk_grid_attach(GTK_GRID(grid), remove, 2, 0, 1, 1);
		g_free(what);
		int row = 1;
		char label[64];
		g_snprintf(label, sizeof label, "Loss %d weight", k + 1);
		make_scrubbable(self, add_field(self, GTK_GRID(grid), &row, F_LOSS_WEIGHT, k, "Weight w", label, NULL, NULL));
		if (t->type == CL_LOSS_FINAL_POSITION) {
			g_snprintf(label, sizeof label, "Loss %d target x", k + 1);
			make_scrubbable(self, add_field(self, GTK_GRID(grid), &row, F_LOSS_TX, k, "Target x", label, "m",
											"Or drag the red marker"));
			g_snprintf(label, sizeof label, "Loss %d target y", k + 1);
			make_scrubbable(self, add_field(self, GTK_GRID(grid), &row, F_LOSS_TY, k, "Target y", label, "m",
											"Or drag the red marker"));
		} else if (t->type == CL_LOSS_FINAL_COORDINATE) {
			static const char *const axes[] = {"x", "y", NULL};
			GtkWidget *axis = gtk_drop_down_new_from_strings(axes);
			gtk_drop_down_set_selected(GTK_DROP_DOWN(axis), (guint)t->axis);
			g_snprintf(label, sizeof label, "Loss %d axis", k + 1);
			gtk_accessible_update_property(GTK_ACCESSIBLE(axis), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
			g_object_set_data(G_OBJECT(axis), "loss", GINT_TO_POINTER(k));
			g_signal_connect(axis, "notify::selected", G_CALLBACK(axis_changed), self);
			GtkWidget *l = gtk_label_new("Axis");
			gtk_label_set_xalign(GTK_LABEL(l), 0);
			gtk_widget_add_css_class(l, "dim-label");
			gtk_grid_attach(GTK_GRID(grid), l, 0, row, 1, 1);
			gtk_grid_attach(GTK_GRID(grid), axis, 1, row, 2, 1);
		}
		gtk_box_append(GTK_BOX(self->box), grid);
	}
	/* wraps in a narrow sidebar */
	GtkWidget *buttons = gtk_flow_box_new();
	gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(buttons), GTK_SELECTION_NONE);
	gtk_flow_box_set_column_spacing(GTK_FLOW_BOX(buttons), 4);
	gtk_flow_box_set_row_spacing(GTK_FLOW_BOX(buttons), 4);
	gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(buttons), 3);
	gtk_widget_set_margin_top(buttons, 6);
	static const struct {
		ClLossType type;
		const char *label, *tip;
	} adds[] = {
		{CL_LOSS_FINAL_POSITION, "+ Target", "Add w·‖p_N − target‖² for the selected ball"},
		{CL_LOSS_FINAL_COORDINATE, "+ Coordinate", "Add w·p_N (x or y) for the selected ball"},
		{CL_LOSS_CONTROL_EFFORT, "+ Effort", "Add w·Σ‖u‖²dt for the selected ball"},
	};
	for (gsize i = 0; i < G_N_ELEMENTS(adds); i++) {
		GtkWidget *b = gtk_button_new_with_label(adds[i].label);
		gtk_widget_set_tooltip_text(b, adds[i].tip);
		gtk_accessible_update_property(GTK_ACCESSIBLE(b), GTK_ACCESSIBLE_PROPERTY_LABEL, adds[i].tip, -1);
		g_object_set_data(G_OBJECT(b), "type", GINT_TO_POINTER(adds[i].type));
		g_signal_connect(b, "clicked", G_CALLBACK(add_loss), self);
		gtk_flow_box_append(GTK_FLOW_BOX(buttons), b);
	}
	gtk_box_append(GTK_BOX(self->box), buttons);
}

static void update_values(ClInspector *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	self->updating = TRUE;
	for (guint i = 0; i < self->fields->len; i++) {
		Field *f = g_ptr_array_index(self->fields, i);
		/* never overwrite what the user is typing */
		GtkRoot *root = gtk_widget_get_root(f->entry);
		GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
		if (focus && (focus == f->entry || gtk_widget_is_ancestor(focus, f->entry)))
			continue;
		show_error(f, NULL);
		char text[CL_NAME_MAX];
		format_field(scene, f, f->decimals, text, sizeof text);
		if (!g_str_equal(text, gtk_editable_get_text(GTK_EDITABLE(f->entry))))
			gtk_editable_set_text(GTK_EDITABLE(f->entry), text);
	}
	self->updating = FALSE;
}

/* Rebuilt when the selection or the scene's objects change, else only the values follow. */
static void refresh(ClInspector *self)
{
	ClPick selection = cl_document_get_selection(self->doc);
	const ClScene *s = cl_document_get_scene(self->doc);
	gboolean same = selection.kind == self->shown.kind && selection.index == self->shown.index &&
					s->ball_count == self->shown_balls && s->wall_count == self->shown_walls &&
					s->loss_count == self->shown_loss && self->fields->len > 0;
	if (selection.kind == CL_PICK_VELOCITY)
		selection.kind = CL_PICK_BALL;
	if (selection.kind == CL_PICK_WALL_ROTATE)
		selection.kind = CL_PICK_WALL;
	if (!same) {
		GtkWidget *child;
		while ((child = gtk_widget_get_first_child(self->box)))
			gtk_box_remove(GTK_BOX(self->box), child);
		g_ptr_array_set_size(self->fields, 0);
		self->shown = selection;
		self->shown_balls = s->ball_count, self->shown_walls = s->wall_count, self->shown_loss = s->loss_count;
		build_scene_section(self, s);
		build_selection_section(self, s, selection);
		build_loss_section(self, s);
	}
	update_values(self);
}

static void document_changed(ClDocument *doc, guint what, ClInspector *self)
{
	(void)doc;
	if (what & (CL_DOCUMENT_SCENE | CL_DOCUMENT_SELECTION))
		refresh(self);
}

static void cl_inspector_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_inspector_parent_class)->root(widget);
	ClInspector *self = CL_INSPECTOR(widget);
	ClWorkbench *workbench = cl_workbench_of(widget);
	if (!workbench)
		return;
	self->doc = cl_workbench_get_document(workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	refresh(self);
}

static void cl_inspector_unroot(GtkWidget *widget)
{
	ClInspector *self = CL_INSPECTOR(widget);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	GTK_WIDGET_CLASS(cl_inspector_parent_class)->unroot(widget);
}

static void cl_inspector_dispose(GObject *object)
{
	ClInspector *self = CL_INSPECTOR(object);
	g_clear_pointer(&self->box, gtk_widget_unparent);
	g_clear_pointer(&self->fields, g_ptr_array_unref);
	G_OBJECT_CLASS(cl_inspector_parent_class)->dispose(object);
}

static void cl_inspector_class_init(ClInspectorClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_inspector_dispose;
	GTK_WIDGET_CLASS(klass)->root = cl_inspector_root;
	GTK_WIDGET_CLASS(klass)->unroot = cl_inspector_unroot;
	gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

static void cl_inspector_init(ClInspector *self)
{
	self->fields = g_ptr_array_new_with_free_func(field_free);
	self->shown = (ClPick){CL_PICK_NONE, -2};
	self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
	gtk_widget_set_margin_start(self->box, 10);
	gtk_widget_set_margin_end(self->box, 10);
	gtk_widget_set_margin_bottom(self->box, 10);
	gtk_widget_set_parent(self->box, GTK_WIDGET(self));
}
