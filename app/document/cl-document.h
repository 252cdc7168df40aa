/* The document: the one truth of a workbench window. It owns the scene, its
 * file and dirty state, the undo stack, the autosave (recovery) file, the
 * selection, the enabled backends and the current result of every kind of
 * study. Nothing outside gets a mutable scene: edits are functions the
 * document applies to its own scene (one-shot, or begin/preview/commit for a
 * drag), and whole scenes replace it (load, preset, undo, a lesson step).
 * Every change is announced by one signal, "changed", with flags saying
 * what changed, so a view subscribes once and never misses an entry point.
 * Results are stamped with the scene revision they were computed for; a
 * result of an older revision is stale. No GTK: tested without a display. */
#pragma once

#include "cl-result.h"
#include "plot.h"
#include "cl-scene-edit.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum ClDocumentChange {
	CL_DOCUMENT_SCENE = 1 << 0,     /* the scene's content (an edit, a preview, undo, a load) */
	CL_DOCUMENT_REPLACED = 1 << 1,  /* with SCENE: a different scene (load, preset, lesson step) */
	CL_DOCUMENT_PREVIEW = 1 << 2,   /* with SCENE: a gesture under way, not committed yet */
	CL_DOCUMENT_FILE = 1 << 3,      /* the path, the name or the dirty state */
	CL_DOCUMENT_HISTORY = 1 << 4,   /* what undo and redo would do */
	CL_DOCUMENT_SELECTION = 1 << 5, /* the selected object */
	CL_DOCUMENT_BACKENDS = 1 << 6,  /* which backends are enabled */
	CL_DOCUMENT_RESULTS = 1 << 7,   /* a result was stored or dropped */
} ClDocumentChange;

#define CL_TYPE_DOCUMENT (cl_document_get_type())
G_DECLARE_FINAL_TYPE(ClDocument, cl_document, CL, DOCUMENT, GObject)

/* A document holding scene (taken) not tied to a file. */
ClDocument *cl_document_new(ClScene *scene);

const ClScene *cl_document_get_scene(ClDocument *doc);
/* Grows with every change of the scene (never repeats within a document). */
guint cl_document_get_revision(ClDocument *doc);
const char *cl_document_get_path(ClDocument *doc); /* NULL: not saved to a file */
gboolean cl_document_get_dirty(ClDocument *doc);

/* ------------------------------------------------------------------ edits */

/* Changes scene in place; FALSE with a message when refused. The document
 * validates the result (cl_scene_validate) and undoes a refused or invalid
 * edit, so an edit function need not. */
typedef gboolean (*ClSceneEditFunc)(ClScene *scene, gpointer data, char *message, gsize size);

/* One undoable edit. merge_key: consecutive edits with the same key are one
 * undo step (typing "1.25"). FALSE with the edit's message when refused. */
gboolean cl_document_edit(ClDocument *doc, const char *label, const char *merge_key, ClSceneEditFunc edit,
						  gpointer data, GError **error);
/* A gesture (a drag): begin, any number of previews (each applied to the
 * current scene; a refused one changes nothing), then commit (one undo
 * step, if anything changed) or cancel (back to the scene at begin). */
void cl_document_begin(ClDocument *doc, const char *label);
gboolean cl_document_preview(ClDocument *doc, ClSceneEditFunc edit, gpointer data, GError **error);
void cl_document_commit(ClDocument *doc);
void cl_document_cancel(ClDocument *doc);
gboolean cl_document_in_gesture(ClDocument *doc);

/* Replaces the scene (taken) as one undoable step. path: the file it came
 * from, or NULL. dirty: whether the new scene holds changes not saved
 * anywhere (a restored recovery copy); a file, a preset or a lesson step
 * is a starting point, not a change. */
