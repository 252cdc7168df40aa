/* Allocation helpers of the engine. Nothing here aborts: a failed
 * allocation gives NULL or false, and the caller stops cleanly (a rollout
 * with CL_STATUS_MEMORY_LIMIT, see ClMemoryAccount). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* calloc of at least one item; NULL when out of memory or count × size overflows. */
void *cl_calloc(size_t count, size_t size);

/* Grows an array of `item`-sized elements (doubling) so that it holds
 * `needed`. array is the address of the array's pointer (&ws->buffer).
 * False, with the array and *capacity untouched, when the memory cannot be
 * had or the capacity would pass INT_MAX. */
bool cl_grow(void *array, int *capacity, size_t needed, size_t item);

/* The bytes a rollout may hold and holds: the growth of its tape and
 * contact list is charged here, so that a run stops at its memory budget
 * instead of exhausting the machine. */
typedef enum ClMemoryFailure {
	CL_MEMORY_OK,
	CL_MEMORY_OVER_BUDGET, /* a request would have passed the limit */
	CL_MEMORY_EXHAUSTED,   /* the system refused an allocation */
} ClMemoryFailure;

typedef struct ClMemoryAccount {
	size_t limit, used;      /* bytes */
	ClMemoryFailure failure; /* the first failure; later requests fail too */
	size_t requested;        /* the bytes of the request that failed */
} ClMemoryAccount;

/* Reserves bytes; false (and failure set) when they do not fit. */
bool cl_memory_charge(ClMemoryAccount *account, size_t bytes);
/* cl_grow whose growth is charged to account (doubling, or by half of
 * what is left of the budget when doubling would pass the limit). */
bool cl_memory_grow(ClMemoryAccount *account, void *array, int *capacity, size_t needed, size_t item);
/* The same to exactly `needed` (no doubling): room known in advance. */
bool cl_memory_reserve(ClMemoryAccount *account, void *array, int *capacity, size_t needed, size_t item);
