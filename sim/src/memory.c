#include "memory.h"

#include <stdlib.h>

void *cl_calloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (!p)
		abort();
	return p;
}

void *cl_grow(void *data, int *capacity, int needed, size_t item)
{
	if (needed <= *capacity)
		return data;
	int capacity_new = *capacity ? *capacity : 16;
	while (capacity_new < needed)
		capacity_new *= 2;
	void *data_new = realloc(data, (size_t)capacity_new * item);
	if (!data_new)
		abort();
	*capacity = capacity_new;
	return data_new;
}
