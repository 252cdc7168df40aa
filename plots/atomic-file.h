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
 * A file that replaces another takes its permissions (and owner, where the
 * process may give it), so that an export over a private file stays private.
 * Figures (plots/export.c) and every text file the app writes use this.
 *
 * A batch makes several files appear together: while it is open, a commit
 * only completes its file (written, on the disk), and at the batch's end
 * either all of them are put in place or, when the batch is dropped or any
 * of its files failed (could not be opened, written or completed, or was
 * aborted by its writer), none: every old file stays as it was. The CLI
 * opens one around each command. There is one batch per process, taking
 * the files opened from any thread while it is open. */
#pragma once

#include <glib.h>

typedef struct ClAtomicFile ClAtomicFile;

/* Opens the new contents of path; NULL with error (G_FILE_ERROR) when the
 * folder cannot take a file. */
ClAtomicFile *cl_atomic_file_new(const char *path, GError **error);
/* Appends data; FALSE with error on a failed write. */
gboolean cl_atomic_file_write(ClAtomicFile *file, const void *data, gsize length, GError **error);
/* Puts the complete file in place of the old one (a new one gets mode 0644
 * less the umask), or hands it to the open batch; frees file. FALSE with
 * error when it could not, the old file untouched. */
gboolean cl_atomic_file_commit(ClAtomicFile *file, GError **error);
/* Drops the new contents; frees file. */
void cl_atomic_file_abort(ClAtomicFile *file);

/* Opens the batch of the process. */
void cl_atomic_batch_begin(void);
/* Whether a file of the open batch failed already. */
gboolean cl_atomic_batch_failed(void);
/* Ends the batch: with keep and no file failed, puts all its files in
 * place (TRUE; FALSE with error when one could not be, the later ones then
 * dropped); else drops them all (FALSE, error unset). */
gboolean cl_atomic_batch_end(gboolean keep, GError **error);
/* For a process about to _exit on a signal: removes the hidden temporary
 * names of the batch's files and holds the batch, so that nothing of it
 * appears. Frees nothing (the files may be in use on other threads). */
void cl_atomic_batch_interrupt(void);

/* path := data, through the above. */
gboolean cl_atomic_file_replace(const char *path, const void *data, gsize length, GError **error);

/* Removes the hidden .tmp files a killed writer of path left beside it
 * (for a folder only this program writes to, e.g. its state folder).
 * Returns how many. */
int cl_atomic_file_clean(const char *path);
