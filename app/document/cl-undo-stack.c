#include "cl-undo-stack.h"

typedef struct {
	ClScene *scene;
	char *label;
} Entry;

struct ClUndoStack {
	GQueue undo; /* head = most recent */
	GQueue redo;
	char *merge_key;
	int limit;
};

static Entry *entry_new(const ClScene *scene, const char *label)
{
	Entry *e = g_new(Entry, 1);
	e->scene = cl_scene_copy(scene);
	e->label = g_strdup(label ? label : "");
	return e;
}

static void entry_free(gpointer data)
{
	Entry *e = data;
	cl_scene_free(e->scene);
	g_free(e->label);
	g_free(e);
}

ClUndoStack *cl_undo_stack_new(int limit)
{
	ClUndoStack *stack = g_new0(ClUndoStack, 1);
	g_queue_init(&stack->undo);
	g_queue_init(&stack->redo);
	stack->limit = limit > 0 ? limit : 1;
	return stack;
}

void cl_undo_stack_clear(ClUndoStack *stack)
{
	g_queue_clear_full(&stack->undo, entry_free);
	g_queue_clear_full(&stack->redo, entry_free);
	g_clear_pointer(&stack->merge_key, g_free);
}

void cl_undo_stack_free(ClUndoStack *stack)
{
	if (!stack)
		return;
	cl_undo_stack_clear(stack);
	g_free(stack);
}

void cl_undo_stack_push(ClUndoStack *stack, const ClScene *before, const char *label, const char *merge_key)
{
	g_queue_clear_full(&stack->redo, entry_free);
	/* the older snapshot already holds the state before the whole merged edit */
	if (merge_key && stack->merge_key && g_str_equal(merge_key, stack->merge_key) && !g_queue_is_empty(&stack->undo))
		return;
	g_queue_push_head(&stack->undo, entry_new(before, label));
	while ((int)g_queue_get_length(&stack->undo) > stack->limit)
		entry_free(g_queue_pop_tail(&stack->undo));
	g_free(stack->merge_key);
	stack->merge_key = g_strdup(merge_key);
}

void cl_undo_stack_seal(ClUndoStack *stack)
{
	g_clear_pointer(&stack->merge_key, g_free);
}

gboolean cl_undo_stack_can_undo(const ClUndoStack *stack)
{
	return stack->undo.head != NULL;
}

gboolean cl_undo_stack_can_redo(const ClUndoStack *stack)
{
	return stack->redo.head != NULL;
}

const char *cl_undo_stack_undo_label(const ClUndoStack *stack)
{
	const Entry *e = stack->undo.head ? stack->undo.head->data : NULL;
	return e ? e->label : NULL;
}

const char *cl_undo_stack_redo_label(const ClUndoStack *stack)
{
	const Entry *e = stack->redo.head ? stack->redo.head->data : NULL;
	return e ? e->label : NULL;
}

/* Moves the head of from onto to, swapping in current; returns the scene to show. */
static ClScene *transfer(ClUndoStack *stack, GQueue *from, GQueue *to, const ClScene *current)
{
	Entry *e = g_queue_pop_head(from);
	if (!e)
		return NULL;
	g_clear_pointer(&stack->merge_key, g_free);
	ClScene *target = e->scene;
	e->scene = cl_scene_copy(current);
	g_queue_push_head(to, e);
	return target;
}

ClScene *cl_undo_stack_undo(ClUndoStack *stack, const ClScene *current)
{
	return transfer(stack, &stack->undo, &stack->redo, current);
}

ClScene *cl_undo_stack_redo(ClUndoStack *stack, const ClScene *current)
{
	return transfer(stack, &stack->redo, &stack->undo, current);
}
