#include "scene-figure.h"

#include "backend-style.h"

#include <math.h>
#include <pango/pangocairo.h>

ClVec2 cl_view_to_screen(const ClView *view, ClVec2 world)
{
	return (ClVec2){view->width / 2 + (world.x - view->center_x) * view->scale,
					view->height / 2 - (world.y - view->center_y) * view->scale};
}

ClVec2 cl_view_to_world(const ClView *view, double sx, double sy)
{
	return (ClVec2){view->center_x + (sx - view->width / 2) / view->scale,
					view->center_y - (sy - view->height / 2) / view->scale};
}

void cl_view_zoom_at(ClView *view, double sx, double sy, double factor)
{
	double scale = fmin(fmax(view->scale * factor, 1.0), 1e5);
	ClVec2 fixed = cl_view_to_world(view, sx, sy);
	view->scale = scale;
	ClVec2 moved = cl_view_to_world(view, sx, sy);
	view->center_x += fixed.x - moved.x;
	view->center_y += fixed.y - moved.y;
}

void cl_view_pan(ClView *view, double dx_pixels, double dy_pixels)
{
	view->center_x -= dx_pixels / view->scale;
	view->center_y += dy_pixels / view->scale;
}

void cl_view_fit(ClView *view, double x0, double y0, double x1, double y1, double margin)
{
	double w = fmax(x1 - x0, 1e-3), h = fmax(y1 - y0, 1e-3);
	double avail_w = fmax(view->width - 2 * margin, 10), avail_h = fmax(view->height - 2 * margin, 10);
	view->scale = fmin(avail_w / w, avail_h / h);
	view->center_x = (x0 + x1) / 2;
	view->center_y = (y0 + y1) / 2;
}

double cl_view_grid_step(const ClView *view)
{
	double minimum = 48.0 / view->scale;
	double decade = pow(10.0, floor(log10(minimum)));
	for (int k = 0; k < 2; k++) {
		static const double mantissa[] = {1, 2, 5};
		for (int i = 0; i < 3; i++)
			if (mantissa[i] * decade >= minimum)
				return mantissa[i] * decade;
		decade *= 10;
	}
	return decade;
}

double cl_snap(double value, double step)
{
	if (!(step > 0))
		return value;
	/* k / 10 is the double nearest k·0.1; k · 0.1 is not always (0.30000000000000004) */
	double k = round(value / step), inverse = 1.0 / step;
	double snapped = fabs(inverse - round(inverse)) < 1e-9 ? k / round(inverse) : k * step;
	return snapped == 0 ? 0.0 : snapped; /* no −0 in the inspector */
}

static double distance(ClVec2 a, ClVec2 b)
{
	return hypot(a.x - b.x, a.y - b.y);
}

static ClVec2 tangent_of(ClVec2 normal)
{
	return (ClVec2){-normal.y, normal.x};
}

/* Above this many balls only the selected or hovered one is labelled. */
#define CROWDED_BALLS 12

static bool is_ball_pick(ClPick pick, int ball)
{
	return pick.index == ball && (pick.kind == CL_PICK_BALL || pick.kind == CL_PICK_VELOCITY);
}

bool cl_ball_has_handles(const ClScene *scene, int ball, ClPick selection, ClPick hover)
{
	return scene->ball_count <= CROWDED_BALLS || is_ball_pick(selection, ball) || is_ball_pick(hover, ball);
}

ClVec2 cl_velocity_handle(const ClScene *scene, const ClView *view, int ball)
{
	const ClBall *b = &scene->balls[ball];
	ClVec2 head = {b->position.x + b->velocity.x * CL_ARROW_SECONDS, b->position.y + b->velocity.y * CL_ARROW_SECONDS};
	double knob = b->radius + 10.0 / view->scale;
	double length = distance(head, b->position);
	if (length >= knob)
		return head;
	ClVec2 dir = length > 0 ? (ClVec2){(head.x - b->position.x) / length, (head.y - b->position.y) / length}
							: (ClVec2){1, 0};
	return (ClVec2){b->position.x + dir.x * knob, b->position.y + dir.y * knob};
}

ClVec2 cl_wall_anchor(const ClScene *scene, const ClView *view, int wall)
{
	const ClWall *w = &scene->walls[wall];
	ClVec2 t = tangent_of(w->normal);
	/* slide along the line to the point nearest the view's centre, so the
	 * handles of a wall whose point is off screen stay visible */
	double along = (view->center_x - w->point.x) * t.x + (view->center_y - w->point.y) * t.y;
	double half = 0.3 * fmin(view->width, view->height) / view->scale;
	along = fmax(-half, fmin(half, along));
	ClVec2 point = w->point;
	if (distance(point, (ClVec2){view->center_x, view->center_y}) > half)
		point = (ClVec2){w->point.x + along * t.x, w->point.y + along * t.y};
	return point;
}

ClVec2 cl_wall_rotate_handle(const ClScene *scene, const ClView *view, int wall)
{
	ClVec2 anchor = cl_wall_anchor(scene, view, wall);
	ClVec2 t = tangent_of(scene->walls[wall].normal);
	double length = 60.0 / view->scale;
	return (ClVec2){anchor.x + t.x * length, anchor.y + t.y * length};
}

static void extend(double box[4], double x, double y)
{
	if (!isfinite(x) || !isfinite(y) || fabs(x) > 1e4 || fabs(y) > 1e4)
		return;
	box[0] = fmin(box[0], x), box[1] = fmin(box[1], y);
	box[2] = fmax(box[2], x), box[3] = fmax(box[3], y);
}

