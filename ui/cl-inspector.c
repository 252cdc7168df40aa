#include "cl-inspector.h"

#include "cl-scene-edit.h"
#include "cl-workbench.h"
#include "scene-file.h"

#include <math.h>
#include <stdlib.h>

typedef enum {
	F_NAME,
	F_DURATION,
	F_STEPS,
	F_GRAVITY_X,
	F_GRAVITY_Y,
	F_ELASTICITY,
	F_FRICTION,
	F_BALL_ID,
	F_BALL_RADIUS,
	F_BALL_MASS,
	F_BALL_PX,
	F_BALL_PY,
	F_BALL_VX,
	F_BALL_VY,
	F_BALL_UX,
	F_BALL_UY,
	F_WALL_ID,
	F_WALL_PX,
	F_WALL_PY,
	F_WALL_NX,
	F_WALL_NY,
	F_LOSS_WEIGHT,
	F_LOSS_TX,
	F_LOSS_TY,
} FieldKind;

typedef struct {
	FieldKind kind;
	int index; /* ball, wall or loss term */
	GtkWidget *entry;
	GtkWidget *error;
	char *key; /* merges typing in one field into one undo step */
	char *label;
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

static void format_field(const ClScene *s, const Field *f, char *out, size_t size)
{
	double v = 0;
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
	case F_DURATION: v = s->duration; break;
	case F_GRAVITY_X: v = s->gravity.x; break;
	case F_GRAVITY_Y: v = s->gravity.y; break;
	case F_ELASTICITY: v = s->elasticity; break;
	case F_FRICTION: v = s->friction; break;
	case F_BALL_RADIUS: v = s->balls[f->index].radius; break;
	case F_BALL_MASS: v = s->balls[f->index].mass; break;
	case F_BALL_PX: v = s->balls[f->index].position.x; break;
	case F_BALL_PY: v = s->balls[f->index].position.y; break;
	case F_BALL_VX: v = s->balls[f->index].velocity.x; break;
	case F_BALL_VY: v = s->balls[f->index].velocity.y; break;
	case F_BALL_UX: v = s->balls[f->index].control_constant.x; break;
	case F_BALL_UY: v = s->balls[f->index].control_constant.y; break;
	case F_WALL_PX: v = s->walls[f->index].point.x; break;
	case F_WALL_PY: v = s->walls[f->index].point.y; break;
	case F_WALL_NX: v = s->walls[f->index].normal.x; break;
	case F_WALL_NY: v = s->walls[f->index].normal.y; break;
	case F_LOSS_WEIGHT: v = s->loss[f->index].weight; break;
	case F_LOSS_TX: v = s->loss[f->index].target.x; break;
	case F_LOSS_TY: v = s->loss[f->index].target.y; break;
	}
	g_ascii_formatd(out, (int)size, "%.10g", v);
}

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
	switch (f->kind) {
	case F_STEPS:
		if (v != floor(v) || !(v >= 1 && v <= CL_MAX_STEPS)) {
			g_snprintf(message, size, "steps: must be a whole number in [1, %d]", CL_MAX_STEPS);
			return FALSE;
		}
		cl_scene_set_steps(s, (int)v);
		return TRUE;
	case F_DURATION: s->duration = v; break;
	case F_GRAVITY_X: s->gravity.x = v; break;
	case F_GRAVITY_Y: s->gravity.y = v; break;
	case F_ELASTICITY: s->elasticity = v; break;
	case F_FRICTION: s->friction = v; break;
	case F_BALL_RADIUS: s->balls[f->index].radius = v; break;
	case F_BALL_MASS: s->balls[f->index].mass = v; break;
	case F_BALL_PX: s->balls[f->index].position.x = v; break;
	case F_BALL_PY: s->balls[f->index].position.y = v; break;
	case F_BALL_VX: s->balls[f->index].velocity.x = v; break;
	case F_BALL_VY: s->balls[f->index].velocity.y = v; break;
	case F_BALL_UX: s->balls[f->index].control_constant.x = v; break;
	case F_BALL_UY: s->balls[f->index].control_constant.y = v; break;
	case F_WALL_PX: s->walls[f->index].point.x = v; break;
	case F_WALL_PY: s->walls[f->index].point.y = v; break;
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
		format_field(scene, f, current, sizeof current);
		format_field(trial, f, typed, sizeof typed);
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

/* A labelled entry in a two-column grid; accessible as "<label>". */
static void add_field(ClInspector *self, GtkGrid *grid, int *row, FieldKind kind, int index, const char *text,
					  const char *accessible, const char *unit, const char *tooltip)
{
	Field *f = g_new0(Field, 1);
	f->kind = kind;
	f->index = index;
	f->label = g_strdup(accessible);
	f->key = g_strdup_printf("field:%d:%d", kind, index);
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
	(void)s;
	gtk_box_append(GTK_BOX(self->box), heading("Scene"));
	GtkWidget *grid = new_grid();
	int row = 0;
	add_field(self, GTK_GRID(grid), &row, F_NAME, 0, "Name", "Scene name", NULL, "Shown in the title bar and files");
	add_field(self, GTK_GRID(grid), &row, F_DURATION, 0, "Duration T", "Duration", "s", "Simulated time");
	add_field(self, GTK_GRID(grid), &row, F_STEPS, 0, "Steps N", "Steps", NULL,
			  "Control intervals; dt = T / N (sequences are resampled)");
	add_field(self, GTK_GRID(grid), &row, F_GRAVITY_X, 0, "Gravity x", "Gravity x", "m/s²", NULL);
	add_field(self, GTK_GRID(grid), &row, F_GRAVITY_Y, 0, "Gravity y", "Gravity y", "m/s²", NULL);
	add_field(self, GTK_GRID(grid), &row, F_ELASTICITY, 0, "Elasticity e", "Elasticity", NULL,
			  "One restitution coefficient for every contact, in [0, 1]");
	add_field(self, GTK_GRID(grid), &row, F_FRICTION, 0, "Friction μ", "Friction", NULL,
			  "One Coulomb coefficient for every contact");
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
		BALL_FIELD(F_BALL_RADIUS, "Radius", "radius", "m", NULL);
		BALL_FIELD(F_BALL_MASS, "Mass", "mass", "kg", NULL);
		BALL_FIELD(F_BALL_PX, "Position x", "position x", "m", "At t = 0");
		BALL_FIELD(F_BALL_PY, "Position y", "position y", "m", "At t = 0");
		BALL_FIELD(F_BALL_VX, "Velocity x", "velocity x", "m/s", "At t = 0; or drag the arrow head");
		BALL_FIELD(F_BALL_VY, "Velocity y", "velocity y", "m/s", "At t = 0; or drag the arrow head");
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
			BALL_FIELD(F_BALL_UY, "Force y", "control y", "N", "Constant force in every interval");
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
		WALL_FIELD(F_WALL_PX, "Point x", "point x", "m", "A point on the wall's line");
		WALL_FIELD(F_WALL_PY, "Point y", "point y", "m", "A point on the wall's line");
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
		add_field(self, GTK_GRID(grid), &row, F_LOSS_WEIGHT, k, "Weight w", label, NULL, NULL);
		if (t->type == CL_LOSS_FINAL_POSITION) {
			g_snprintf(label, sizeof label, "Loss %d target x", k + 1);
			add_field(self, GTK_GRID(grid), &row, F_LOSS_TX, k, "Target x", label, "m", "Or drag the red marker");
			g_snprintf(label, sizeof label, "Loss %d target y", k + 1);
			add_field(self, GTK_GRID(grid), &row, F_LOSS_TY, k, "Target y", label, "m", "Or drag the red marker");
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
		format_field(scene, f, text, sizeof text);
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
