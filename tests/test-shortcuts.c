/* The shortcuts window lists every accelerator the application sets: each
 * action of ui/cl-accels.c has a shortcut in resources/gtk/help-overlay.ui
 * that names it (GTK then shows the action's own keys), and every action
 * the window names has accelerators. No display needed. */
#include "cl-accels.h"

#include <glib.h>
#include <string.h>

typedef struct {
	GHashTable *actions;   /* the action-name of every shortcut */
	GString *text;         /* of the property being read */
	char *property;        /* its name, NULL outside a property */
	gboolean has_accel, has_action;
	GPtrArray *doubled;    /* titles of shortcuts with both an accelerator and an action */
	char *title;
} Overlay;

static void start_element(GMarkupParseContext *context, const char *element, const char **names, const char **values,
						  gpointer data, GError **error)
{
	(void)context, (void)error;
	Overlay *o = data;
	if (strcmp(element, "object") == 0) {
		o->has_accel = o->has_action = FALSE;
		g_clear_pointer(&o->title, g_free);
	} else if (strcmp(element, "property") == 0) {
		for (int i = 0; names[i]; i++)
			if (strcmp(names[i], "name") == 0)
				o->property = g_strdup(values[i]);
		g_string_truncate(o->text, 0);
	}
}

static void end_element(GMarkupParseContext *context, const char *element, gpointer data, GError **error)
{
	(void)context, (void)error;
	Overlay *o = data;
	if (strcmp(element, "property") == 0 && o->property) {
		if (strcmp(o->property, "action-name") == 0) {
			g_hash_table_add(o->actions, g_strdup(o->text->str));
			o->has_action = TRUE;
		} else if (strcmp(o->property, "accelerator") == 0) {
			o->has_accel = TRUE;
		} else if (strcmp(o->property, "title") == 0) {
			g_free(o->title);
			o->title = g_strdup(o->text->str);
		}
		g_clear_pointer(&o->property, g_free);
	} else if (strcmp(element, "object") == 0 && o->has_accel && o->has_action) {
		g_ptr_array_add(o->doubled, g_strdup(o->title ? o->title : "(untitled)"));
	}
}

static void text(GMarkupParseContext *context, const char *chars, gsize length, gpointer data, GError **error)
{
	(void)context, (void)error;
	Overlay *o = data;
	if (o->property)
		g_string_append_len(o->text, chars, (gssize)length);
}

static void test_every_accelerator_listed(void)
{
	const char *root = g_getenv("CONTACTLAB_SOURCE_ROOT");
	g_assert_nonnull(root);
	g_autofree char *path = g_build_filename(root, "resources", "gtk", "help-overlay.ui", NULL);
	g_autofree char *xml = NULL;
	gsize length;
	g_assert_true(g_file_get_contents(path, &xml, &length, NULL));

	Overlay o = {.actions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
				 .text = g_string_new(NULL),
				 .doubled = g_ptr_array_new_with_free_func(g_free)};
	static const GMarkupParser parser = {start_element, end_element, text, NULL, NULL};
	GMarkupParseContext *context = g_markup_parse_context_new(&parser, 0, &o, NULL);
	GError *error = NULL;
	g_assert_true(g_markup_parse_context_parse(context, xml, (gssize)length, &error) &&
				  g_markup_parse_context_end_parse(context, &error));
	g_assert_no_error(error);
	g_markup_parse_context_free(context);

	g_autoptr(GHashTable) set = g_hash_table_new(g_str_hash, g_str_equal);
	for (unsigned i = 0; i < cl_accel_count; i++) {
		g_assert_nonnull(cl_accels[i].accels[0]);
		g_hash_table_add(set, (gpointer)cl_accels[i].action);
		if (!g_hash_table_contains(o.actions, cl_accels[i].action))
			g_test_fail_printf("%s (%s) has accelerators but no line in the shortcuts window", cl_accels[i].action,
							   cl_accels[i].accels[0]);
	}
	GHashTableIter iter;
	gpointer action;
	g_hash_table_iter_init(&iter, o.actions);
	while (g_hash_table_iter_next(&iter, &action, NULL))
		if (!g_hash_table_contains(set, action))
			g_test_fail_printf("the shortcuts window lists %s, which has no accelerator in ui/cl-accels.c",
							   (const char *)action);
	/* keys written beside an action would hide the action's own keys */
	for (guint i = 0; i < o.doubled->len; i++)
		g_test_fail_printf("\"%s\" has both an accelerator and an action-name", (const char *)o.doubled->pdata[i]);

	g_hash_table_unref(o.actions);
	g_string_free(o.text, TRUE);
	g_ptr_array_unref(o.doubled);
	g_free(o.title);
	g_free(o.property);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/shortcuts/every-accelerator-listed", test_every_accelerator_listed);
	return g_test_run();
}
