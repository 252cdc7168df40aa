/* Allocation helpers of the engine: out of memory aborts, as there is
 * nothing sensible to continue with. */
#pragma once

#include <stddef.h>

/* calloc of at least one item. */
void *cl_calloc(size_t count, size_t size);
/* Grows an array of `item`-sized elements (doubling) so that it holds
 * `needed`; returns it and updates *capacity. */
void *cl_grow(void *data, int *capacity, int needed, size_t item);
