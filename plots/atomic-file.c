#define _GNU_SOURCE /* O_TMPFILE */
#include "atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MODE 0644
#define TEMP_SUFFIX ".tmp"

struct ClAtomicFile {
	char *path;
	char *temp; /* the hidden file written into, without O_TMPFILE */
	int fd;
	gboolean batched; /* opened while a batch was open: put in place when it ends */
};

/* The batch of the process (see atomic-file.h): the files completed while
 * it is open, and whether any of its files failed. The lock also keeps an
 * interruption from cutting the batch's commit in two. */
static GMutex batch_lock;
static struct {
	gboolean open, failed;
	GPtrArray *files; /* ClAtomicFile, complete */
	GPtrArray *temps; /* every hidden .tmp name a batched file uses: removed on an interruption */
} batch;

/* Called with error set: a batched file failed, so the batch keeps nothing. */
static void batch_fail(const ClAtomicFile *f)
{
	if (!f->batched)
		return;
	g_mutex_lock(&batch_lock);
	batch.failed = TRUE;
	g_mutex_unlock(&batch_lock);
}

static gboolean set_error(GError **error, int err)
{
	g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(err), g_strerror(err));
	return FALSE;
}

/* dir/.BASE.RANDOM.tmp */
static char *temp_name(const char *path, const char *random)
{
	char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
	char *name = g_strdup_printf(".%s.%s" TEMP_SUFFIX, base, random);
	char *temp = g_build_filename(dir, name, NULL);
	g_free(dir);
	g_free(base);
	g_free(name);
	return temp;
}

static void file_free(ClAtomicFile *f)
{
	g_free(f->path);
	g_free(f->temp);
	g_free(f);
}

static void batch_open_file(ClAtomicFile *f)
{
	g_mutex_lock(&batch_lock);
	if (f->batched && batch.open && f->temp)
		g_ptr_array_add(batch.temps, g_strdup(f->temp));
	g_mutex_unlock(&batch_lock);
}

ClAtomicFile *cl_atomic_file_new(const char *path, GError **error)
{
	ClAtomicFile *f = g_new0(ClAtomicFile, 1);
	f->path = g_strdup(path);
	f->fd = -1;
	g_mutex_lock(&batch_lock);
	f->batched = batch.open;
	g_mutex_unlock(&batch_lock);
#ifdef O_TMPFILE
	/* the unnamed file is linked through /proc/self/fd */
	if (g_file_test("/proc/self/fd", G_FILE_TEST_IS_DIR)) {
		char *dir = g_path_get_dirname(path);
		f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, FILE_MODE);
		int err = errno;
		g_free(dir);
		/* EISDIR, EOPNOTSUPP: this kernel or file system has no O_TMPFILE */
		if (f->fd < 0 && err != EISDIR && err != EOPNOTSUPP && err != EINVAL) {
			set_error(error, err);
			batch_fail(f);
			file_free(f);
			return NULL;
		}
	}
#endif
	if (f->fd < 0) {
		f->temp = temp_name(path, "XXXXXX");
		f->fd = g_mkstemp_full(f->temp, O_WRONLY | O_CLOEXEC, FILE_MODE);
		if (f->fd < 0) {
			set_error(error, errno);
			batch_fail(f);
			file_free(f);
			return NULL;
		}
	}
	batch_open_file(f);
	return f;
}

gboolean cl_atomic_file_write(ClAtomicFile *f, const void *data, gsize length, GError **error)
{
	const char *p = data;
	while (length > 0) {
		gssize n = write(f->fd, p, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			batch_fail(f);
			return set_error(error, errno);
		}
		p += n;
		length -= (gsize)n;
	}
	return TRUE;
}

/* Names the complete unnamed file: path itself when nothing is there, else
 * a fresh hidden name renamed over path. Returns 0 or an errno. */
