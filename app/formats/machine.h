/* What the application takes from the machine: the memory budget of its
 * runs, and input files read whole but only as large as a scene or lesson
 * can sensibly be. */
#pragma once

#include <glib.h>

/* Scene and lesson files larger than this are refused before they are
 * read (the largest shipped one is 11 KB; a control sequence of a million
 * steps takes about 35 MB). */
#define CL_INPUT_FILE_MAX ((gsize)64 << 20)

/* The memory one run may hold: ClScene.memory_budget of every scene the
 * application loads. CONTACTLAB_MEMORY_LIMIT ("512M", "4G") when set, else
 * a quarter of the machine's physical memory, and at most half of the
 * process's address-space or data limit (ulimit -v, -d) and a quarter of
 * its cgroup's memory.max, so that a limited process gets a clean
 * memory-limit status before the system refuses it. At least 64 MiB. */
gsize cl_memory_budget(void);
/* Sets it for the rest of the process (the CLI's --memory-limit). */
void cl_memory_budget_set(gsize bytes);
/* Where the budget came from, for messages: "--memory-limit",
 * "CONTACTLAB_MEMORY_LIMIT" or "a quarter of this machine's memory". */
const char *cl_memory_budget_origin(void);

/* "4G", "512M", "64k", "1.5G", "1000000": bytes in binary units (K = 1024)
 * and at least 1 MiB; FALSE for anything else. */
gboolean cl_memory_size_parse(const char *text, gsize *bytes);

/* Reads a whole input file: a regular file or a FIFO (a device, a folder
 * or a socket is refused before it is opened), at most max bytes, with a
 * NUL after them. FALSE and "PATH: cannot read: REASON" in domain/code. */
gboolean cl_input_file_read(const char *path, gsize max, char **data, gsize *length, GQuark domain, int code,
							GError **error);
