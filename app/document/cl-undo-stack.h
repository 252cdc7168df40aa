/* Undo/redo as a stack of scene snapshots: simple, and every edit (drag,
 * typed value, preset load) is undoable the same way. No GTK, so it is
 * tested without a display. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

typedef struct ClUndoStack ClUndoStack;

/* limit: the most undo steps kept; older ones are dropped. */
ClUndoStack *cl_undo_stack_new(int limit);
void cl_undo_stack_free(ClUndoStack *stack);

/* Records the scene as it was before an edit and forgets the redo history.
 * When merge_key is non-NULL and equals the previous push's key, the edit is
 * folded into that one (typing "1.25" is one undo step, not four). */
void cl_undo_stack_push(ClUndoStack *stack, const ClScene *before, const char *label, const char *merge_key);
/* Ends merging: the next push starts a new step even with the same key. */
void cl_undo_stack_seal(ClUndoStack *stack);

gboolean cl_undo_stack_can_undo(const ClUndoStack *stack);
gboolean cl_undo_stack_can_redo(const ClUndoStack *stack);
/* Label of the step undo/redo would revert/reapply, or NULL. */
const char *cl_undo_stack_undo_label(const ClUndoStack *stack);
const char *cl_undo_stack_redo_label(const ClUndoStack *stack);

/* Returns the scene to switch to (owned by the caller) and remembers
 * current for the opposite direction; NULL when there is nothing to do. */
ClScene *cl_undo_stack_undo(ClUndoStack *stack, const ClScene *current);
ClScene *cl_undo_stack_redo(ClUndoStack *stack, const ClScene *current);

void cl_undo_stack_clear(ClUndoStack *stack);
