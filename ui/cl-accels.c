#include "cl-accels.h"

#include <stddef.h>

const ClAccel cl_accels[] = {
	{"app.quit", {"<Control>q", NULL}},
	{"app.preferences", {"<Control>comma", NULL}},
	{"app.open-file('')", {"<Control>o", NULL}},
	{"win.save", {"<Control>s", NULL}},
	{"win.save-as('')", {"<Control><Shift>s", NULL}},
	{"win.run", {"<Control>r", "F5", NULL}},
	{"win.cancel", {"Escape", NULL}},
	{"win.undo", {"<Control>z", NULL}},
	{"win.redo", {"<Control><Shift>z", "<Control>y", NULL}},
	{"win.zoom-fit", {"<Control>0", NULL}},
	{"win.zoom-in", {"<Control>plus", "<Control>equal", NULL}},
	{"win.zoom-out", {"<Control>minus", NULL}},
	{"win.close", {"<Control>w", NULL}},
	{"win.export-png", {"<Control>e", NULL}},
	{"win.lessons", {"F9", NULL}},
	{"win.lesson-next", {"<Alt>Right", NULL}},
	{"win.lesson-previous", {"<Alt>Left", NULL}},
	{"win.presentation", {"F11", NULL}},
	{"win.sidebar", {"F8", NULL}},
	{"win.help", {"F1", NULL}},
};

const unsigned cl_accel_count = sizeof cl_accels / sizeof cl_accels[0];
