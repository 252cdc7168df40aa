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
};

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

ClAtomicFile *cl_atomic_file_new(const char *path, GError **error)
{
	ClAtomicFile *f = g_new0(ClAtomicFile, 1);
	f->path = g_strdup(path);
	f->fd = -1;
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
			file_free(f);
			return NULL;
		}
	}
	return f;
}

gboolean cl_atomic_file_write(ClAtomicFile *f, const void *data, gsize length, GError **error)
{
	const char *p = data;
	while (length > 0) {
		gssize n = write(f->fd, p, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return set_error(error, errno);
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

gboolean cl_atomic_file_commit(ClAtomicFile *f, GError **error)
{
	int err = 0;
	/* replacing data: the new ones reach the disk before the name moves,
	 * so that a power cut leaves one of the two files too */
	GStatBuf st;
	if (g_stat(f->path, &st) == 0 && st.st_size > 0 && fsync(f->fd) != 0)
		err = errno;
	if (!err)
		err = !f->temp ? link_unnamed(f) : g_rename(f->temp, f->path) == 0 ? 0 : errno;
	if (close(f->fd) != 0 && !err)
		err = errno;
	if (err && f->temp)
		g_unlink(f->temp);
	file_free(f);
	return err == 0 || set_error(error, err);
}

void cl_atomic_file_abort(ClAtomicFile *f)
{
	close(f->fd);
	if (f->temp)
		g_unlink(f->temp);
	file_free(f);
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
