#include "contacts.h"

#include <string.h>

static const char *other_name(const ClScene *scene, int other)
{
	return other >= 0 ? scene->balls[other].id : scene->walls[-1 - other].id;
}

char *cl_contacts_text(const ClScene *scene, const ClContactEvent *events, int count)
{
	GString *out = g_string_new(NULL);
	int last_ball = -1, last_other = 0;
	for (int i = 0; i < count; i++) {
		/* a ball pair is one contact whichever ball reports it */
		int ball = events[i].ball, other = events[i].other;
		if (other >= 0 && other < ball) {
			other = ball;
			ball = events[i].other;
		}
		if (ball == last_ball && other == last_other)
			continue;
		last_ball = ball;
		last_other = other;
		if (out->len)
			g_string_append(out, " then ");
		if (scene->ball_count > 1)
			g_string_append_printf(out, "%s–", scene->balls[ball].id);
		g_string_append(out, other_name(scene, other));
	}
	if (!out->len)
		g_string_append(out, "nothing");
	return g_string_free(out, FALSE);
}

void cl_contacts_text_into(const ClScene *scene, const ClContactEvent *events, int count, char *buffer, gsize size)
{
	g_autofree char *text = cl_contacts_text(scene, events, count);
	static const char ellipsis[] = "…";
	if (g_strlcpy(buffer, text, size) < size || size < sizeof ellipsis)
		return;
	/* cut at a character boundary, then mark the cut */
	gsize keep = size - sizeof ellipsis;
	const char *end = g_utf8_find_prev_char(buffer, buffer + keep + 1);
	keep = end ? (gsize)(end - buffer) : 0;
	memcpy(buffer + keep, ellipsis, sizeof ellipsis);
}

int cl_contacts_walls(const ClScene *scene, const ClContactEvent *events, int count)
{
	g_autofree gboolean *touched = g_new0(gboolean, (gsize)MAX(scene->wall_count, 1));
	int walls = 0;
	for (int i = 0; i < count; i++)
		if (events[i].other < 0 && !touched[-1 - events[i].other]) {
			touched[-1 - events[i].other] = TRUE;
			walls++;
		}
	return walls;
}
