/* sigrelay.h: the signals spanstat stands between the sender and the target:
 * every signal whose default action would end spanstat (terminate or dump
 * core), less those ignored when spanstat started (nohup).  They are blocked
 * and read from a signalfd instead, so none of them kills spanstat with a
 * temporary file or half a summary behind, and the target is never orphaned
 * by one of them.  The caller owns struct sigrelay; nothing is allocated. */
#ifndef SPANSTAT_SIGRELAY_H
#define SPANSTAT_SIGRELAY_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct sigrelay {
	sigset_t set;	  /* the relayed signals */
	sigset_t oldmask; /* the mask sigrelay_block() found */
};

/* Computes the set and blocks it, with SIGCHLD.  Calling it again while they
 * are blocked gives the same set, and the saved mask keeps them blocked.
 * Returns 0 or -errno. */
int sigrelay_block(struct sigrelay *sr);
/* Restores the mask sigrelay_block() found. */
void sigrelay_unblock(const struct sigrelay *sr);
/* Whether a received signal came from outside: false for SIGCHLD and for the
 * SIGPIPE the kernel raises for spanstat's own write to a broken pipe. */
bool sigrelay_foreign(int signo, int code, pid_t sender);
/* Takes every pending signal of the set without waiting; returns the first
 * foreign one's number, or 0. */
int sigrelay_take(const struct sigrelay *sr);
/* The signal's name without "SIG" ("TERM", "RTMIN+2"), in buf. */
const char *sigrelay_name(int signo, char *buf, size_t size);

#endif
