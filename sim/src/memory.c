#include "memory.h"

#include "contactlab/sim.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cl_calloc(size_t count, size_t size)
{
	return calloc(count ? count : 1, size ? size : 1);
}

/* realloc of *array to capacity items; false when it fails */
static bool resize(void *array, size_t capacity, size_t item)
{
	if (capacity > SIZE_MAX / item)
		return false;
	void *data;
	memcpy(&data, array, sizeof data);
	void *grown = realloc(data, capacity * item);
	if (!grown)
		return false;
	memcpy(array, &grown, sizeof grown);
	return true;
}

bool cl_grow(void *array, int *capacity, size_t needed, size_t item)
{
	if (needed <= (size_t)*capacity)
		return true;
	if (needed > INT_MAX)
		return false;
	size_t capacity_new = *capacity ? (size_t)*capacity : 16;
	while (capacity_new < needed)
		capacity_new *= 2;
	if (capacity_new > INT_MAX)
		capacity_new = needed;
	if (!resize(array, capacity_new, item))
		return false;
	*capacity = (int)capacity_new;
	return true;
}

static bool fail(ClMemoryAccount *account, ClMemoryFailure failure, size_t bytes)
{
	if (account->failure == CL_MEMORY_OK) {
		account->failure = failure;
		account->requested = bytes;
	}
	return false;
}

bool cl_memory_charge(ClMemoryAccount *account, size_t bytes)
{
	if (account->failure != CL_MEMORY_OK)
		return false;
	if (bytes > account->limit - account->used) /* used ≤ limit always */
		return fail(account, CL_MEMORY_OVER_BUDGET, bytes);
	account->used += bytes;
	return true;
}

static bool grow(ClMemoryAccount *account, void *array, int *capacity, size_t needed, size_t item, bool doubling)
{
	if (needed <= (size_t)*capacity)
		return true;
	if (account->failure != CL_MEMORY_OK)
		return false;
	if (needed > INT_MAX || needed > SIZE_MAX / item)
		return fail(account, CL_MEMORY_OVER_BUDGET, SIZE_MAX);
	size_t old = (size_t)*capacity;
	size_t capacity_new = doubling ? (old ? old : 16) : needed;
	while (capacity_new < needed)
		capacity_new *= 2;
	size_t room = (account->limit - account->used) / item;
	if (needed - old > room)
		return fail(account, CL_MEMORY_OVER_BUDGET, (needed - old) * item);
	/* doubling would pass the limit: half of what is left, so that the arrays
	 * sharing the budget still grow a few times each, not once per item */
	if (capacity_new - old > room)
		capacity_new = old + (needed - old > room / 2 ? needed - old : room / 2);
	if (capacity_new > INT_MAX)
		capacity_new = INT_MAX;
	if (!resize(array, capacity_new, item))
		return fail(account, CL_MEMORY_EXHAUSTED, (capacity_new - old) * item);
	account->used += (capacity_new - old) * item;
	*capacity = (int)capacity_new;
	return true;
}

bool cl_memory_grow(ClMemoryAccount *account, void *array, int *capacity, size_t needed, size_t item)
{
	return grow(account, array, capacity, needed, item, true);
}

bool cl_memory_reserve(ClMemoryAccount *account, void *array, int *capacity, size_t needed, size_t item)
{
	return grow(account, array, capacity, needed, item, false);
}

void cl_format_bytes(size_t bytes, char *text, size_t size)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double x = (double)bytes;
	int unit = 0;
	while (x >= 1024.0 && unit < 6) {
		x /= 1024.0;
		unit++;
	}
	if (unit == 0)
		snprintf(text, size, "%zu bytes", bytes);
	else
		snprintf(text, size, x < 10.0 && x != (double)(long)x ? "%.1f %s" : "%.0f %s", x, units[unit]);
}