void cl_view_fit_scene(ClView *view, const ClScene *s, const ClScene *result_scene, ClRunData *result,
					   const gboolean *backend_visible, double margin)
{
	double box[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
	for (int i = 0; i < s->ball_count; i++) {
		const ClBall *b = &s->balls[i];
		extend(box, b->position.x - b->radius, b->position.y - b->radius);
		extend(box, b->position.x + b->radius, b->position.y + b->radius);
		extend(box, b->position.x + b->velocity.x * CL_ARROW_SECONDS, b->position.y + b->velocity.y * CL_ARROW_SECONDS);
	}
	for (int i = 0; i < s->wall_count; i++)
		extend(box, s->walls[i].point.x, s->walls[i].point.y);
	for (int i = 0; i < s->loss_count; i++) {
		const ClLossTerm *t = &s->loss[i];
		if (t->type == CL_LOSS_FINAL_POSITION)
			extend(box, t->target.x, t->target.y);
		for (int j = 0; t->type == CL_LOSS_TRAJECTORY_MATCH && j < t->observation_count; j++)
			extend(box, t->observations[3 * j + 1], t->observations[3 * j + 2]);
	}
	if (result && result_scene->ball_count == s->ball_count) {
		gsize ns = (gsize)cl_state_size(result_scene);
		for (int k = 0; k < result->backend_count; k++) {
			const ClRunBackend *r = &result->backends[k];
			if (!backend_visible[r->backend])
				continue;
			for (int n = 0; n <= r->steps_done; n++)
				for (int i = 0; i < s->ball_count; i++) {
					const double *p = r->states + (gsize)n * ns + CL_BALL_STATE * (gsize)i;
					extend(box, p[0], p[1]);
				}
		}
	}
	if (!isfinite(box[0]))
		box[0] = box[1] = -1, box[2] = box[3] = 1;
	cl_view_fit(view, box[0], box[1], box[2], box[3], margin);
}



typedef struct {
	cairo_t *cr;
	const ClSceneRenderInput *in;
	const ClView *view;
	double fg[3], bg[3], muted[3];
	double arrow[3], target[3]; /* velocity arrows, loss targets: legible in the theme */
	char arrow_hex[8], target_hex[8];
	PangoLayout *layout;
} Ctx;

static void set_rgb(cairo_t *cr, const double c[3], double alpha)
{
	cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

static ClVec2 screen(const Ctx *c, ClVec2 w)
{
	return cl_view_to_screen(c->view, w);
}

static void text(Ctx *c, double x, double y, const char *markup, double align_x, double align_y)
{
	pango_layout_set_markup(c->layout, markup, -1);
	int w, h;
	pango_layout_get_pixel_size(c->layout, &w, &h);
	cairo_move_to(c->cr, x - align_x * w, y - align_y * h);
	pango_cairo_show_layout(c->cr, c->layout);
	/* no current point may leak into the next path (an arc would connect to it) */
	cairo_new_path(c->cr);
}

static void format_length(double value, char *out, size_t size)
{
	if (value >= 1)
		g_snprintf(out, size, "%g m", value);
	else if (value >= 0.01)
		g_snprintf(out, size, "%g cm", value * 100);
	else
		g_snprintf(out, size, "%g mm", value * 1000);
}

static void draw_grid(Ctx *c)
{
	cairo_t *cr = c->cr;
	const ClView *v = c->view;
	double step = cl_view_grid_step(v);
	ClVec2 lo = cl_view_to_world(v, 0, v->height), hi = cl_view_to_world(v, v->width, 0);
	cairo_set_line_width(cr, 1);
	for (int pass = 0; pass < 2; pass++) {
		double s = pass == 0 ? step / 5 : step;
		set_rgb(cr, c->fg, pass == 0 ? 0.04 : 0.09);
		for (double x = floor(lo.x / s) * s; x <= hi.x; x += s) {
			double sx = round(screen(c, (ClVec2){x, 0}).x) + 0.5;
			cairo_move_to(cr, sx, 0);
			cairo_line_to(cr, sx, v->height);
		}
		for (double y = floor(lo.y / s) * s; y <= hi.y; y += s) {
			double sy = round(screen(c, (ClVec2){0, y}).y) + 0.5;
			cairo_move_to(cr, 0, sy);
			cairo_line_to(cr, v->width, sy);
		}
		cairo_stroke(cr);
	}
	/* world axes with tick labels */
	ClVec2 origin = screen(c, (ClVec2){0, 0});
	set_rgb(cr, c->fg, 0.35);
	cairo_set_line_width(cr, 1.2);
	cairo_move_to(cr, 0, origin.y);
	cairo_line_to(cr, v->width, origin.y);
	cairo_move_to(cr, origin.x, 0);
	cairo_line_to(cr, origin.x, v->height);
	cairo_stroke(cr);
	set_rgb(cr, c->fg, 0.55);
	double label_y = fmin(fmax(origin.y + 3, 3), v->height - 18);
	double label_x = fmin(fmax(origin.x - 4, 30), v->width - 4);
	for (double x = ceil(lo.x / step) * step; x <= hi.x; x += step) {
		if (fabs(x) < step / 2)
			continue;
		char s[48];
		g_snprintf(s, sizeof s, "<span size='small'>%g</span>", x);
		text(c, screen(c, (ClVec2){x, 0}).x, label_y, s, 0.5, 0);
	}
	for (double y = ceil(lo.y / step) * step; y <= hi.y; y += step) {
		if (fabs(y) < step / 2)
			continue;
		char s[48];
		g_snprintf(s, sizeof s, "<span size='small'>%g</span>", y);
		text(c, label_x, screen(c, (ClVec2){0, y}).y, s, 1, 0.5);
	}
}

/* The solid side of a wall along the screen segment a–b: a band with
 * hatching, away from the screen normal nd (which points into the free side). */
static void draw_solid_side(Ctx *c, ClVec2 a, ClVec2 b, ClVec2 nd, const double ink[3])
{
	cairo_t *cr = c->cr;
	double depth = 14;
	cairo_move_to(cr, a.x, a.y);
	cairo_line_to(cr, b.x, b.y);
	cairo_line_to(cr, b.x - depth * nd.x, b.y - depth * nd.y);
	cairo_line_to(cr, a.x - depth * nd.x, a.y - depth * nd.y);
	cairo_close_path(cr);
	set_rgb(cr, ink, 0.08);
	cairo_fill_preserve(cr);
	cairo_save(cr);
	cairo_clip(cr);
	double length = hypot(b.x - a.x, b.y - a.y);
	ClVec2 td = {(b.x - a.x) / length, (b.y - a.y) / length};
	set_rgb(cr, ink, 0.5);
	cairo_set_line_width(cr, 1);
	for (double s = 0; s < length + depth; s += 8) {
		ClVec2 p = {a.x + s * td.x, a.y + s * td.y};
		cairo_move_to(cr, p.x, p.y);
		cairo_line_to(cr, p.x - depth * nd.x - depth * td.x, p.y - depth * nd.y - depth * td.y);
	}
	cairo_stroke(cr);
	cairo_restore(cr);
}

static void draw_walls(Ctx *c)
{
	cairo_t *cr = c->cr;
	const ClScene *scene = c->in->scene;
	double reach = hypot(c->view->width, c->view->height) / c->view->scale;
	ClVec2 middle = cl_view_to_world(c->view, c->view->width / 2, c->view->height / 2);
	for (int i = 0; i < scene->wall_count; i++) {
		const ClWall *w = &scene->walls[i];
		ClVec2 n = w->normal, t = {-n.y, n.x};
		/* the point of the line nearest the view's middle, and the line across the view */
		double along = (middle.x - w->point.x) * t.x + (middle.y - w->point.y) * t.y;
		ClVec2 m = {w->point.x + along * t.x, w->point.y + along * t.y};
		ClVec2 a = screen(c, (ClVec2){m.x - reach * t.x, m.y - reach * t.y});
		ClVec2 b = screen(c, (ClVec2){m.x + reach * t.x, m.y + reach * t.y});
		ClVec2 nd = {n.x, -n.y}; /* the normal in screen coordinates */
		draw_solid_side(c, a, b, nd, c->fg);
		gboolean selected = (c->in->selection.kind == CL_PICK_WALL || c->in->selection.kind == CL_PICK_WALL_ROTATE) &&
							c->in->selection.index == i;
		set_rgb(cr, c->fg, 0.85);
		cairo_set_line_width(cr, selected ? 3 : 2);
		cairo_move_to(cr, a.x, a.y);
		cairo_line_to(cr, b.x, b.y);
		cairo_stroke(cr);
		ClVec2 anchor = screen(c, cl_wall_anchor(scene, c->view, i));
		if (c->in->handles) {
			/* the anchor (drag the line to move) and the rotation knob */
			ClVec2 knob = screen(c, cl_wall_rotate_handle(scene, c->view, i));
			cairo_set_line_width(cr, 1.5);
			set_rgb(cr, c->bg, 1);
			cairo_arc(cr, knob.x, knob.y, 5, 0, 2 * G_PI);
			cairo_fill_preserve(cr);
			set_rgb(cr, c->fg, selected ? 0.9 : 0.5);
			cairo_stroke(cr);
			cairo_rectangle(cr, anchor.x - 4, anchor.y - 4, 8, 8);
			cairo_stroke(cr);
		}
		char label[CL_ID_MAX + 64];
		g_snprintf(label, sizeof label, "<span size='small'>%s</span>", w->id);
		set_rgb(cr, c->fg, 0.6);
		text(c, anchor.x + 8 + 14 * nd.x, anchor.y + 14 * nd.y, label, 0, 1);
	}
}

static void draw_arrow(cairo_t *cr, ClVec2 from, ClVec2 to, double head)
{
	double dx = to.x - from.x, dy = to.y - from.y, length = hypot(dx, dy);
	if (length < 1)
		return;
	dx /= length, dy /= length;
	cairo_move_to(cr, from.x, from.y);
	cairo_line_to(cr, to.x - dx * head * 0.8, to.y - dy * head * 0.8);
	cairo_stroke(cr);
	cairo_move_to(cr, to.x, to.y);
	cairo_line_to(cr, to.x - dx * head - dy * head * 0.45, to.y - dy * head + dx * head * 0.45);
	cairo_line_to(cr, to.x - dx * head + dy * head * 0.45, to.y - dy * head - dx * head * 0.45);
	cairo_close_path(cr);
	cairo_fill(cr);
}

static void trajectory_path(Ctx *c, const ClRunBackend *r, int ball, int from, int to)
{
	const ClScene *scene = c->in->result_scene;
	int ns = cl_state_size(scene);
	/* on screen, points closer than half a pixel to the last one drawn are
	 * left out (a resting ball's two thousand): the same picture, a tenth
	 * of the work; exports draw every point */
	double skip = c->in->handles ? 0.5 : 0.0;
	int last = MIN(to, r->steps_done);
	gboolean pen = FALSE;
	ClVec2 drawn = {0, 0};
	for (int n = from; n <= last; n++) {
		const double *s = r->states + (gsize)n * (gsize)ns + CL_BALL_STATE * ball;
		if (!isfinite(s[0]) || !isfinite(s[1]) || fabs(s[0]) > 1e6 || fabs(s[1]) > 1e6) {
			pen = FALSE;
			continue;
		}
		ClVec2 p = screen(c, (ClVec2){s[0], s[1]});
		if (pen && n < last && fabs(p.x - drawn.x) < skip && fabs(p.y - drawn.y) < skip)
			continue;
		drawn = p;
		if (pen)
			cairo_line_to(c->cr, p.x, p.y);
		else
			cairo_move_to(c->cr, p.x, p.y);
		pen = TRUE;
	}
}

/* A crowd's trajectories get thinner as the view zooms out (a ball a few
 * pixels wide gets a line a fraction of that), so a rack stays readable. */
static double trajectory_thinning(const Ctx *c)
{
	const ClScene *scene = c->in->scene;
	if (scene->ball_count <= CROWDED_BALLS)
		return 1.0;
	double radius = 0;
	for (int i = 0; i < scene->ball_count; i++)
		radius += scene->balls[i].radius;
	double pixels = radius / scene->ball_count * c->view->scale;
	return fmin(1.0, fmax(0.3, pixels / 8));
}

static void draw_trajectories(Ctx *c)
{
	cairo_t *cr = c->cr;
	ClRunData *result = c->in->result;
	const ClScene *scene = c->in->result_scene;
	double alpha = c->in->result_stale ? 0.35 : 1.0;
	double thin = trajectory_thinning(c);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
	/* exact first and wide, so every backend is read against it */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < result->backend_count; i++) {
			const ClRunBackend *r = &result->backends[i];
			if (!c->in->backend_visible[r->backend] || cl_backend_is_reference(r->backend) != (pass == 0))
				continue;
			ClPlotColor color = cl_backend_color(r->backend, (c->in->dark) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
			double rgb[3] = {color.r, color.g, color.b};
			for (int ball = 0; ball < scene->ball_count; ball++) {
				trajectory_path(c, r, ball, 0, r->steps_done);
				if (pass == 0) {
					set_rgb(cr, rgb, 0.14 * alpha);
					cairo_set_line_width(cr, 7 * thin);
					cairo_stroke_preserve(cr);
					set_rgb(cr, rgb, 0.9 * alpha);
					cairo_set_line_width(cr, 1.4 * thin);
					double dash[] = {6, 3};
					cairo_set_dash(cr, dash, 2, 0);
					cairo_stroke(cr);
					cairo_set_dash(cr, NULL, 0, 0);
				} else {
					set_rgb(cr, rgb, 0.85 * alpha);
					cairo_set_line_width(cr, 1.6 * thin);
					cairo_stroke(cr);
				}
			}
			/* contacts where they happen: a ring at the ball's position */
			int ns = cl_state_size(scene);
			for (int e = 0; e < r->event_count; e++) {
				const ClContactEvent *ev = &r->events[e];
				ClVec2 p;
				if (!cl_run_data_position(result, scene, i, ev->ball, ev->time, &p.x, &p.y)) {
					const double *s =
						r->states + (gsize)MIN(ev->step + 1, r->steps_done) * (gsize)ns + CL_BALL_STATE * ev->ball;
					p = (ClVec2){s[0], s[1]};
				}
				ClVec2 q = screen(c, p);
				set_rgb(cr, rgb, alpha);
				cairo_set_line_width(cr, 1.5);
				cairo_move_to(cr, q.x - 4, q.y - 4);
				cairo_line_to(cr, q.x + 4, q.y + 4);
				cairo_move_to(cr, q.x + 4, q.y - 4);
				cairo_line_to(cr, q.x - 4, q.y + 4);
				cairo_stroke(cr);
			}
		}
	}
}

static void draw_playback(Ctx *c)
{
	cairo_t *cr = c->cr;
	ClRunData *result = c->in->result;
	const ClScene *scene = c->in->result_scene;
	double dt = cl_scene_dt(scene), t = c->in->time;
	for (int i = 0; i < result->backend_count; i++) {
		const ClRunBackend *r = &result->backends[i];
		if (!c->in->backend_visible[r->backend])
			continue;
		ClPlotColor color = cl_backend_color(r->backend, (c->in->dark) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
		double rgb[3] = {color.r, color.g, color.b};
		for (int ball = 0; ball < scene->ball_count; ball++) {
			ClVec2 p;
			if (!cl_run_data_position(result, scene, i, ball, t, &p.x, &p.y))
				continue;
			int to = (int)floor(t / dt);
			int from = MAX(0, (int)floor((t - c->in->trail) / dt));
			trajectory_path(c, r, ball, from, to);
			ClVec2 q = screen(c, p);
			cairo_line_to(cr, q.x, q.y);
			set_rgb(cr, rgb, 0.9);
			cairo_set_line_width(cr, 3.5);
			cairo_stroke(cr);
			double radius = scene->balls[ball].radius * c->view->scale;
			cairo_arc(cr, q.x, q.y, radius, 0, 2 * G_PI);
			/* faint fills: ten backends' balls on one spot must stay readable */
			set_rgb(cr, rgb, cl_backend_is_reference(r->backend) ? 0.12 : 0.05);
			cairo_fill_preserve(cr);
			set_rgb(cr, rgb, 0.95);
			cairo_set_line_width(cr, cl_backend_is_reference(r->backend) ? 2.2 : 1.4);
			cairo_stroke(cr);
		}
	}
}

static void draw_targets(Ctx *c)
{
	cairo_t *cr = c->cr;
	const ClScene *scene = c->in->scene;
	for (int i = 0; i < scene->loss_count; i++) {
		const ClLossTerm *t = &scene->loss[i];
		if (t->type == CL_LOSS_TRAJECTORY_MATCH) {
			/* the observations, small dots in the target's colour */
			set_rgb(cr, c->target, 0.85);
			for (int j = 0; j < t->observation_count; j++) {
				ClVec2 q = screen(c, (ClVec2){t->observations[3 * j + 1], t->observations[3 * j + 2]});
				cairo_new_sub_path(cr);
				cairo_arc(cr, q.x, q.y, 2.5, 0, 2 * G_PI);
			}
			cairo_fill(cr);
			continue;
		}
		if (t->type != CL_LOSS_FINAL_POSITION)
			continue;
		ClVec2 q = screen(c, t->target);
		gboolean selected = c->in->selection.kind == CL_PICK_TARGET && c->in->selection.index == i;
		set_rgb(cr, c->target, 0.95);
		cairo_set_line_width(cr, selected ? 2.5 : 1.5);
		cairo_arc(cr, q.x, q.y, 9, 0, 2 * G_PI);
		cairo_stroke(cr);
		cairo_arc(cr, q.x, q.y, 4, 0, 2 * G_PI);
		cairo_stroke(cr);
		cairo_move_to(cr, q.x - 14, q.y);
		cairo_line_to(cr, q.x + 14, q.y);
		cairo_move_to(cr, q.x, q.y - 14);
		cairo_line_to(cr, q.x, q.y + 14);
		cairo_stroke(cr);
		char label[CL_ID_MAX + 64];
		const char *ball = t->ball >= 0 && t->ball < scene->ball_count ? scene->balls[t->ball].id : "?";
		g_snprintf(label, sizeof label, "<span size='small' foreground='%s'>target of %s</span>", c->target_hex, ball);
		text(c, q.x + 12, q.y - 12, label, 0, 1);
	}
}

static void draw_balls(Ctx *c)
{
	cairo_t *cr = c->cr;
	const ClScene *scene = c->in->scene;
	/* once playback has moved on, the authored balls become ghosts */
	gboolean ghost = c->in->result && c->in->time > 0;
	for (int i = 0; i < scene->ball_count; i++) {
		const ClBall *b = &scene->balls[i];
		ClVec2 q = screen(c, b->position);
		double radius = b->radius * c->view->scale;
		gboolean selected = (c->in->selection.kind == CL_PICK_BALL || c->in->selection.kind == CL_PICK_VELOCITY) &&
							c->in->selection.index == i;
		gboolean hovered = c->in->hover.index == i &&
						   (c->in->hover.kind == CL_PICK_BALL || c->in->hover.kind == CL_PICK_VELOCITY);
		cairo_arc(cr, q.x, q.y, radius, 0, 2 * G_PI);
		set_rgb(cr, c->muted, ghost ? 0.25 : 0.8);
		cairo_fill_preserve(cr);
		set_rgb(cr, c->fg, ghost ? 0.4 : 0.9);
		cairo_set_line_width(cr, selected ? 3 : hovered ? 2 : 1.2);
		if (ghost) {
			double dash[] = {3, 3};
			cairo_set_dash(cr, dash, 2, 0);
		}
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		if (b->control_kind != CL_CONTROL_NONE) {
			/* an actuated ball: a small plus in its centre */
			cairo_move_to(cr, q.x - 4, q.y);
			cairo_line_to(cr, q.x + 4, q.y);
			cairo_move_to(cr, q.x, q.y - 4);
			cairo_line_to(cr, q.x, q.y + 4);
			cairo_stroke(cr);
		}
		/* initial velocity: the arrow, or a knob to pull one out of a resting ball;
		 * in a crowd only the selected or hovered ball has its knob and labels */
		gboolean labelled = cl_ball_has_handles(scene, i, c->in->selection, c->in->hover);
		ClVec2 head = screen(c, cl_velocity_handle(scene, c->view, i));
		gboolean has_arrow =
			hypot(b->velocity.x, b->velocity.y) * CL_ARROW_SECONDS >= b->radius + 10.0 / c->view->scale;
		set_rgb(cr, c->arrow, ghost ? 0.55 : 1.0);
		cairo_set_line_width(cr, 2);
		if (has_arrow) {
			draw_arrow(cr, q, head, 10);
			if (labelled) {
				char label[96];
				g_snprintf(label, sizeof label, "<span size='small' foreground='%s'>v₀ = (%.3g, %.3g)</span>",
						   c->arrow_hex, b->velocity.x, b->velocity.y);
				text(c, head.x + 6, head.y, label, 0, 0.5);
			}
		} else if (labelled && c->in->handles) {
			cairo_arc(cr, head.x, head.y, 3.5, 0, 2 * G_PI);
			cairo_fill(cr);
		}
		if (!labelled)
			continue;
		char label[CL_ID_MAX + 64];
		g_snprintf(label, sizeof label, "<span size='small' weight='bold'>%s</span>", b->id);
		set_rgb(cr, c->fg, ghost ? 0.5 : 0.85);
		text(c, q.x, q.y + radius + 3, label, 0.5, 0);
	}
}

/* The legend's rows: every backend drawn, and those hidden from view
 * (struck through), in the run's order; the first row's top at LEGEND_Y. */
#define LEGEND_X 12.0
#define LEGEND_Y 12.0
#define LEGEND_ROW 18.0
#define LEGEND_WIDTH 210.0

static gboolean listed(const ClSceneRenderInput *in, int backend)
{
	return in->backend_visible[backend] || (in->backend_hidden && in->backend_hidden[backend]);
}

/* Rows per column: as many as fit above the scale bar, in as few columns
 * as that needs (a short canvas gets a wide legend, not one over the bar). */
static int legend_rows_per_column(const ClSceneRenderInput *in, int rows, int notes)
{
	int fit = (int)floor((in->view->height - LEGEND_Y - 48) / LEGEND_ROW) - notes;
	return MAX(1, MIN(rows, MAX(fit, (rows + 2) / 3)));
}

static int legend_count(const ClSceneRenderInput *in)
{
	int rows = 0;
	for (int i = 0; in->result && i < in->result->backend_count; i++)
		rows += listed(in, in->result->backends[i].backend);
	return rows;
}

static int legend_notes(const ClSceneRenderInput *in)
{
	return (in->result_stale ? 1 : 0) + (in->handles && in->backend_hidden ? 1 : 0);
}

#define LEGEND_COLUMN 160.0

int cl_scene_legend_pick(const ClSceneRenderInput *in, double x, double y)
{
	int rows = legend_count(in);
	if (!rows)
		return -1;
	int per = legend_rows_per_column(in, rows, legend_notes(in)), columns = (rows + per - 1) / per;
	double width = columns > 1 ? columns * LEGEND_COLUMN : LEGEND_WIDTH;
	if (x < LEGEND_X - 6 || x > LEGEND_X - 6 + width || y < LEGEND_Y)
		return -1;
	int row = (int)floor((y - LEGEND_Y) / LEGEND_ROW), column = columns > 1 ? (int)((x - LEGEND_X + 6) / LEGEND_COLUMN) : 0;
	if (row >= per)
		return -1;
	for (int i = 0, k = 0; i < in->result->backend_count; i++) {
		int b = in->result->backends[i].backend;
		if (listed(in, b) && k++ == column * per + row)
			return b;
	}
	return -1;
}

static void draw_legend(Ctx *c)
{
	cairo_t *cr = c->cr;
	ClRunData *result = c->in->result;
	double x = LEGEND_X, y = LEGEND_Y, row = LEGEND_ROW;
	int rows = legend_count(c->in);
	if (!rows)
		return;
	int notes = legend_notes(c->in), per = legend_rows_per_column(c->in, rows, notes);
	int columns = (rows + per - 1) / per;
	double width = columns > 1 ? columns * LEGEND_COLUMN : LEGEND_WIDTH;
	cairo_rectangle(cr, x - 6, y - 6, width, per * row + 8 + notes * row);
	set_rgb(cr, c->bg, 0.9);
	cairo_fill_preserve(cr);
	set_rgb(cr, c->fg, 0.3);
	cairo_set_line_width(cr, 1);
	cairo_stroke(cr);
	for (int i = 0, k = 0; i < result->backend_count; i++) {
		const ClRunBackend *r = &result->backends[i];
		if (!listed(c->in, r->backend))
			continue;
		x = LEGEND_X + (k / per) * LEGEND_COLUMN;
		y = LEGEND_Y + (k % per) * row;
		k++;
		gboolean shown = c->in->backend_visible[r->backend];
		ClPlotColor color = cl_backend_color(r->backend, (c->in->dark) ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT);
		double rgb[3] = {color.r, color.g, color.b};
		set_rgb(cr, shown ? rgb : c->fg, shown ? 1 : 0.35);
		cairo_set_line_width(cr, cl_backend_is_reference(r->backend) ? 2 : 2.5);
		if (cl_backend_is_reference(r->backend)) {
			double dash[] = {6, 3};
			cairo_set_dash(cr, dash, 2, 0);
		}
		cairo_move_to(cr, x, y + row / 2);
		cairo_line_to(cr, x + 22, y + row / 2);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		char label[200];
		gboolean ok = r->row.status.code == CL_STATUS_OK;
		g_snprintf(label, sizeof label, "<span size='small'%s>%s%s%s</span>%s",
				   shown ? "" : " strikethrough='true'", cl_backend_info(r->backend)->id, ok ? "" : " — ",
				   ok ? "" : cl_status_name(r->row.status.code), shown ? "" : "<span size='small'>  hidden</span>");
		set_rgb(cr, c->fg, shown && ok ? 0.92 : 0.72);
		text(c, x + 30, y + row / 2, label, 0, 0.5);
	}
	x = LEGEND_X;
	y = LEGEND_Y + per * row;
	set_rgb(cr, c->fg, 0.72);
	if (c->in->result_stale) {
		text(c, x, y + row / 2, "<span size='small' style='italic'>scene edited: results are stale</span>", 0, 0.5);
		y += row;
	}
	if (c->in->handles && c->in->backend_hidden)
		text(c, x, y + row / 2, "<span size='small'>click a backend to hide or show it</span>", 0, 0.5);
}

static void draw_scale_bar(Ctx *c)
{
	cairo_t *cr = c->cr;
	double step = cl_view_grid_step(c->view);
	double length = step * c->view->scale;
	double x = 16, y = c->view->height - 18;
	set_rgb(cr, c->fg, 0.85);
	cairo_set_line_width(cr, 2);
	cairo_move_to(cr, x, y - 4);
	cairo_line_to(cr, x, y);
	cairo_line_to(cr, x + length, y);
	cairo_line_to(cr, x + length, y - 4);
	cairo_stroke(cr);
	char value[32], label[64];
	format_length(step, value, sizeof value);
	g_snprintf(label, sizeof label, "<span size='small'>%s</span>", value);
	text(c, x + length / 2, y - 4, label, 0.5, 1);
	if (c->in->result && !c->in->in_figure) {
		g_snprintf(label, sizeof label, "<span size='small' font_features='tnum'>t = %.3f s</span>", c->in->time);
		text(c, c->view->width - 12, c->view->height - 10, label, 1, 1);
	}
}

static void theme_color(ClPlotColor background, ClPlotColor base, double rgb[3], char hex[8])
{
	ClPlotColor c = cl_plot_color_legible(base, background, CL_PLOT_LEGIBLE_CONTRAST);
	rgb[0] = c.r, rgb[1] = c.g, rgb[2] = c.b;
	g_snprintf(hex, 8, "#%02x%02x%02x", (int)lround(c.r * 255), (int)lround(c.g * 255), (int)lround(c.b * 255));
}

static void ctx_begin(Ctx *c, cairo_t *cr, const ClSceneRenderInput *in)
{
	*c = (Ctx){.cr = cr, .in = in, .view = in->view};
	ClPlotThemeKind theme = in->dark ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT;
	ClPlotColor background = cl_theme_background(theme);
	double fg = in->dark ? 0.92 : 0.1, muted = in->dark ? 0.35 : 0.82;
	c->fg[0] = c->fg[1] = c->fg[2] = fg;
	c->bg[0] = background.r, c->bg[1] = background.g, c->bg[2] = background.b;
	c->muted[0] = c->muted[1] = c->muted[2] = muted;
	static const ClPlotColor arrow = {0.10, 0.37, 0.71, 1}, target = {0.75, 0.11, 0.16, 1};
	theme_color(background, arrow, c->arrow, c->arrow_hex);
	theme_color(background, target, c->target, c->target_hex);
	c->layout = pango_cairo_create_layout(cr);
	PangoFontDescription *font = pango_font_description_from_string("Sans 10");
	pango_layout_set_font_description(c->layout, font);
	pango_font_description_free(font);
	cairo_save(cr);
	cairo_rectangle(cr, 0, 0, in->view->width, in->view->height);
	cairo_clip(cr);
}

static void ctx_end(Ctx *c)
{
	cairo_restore(c->cr);
	g_object_unref(c->layout);
}

static gboolean has_trajectories(const ClSceneRenderInput *in)
{
	return in->result && in->result_scene->ball_count == in->scene->ball_count;
}

void cl_scene_render_under(cairo_t *cr, const ClSceneRenderInput *in)
{
	Ctx c;
	ctx_begin(&c, cr, in);
	set_rgb(cr, c.bg, 1);
	cairo_paint(cr);
	draw_grid(&c);
	draw_walls(&c);
	if (has_trajectories(in))
		draw_trajectories(&c);
	draw_targets(&c);
	draw_balls(&c);
	ctx_end(&c);
}

void cl_scene_render_over(cairo_t *cr, const ClSceneRenderInput *in)
{
	Ctx c;
	ctx_begin(&c, cr, in);
	if (has_trajectories(in))
		draw_playback(&c);
	if (in->result && !in->in_figure)
		draw_legend(&c);
	draw_scale_bar(&c);
	ctx_end(&c);
}

void cl_scene_render(cairo_t *cr, const ClSceneRenderInput *in)
{
	cl_scene_render_under(cr, in);
	cl_scene_render_over(cr, in);
}

/* What the under layer was drawn from; time is left out but for whether
 * the authored balls are ghosts. */
typedef struct {
	guint64 revision;
	double pixels;
	ClView view;
	const ClScene *scene, *result_scene;
	ClRunData *result;
	gboolean stale, dark, handles, in_figure, ghost;
	ClPick selection, hover;
} LayerKey;

struct ClSceneLayer {
	cairo_surface_t *surface;
	LayerKey key;
	gboolean *visible, *hidden; /* cl_backend_count() entries each */
};

ClSceneLayer *cl_scene_layer_new(void)
{
	ClSceneLayer *layer = g_new0(ClSceneLayer, 1);
	layer->visible = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	layer->hidden = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	return layer;
}

void cl_scene_layer_free(ClSceneLayer *layer)
{
	if (!layer)
		return;
	g_clear_pointer(&layer->surface, cairo_surface_destroy);
	g_free(layer->visible);
	g_free(layer->hidden);
	g_free(layer);
}

static gboolean same_view(const ClView *a, const ClView *b)
{
	return a->center_x == b->center_x && a->center_y == b->center_y && a->scale == b->scale &&
		   a->width == b->width && a->height == b->height;
}

static gboolean same_key(const LayerKey *a, const LayerKey *b)
{
	return a->revision == b->revision && a->pixels == b->pixels && same_view(&a->view, &b->view) &&
		   a->scene == b->scene && a->result_scene == b->result_scene && a->result == b->result &&
		   a->stale == b->stale && a->dark == b->dark && a->handles == b->handles && a->in_figure == b->in_figure &&
		   a->ghost == b->ghost && a->selection.kind == b->selection.kind && a->selection.index == b->selection.index &&
		   a->hover.kind == b->hover.kind && a->hover.index == b->hover.index;
}

static gboolean same_flags(const gboolean *kept, const gboolean *flags)
{
	for (int b = 0; b < cl_backend_count(); b++)
		if (kept[b] != (flags && flags[b]))
			return FALSE;
	return TRUE;
}

static void keep_flags(gboolean *kept, const gboolean *flags)
{
	for (int b = 0; b < cl_backend_count(); b++)
		kept[b] = flags && flags[b];
}

void cl_scene_layer_render(ClSceneLayer *layer, cairo_t *cr, const ClSceneRenderInput *in, double pixels,
						   guint64 revision)
{
	LayerKey key = {
		.revision = revision, .pixels = pixels, .view = *in->view, .scene = in->scene,
		.result_scene = in->result_scene, .result = in->result, .stale = in->result_stale, .dark = in->dark,
		.handles = in->handles, .in_figure = in->in_figure, .ghost = in->result && in->time > 0,
		.selection = in->selection, .hover = in->hover,
	};
	if (!layer->surface || !same_key(&layer->key, &key) || !same_flags(layer->visible, in->backend_visible) ||
		!same_flags(layer->hidden, in->backend_hidden)) {
		g_clear_pointer(&layer->surface, cairo_surface_destroy);
		int w = (int)ceil(in->view->width * pixels), h = (int)ceil(in->view->height * pixels);
		layer->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, MAX(w, 1), MAX(h, 1));
		cairo_surface_set_device_scale(layer->surface, pixels, pixels);
		cairo_t *under = cairo_create(layer->surface);
		cl_scene_render_under(under, in);
		cairo_destroy(under);
		cairo_surface_flush(layer->surface);
		layer->key = key;
		keep_flags(layer->visible, in->backend_visible);
		keep_flags(layer->hidden, in->backend_hidden);
	}
	cairo_save(cr);
	cairo_rectangle(cr, 0, 0, in->view->width, in->view->height);
	cairo_clip(cr);
	cairo_set_source_surface(cr, layer->surface, 0, 0);
	cairo_paint(cr);
	cairo_restore(cr);
	cl_scene_render_over(cr, in);
}

void cl_scene_draw_wall_preview(cairo_t *cr, const ClSceneRenderInput *in, ClVec2 from, ClVec2 to, ClVec2 normal,
								bool refused)
{
	Ctx c = {.cr = cr, .in = in, .view = in->view};
	ClPlotThemeKind theme = in->dark ? CL_PLOT_THEME_DARK : CL_PLOT_THEME_LIGHT;
	static const ClPlotColor ok_color = {0.10, 0.37, 0.71, 1}, refused_color = {0.75, 0.11, 0.16, 1};
	char hex[8];
	double ink[3];
	theme_color(cl_theme_background(theme), refused ? refused_color : ok_color, ink, hex);
	ClVec2 a = cl_view_to_screen(in->view, from), b = cl_view_to_screen(in->view, to);
	ClVec2 nd = {normal.x, -normal.y};
	double length = hypot(b.x - a.x, b.y - a.y);
	if (length < 1)
		return;
	cairo_save(cr);
	/* the whole line faintly (a wall is a half-plane), the drawn part solid */
	ClVec2 t = {(b.x - a.x) / length, (b.y - a.y) / length};
	double reach = hypot(in->view->width, in->view->height);
	set_rgb(cr, ink, 0.35);
	cairo_set_line_width(cr, 1);
	double dash[] = {4, 4};
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, a.x - reach * t.x, a.y - reach * t.y);
	cairo_line_to(cr, b.x + reach * t.x, b.y + reach * t.y);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	draw_solid_side(&c, a, b, nd, ink);
	set_rgb(cr, ink, 1);
	cairo_set_line_width(cr, 3);
	cairo_move_to(cr, a.x, a.y);
	cairo_line_to(cr, b.x, b.y);
	cairo_stroke(cr);
	cairo_restore(cr);
}

