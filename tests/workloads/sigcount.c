/* sigcount.c: a target that records every signal it receives, one line with
 * the signal's number per arrival (with ":VALUE" when sigqueue() sent it),
 * so tests can count them.
 *
 *   sigcount LOG READY STOP HOW [fill] [setpgid]
 *
 * It handles every signal whose default action terminates (those ignored at
 * start stay ignored, as nohup left them, unless SIGCOUNT_ALL is set), then
 * writes its pid and a line of the signals it found ignored to READY
 * (atomically, by rename).  When signal STOP arrives (0: at once) it ends:
 * HOW "die" dies of STOP, a number exits with it.  "fill" first fills its
 * stderr pipe, so whoever shares it blocks on its next write; "setpgid" moves
 * it to a process group of its own before it is ready, out of the reach of
 * the terminal's signals.  Without STOP
 * it gives up after 30 seconds with status 3. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int logfd = -1;
static volatile sig_atomic_t stopped;
static int stopsig;

/* One line: the signal's number, and ":VALUE" when sigqueue() sent it. */
static void on_signal(int s, siginfo_t *si, void *uc)
{
	char b[32];
	int n = si->si_code == SI_QUEUE
			? snprintf(b, sizeof b, "%d:%d\n", s, si->si_value.sival_int)
			: snprintf(b, sizeof b, "%d\n", s);
	(void)uc;
	if (write(logfd, b, (size_t)n) != n)
		_exit(4);
	if (s == stopsig)
		stopped = 1;
}

static int terminates(int s)
{
	switch (s) {
	case SIGKILL:
	case SIGSTOP:
	case SIGCHLD:
	case SIGCONT:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGWINCH:
	case SIGURG:
		return 0;
	}
	return s < 32 || (s >= SIGRTMIN && s <= SIGRTMAX);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: sigcount LOG READY STOP die|STATUS [fill]\n");
		return 2;
	}
	struct rlimit no = {0, 0};
	setrlimit(RLIMIT_CORE, &no); /* dying of SIGQUIT leaves no core */
	stopsig = atoi(argv[3]);
	logfd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return 2;
	sigset_t all, old;
	sigemptyset(&all);
	char ignored[1024] = "";
	for (int s = 1; s <= SIGRTMAX; s++) {
		struct sigaction sa;
		if (!terminates(s) || sigaction(s, NULL, &sa) < 0)
			continue;
		if (sa.sa_handler == SIG_IGN) {
			size_t k = strlen(ignored);
			snprintf(ignored + k, sizeof ignored - k, " %d", s);
			if (!getenv("SIGCOUNT_ALL"))
				continue;
		}
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO;
		sigfillset(&sa.sa_mask);
		sigaction(s, &sa, NULL);
		sigaddset(&all, s);
	}
	sigprocmask(SIG_BLOCK, &all, &old);

	bool fill = false;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "fill") == 0)
			fill = true;
		else if (strcmp(argv[i], "setpgid") == 0 && setpgid(0, 0) < 0)
			return 2;
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
	FILE *fp = fopen(tmp, "w");
	if (!fp || fprintf(fp, "%d\nignored:%s\n", (int)getpid(), ignored) < 0 || fclose(fp) != 0 ||
	    rename(tmp, argv[2]) != 0)
		return 2;

	struct timespec end, now;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 30;
	while (!stopped && stopsig) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			return 3;
		/* sleeps with the signals let in, so none is missed in between */
		ppoll(NULL, 0, &(struct timespec){0, 100000000}, &old);
	}
	if (fill) {
		int sz = fcntl(2, F_GETPIPE_SZ);
		char *junk = calloc(1, sz > 0 ? (size_t)sz : 65536);
		if (!junk || sz <= 0 || write(2, junk, (size_t)sz) != sz)
			return 5;
		free(junk);
	}
	if (strcmp(argv[4], "die") == 0) {
		signal(stopsig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, stopsig);
		raise(stopsig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		return 6; /* not reached */
	}
	return atoi(argv[4]);
}
