/* spanclock.c: TSC calibration for span timestamps.  The TSC is used only
 * when the CPU says it is invariant; its rate comes from the kernel's own
 * calibration (the perf_event mmap page's time_mult/time_shift), checked
 * against CLOCK_MONOTONIC, or else measured against CLOCK_MONOTONIC. */
#include "config.h"

#include "spanclock.h"
#include "perfev.h"

#include "arch.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if ARCH_HAVE_TSC

static uint64_t spanclock_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One (tsc, mono) pair read as close together as this machine allows. */
static void spanclock_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = arch_tsc();
		uint64_t m = spanclock_mono();
		uint64_t t1 = arch_tsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*mono = m;
		}
	}
}

/* The kernel's TSC-to-ns factors, from a perf_event mmap page. */
static bool spanclock_kernel(uint32_t *mult, uint32_t *shift)
{
	int fd = perfev_open_self(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	if (fd < 0)
		return false;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (pg == MAP_FAILED)
		return false;
	bool ok = pg->cap_user_time && pg->time_mult;
	*mult = pg->time_mult;
	*shift = pg->time_shift;
	munmap(pg, (size_t)page);
	return ok;
}

bool spanclock_init(struct spanclock *c)
{
	memset(c, 0, sizeof *c);
	if (!arch_tsc_invariant())
		return false;
	uint64_t t0, m0, t1, m1;
	spanclock_pair(&t0, &m0);
	uint32_t mult, shift;
	if (!spanclock_kernel(&mult, &shift)) {
		/* Measure: 2 ms against CLOCK_MONOTONIC, to about 1e-4. */
		do
			spanclock_pair(&t1, &m1);
		while (m1 - m0 < 2000000u);
		shift = 24;
		mult = (uint32_t)((((unsigned __int128)(m1 - m0)) << shift) / (t1 - t0));
		if (!mult)
			return false;
	}
	c->tsc0 = t0;
	c->mono0 = m0;
	c->mult = mult;
	c->shift = shift;
	c->valid = 1;
	return true;
}
#else
bool spanclock_init(struct spanclock *c)
{
	memset(c, 0, sizeof *c);
	return false;
}
#endif
