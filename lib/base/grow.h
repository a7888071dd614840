/* grow.h: the one way spanstat grows an array (git's ALLOC_GROW): the
 * capacity doubles from a minimum until what is needed fits.  The capacity
 * may be any unsigned type: a size it cannot hold, or bytes past SIZE_MAX,
 * fail as out of memory.  On failure the array and its capacity are left
 * as they were. */
#ifndef SPANSTAT_GROW_H
#define SPANSTAT_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* The capacity to grow cap to so that need items of size bytes fit (cap
 * itself when they do), doubling from min; 0 past max items. */
static inline size_t grow_cap(size_t cap, size_t need, size_t min, size_t max, size_t size)
{
	if (need <= cap)
		return cap;
	size_t c = cap ? cap : min ? min : 1;
	while (c < need && c <= max / 2)
		c *= 2;
	if (c < need || c > max || c > SIZE_MAX / size)
		return 0;
	return c;
}

/* Room for need items in the array p of capacity cap (lvalues): 0, or
 * -ENOMEM. */
#define GROW(p, need, cap, min)                                                               \
	__extension__({                                                                       \
		int grow_r_ = 0;                                                              \
		size_t grow_need_ = (need);                                                   \
		if (grow_need_ > (size_t)(cap)) {                                             \
			size_t grow_c_ = grow_cap((cap), grow_need_, (min),                   \
						  (size_t)(__typeof__(cap))-1, sizeof *(p));  \
			void *grow_q_ = grow_c_ ? realloc((p), grow_c_ * sizeof *(p)) : NULL; \
			if (grow_q_) {                                                        \
				(p) = grow_q_;                                                \
				(cap) = (__typeof__(cap))grow_c_;                             \
			} else {                                                              \
				grow_r_ = -ENOMEM;                                            \
			}                                                                     \
		}                                                                             \
		grow_r_;                                                                      \
	})

#endif
