/* rec_pipe.c: the recorder's connection to spanstat's pipe, the writing of
 * whole records to it, and the waits for room in a full pipe or ring (rec.h).
 *
 * Connection: the inherited write end (SPANSTAT_FD) is checked against
 * SPANSTAT_PIPE_ID; we reopen the pipe as a private non-blocking write end
 * (and a read end we never read, so that a dead spanstat makes our writes fail
 * with EAGAIN instead of raising SIGPIPE), both close-on-exec at high fd
 * numbers.  Every write first checks with fstat() that the fd still is our
 * pipe and reconnects through SPANSTAT_PIPE when the target closed or reused
 * it.  That check is one fcntl(F_GETFL) (our description carries the unusual
 * flag set O_NONBLOCK|O_APPEND|O_NOATIME) and, every REC_STAT_EVERY writes of
 * a thread, an fstat() of the pipe's identity: fstat costs twice as much and
 * the flush is a tenth of the per-pair budget.
 *
 * Once connected, the inherited write end is made close-on-exec: an exec'd
 * image gets a descriptor of the pipe (at the number SPANSTAT_FD names) only
 * from the exec wrappers (rec_exec.c), and only when the environment it is
 * given still names our pipe.  A process that dropped the variables passes
 * nothing on. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"

static int rec_fl;	 /* F_GETFL & REC_FL_MASK of our write end */
atomic_int rec_fd = -1;	 /* private write end */
atomic_int rec_rfd = -1; /* private read end, never read */
dev_t rec_dev;
ino_t rec_ino;
char rec_pipe_path[256]; /* SPANSTAT_PIPE, to reconnect */
atomic_int rec_nowait;	 /* a write timed out: no waiting until one succeeds (2: an exec's too) */
_Atomic uint64_t rec_exit_deadline; /* rec_finish, exec: wait for room until then */
_Atomic uint64_t rec_waited;	    /* ns threads waited for room (WIRE_WAITED) */
static __thread unsigned rec_writes __attribute__((tls_model("initial-exec")));

REC_NOI int rec_is_pipe(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == rec_ino &&
	       st.st_dev == rec_dev;
}

/* Moves fd to a high number (close-on-exec) out of the target's way. */
static REC_NOI int rec_move_high(int fd)
{
	static const int floors[] = {1000, 200, 20};
	for (unsigned i = 0; i < sizeof floors / sizeof floors[0]; i++) {
		if (fd >= floors[i])
			return fd;
		int h = fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
		if (h >= 0) {
			close(fd);
			return h;
		}
	}
	return fd;
}

/* Opens a new description of the pipe that fd refers to, in `mode`. */
REC_NOI int rec_reopen_fd(int fd, int mode)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int n = open(path, mode | O_NONBLOCK | O_CLOEXEC);
	if (n >= 0 && !rec_is_pipe(n)) {
		close(n);
		n = -1;
	}
	return n;
}

/* Makes sure we hold a read end of our pipe (so that writes never SIGPIPE). */
static REC_NOI void rec_ensure_read_end(int wfd)
{
	int old = atomic_load(&rec_rfd);
	if (rec_is_pipe(old))
		return;
	int r = rec_reopen_fd(wfd, O_RDONLY);
	if (r < 0)
		return;
	r = rec_move_high(r);
	if (!atomic_compare_exchange_strong(&rec_rfd, &old, r))
		close(r);
}

/* A private write end, from the inherited fd or else from SPANSTAT_PIPE. */
REC_NOI int rec_open_write_end(int inherited)
{
	int fd = -1;
	if (rec_is_pipe(inherited)) {
		fd = rec_reopen_fd(inherited, O_WRONLY);
		if (fd < 0) { /* no /proc: share the inherited description */
			fd = fcntl(inherited, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0)
				fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		}
	}
	if (fd < 0 && rec_pipe_path[0]) {
		fd = open(rec_pipe_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && !rec_is_pipe(fd)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return -1;
	fd = rec_move_high(fd);
	rec_ensure_read_end(fd);
	/* Mark our description (pipes ignore both flags) for rec_get_fd(). */
	if (fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND | O_NOATIME) != 0)
		fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND);
	rec_fl = fcntl(fd, F_GETFL) & REC_FL_MASK;
	return fd;
}

REC_NOI void rec_set_on(int on)
{
	if (on)
		on = rec_filtering  ? REC_ON_FILTERED
		     : rec_nvals    ? REC_ON_VALUES
		     : rec_agg_mode ? REC_ON_AGG
				    : REC_ON;
	__atomic_store_n(&rec_on, on, __ATOMIC_RELEASE);
	__atomic_store_n(&spanstat_on_, on, __ATOMIC_RELEASE);
}

