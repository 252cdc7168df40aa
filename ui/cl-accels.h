/* The application's keyboard accelerators, as data (no GTK): ClApplication
 * sets them, and the shortcuts window (resources/gtk/help-overlay.ui) shows
 * each by its action's name, so GTK displays the very keys set here;
 * tests/test-shortcuts.c checks that the two name the same actions. */
#pragma once

typedef struct {
	const char *action;     /* detailed: "win.save-as('')" */
	const char *accels[3]; /* NULL-terminated */
} ClAccel;

extern const ClAccel cl_accels[];
extern const unsigned cl_accel_count;