/* ------------------------------------------------------------ figures */

ClRunDrawing *cl_run_drawing_new(const ClScene *scene, ClRunData *data)
{
	ClRunDrawing *drawing = g_new0(ClRunDrawing, 1);
	drawing->scene = cl_scene_copy(scene);
	drawing->data = cl_run_data_ref(data);
	drawing->visible = g_new0(gboolean, (gsize)MAX(cl_backend_count(), 1));
	for (int i = 0; i < data->backend_count; i++)
		drawing->visible[data->backends[i].backend] = TRUE;
	return drawing;
}

void cl_run_drawing_free(gpointer p)
{
	ClRunDrawing *drawing = p;
	cl_scene_free(drawing->scene);
	cl_run_data_unref(drawing->data);
	g_free(drawing->visible);
	g_free(drawing);
}

/* The least width and height of a Run drawing in its own pixels. */
#define MIN_DRAWING_PIXELS 240.0

double cl_run_drawing_scale(cairo_t *cr, double width, double height, double font_size)
{
	/* a small panel shrinks it further, to leave the drawing room (never below 7-point text) */
	double k = fmax(10.0 * 96.0 / 72.0 / (font_size + 1), fmin(MIN_DRAWING_PIXELS / fmin(width, height), 13.3 / 7.0));
	cairo_scale(cr, 1 / k, 1 / k);
	return k;
}

