/* rec_exec.c: the exec family, interposed (rec.h).
 *
 * The exec family is interposed (when the build exports it) to send the
 * process's buffered events before the image is replaced, and to hand the
 * new image the pipe's descriptor when its environment still names our pipe
 * (see the top of rec_pipe.c); the new image reconnects by itself and
 * spanstat closes spans left open.  If exec fails, what was done to the
 * descriptors is undone and recording goes on.  The real functions are
 * looked up at load, so that a vfork()ed child calling them never enters the
 * dynamic linker.  In a privileged process the wrappers only call through. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "rec.h"

typedef int (*rec_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*rec_execv_fn)(const char *, char *const[]);
typedef int (*rec_fexecve_fn)(int, char *const[], char *const[]);
static rec_execve_fn rec_real_execve, rec_real_execvpe;
static rec_execv_fn rec_real_execv, rec_real_execvp;
static rec_fexecve_fn rec_real_fexecve;
rec_exit_fn rec_real_exit, rec_real_Exit;
int rec_secure; /* AT_SECURE, as rec_exec_lookup found it */

/* What rec_exec_begin did to the descriptor at `fd` for the new image. */
struct rec_handover {
	int fd;
	int how; /* REC_HAND_* */
};

enum { REC_HAND_NONE, REC_HAND_UNCLOEXEC, REC_HAND_DUP };

REC_NOI void rec_exec_lookup(void)
{
	if (rec_real_execve)
		return;
	rec_secure = getauxval(AT_SECURE) != 0;
	rec_real_execve = (rec_execve_fn)dlsym(RTLD_NEXT, "execve");
	rec_real_execvpe = (rec_execve_fn)dlsym(RTLD_NEXT, "execvpe");
	rec_real_execv = (rec_execv_fn)dlsym(RTLD_NEXT, "execv");
	rec_real_execvp = (rec_execv_fn)dlsym(RTLD_NEXT, "execvp");
	rec_real_fexecve = (rec_fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	rec_real_exit = (rec_exit_fn)dlsym(RTLD_NEXT, "_exit");
	rec_real_Exit = (rec_exit_fn)dlsym(RTLD_NEXT, "_Exit");
}

/* A streaming thread's drops that its own stream could not tell (it was
 * busy in another thread's hands, or its ring stayed full): told through the
 * pipe, so that the old image's drops are never silent.  Its spans end
 * with the image anyway; the count (read while the thread may run on) is
 * the least it dropped. */
static REC_NOI void rec_exec_tell_drops(struct rec_thread *t)
{
	uint64_t dropped = __atomic_load_n(&t->dropped, __ATOMIC_RELAXED);
	if (t->agg || !t->pid || dropped == __atomic_load_n(&t->reported, __ATOMIC_RELAXED))
		return; /* an aggregating thread's tree holds its drops */
	struct wire_resync rs = {rec_sat32(dropped), UINT32_MAX, 0, 0};
	char buf[64];
	size_t len = enc_simple(buf, sizeof buf, WIRE_RESYNC, rec_pid, t->tid, &rs, sizeof rs);
	if (len)
		rec_write(buf, len);
}

/* Sends every thread's buffered events (best effort for other threads). */
static REC_NOI void rec_exec_flush(void)
{
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next) {
		if (!atomic_load(&t->live))
			continue;
		if (atomic_exchange(&t->busy, 1)) {
			rec_exec_tell_drops(t);
			continue;
		}
		if (t->slot || (t->pos <= t->rec + REC_WORDS && t->pos >= t->rec + REC_FIRST)) {
			if (t->pid)
				rec_filter_settle(t, rec_now());
			rec_flush(t);
		}
		rec_exec_tell_drops(t);
		atomic_store(&t->busy, 0);
	}
	rec_send_waited(); /* the new image starts from 0 */
	rec_plt_tell();
}

/* The value of `name` (with its '=') in envp, or NULL. */
static REC_NOI const char *rec_env_value(char *const envp[], const char *name, size_t len)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0)
			return envp[i] + len;
	return NULL;
}

/* The descriptor number SPANSTAT_FD names in envp, if envp names our pipe
 * (SPANSTAT_PIPE_ID); else -1. */
static REC_NOI int rec_env_fd(char *const envp[])
{
	const char *id = rec_env_value(envp, SPANSTAT_ENV_PIPE_ID "=", sizeof SPANSTAT_ENV_PIPE_ID);
	const char *fds = rec_env_value(envp, SPANSTAT_ENV_FD "=", sizeof SPANSTAT_ENV_FD);
	if (!id || !fds || !*fds)
		return -1;
	char *end;
	unsigned long long dev = strtoull(id, &end, 10), ino;
	if (*end != ':')
		return -1;
	ino = strtoull(end + 1, &end, 10);
	if (*end || (dev_t)dev != rec_dev || (ino_t)ino != rec_ino)
		return -1;
	long v = strtol(fds, &end, 10);
	return !*end && v >= 0 && v < INT_MAX ? (int)v : -1;
}

/* Before an exec: flushes, then gives the new image a descriptor of the pipe
 * at the number its environment names, if that number is free or already
 * holds a write end of our pipe (a close-on-exec one: ours, inherited). */
