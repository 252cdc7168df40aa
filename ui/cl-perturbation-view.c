#include "cl-perturbation-view.h"

#include "cl-application.h"
#include "cl-workbench.h"
#include "perturbation-figure.h"

#include <stdlib.h>

struct _ClPerturbationView {
	GtkWidget parent_instance;

	/* template widgets */
	GtkDropDown *dropdown;
	GtkSpinButton *delta;
	GtkWidget *area;

	GtkStringList *names;
	ClDocument *doc; /* while rooted */
	ClRunner *runner;
	gulong changed_handler;
	gboolean *visible;
	gboolean updating;
};

static void cl_perturbation_view_view_init(ClResultsViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(ClPerturbationView, cl_perturbation_view, GTK_TYPE_WIDGET,
							  G_IMPLEMENT_INTERFACE(CL_TYPE_RESULTS_VIEW, cl_perturbation_view_view_init))

static const char *parameter(ClPerturbationView *self)
{
	GtkStringObject *item = gtk_drop_down_get_selected_item(self->dropdown);
	return item ? gtk_string_object_get_string(item) : NULL;
}

/* While the view is shown, every Run includes the study of its θ and δ. */
static void request_study(ClPerturbationView *self)
{
	if (self->runner && !self->updating)
		cl_runner_set_perturbation(self->runner, gtk_widget_get_mapped(GTK_WIDGET(self)) ? parameter(self) : NULL,
								   gtk_spin_button_get_value(self->delta));
}

static gboolean select_parameter(ClPerturbationView *self, const char *name)
{
	guint n = g_list_model_get_n_items(G_LIST_MODEL(self->names));
	for (guint i = 0; name && i < n; i++)
		if (g_str_equal(gtk_string_list_get_string(self->names, i), name)) {
			gtk_drop_down_set_selected(self->dropdown, i);
			return TRUE;
		}
	return FALSE;
}

/* The scene's table parameters, then its physical ones (radii, masses,
 * the globals, the walls' points and angles); the choice survives by name,
 * else the first ball's initial y, the paper's Task 1 question. */
static void refresh_parameters(ClPerturbationView *self)
{
	const ClScene *scene = cl_document_get_scene(self->doc);
	g_autofree char *current = g_strdup(parameter(self));
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	char name[CL_NAME_MAX];
	static const unsigned groups[] = {CL_PARAMS_TABLE, CL_PARAMS_PHYSICAL};
	for (size_t g = 0; g < G_N_ELEMENTS(groups); g++) {
		int count;
		ClParam *params = cl_scene_params_new(scene, groups[g], -1, &count);
		for (int k = 0; k < count; k++) {
			cl_param_name(scene, &params[k], name, sizeof name);
			g_ptr_array_add(names, g_strdup(name));
		}
		free(params);
	}
	g_ptr_array_add(names, NULL);
	self->updating = TRUE;
	gtk_string_list_splice(self->names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->names)),
						   (const char *const *)names->pdata);
	if (!select_parameter(self, current) && scene->ball_count > 0) {
		g_snprintf(name, sizeof name, "%s.position.y", scene->balls[0].id);
		select_parameter(self, name);
	}
	self->updating = FALSE;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
	ClPerturbationView *self = data;
	if (!self->doc)
		return;
	GdkRGBA fg;
	gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(area)), &fg);
	ClResult *run = cl_document_get_result(self->doc, CL_RESULT_RUN);
	for (int b = 0; b < cl_backend_count(); b++)
		self->visible[b] = cl_document_backend_shown(self->doc, b);
	cl_perturbation_draw(cr, run ? cl_result_scene(run) : NULL, run ? cl_result_payload(run) : NULL, self->visible,
						 w, h, fg.red + fg.green + fg.blue > 1.5);
}

static void document_changed(ClDocument *doc, guint what, ClPerturbationView *self)
{
	(void)doc;
	if (what & CL_DOCUMENT_SCENE)
		refresh_parameters(self);
	gtk_widget_queue_draw(self->area);
}

