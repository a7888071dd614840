/* spanenv.h: the environment variables through which spanstat (launch.c
 * sets them) talks to the span library in the target (span/rec_life.c reads
 * them at load; span/rec_exec.c looks for the pipe's in the environment an
 * exec passes on).  Nothing else sets or reads them. */
#ifndef SPANSTAT_SPANENV_H
#define SPANSTAT_SPANENV_H

#include <stdint.h>

#define SPANSTAT_ENV_FD "SPANSTAT_FD"		/* write end of the pipe, inherited */
#define SPANSTAT_ENV_PIPE "SPANSTAT_PIPE"	/* /proc/<pid>/fd/<n>: reopen path */
#define SPANSTAT_ENV_PIPE_ID "SPANSTAT_PIPE_ID" /* "<st_dev>:<st_ino>" of the pipe */
#define SPANSTAT_ENV_CLOCK "SPANSTAT_CLOCK"	/* "tsc" or "mono" */
/* "1": no output needs the events themselves: a thread with a ring slot
 * keeps its call tree there instead (ring.h, RING_MODE_AGG) */
#define SPANSTAT_ENV_AGG "SPANSTAT_AGG"
#define SPANSTAT_ENV_SHM "SPANSTAT_SHM" /* /proc/<pid>/fd/<n>: the ring file (ring.h) */
/* The span filters (--min-duration, --max-depth, --filter, --exclude), set
 * only when one is given: one item per line, min=<u64 in the clock's units:
 * TSC ticks or ns>, depth=<N>, filter=<glob>, exclude=<glob> (the format:
 * span/filter.h; written by spanfilter.c, read by span/filter.c). */
#define SPANSTAT_ENV_FILTER "SPANSTAT_FILTER"
/* what begins and ends carry: values.h's recv_parse format */
#define SPANSTAT_ENV_VALUES "SPANSTAT_VALUES"
#define SPANSTAT_VALUES_MAX 8192 /* its longest value, in bytes */

/* The identity of a SPANSTAT_VALUES value, its layout (which values, in
 * which order): a 32-bit FNV-1a hash of its bytes, never 0.  The library
 * announces its own (wire.h's WIRE_VALUES, and ring.h's file says the
 * session's), so that a process whose environment names other values, as
 * many, is told apart from one that carries the session's.  Texts that
 * differ but name the same values have different identities (their values
 * are then taken as unknown: never as another's). */
static inline uint32_t spanstat_values_id(const char *s)
{
	uint32_t h = 2166136261u;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h ? h : 1;
}
/* "1": aggregating threads mark the spans they were switched out in */
#define SPANSTAT_ENV_OFFCPU "SPANSTAT_OFFCPU"
/* /proc/<pid>/fd/<n>: the pipe of the span line protocol (linesrc.h) */
#define SPANSTAT_ENV_LINES "SPANSTAT_LINES"
/* the bash helper of the line protocol, to source */
#define SPANSTAT_ENV_SH "SPANSTAT_SH"
/* --python: "py" or "c" (C functions too); read by the Python side
 * (lib/python/sitecustomize.py), which spanstat puts first in PYTHONPATH */
#define SPANSTAT_ENV_PYTHON "SPANSTAT_PYTHON"
/* "1": the Python module's begin and end take the line protocol, not the C
 * part (lib/python/spanstat.py); the user's, passed through to the target */
#define SPANSTAT_ENV_PY_PURE "SPANSTAT_PY_PURE"
/* --lib-calls: the glob of the library functions whose calls through the
 * PLT are spans (span/rec_plt.c); unset: none */
#define SPANSTAT_ENV_LIBCALLS "SPANSTAT_LIBCALLS"
/* "all": the calls every loaded object makes, else the main program's */
#define SPANSTAT_ENV_LIBCALLS_FROM "SPANSTAT_LIBCALLS_FROM"

#endif
