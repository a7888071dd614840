/* reader.h: the spanstat process a test workload stops, so that its pipe or
 * rings fill: named by $SPANSTAT_PIPE (/proc/PID/fd/N), which spanstat sets
 * for its target.  Header-only: workloads are built from one file. */
#ifndef SPANSTAT_TEST_READER_H
#define SPANSTAT_TEST_READER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* spanstat's pid, or 0 when not under spanstat (then nobody is stopped). */
static inline int reader_pid(void)
{
	const char *pipe = getenv("SPANSTAT_PIPE");
	int reader = 0;
	if (!pipe || sscanf(pipe, "/proc/%d/fd/", &reader) != 1 || reader < 2)
		return 0;
	return reader;
}

/* SIGSTOP, or SIGCONT, to the reader if there is one. */
static inline void reader_signal(int reader, int sig)
{
	if (reader > 1)
		kill(reader, sig);
}

/* Stops the reader and has a helper child wake it `ms` later (the caller
 * reaps the child). */
static inline void reader_stop_for(int reader, long ms)
{
	if (reader < 2)
		return;
	kill(reader, SIGSTOP);
	if (fork() == 0) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		kill(reader, SIGCONT);
		_exit(0);
	}
}

#endif
