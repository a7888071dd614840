/* runinfo.h: what measuring a command yields, run by run: its resource
 * usage and exit, its counts (counters.h), the head known before the first
 * run and the samples of -I.  The facts acquisition (lib/run) hands to
 * analysis (lib/out); neither layer owns them, so they live with the
 * counts.  The span tables the head points at are named, not included:
 * they belong to lib/spans. */
#ifndef SPANSTAT_RUNINFO_H
#define SPANSTAT_RUNINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "aggr.h"
#include "counters.h"
#include "evlist.h"
#include "strtab.h"

struct spannames;    /* spannames.h */
struct spanmetrics;  /* spanmetric.h */
struct decode_stats; /* spanstats.h */

struct rusage_info {
	uint64_t elapsed_ns; /* wall time from exec to the target's exit */
	uint64_t utime_ns, stime_ns;
	long maxrss_kb;
	long minflt, majflt, nvcsw, nivcsw;
};

struct run_result {
	struct count *counts; /* evl->n */
	struct count *units;  /* head's aggr->n rows of evl->n, unit by unit; NULL
			       * without aggregation (run_head.aggr) */
	struct rusage_info ru;
	int wstatus;	  /* as from wait4 */
	int exit_code;	  /* what spanstat exits with for this run */
	uint64_t wall_ns; /* the whole run's wall time, --delay's included (the spans'
			   * shares refer to it); 0: ru.elapsed_ns (an older record) */
	unsigned index;	  /* the run's number in the session, as its threads name it
			   * (a report of a record that lost some runs' results
			   * lists the others under their own numbers) */
};

/* One instant on three clocks (spans and samples are stamped MONOTONIC):
 * what maps a session's times onto BOOTTIME (Perfetto) and wall time. */
struct run_clocks {
	uint64_t real_ns, mono_ns, boot_ns;
};

static inline uint64_t run_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Now: REALTIME and BOOTTIME read between two MONOTONIC reads, paired
 * with their middle. */
static inline void run_clocks_now(struct run_clocks *c)
{
	uint64_t m0 = run_clock_ns(CLOCK_MONOTONIC);
	c->real_ns = run_clock_ns(CLOCK_REALTIME);
	c->boot_ns = run_clock_ns(CLOCK_BOOTTIME);
	uint64_t m1 = run_clock_ns(CLOCK_MONOTONIC);
	c->mono_ns = m0 + (m1 - m0) / 2;
}

struct run_head {
	int argc;
	char *const *argv;
	const struct evlist *evl;
	struct timespec start;		   /* CLOCK_REALTIME when the first run started */
	uint64_t start_mono;		   /* CLOCK_MONOTONIC ns, same instant */
	unsigned runs;			   /* -r */
	unsigned interval_ms;		   /* -I, 0 when off */
	unsigned interval_count;	   /* --interval-count, 0: no limit */
	unsigned delay_ms;		   /* -D: counting began this long after each run
					    * began (0: at once) */
	unsigned timeout_ms;		   /* --timeout, 0: none */
	bool spans;			   /* span collection on */
	const struct strtab *strings;	   /* span names (decoder's), NULL without spans */
	const struct spannames *names;	   /* how they show (NULL: as they are) */
	const struct spanmetrics *metrics; /* what spans carry besides wall time
					    * (NULL or none: nothing) */
	const char *target;		   /* tasks attached to, as perf names them
					    * ("process id '1234'"), NULL: the command */
	bool rusage_unknown;		   /* attached tasks: only the time counted is known */
	struct run_clocks clocks;	   /* when the session started (0: unknown) */
	const char *uname[4];		   /* where it ran: nodename, sysname, release, machine
					    * (a recording's; NULL: this machine's) */
	const char *exe;		   /* the program of the command spanstat started
					    * (launch_exe: absolute, links resolved), NULL:
					    * unknown (attached, not found, an old record) */
	const char *build_id;		   /* its GNU build id in hex, NULL: none or unknown */
	const struct aggr *aggr;	   /* the rows counts add up to (aggr.h): NULL or
					    * AGGR_GLOBAL for one */
};

/* Whether h's counts come in rows per unit (runs' and samples' units). */
static inline bool run_head_aggregated(const struct run_head *h)
{
	return h && h->aggr && h->aggr->mode != AGGR_GLOBAL && h->aggr->n;
}

struct interval_sample {
	unsigned run;		    /* 0-based */
	uint64_t t_ns;		    /* since the run's start */
	uint64_t mono_ns;	    /* CLOCK_MONOTONIC of the sample */
	uint64_t length_ns;	    /* this interval's wall length */
	const struct count *counts; /* deltas over the interval, evl->n */
	const struct count *units;  /* and per unit, as run_result's (NULL: none) */
};

/* What the source of facts knew at the end, besides the head: each run's
 * results and what span collection counted. */
struct record_window;

struct run_end {
	const struct record_window *window; /* a --keep-last record's (recfile.h), or NULL */
	const struct run_result *run;	    /* nruns, the caller's */
	unsigned nruns;			    /* >= 1 live; 0: no run's results are known */
	const struct decode_stats *dstats;  /* NULL without spans */
	bool dstats_lost;		    /* dstats not known (report.h) */
	double event_cost_ns;		    /* the instrumentation's cost per event, 0: unknown */
	bool compensate;		    /* take it out of the span times */
	unsigned lost_runs; /* runs whose results are missing (a damaged record): their
			     * spans are there, their wall time is not */
};

#endif
