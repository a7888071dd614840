/* arch.h: spanstat's per-architecture code, behind this one header (as
 * uftrace's arch/): the cycle counter and whether it is invariant, the
 * user-space read of a perf counter, and the span library's setjmp
 * trampolines, PLT trampolines, vfork and -pg entry points.  Each ARCH_HAVE_* says whether this
 * architecture has the piece; without it, callers take their portable path.  Everything here is
 * inline and safe in the span library's hot path (no instrumentation). */
#ifndef SPANSTAT_ARCH_H
#define SPANSTAT_ARCH_H

#define ARCH_INLINE __attribute__((always_inline, no_instrument_function)) static inline

#if defined(__x86_64__) || defined(__i386__)
#include "x86.h"
#endif

#ifndef ARCH_HAVE_TSC
#define ARCH_HAVE_TSC 0
#endif
#ifndef ARCH_HAVE_RDPMC
#define ARCH_HAVE_RDPMC 0
#endif
#ifndef ARCH_HAVE_PLT_HOOK
#define ARCH_HAVE_PLT_HOOK 0
#endif
#ifndef ARCH_HAVE_SETJMP_TRAMPOLINE
#define ARCH_HAVE_SETJMP_TRAMPOLINE 0
#endif
#ifndef ARCH_HAVE_VFORK
#define ARCH_HAVE_VFORK 0
#endif
#ifndef ARCH_HAVE_MCOUNT
#define ARCH_HAVE_MCOUNT 0
#endif

#endif
