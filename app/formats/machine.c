#define _DEFAULT_SOURCE /* O_CLOEXEC, S_ISSOCK */

#include "machine.h"

#include "contactlab/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUDGET_MIN ((gsize)64 << 20)

static gsize budget_set; /* 0: not set */
static const char *budget_origin;

gboolean cl_memory_size_parse(const char *text, gsize *bytes)
{
	if (!text || !g_ascii_isdigit(text[0]))
		return FALSE;
	char *end = NULL;
	double x = g_ascii_strtod(text, &end);
	static const char units[] = "KMGT";
	const char *unit = *end ? strchr(units, g_ascii_toupper(*end)) : NULL;
	if (*end && (!unit || !(end[1] == '\0' || ((end[1] == 'i' || end[1] == 'I') && (end[2] == 'B' || end[2] == 'b') &&
											   end[3] == '\0') || ((end[1] == 'B' || end[1] == 'b') && end[2] == '\0'))))
		return FALSE;
	if (unit)
		x *= pow(1024.0, (double)(unit - units + 1));
	if (!isfinite(x) || x < (double)(1 << 20) || x >= 0x1p63)
		return FALSE;
	*bytes = (gsize)x;
	return TRUE;
}

/* The bytes a limit file or rlimit allows, or G_MAXSIZE */
static gsize cgroup_limit(void)
{
	char *text = NULL;
	gsize limit = G_MAXSIZE;
	if (g_file_get_contents("/sys/fs/cgroup/memory.max", &text, NULL, NULL)) {
		guint64 value;
		if (g_ascii_string_to_unsigned(g_strstrip(text), 10, 1, G_MAXUINT64, &value, NULL))
			limit = (gsize)value;
	}
	g_free(text);
	return limit;
}

static gsize rlimit_of(int resource)
{
	struct rlimit r;
	return getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? (gsize)r.rlim_cur : G_MAXSIZE;
}

static gsize machine_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	gsize budget = pages > 0 && page > 0 ? (gsize)pages * (gsize)page / 4 : CL_MEMORY_BUDGET_DEFAULT;
	budget = MIN(budget, rlimit_of(RLIMIT_AS) / 2);
	budget = MIN(budget, rlimit_of(RLIMIT_DATA) / 2);
	budget = MIN(budget, cgroup_limit() / 4);
	return MAX(budget, BUDGET_MIN);
}

gsize cl_memory_budget(void)
{
	static gsize from_environment;
	if (g_once_init_enter(&from_environment)) {
		gsize bytes = 0;
		const char *env = g_getenv("CONTACTLAB_MEMORY_LIMIT");
		if (!(env && cl_memory_size_parse(env, &bytes)))
			bytes = machine_budget();
		g_once_init_leave(&from_environment, bytes);
	}
	return budget_set ? budget_set : from_environment;
}

void cl_memory_budget_set(gsize bytes)
{
	budget_set = bytes;
	budget_origin = "--memory-limit";
}

const char *cl_memory_budget_origin(void)
{
	if (budget_origin)
		return budget_origin;
	gsize bytes;
	const char *env = g_getenv("CONTACTLAB_MEMORY_LIMIT");
	return env && cl_memory_size_parse(env, &bytes) ? "CONTACTLAB_MEMORY_LIMIT" : "a quarter of this machine's memory";
}

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a folder";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

static gboolean read_failed(GError **error, GQuark domain, int code, const char *path, const char *format, ...)
	G_GNUC_PRINTF(5, 6);

static gboolean read_failed(GError **error, GQuark domain, int code, const char *path, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, domain, code, "%s: cannot read: %s", path, reason);
	g_free(reason);
	return FALSE;
}

gboolean cl_input_file_read(const char *path, gsize max, char **data, gsize *length, GQuark domain, int code,
							GError **error)
{
	GStatBuf st;
	/* refused before it is opened: opening a device may have effects (a tape rewinds) */
	if (g_stat(path, &st) != 0)
		return read_failed(error, domain, code, path, "%s", g_strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return read_failed(error, domain, code, path, "%s, not a file (only regular files and FIFOs are read)",
						   kind_of(st.st_mode));
	char max_text[32];
	g_snprintf(max_text, sizeof max_text, "%" G_GSIZE_FORMAT " MiB", max >> 20);
	if (S_ISREG(st.st_mode) && (guint64)st.st_size > max)
		return read_failed(error, domain, code, path, "the file is larger than %s, the limit for input files",
						   max_text);
	int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
	if (fd < 0)
		return read_failed(error, domain, code, path, "%s", g_strerror(errno));
	if (fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))) {
		close(fd);
		return read_failed(error, domain, code, path, "%s, not a file", kind_of(st.st_mode));
	}
	GByteArray *bytes = g_byte_array_new();
	gboolean ok = TRUE;
	for (;;) {
		guint8 chunk[65536];
		gssize n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ok = read_failed(error, domain, code, path, "%s", g_strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (bytes->len + (gsize)n > max) {
			ok = read_failed(error, domain, code, path, "more than %s, the limit for input files", max_text);
			break;
		}
		g_byte_array_append(bytes, chunk, (guint)n);
	}
	close(fd);
	if (!ok) {
		g_byte_array_free(bytes, TRUE);
		return FALSE;
	}
	*length = bytes->len;
	g_byte_array_append(bytes, (const guint8 *)"", 1);
	*data = (char *)g_byte_array_free(bytes, FALSE);
	return TRUE;
}
