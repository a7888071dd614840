/* recreport.h: `spanstat report`: record files read back into one analysis
 * and its writers.  One file reports as the live run would have; several
 * (the ranks of one job) merge: every file's processes and threads keep
 * their own tracks (pids moved apart, processes named by rank and host),
 * timestamps move onto the first file's clock through each file's clock
 * snapshot (files of one boot share CLOCK_MONOTONIC and stay as they are),
 * and the report carries each rank's means and span tree (report_ranks). */
#ifndef SPANSTAT_RECREPORT_H
#define SPANSTAT_RECREPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "writer.h"

#define RECREPORT_MAX_FILES 1000
#define RECREPORT_MAX_JOBS 256 /* -j */

struct recreport_opts {
	const char *const *files;
	size_t nfiles;
	struct writer *const *writers;
	size_t nwriters;
	bool compensate;
	/* threads (analysis_jobs): 0 or 1, the caller's only */
	unsigned jobs;
	/* signals (blocked by the caller) that stop the reading: a wait for a
	 * FIFO's writer or a long file ends with -EINTR; NULL: none */
	const sigset_t *stop;
	/* what a damaged file lost, one message each (lib/ never prints) */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

/* 0 when the writers got the report (*failed: the first writer whose
 * finish failed, or NULL); -errno with *cause when the files cannot be
 * read or do not belong together; -EINTR (no cause) when a stop signal
 * came before the writers got it. */
int recreport_run(const struct recreport_opts *o, const struct writer **failed, char **cause);

#endif
