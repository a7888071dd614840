/* offcpu.h: how long each thread of the target was switched out, from the
 * kernel's context-switch records (PERF_RECORD_SWITCH of a software event
 * with context_switch, inherited by every thread and child of the target),
 * so that spanstat can split any span of a thread into on- and off-CPU time
 * without the target doing anything: off(b, e) = offcpu_at(e) - offcpu_at(b).
 * The same event reports when each thread ended (PERF_RECORD_EXIT, task) and
 * when each process's image was replaced (PERF_RECORD_COMM of an exec,
 * comm_exec), so that spans a thread left open end at its true end.
 * Times are CLOCK_MONOTONIC ns (use_clockid), as the spans' are once
 * converted.  Memory grows with the number of switches (16 bytes each, at
 * most OFFCPU_MAX_INTERVALS in all) and of execs (8 bytes each). */
#ifndef SPANSTAT_OFFCPU_H
#define SPANSTAT_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OFFCPU_MAX_INTERVALS (1u << 26)

struct offcpu;

struct offcpu_stats {
	uint64_t records; /* switch records taken */
	uint64_t lost;	  /* records the kernel lost (its ring was full) */
	uint64_t bad;	  /* records that made no sense (skipped) */
	uint64_t refused; /* intervals (or execs) not kept: OFFCPU_MAX_INTERVALS */
	uint64_t threads; /* threads seen */
};

/* Whether the kernel gives switch records to this user (a probe on the
 * calling thread). */
bool offcpu_probe(void);
/* Starts recording the switches (unless !switches: then only the ends) of
 * the child `pid` (held before its exec: the event is enabled at exec, like
 * the counters of counters.c) and of every thread and process it creates.
 * 0, or -errno with *cause (may be NULL) when the kernel refuses. */
int offcpu_open(struct offcpu **out, pid_t pid, bool switches, char **cause);
/* The same for a new child `pid` (the next run), in place of the events o
 * had: what they told so far is taken first and kept, so that threads of
 * earlier runs still have their off-CPU time and ends.  0, or -errno with
 * *cause (o then records nothing more). */
int offcpu_follow(struct offcpu *o, pid_t pid, bool switches, char **cause);
/* Takes every record the kernel has written so far: afterwards, every switch
 * of the target before the call is known.  0, or -ENOMEM. */
int offcpu_drain(struct offcpu *o);
/* Thread (pid, tid)'s switched-out ns from its first known switch up to ns. */
uint64_t offcpu_at(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t ns);
/* When thread (pid, tid) ended at or after `after` ns, as the kernel told:
 * its exit or the exec that replaced its process's image, whichever came
 * first; else the last switch of it known after `after` (it was alive then);
 * 0: nothing known.  o may be NULL (0). */
uint64_t offcpu_end(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t after);
/* As offcpu_end, but only its exit or exec: 0 when the kernel told of
 * neither (it may still run). */
uint64_t offcpu_ended(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t after);
const struct offcpu_stats *offcpu_stats(const struct offcpu *o);
void offcpu_close(struct offcpu *o);

/* For tests and fuzzing: a recorder with no event, fed raw ring records
 * (struct perf_event_header, body, sample_id {u32 pid, tid; u64 time}) as
 * the kernel writes them (SWITCH, EXIT, COMM, LOST); nothing in them is
 * trusted.  0, or -ENOMEM. */
struct offcpu *offcpu_new(void);
int offcpu_feed(struct offcpu *o, const void *buf, size_t len);
/* A capture: fn sees each record just before o takes it into its table
 * (switches as SWITCH records, in the order they are taken; exits and
 * execs), so that offcpu_feed of them, one by one at their places, makes
 * a table that answers as o did at every point.  Lost and bad records are
 * not told (offcpu_stats has them).  NULL: none. */
void offcpu_set_tap(struct offcpu *o, void (*fn)(void *ctx, const void *rec, size_t len),
		    void *ctx);

#endif
