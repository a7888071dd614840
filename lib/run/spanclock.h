/* spanclock.h: which clock the span library in the target should stamp
 * events with, and how to turn its TSC ticks into CLOCK_MONOTONIC ns. */
#ifndef SPANSTAT_SPANCLOCK_H
#define SPANSTAT_SPANCLOCK_H

#include <stdbool.h>

#include "decoder.h"

/* Fills c and returns true when the TSC is invariant and calibrated here;
 * false: targets must use CLOCK_MONOTONIC (c->valid is 0). */
bool spanclock_init(struct spanclock *c);

#endif
