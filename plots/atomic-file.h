/* Replacing a file whole or not at all, also when the process is killed in
 * the middle (kill -9, a crash, the session ending).
 *
 * The data go into a file without a name (Linux O_TMPFILE) in the target's
 * folder; only once complete is it given the target's name: directly when
 * there is no file there yet, else a hidden ".NAME.XXXXXX.tmp" renamed over
 * the target at once. A kill before that leaves nothing (the kernel frees
 * the unnamed file), a kill in the moment between the link and the rename
 * leaves that hidden .tmp name. Where the folder's file system has no
 * O_TMPFILE, the data are written into the hidden .tmp file itself.
 * Figures (plots/export.c) and every text file the app writes use this. */
#pragma once

#include <glib.h>

typedef struct ClAtomicFile ClAtomicFile;

/* Opens the new contents of path; NULL with error (G_FILE_ERROR) when the
 * folder cannot take a file. */
ClAtomicFile *cl_atomic_file_new(const char *path, GError **error);
/* Appends data; FALSE with error on a failed write. */
gboolean cl_atomic_file_write(ClAtomicFile *file, const void *data, gsize length, GError **error);
/* Puts the complete file in place of the old one (mode 0644 less the
 * umask); frees file. FALSE with error when it could not, the old file
 * untouched. */
gboolean cl_atomic_file_commit(ClAtomicFile *file, GError **error);
/* Drops the new contents; frees file. */
void cl_atomic_file_abort(ClAtomicFile *file);

/* path := data, through the above. */
gboolean cl_atomic_file_replace(const char *path, const void *data, gsize length, GError **error);

/* Removes the hidden .tmp files a killed writer of path left beside it
 * (for a folder only this program writes to, e.g. its state folder).
 * Returns how many. */
int cl_atomic_file_clean(const char *path);