static void draw_scene_panel(cairo_t *cr, double width, double height, ClPlotThemeKind theme, double font_size,
							 gpointer p)
{
	ClRunDrawing *drawing = p;
	double k = cl_run_drawing_scale(cr, width, height, font_size);
	ClView view = {.scale = 100, .width = width * k, .height = height * k};
	cl_view_fit_scene(&view, drawing->scene, drawing->scene, drawing->data, drawing->visible, 24);
	ClSceneRenderInput in = {
		.scene = drawing->scene,
		.result_scene = drawing->scene,
		.result = drawing->data,
		.view = &view,
		.time = drawing->scene->duration,
		.trail = 0.15,
		.selection = {CL_PICK_NONE, -1},
		.hover = {CL_PICK_NONE, -1},
		.backend_visible = drawing->visible,
		.dark = theme == CL_PLOT_THEME_DARK,
		.in_figure = TRUE,
	};
	cl_scene_render(cr, &in);
	/* framed: scenes side by side must not run into each other */
	double fg = in.dark ? 0.92 : 0.1;
	cairo_set_source_rgba(cr, fg, fg, fg, 0.6);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, 0.5, 0.5, view.width - 1, view.height - 1);
	cairo_stroke(cr);
}

void cl_scene_panel_set(ClPlotPanel *panel, const ClScene *scene, ClRunData *data, gboolean legend)
{
	for (int i = 0; legend && i < data->backend_count; i++) {
		const ClRunBackend *r = &data->backends[i];
		/* as the trajectories are drawn: the reference dashed, the others solid */
		gboolean ok = r->row.status.code == CL_STATUS_OK;
		g_autofree char *label = g_markup_printf_escaped("%s%s%s", cl_backend_info(r->backend)->id, ok ? "" : " — ",
														 ok ? "" : cl_status_name(r->row.status.code));
		ClPlotSeries *entry = cl_plot_panel_add_legend_entry(panel, label);
		cl_plot_series_set_color(entry, cl_backend_plot_color(r->backend));
		cl_plot_series_set_width(entry, 1.5);
		cl_plot_series_set_dash(entry, cl_backend_is_reference(r->backend) ? CL_PLOT_DASH_DASHED : CL_PLOT_DASH_SOLID);
	}
	cl_plot_panel_set_drawing(panel, draw_scene_panel, cl_run_drawing_new(scene, data), cl_run_drawing_free);
}

ClPlotFigure *cl_scene_figure_new(const ClScene *scene, ClRunData *data)
{
	ClPlotFigure *figure = cl_plot_figure_new(1, 1);
	g_autofree char *title = g_markup_escape_text(scene->name, -1);
	cl_plot_figure_set_title(figure, title);
	cl_plot_figure_set_legend(figure, CL_PLOT_LEGEND_BELOW);
	cl_scene_panel_set(cl_plot_figure_panel(figure, 0, 0), scene, data, TRUE);
	return figure;
}