/* Our write fd, reconnecting if the target closed or reused it; -1: gone. */
static REC_NOI int rec_get_fd(void)
{
	int fd = atomic_load_explicit(&rec_fd, memory_order_relaxed);
	if (likely(++rec_writes % REC_STAT_EVERY)) {
		int fl = fcntl(fd, F_GETFL);
		if (likely(fl >= 0 && (fl & REC_FL_MASK) == rec_fl))
			return fd;
	} else if (rec_is_pipe(fd)) {
		return fd;
	}
	int n = rec_open_write_end(-1);
	if (n < 0) { /* spanstat is gone: stop recording for good */
		rec_set_on(0);
		return -1;
	}
	/* Never close the old number: it is closed already or the target's now. */
	if (!atomic_compare_exchange_strong(&rec_fd, &fd, n)) {
		close(n);
		return fd;
	}
	return n;
}

/* One round of waiting for room in a full pipe or ring: -1 when the caller
 * must give up (an earlier wait timed out and nothing got through since, or
 * *deadline passed), else 0 with the time in *now.  The first round sets
 * *deadline: REC_WAIT_MS away, or while the process is ending, the end of the
 * wait for its final records (bounded for the whole exit). */
REC_NOI int rec_wait_round(uint64_t *deadline, uint64_t *now)
{
	uint64_t final = atomic_load_explicit(&rec_exit_deadline, memory_order_relaxed);
	if (!final && atomic_load_explicit(&rec_nowait, memory_order_relaxed))
		return -1;
	*now = rec_mono();
	if (!*deadline)
		*deadline = final ? final : *now + REC_WAIT_MS * UINT64_C(1000000);
	if (*now >= *deadline) {
		atomic_store(&rec_nowait, 1);
		return -1;
	}
	return 0;
}

/* The calling thread's CPU time, ns (0 when unknown). */
REC_NOI uint64_t rec_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* A wait for room that began at `since` (rec_mono), with the thread's CPU
 * time `cpu` then, is over: the target's time spent on the transport, for
 * the instrumentation line.  One that got room (`got`) is the thread's to
 * tell in its stream right after the event that waited (rec_put_waited), so
 * that --compensate takes it out of the spans open meanwhile; one that gave
 * up starts a drop, whose spans the reader cannot place it in.  Waits while
 * the process exits come after its spans and are not counted. */
REC_NOI void rec_waited_since(uint64_t since, uint64_t cpu, int got)
{
	if (!since || atomic_load_explicit(&rec_exiting, memory_order_relaxed))
		return;
	uint64_t wall = rec_mono() - since;
	atomic_fetch_add_explicit(&rec_waited, wall, memory_order_relaxed);
	struct rec_thread *t = rec_self;
	/* not placed where handlers' spans ran inside it (their time would be
	 * taken out twice), nor where the filters send begins late */
	if (got && t && !t->calib && !t->nq &&
	    __atomic_load_n(&rec_on, __ATOMIC_RELAXED) != REC_ON_FILTERED) {
		uint64_t now = rec_thread_cpu();
		t->wpend_ns += wall;
		t->wpend_cpu += now > cpu && cpu ? now - cpu : 0;
		t->wpend_end = rec_now();
	}
}

/* Writes one whole record.  A full pipe is waited on for at most REC_WAIT_MS
 * in all, and not at all after a timeout until some write succeeds again;
 * while the process exits, until rec_exit_deadline whatever happened before.
 * Returns 0, or -1 when the record was not written. */
REC_NOI int rec_write(const void *buf, size_t len)
{
	int fd = rec_get_fd();
	uint64_t deadline = 0, since = 0, cpu = 0;
	int retried = 0;
	while (fd >= 0) {
		ssize_t n = write(fd, buf, len);
		if (n == (ssize_t)len) {
			if (unlikely(atomic_load_explicit(&rec_nowait, memory_order_relaxed)))
				atomic_store(&rec_nowait, 0);
			rec_waited_since(since, cpu, 1);
			return 0;
		}
		if (n >= 0) /* cannot happen for a pipe and <= PIPE_BUF */
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			uint64_t now;
			if (rec_wait_round(&deadline, &now) != 0)
				break;
			if (!since) {
				since = now;
				cpu = rec_thread_cpu();
			}
			struct pollfd p = {fd, POLLOUT, 0};
			int ms = (int)((deadline - now + 999999) / 1000000);
			if (poll(&p, 1, ms) < 0 && errno != EINTR)
				break;
			continue;
		}
		if ((errno == EBADF || errno == EPIPE) && !retried++) {
			fd = rec_get_fd();
			continue;
		}
		break;
	}
	rec_waited_since(since, cpu, 0);
	return -1;
}