static REC_NOI void rec_exec_begin(char *const envp[], struct rec_handover *h)
{
	h->fd = -1;
	h->how = REC_HAND_NONE;
	rec_exec_lookup(); /* called before our constructor ran */
	if (rec_secure || !__atomic_load_n(&rec_on, __ATOMIC_RELAXED))
		return;
	/* the last words of this image wait for room as at exit, even after a
	 * wait that timed out (rec_nowait): a drop's tale, right after the
	 * drop, finds the ring still full and would be lost without a word.
	 * Once such a wait timed out too (rec_nowait 2), execs that fail
	 * again and again do not wait until a write gets through. */
	uint64_t final = rec_mono() + REC_EXIT_WAIT_MS * UINT64_C(1000000), none = 0;
	int mine = atomic_load(&rec_nowait) != 2 &&
		   atomic_compare_exchange_strong(&rec_exit_deadline, &none, final);
	if (mine) /* 1 after the flush: its own wait timed out */
		atomic_store(&rec_nowait, 0);
	rec_exec_flush();
	if (mine) { /* recording goes on if the exec fails */
		atomic_compare_exchange_strong(&rec_exit_deadline, &final, 0);
		int timed_out = 1;
		atomic_compare_exchange_strong(&rec_nowait, &timed_out, 2);
	}
	int n = rec_env_fd(envp);
	if (n < 0)
		return;
	int fdfl = fcntl(n, F_GETFD);
	if (fdfl >= 0) {
		if (!rec_is_pipe(n) || (fcntl(n, F_GETFL) & O_ACCMODE) != O_WRONLY ||
		    !(fdfl & FD_CLOEXEC) || fcntl(n, F_SETFD, fdfl & ~FD_CLOEXEC) != 0)
			return;
		h->fd = n;
		h->how = REC_HAND_UNCLOEXEC;
		return;
	}
	if (errno != EBADF)
		return;
	/* A description of our own, not the one our writes are marked on. */
	int w = atomic_load(&rec_fd), tmp = rec_reopen_fd(w, O_WRONLY);
	int d = fcntl(tmp >= 0 ? tmp : w, F_DUPFD, n); /* n if n is (still) free */
	if (tmp >= 0)
		close(tmp);
	if (d == n) {
		h->fd = n;
		h->how = REC_HAND_DUP;
	} else if (d >= 0) {
		close(d);
	}
}

/* The exec failed: undo rec_exec_begin, keeping errno. */
static REC_NOI void rec_exec_failed(const struct rec_handover *h)
{
	int e = errno;
	if (h->how == REC_HAND_UNCLOEXEC)
		fcntl(h->fd, F_SETFD, fcntl(h->fd, F_GETFD) | FD_CLOEXEC);
	else if (h->how == REC_HAND_DUP)
		close(h->fd);
	errno = e;
}

static REC_NOI int rec_no_exec(void)
{
	errno = ENOSYS;
	return -1;
}

REC_API int execve(const char *path, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_execve)
		return rec_no_exec();
	int r = rec_real_execve(path, argv, envp);
	rec_exec_failed(&h);
	return r;
}

REC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_execvpe)
		return rec_no_exec();
	int r = rec_real_execvpe(file, argv, envp);
	rec_exec_failed(&h);
	return r;
}

REC_API int execv(const char *path, char *const argv[])
{
	struct rec_handover h;
	rec_exec_begin(environ, &h);
	if (!rec_real_execv)
		return rec_no_exec();
	int r = rec_real_execv(path, argv);
	rec_exec_failed(&h);
	return r;
}

REC_API int execvp(const char *file, char *const argv[])
{
	struct rec_handover h;
	rec_exec_begin(environ, &h);
	if (!rec_real_execvp)
		return rec_no_exec();
	int r = rec_real_execvp(file, argv);
	rec_exec_failed(&h);
	return r;
}

REC_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_fexecve)
		return rec_no_exec();
	int r = rec_real_fexecve(fd, argv, envp);
	rec_exec_failed(&h);
	return r;
}

/* execl, execlp, execle: collect the variadic list, then the v forms. */
#define REC_VA_ARGV(arg0, ap, argv, envp_out)                     \
	do {                                                      \
		size_t n_ = 1;                                    \
		va_start(ap, arg0);                               \
		while (va_arg(ap, char *))                        \
			n_++;                                     \
		va_end(ap);                                       \
		argv = __builtin_alloca((n_ + 1) * sizeof *argv); \
		argv[0] = (char *)arg0;                           \
		va_start(ap, arg0);                               \
		for (size_t i_ = 1; i_ <= n_; i_++)               \
			argv[i_] = va_arg(ap, char *);            \
		envp_out;                                         \
		va_end(ap);                                       \
	} while (0)

REC_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;
	REC_VA_ARGV(arg, ap, argv, (void)0);
	return execv(path, argv);
}

REC_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;
	REC_VA_ARGV(arg, ap, argv, (void)0);
	return execvp(file, argv);
}

REC_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp = NULL;
	REC_VA_ARGV(arg, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}