static int link_unnamed(ClAtomicFile *f)
{
	char proc[64];
	g_snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return errno;
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	for (int attempt = 0; attempt < 100; attempt++) {
		char random[7];
		for (int i = 0; i < 6; i++)
			random[i] = alphabet[g_random_int_range(0, (gint32)sizeof alphabet - 1)];
		random[6] = '\0';
		char *temp = temp_name(f->path, random);
		int err = linkat(AT_FDCWD, proc, AT_FDCWD, temp, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
		if (err == 0 && g_rename(temp, f->path) != 0) {
			err = errno;
			g_unlink(temp);
		}
		g_free(temp);
		if (err != EEXIST)
			return err;
	}
	return EEXIST;
}

/* The replaced file's permissions (and owner, where allowed) on the new one:
 * an export over a private file stays private. Returns 0 or an errno. */
static int keep_mode(ClAtomicFile *f, const GStatBuf *old)
{
	if (fchmod(f->fd, old->st_mode & 07777) != 0)
		return errno;
	if (fchown(f->fd, old->st_uid, old->st_gid) != 0 && errno != EPERM)
		return errno;
	return 0;
}

/* The data complete and on the disk where they replace a file; 0 or an errno. */
static int complete(ClAtomicFile *f)
{
	/* replacing data: the new ones reach the disk before the name moves,
	 * so that a power cut leaves one of the two files too */
	GStatBuf st;
	if (g_stat(f->path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int err = keep_mode(f, &st);
	if (!err && st.st_size > 0 && fsync(f->fd) != 0)
		err = errno;
	return err;
}

/* Gives the complete file its name and frees it; 0 or an errno. */
static int put_in_place(ClAtomicFile *f)
{
	int err = !f->temp ? link_unnamed(f) : g_rename(f->temp, f->path) == 0 ? 0 : errno;
	if (close(f->fd) != 0 && !err)
		err = errno;
	if (err && f->temp)
		g_unlink(f->temp);
	file_free(f);
	return err;
}

static void drop(ClAtomicFile *f)
{
	close(f->fd);
	if (f->temp)
		g_unlink(f->temp);
	file_free(f);
}

gboolean cl_atomic_file_commit(ClAtomicFile *f, GError **error)
{
	int err = complete(f);
	if (!err && f->batched) {
		g_mutex_lock(&batch_lock);
		gboolean open = batch.open;
		if (open)
			g_ptr_array_add(batch.files, f);
		g_mutex_unlock(&batch_lock);
		if (open)
			return TRUE;
		f->batched = FALSE; /* the batch ended meanwhile: on its own */
	}
	if (err) {
		batch_fail(f);
		drop(f);
		return set_error(error, err);
	}
	err = put_in_place(f);
	return err == 0 || set_error(error, err);
}

void cl_atomic_file_abort(ClAtomicFile *f)
{
	batch_fail(f);
	drop(f);
}

void cl_atomic_batch_begin(void)
{
	g_mutex_lock(&batch_lock);
	g_assert(!batch.open);
	batch.open = TRUE;
	batch.failed = FALSE;
	batch.files = g_ptr_array_new();
	batch.temps = g_ptr_array_new_with_free_func(g_free);
	g_mutex_unlock(&batch_lock);
}

gboolean cl_atomic_batch_failed(void)
{
	g_mutex_lock(&batch_lock);
	gboolean failed = batch.open && batch.failed;
	g_mutex_unlock(&batch_lock);
	return failed;
}

gboolean cl_atomic_batch_end(gboolean keep, GError **error)
{
	g_mutex_lock(&batch_lock);
	g_assert(batch.open);
	keep = keep && !batch.failed;
	int err = 0;
	char *failed_path = NULL;
	for (guint i = 0; i < batch.files->len; i++) {
		ClAtomicFile *f = g_ptr_array_index(batch.files, i);
		if (keep && !err) {
			char *path = g_strdup(f->path);
			if ((err = put_in_place(f)))
				failed_path = path;
			else
				g_free(path);
		} else {
			drop(f);
		}
	}
	g_ptr_array_free(batch.files, TRUE);
	g_ptr_array_free(batch.temps, TRUE);
	batch.open = FALSE;
	g_mutex_unlock(&batch_lock);
	if (err)
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", failed_path, g_strerror(err));
	g_free(failed_path);
	return keep && !err;
}

void cl_atomic_batch_interrupt(void)
{
	g_mutex_lock(&batch_lock); /* kept: nothing of the batch moves after this */
	for (guint i = 0; batch.open && i < batch.temps->len; i++)
		unlink(g_ptr_array_index(batch.temps, i)); /* only names: the files may be in use */
}

gboolean cl_atomic_file_replace(const char *path, const void *data, gsize length, GError **error)
{
	ClAtomicFile *f = cl_atomic_file_new(path, error);
	if (!f)
		return FALSE;
	if (!cl_atomic_file_write(f, data, length, error)) {
		cl_atomic_file_abort(f);
		return FALSE;
	}
	return cl_atomic_file_commit(f, error);
}

int cl_atomic_file_clean(const char *path)
{
	char *dir_path = g_path_get_dirname(path), *base = g_path_get_basename(path);
	char *prefix = g_strdup_printf(".%s.", base);
	GDir *dir = g_dir_open(dir_path, 0, NULL);
	int count = 0;
	for (const char *name; dir && (name = g_dir_read_name(dir));) {
		/* exactly .BASE.XXXXXX.tmp */
		if (strlen(name) != strlen(prefix) + 6 + strlen(TEMP_SUFFIX) || !g_str_has_prefix(name, prefix) ||
			!g_str_has_suffix(name, TEMP_SUFFIX))
			continue;
		char *file = g_build_filename(dir_path, name, NULL);
		count += g_unlink(file) == 0;
		g_free(file);
	}
	if (dir)
		g_dir_close(dir);
	g_free(prefix);
	g_free(base);
	g_free(dir_path);
	return count;
}