static void choice_changed(GObject *object, GParamSpec *pspec, ClPerturbationView *self)
{
	(void)object, (void)pspec;
	request_study(self);
}

/* ------------------------------------------------------ ClResultsView */

static gboolean show_step(ClResultsView *view, const ClLessonStep *step, GError **error)
{
	ClPerturbationView *self = CL_PERTURBATION_VIEW(view);
	self->updating = TRUE;
	gboolean found = select_parameter(self, step->view.parameter);
	gtk_spin_button_set_value(self->delta, step->view.delta);
	self->updating = FALSE;
	if (!found) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "the scene has no parameter %s",
					step->view.parameter);
		return FALSE;
	}
	request_study(self);
	return TRUE;
}

static void cl_perturbation_view_view_init(ClResultsViewInterface *iface)
{
	iface->show_step = show_step;
}

/* ------------------------------------------------------------ lifecycle */

static void cl_perturbation_view_map(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_perturbation_view_parent_class)->map(widget);
	request_study(CL_PERTURBATION_VIEW(widget));
}

static void cl_perturbation_view_unmap(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_perturbation_view_parent_class)->unmap(widget);
	request_study(CL_PERTURBATION_VIEW(widget));
}

static void cl_perturbation_view_root(GtkWidget *widget)
{
	GTK_WIDGET_CLASS(cl_perturbation_view_parent_class)->root(widget);
	ClPerturbationView *self = CL_PERTURBATION_VIEW(widget);
	ClWorkbench *workbench = cl_workbench_of(widget);
	if (!workbench)
		return;
	self->doc = cl_workbench_get_document(workbench);
	self->runner = cl_workbench_get_runner(workbench);
	self->changed_handler = g_signal_connect(self->doc, "changed", G_CALLBACK(document_changed), self);
	refresh_parameters(self);
}

static void cl_perturbation_view_unroot(GtkWidget *widget)
{
	ClPerturbationView *self = CL_PERTURBATION_VIEW(widget);
	if (self->doc)
		g_clear_signal_handler(&self->changed_handler, self->doc);
	self->doc = NULL;
	self->runner = NULL;
	GTK_WIDGET_CLASS(cl_perturbation_view_parent_class)->unroot(widget);
}

static void cl_perturbation_view_dispose(GObject *object)
{
	ClPerturbationView *self = CL_PERTURBATION_VIEW(object);
	g_clear_pointer(&self->visible, g_free);
	g_clear_object(&self->names);
	gtk_widget_dispose_template(GTK_WIDGET(self), CL_TYPE_PERTURBATION_VIEW);
	GtkWidget *child;
	while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
		gtk_widget_unparent(child);
	G_OBJECT_CLASS(cl_perturbation_view_parent_class)->dispose(object);
}

static void cl_perturbation_view_class_init(ClPerturbationViewClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = cl_perturbation_view_dispose;
	GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
	widget_class->map = cl_perturbation_view_map;
	widget_class->unmap = cl_perturbation_view_unmap;
	widget_class->root = cl_perturbation_view_root;
	widget_class->unroot = cl_perturbation_view_unroot;
	gtk_widget_class_set_template_from_resource(widget_class,
												"/io/github/contactlab/ContactLab/ui/cl-perturbation-view.ui");
	gtk_widget_class_bind_template_child(widget_class, ClPerturbationView, dropdown);
	gtk_widget_class_bind_template_child(widget_class, ClPerturbationView, delta);
	gtk_widget_class_bind_template_child(widget_class, ClPerturbationView, area);
	gtk_widget_class_bind_template_callback(widget_class, choice_changed);
}

static void cl_perturbation_view_init(ClPerturbationView *self)
{
	gtk_widget_init_template(GTK_WIDGET(self));
	self->visible = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	self->names = gtk_string_list_new(NULL);
	gtk_drop_down_set_model(self->dropdown, G_LIST_MODEL(self->names));
	GSettings *settings = cl_application_settings();
	if (settings)
		g_settings_bind(settings, "perturbation-delta", self->delta, "value", G_SETTINGS_BIND_DEFAULT);
	gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->area), draw, self, NULL);
}