void cl_document_replace(ClDocument *doc, ClScene *scene, const char *path, gboolean dirty, const char *label);
gboolean cl_document_open(ClDocument *doc, const char *path, GError **error);
gboolean cl_document_load_preset(ClDocument *doc, const char *id, GError **error);
/* Ties the document to another file (NULL: none) without touching the
 * scene or its dirty state: an undone load goes back to the file it was of. */
void cl_document_set_path(ClDocument *doc, const char *path);
/* Writes the scene to path atomically; the document is then that file's, clean. */
gboolean cl_document_save(ClDocument *doc, const char *path, GError **error);

gboolean cl_document_undo(ClDocument *doc);
gboolean cl_document_redo(ClDocument *doc);
gboolean cl_document_can_undo(ClDocument *doc);
gboolean cl_document_can_redo(ClDocument *doc);
const char *cl_document_undo_label(ClDocument *doc); /* NULL when there is none */
const char *cl_document_redo_label(ClDocument *doc);

/* -------------------------------------------------------------- recovery */

/* Unsaved changes are written to path (atomically) a second after the last
 * edit; the file is removed when the document becomes clean or is closed
 * clean. NULL: no autosave. */
void cl_document_set_recovery_path(ClDocument *doc, const char *path);
/* Keeps an existing recovery file until cl_document_discard_recovery or a
 * restore (a crash's copy is offered to the user first). */
void cl_document_hold_recovery(ClDocument *doc, gboolean hold);
/* Removes the recovery file (the user discarded the changes). */
void cl_document_discard_recovery(ClDocument *doc);

/* ------------------------------------------------------------- selection */

/* The selected ball, wall or target (by index into the scene), kept across
 * edits and undo by the object's id; CL_PICK_NONE when the object is gone. */
ClPick cl_document_get_selection(ClDocument *doc);
void cl_document_select(ClDocument *doc, ClPick pick);

/* -------------------------------------------------------------- backends */

gboolean cl_document_backend_enabled(ClDocument *doc, int backend);
void cl_document_set_backend_enabled(ClDocument *doc, int backend, gboolean enabled);
/* Shown: enabled and not hidden. A hidden backend is still computed (its
 * gradient row, its curves) but no view draws it: a click on it in a legend
 * hides or shows it everywhere. View state, not an edit: never undone. */
gboolean cl_document_backend_shown(ClDocument *doc, int backend);
void cl_document_set_backend_hidden(ClDocument *doc, int backend, gboolean hidden);
/* A click on the backend in a legend: hidden if it was shown, shown if hidden. */
void cl_document_toggle_backend_hidden(ClDocument *doc, int backend);
/* Hides in figure the curves of every backend the document hides (the
 * series cl_backend_style_series grouped by the backend's id). */
void cl_document_hide_in_figure(ClDocument *doc, ClPlotFigure *figure);
/* Shows the reference and backend only (enabling backend if need be);
 * backend −1 shows every enabled backend again. */
void cl_document_focus_backend(ClDocument *doc, int backend);
/* The backend shown alone beside the reference, or −1. */
int cl_document_focused_backend(ClDocument *doc);
/* The enabled backends that can run the scene (cl_backend_can_run), as
 * registry indices in registry order (g_array_unref it). */
GArray *cl_document_enabled_backends(ClDocument *doc);

/* --------------------------------------------------------------- results */

/* Stores result as the current one of its kind (a new reference). */
void cl_document_set_result(ClDocument *doc, ClResult *result);
void cl_document_clear_result(ClDocument *doc, ClResultKind kind);
/* The current result of its kind got more of its data (differences that
 * arrive after it was stored): announced as a change of the results. */
void cl_document_result_updated(ClDocument *doc, ClResult *result);
/* The current result of kind (borrowed), or NULL. */
ClResult *cl_document_get_result(ClDocument *doc, ClResultKind kind);
/* TRUE when result was computed for an earlier revision of the scene. */
gboolean cl_document_is_stale(ClDocument *doc, const ClResult *result);

G_END_DECLS
