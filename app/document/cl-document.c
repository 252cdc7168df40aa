#include "cl-document.h"

#include "cl-undo-stack.h"
#include "scene-file.h"

#include <glib/gstdio.h>

/* Undo steps kept. */
#define UNDO_LIMIT 200
/* Unsaved edits are written to the recovery file this long after the last one. */
#define AUTOSAVE_DELAY_MS 1000

struct _ClDocument {
	GObject parent_instance;
	ClScene *scene;
	guint revision;
	char *path;
	gboolean dirty;
	ClUndoStack *undo;

	/* a gesture: the scene at its begin (NULL when none), its label, whether it changed anything */
	ClScene *gesture_before;
	char *gesture_label;
	gboolean gesture_changed;

	char *recovery_path;
	gboolean recovery_held;
	guint autosave_source;

	/* the selection by what it is: a ball or wall by id (survives edits), a target by term */
	ClPickKind selected_kind;
	char *selected_id;
	int selected_index;

	gboolean *enabled;
	gboolean *hidden; /* enabled but not drawn (a legend click, a comparison focus) */
	ClResult *results[CL_RESULT_KIND_COUNT];
};

G_DEFINE_FINAL_TYPE(ClDocument, cl_document, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void emit(ClDocument *doc, unsigned what)
{
	g_signal_emit(doc, signals[SIGNAL_CHANGED], 0, what);
}

/* -------------------------------------------------------------- recovery */

static gboolean autosave(gpointer data)
{
	ClDocument *doc = data;
	doc->autosave_source = 0;
	if (!doc->recovery_path || !doc->dirty || doc->recovery_held)
		return G_SOURCE_REMOVE;
	g_autofree char *dir = g_path_get_dirname(doc->recovery_path);
	g_mkdir_with_parents(dir, 0700);
	g_autoptr(GError) error = NULL;
	if (!cl_scene_file_save(doc->scene, doc->recovery_path, &error))
		g_warning("autosave to %s failed: %s", doc->recovery_path, error->message);
	return G_SOURCE_REMOVE;
}

static void drop_recovery(ClDocument *doc)
{
	g_clear_handle_id(&doc->autosave_source, g_source_remove);
	if (doc->recovery_path && !doc->recovery_held)
		g_unlink(doc->recovery_path);
}

void cl_document_set_recovery_path(ClDocument *doc, const char *path)
{
	g_clear_handle_id(&doc->autosave_source, g_source_remove);
	g_free(doc->recovery_path);
	doc->recovery_path = g_strdup(path);
}

void cl_document_hold_recovery(ClDocument *doc, gboolean hold)
{
	doc->recovery_held = hold;
	if (!hold && doc->dirty && !doc->autosave_source)
		doc->autosave_source = g_timeout_add(AUTOSAVE_DELAY_MS, autosave, doc);
}

void cl_document_discard_recovery(ClDocument *doc)
{
	doc->recovery_held = FALSE;
	drop_recovery(doc);
}

static void set_dirty(ClDocument *doc, gboolean dirty)
{
	doc->dirty = dirty;
	if (dirty) {
		g_clear_handle_id(&doc->autosave_source, g_source_remove);
		doc->autosave_source = g_timeout_add(AUTOSAVE_DELAY_MS, autosave, doc);
	} else
		drop_recovery(doc);
}

/* ------------------------------------------------------------- selection */

static void remember_selection(ClDocument *doc, ClPick pick)
{
	const ClScene *s = doc->scene;
	g_clear_pointer(&doc->selected_id, g_free);
	doc->selected_kind = CL_PICK_NONE;
	doc->selected_index = -1;
	if ((pick.kind == CL_PICK_BALL || pick.kind == CL_PICK_VELOCITY) && pick.index >= 0 && pick.index < s->ball_count) {
		doc->selected_kind = CL_PICK_BALL;
		doc->selected_id = g_strdup(s->balls[pick.index].id);
	} else if ((pick.kind == CL_PICK_WALL || pick.kind == CL_PICK_WALL_ROTATE) && pick.index >= 0 &&
			   pick.index < s->wall_count) {
		doc->selected_kind = CL_PICK_WALL;
		doc->selected_id = g_strdup(s->walls[pick.index].id);
	} else if (pick.kind == CL_PICK_TARGET && pick.index >= 0 && pick.index < s->loss_count) {
		doc->selected_kind = CL_PICK_TARGET;
		doc->selected_index = pick.index;
	}
}

ClPick cl_document_get_selection(ClDocument *doc)
{
	const ClScene *s = doc->scene;
	switch (doc->selected_kind) {
	case CL_PICK_BALL: {
		int i = cl_scene_find_ball(s, doc->selected_id);
		return i >= 0 ? (ClPick){CL_PICK_BALL, i} : (ClPick){CL_PICK_NONE, -1};
	}
	case CL_PICK_WALL: {
		int i = cl_scene_find_wall(s, doc->selected_id);
		return i >= 0 ? (ClPick){CL_PICK_WALL, i} : (ClPick){CL_PICK_NONE, -1};
	}
	case CL_PICK_TARGET:
		return doc->selected_index < s->loss_count && s->loss[doc->selected_index].type == CL_LOSS_FINAL_POSITION
				   ? (ClPick){CL_PICK_TARGET, doc->selected_index}
				   : (ClPick){CL_PICK_NONE, -1};
	default:
		return (ClPick){CL_PICK_NONE, -1};
	}
}

void cl_document_select(ClDocument *doc, ClPick pick)
{
	ClPick before = cl_document_get_selection(doc);
	remember_selection(doc, pick);
	ClPick after = cl_document_get_selection(doc);
	if (before.kind != after.kind || before.index != after.index)
		emit(doc, CL_DOCUMENT_SELECTION);
}

/* ----------------------------------------------------------------- scene */

/* The scene changed: a new revision; every result is now of an older one. */
static void scene_changed(ClDocument *doc, unsigned what)
{
	doc->revision++;
	ClPick selection = cl_document_get_selection(doc);
	if (selection.kind == CL_PICK_NONE && doc->selected_kind != CL_PICK_NONE) {
		remember_selection(doc, selection);
		what |= CL_DOCUMENT_SELECTION;
	}
	emit(doc, CL_DOCUMENT_SCENE | what);
}

const ClScene *cl_document_get_scene(ClDocument *doc)
{
	return doc->scene;
}

guint cl_document_get_revision(ClDocument *doc)
{
	return doc->revision;
}

const char *cl_document_get_path(ClDocument *doc)
{
	return doc->path;
}

gboolean cl_document_get_dirty(ClDocument *doc)
{
	return doc->dirty;
}

static gboolean refuse(GError **error, const char *message)
{
	g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", *message ? message : "the edit was refused");
	return FALSE;
}

/* Applies edit; an edit it refuses, or one that leaves the scene invalid
 * (an overlap, a negative radius), puts before back and says why. */
static gboolean apply_valid(ClDocument *doc, const ClScene *before, ClSceneEditFunc edit, gpointer data,
							GError **error)
{
	char message[CL_MESSAGE_MAX] = "";
	if (edit(doc->scene, data, message, sizeof message) && cl_scene_validate(doc->scene, message, sizeof message))
		return TRUE;
	cl_scene_free(doc->scene);
	doc->scene = cl_scene_copy(before);
	return refuse(error, message);
}

gboolean cl_document_edit(ClDocument *doc, const char *label, const char *merge_key, ClSceneEditFunc edit,
						  gpointer data, GError **error)
{
	g_return_val_if_fail(!doc->gesture_before, FALSE);
	g_autoptr(ClScene) before = cl_scene_copy(doc->scene);
	if (!apply_valid(doc, before, edit, data, error))
		return FALSE;
	if (cl_scene_equal(before, doc->scene))
		return TRUE;
	cl_undo_stack_push(doc->undo, before, label, merge_key);
	set_dirty(doc, TRUE);
	scene_changed(doc, CL_DOCUMENT_FILE | CL_DOCUMENT_HISTORY);
	return TRUE;
}

void cl_document_begin(ClDocument *doc, const char *label)
{
	if (doc->gesture_before)
		cl_document_commit(doc);
	doc->gesture_before = cl_scene_copy(doc->scene);
	doc->gesture_label = g_strdup(label);
	doc->gesture_changed = FALSE;
}

gboolean cl_document_preview(ClDocument *doc, ClSceneEditFunc edit, gpointer data, GError **error)
{
	g_return_val_if_fail(doc->gesture_before, FALSE);
	g_autoptr(ClScene) last = cl_scene_copy(doc->scene);
	if (!apply_valid(doc, last, edit, data, error))
		return FALSE;
	doc->gesture_changed = TRUE;
	scene_changed(doc, CL_DOCUMENT_PREVIEW);
	return TRUE;
}

static void end_gesture(ClDocument *doc)
{
	g_clear_pointer(&doc->gesture_before, cl_scene_free);
	g_clear_pointer(&doc->gesture_label, g_free);
	doc->gesture_changed = FALSE;
}

void cl_document_commit(ClDocument *doc)
{
	if (!doc->gesture_before)
		return;
	gboolean changed = doc->gesture_changed && !cl_scene_equal(doc->gesture_before, doc->scene);
	if (changed) {
		cl_undo_stack_push(doc->undo, doc->gesture_before, doc->gesture_label, NULL);
		cl_undo_stack_seal(doc->undo);
		set_dirty(doc, TRUE);
	}
	gboolean previewed = doc->gesture_changed;
	end_gesture(doc);
	/* views that skip previews (costly ones) recompute now */
	if (previewed)
		scene_changed(doc, changed ? CL_DOCUMENT_FILE | CL_DOCUMENT_HISTORY : 0);
}

void cl_document_cancel(ClDocument *doc)
{
	if (!doc->gesture_before)
		return;
	gboolean previewed = doc->gesture_changed;
	ClScene *before = g_steal_pointer(&doc->gesture_before);
	end_gesture(doc);
	if (previewed) {
		cl_scene_free(doc->scene);
		doc->scene = before;
		scene_changed(doc, 0);
	} else
		cl_scene_free(before);
}

gboolean cl_document_in_gesture(ClDocument *doc)
{
	return doc->gesture_before != NULL;
}

void cl_document_replace(ClDocument *doc, ClScene *scene, const char *path, gboolean dirty, const char *label)
{
	cl_document_commit(doc);
	cl_undo_stack_push(doc->undo, doc->scene, label, NULL);
	cl_undo_stack_seal(doc->undo);
	cl_scene_free(doc->scene);
	doc->scene = scene;
	if (path != doc->path) {
		g_free(doc->path);
		doc->path = g_strdup(path);
	}
	set_dirty(doc, dirty);
	scene_changed(doc, CL_DOCUMENT_REPLACED | CL_DOCUMENT_FILE | CL_DOCUMENT_HISTORY);
}

gboolean cl_document_open(ClDocument *doc, const char *path, GError **error)
{
	ClScene *scene = cl_scene_file_load(path, error);
	if (!scene)
		return FALSE;
	cl_document_replace(doc, scene, path, FALSE, "Open file");
	return TRUE;
}

gboolean cl_document_load_preset(ClDocument *doc, const char *id, GError **error)
{
	ClScene *scene = cl_preset_load(id, error);
	if (!scene)
		return FALSE;
	cl_document_replace(doc, scene, NULL, FALSE, "Load preset");
	return TRUE;
}

void cl_document_set_path(ClDocument *doc, const char *path)
{
	if (g_strcmp0(path, doc->path) == 0)
		return;
	g_free(doc->path);
	doc->path = g_strdup(path);
	emit(doc, CL_DOCUMENT_FILE);
}

gboolean cl_document_save(ClDocument *doc, const char *path, GError **error)
{
	if (!cl_scene_file_save(doc->scene, path, error))
		return FALSE;
	if (path != doc->path) {
		g_free(doc->path);
		doc->path = g_strdup(path);
	}
	set_dirty(doc, FALSE);
	emit(doc, CL_DOCUMENT_FILE);
	return TRUE;
}

static gboolean step_history(ClDocument *doc, gboolean undo)
{
	cl_document_commit(doc);
	ClScene *scene = undo ? cl_undo_stack_undo(doc->undo, doc->scene) : cl_undo_stack_redo(doc->undo, doc->scene);
	if (!scene)
		return FALSE;
	cl_scene_free(doc->scene);
	doc->scene = scene;
	set_dirty(doc, TRUE);
	scene_changed(doc, CL_DOCUMENT_FILE | CL_DOCUMENT_HISTORY);
	return TRUE;
}

gboolean cl_document_undo(ClDocument *doc)
{
	return step_history(doc, TRUE);
}

gboolean cl_document_redo(ClDocument *doc)
{
	return step_history(doc, FALSE);
}

gboolean cl_document_can_undo(ClDocument *doc)
{
	return cl_undo_stack_can_undo(doc->undo);
}

gboolean cl_document_can_redo(ClDocument *doc)
{
	return cl_undo_stack_can_redo(doc->undo);
}

const char *cl_document_undo_label(ClDocument *doc)
{
	return cl_undo_stack_undo_label(doc->undo);
}

const char *cl_document_redo_label(ClDocument *doc)
{
	return cl_undo_stack_redo_label(doc->undo);
}

/* -------------------------------------------------------------- backends */

gboolean cl_document_backend_enabled(ClDocument *doc, int backend)
{
	return backend >= 0 && backend < cl_backend_count() && doc->enabled[backend];
}

void cl_document_set_backend_enabled(ClDocument *doc, int backend, gboolean enabled)
{
	g_return_if_fail(backend >= 0 && backend < cl_backend_count());
	if (doc->enabled[backend] == !!enabled)
		return;
	doc->enabled[backend] = !!enabled;
	emit(doc, CL_DOCUMENT_BACKENDS);
}

gboolean cl_document_backend_shown(ClDocument *doc, int backend)
{
	return cl_document_backend_enabled(doc, backend) && !doc->hidden[backend];
}

void cl_document_set_backend_hidden(ClDocument *doc, int backend, gboolean hidden)
{
	g_return_if_fail(backend >= 0 && backend < cl_backend_count());
	if (doc->hidden[backend] == !!hidden)
		return;
	doc->hidden[backend] = !!hidden;
	emit(doc, CL_DOCUMENT_BACKENDS);
}

void cl_document_toggle_backend_hidden(ClDocument *doc, int backend)
{
	cl_document_set_backend_hidden(doc, backend, cl_document_backend_shown(doc, backend));
}

void cl_document_hide_in_figure(ClDocument *doc, ClPlotFigure *figure)
{
	for (int b = 0; b < cl_backend_count(); b++)
		cl_plot_figure_set_group_hidden(figure, cl_backend_info(b)->id, doc->enabled[b] && doc->hidden[b]);
}

void cl_document_focus_backend(ClDocument *doc, int backend)
{
	gboolean changed = FALSE;
	for (int b = 0; b < cl_backend_count(); b++) {
		gboolean hide = backend >= 0 && b != backend && !cl_backend_is_reference(b);
		changed |= doc->hidden[b] != hide;
		doc->hidden[b] = hide;
	}
	if (backend >= 0 && !doc->enabled[backend]) {
		doc->enabled[backend] = TRUE;
		changed = TRUE;
	}
	if (changed)
		emit(doc, CL_DOCUMENT_BACKENDS);
}

int cl_document_focused_backend(ClDocument *doc)
{
	int focused = -1, shown = 0;
	for (int b = 0; b < cl_backend_count(); b++)
		if (!cl_backend_is_reference(b) && cl_document_backend_shown(doc, b))
			focused = b, shown++;
	for (int b = 0; b < cl_backend_count(); b++)
		if (!cl_backend_is_reference(b) && doc->enabled[b] && b != focused && !doc->hidden[b])
			return -1;
	return shown == 1 ? focused : -1;
}

GArray *cl_document_enabled_backends(ClDocument *doc)
{
	GArray *list = g_array_new(FALSE, FALSE, sizeof(int));
	for (int b = 0; b < cl_backend_count(); b++)
		if (doc->enabled[b] && cl_backend_can_run(b, doc->scene, NULL, 0))
			g_array_append_val(list, b);
	return list;
}

/* --------------------------------------------------------------- results */

void cl_document_set_result(ClDocument *doc, ClResult *result)
{
	ClResultKind kind = cl_result_kind(result);
	cl_result_ref(result);
	g_clear_pointer(&doc->results[kind], cl_result_unref);
	doc->results[kind] = result;
	emit(doc, CL_DOCUMENT_RESULTS);
}

void cl_document_clear_result(ClDocument *doc, ClResultKind kind)
{
	if (!doc->results[kind])
		return;
	g_clear_pointer(&doc->results[kind], cl_result_unref);
	emit(doc, CL_DOCUMENT_RESULTS);
}

void cl_document_result_updated(ClDocument *doc, ClResult *result)
{
	if (doc->results[cl_result_kind(result)] == result)
		emit(doc, CL_DOCUMENT_RESULTS);
}

ClResult *cl_document_get_result(ClDocument *doc, ClResultKind kind)
{
	return kind < CL_RESULT_KIND_COUNT ? doc->results[kind] : NULL;
}

gboolean cl_document_is_stale(ClDocument *doc, const ClResult *result)
{
	return result && cl_result_revision(result) != doc->revision;
}

/* ------------------------------------------------------------- lifecycle */

static void cl_document_dispose(GObject *object)
{
	ClDocument *doc = CL_DOCUMENT(object);
	g_clear_handle_id(&doc->autosave_source, g_source_remove);
	for (int k = 0; k < CL_RESULT_KIND_COUNT; k++)
		g_clear_pointer(&doc->results[k], cl_result_unref);
	G_OBJECT_CLASS(cl_document_parent_class)->dispose(object);
}

static void cl_document_finalize(GObject *object)
{
	ClDocument *doc = CL_DOCUMENT(object);
	end_gesture(doc);
	cl_scene_free(doc->scene);
	cl_undo_stack_free(doc->undo);
	g_free(doc->path);
	g_free(doc->recovery_path);
	g_free(doc->selected_id);
	g_free(doc->enabled);
	g_free(doc->hidden);
	G_OBJECT_CLASS(cl_document_parent_class)->finalize(object);
}

static void cl_document_class_init(ClDocumentClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->dispose = cl_document_dispose;
	object_class->finalize = cl_document_finalize;
	/* changed(what): ClDocumentChange flags */
	signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
										   NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void cl_document_init(ClDocument *doc)
{
	doc->undo = cl_undo_stack_new(UNDO_LIMIT);
	doc->enabled = g_new(gboolean, (gsize)MAX(cl_backend_count(), 1));
	for (int b = 0; b < cl_backend_count(); b++)
		doc->enabled[b] = TRUE;
	doc->hidden = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	doc->selected_kind = CL_PICK_NONE;
	doc->selected_index = -1;
	doc->revision = 1;
}

ClDocument *cl_document_new(ClScene *scene)
{
	ClDocument *doc = g_object_new(CL_TYPE_DOCUMENT, NULL);
	doc->scene = scene ? scene : cl_scene_new();
	return doc;
}
