/* The contacts a run made, in the words every view and lesson uses. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

/* Room for a contacts text in a fixed-size record (the learning traces). */
#define CL_CONTACTS_TEXT_MAX 192

/* The contacts of a run's events, in order, consecutive repeats merged (a
 * time-stepping backend reports a contact at every step it lasts):
 * "ground then wall", "ball1–ball2 then wall", or "nothing". */
char *cl_contacts_text(const ClScene *scene, const ClContactEvent *events, int count);

/* The same into buffer, cut with "…" when it does not fit. */
void cl_contacts_text_into(const ClScene *scene, const ClContactEvent *events, int count, char *buffer, gsize size);

/* How many different walls the events touch (Task 2's modes: both walls,
 * or the ground only). */
int cl_contacts_walls(const ClScene *scene, const ClContactEvent *events, int count);
