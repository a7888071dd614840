/* outfile.c: output files that appear only when complete (see outfile.h):
 * resolving the final name, the temporary file and how it is put in place,
 * --append's single write, and telling whether two outputs are one file. */
#include "config.h"

#include "outfile.h"

#include "cause.h"
#include "sigmask.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

enum { OUTFILE_STDOUT, OUTFILE_REPLACE, OUTFILE_APPENDING, OUTFILE_INPLACE };

/* As the kernel's MAXSYMLINKS. */
enum { OUTFILE_MAX_LINKS = 40 };

/* The descriptor under an output's stream, and the first error a write
 * to it met: stdio keeps only "an error happened", and a writer that finds
 * ferror() set would otherwise say EIO for a full disk or a closed pipe. */
struct outfile_sink {
	int fd;
	int err;
};

static ssize_t outfile_sink_write(void *cookie, const char *buf, size_t len)
{
	struct outfile_sink *k = cookie;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(k->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!k->err)
				k->err = n < 0 ? errno : ENOSPC;
			if (n == 0)
				errno = ENOSPC;
			/* what was written counts; nothing: the error */
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int outfile_sink_close(void *cookie)
{
	struct outfile_sink *k = cookie;
	int r = k->fd >= 0 ? close(k->fd) : 0;
	k->fd = -1;
	return r;
}

/* fdopen(fd, mode) whose stream remembers its first write error
 * (outfile_error); fd is of's from then on, closed with the stream. */
static FILE *outfile_fdopen(struct outfile *of, int fd, const char *mode)
{
	struct outfile_sink *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->fd = fd;
	FILE *fp = fopencookie(
		k, mode,
		(cookie_io_functions_t){.write = outfile_sink_write, .close = outfile_sink_close});
	if (!fp) {
		free(k);
		return NULL;
	}
	of->sink = k;
	of->sink_fd = fd;
	return fp;
}

int outfile_error(const struct outfile *of)
{
	return of->sink ? of->sink->err : 0;
}

int outfile_why(const struct outfile *of, int err)
{
	int e = outfile_error(of);
	return err == -EIO && e ? -e : err;
}

/* -errno for a stream that failed: the write's own error when it is known. */
static int outfile_stream_err(const struct outfile *of)
{
	int e = outfile_error(of);
	return -(e ? e : errno ? errno : EIO);
}

static int outfile_fail(char **cause, int err, const char *path)
{
	return cause_set(cause, -err, "cannot write '%s': %s", path, strerror(err));
}

/* Resolves path to an open directory and a final name in it that is not a
 * symlink: a symlinked final component is followed (the link stays, the
 * file it points to is the output), the directories are opened as the
 * kernel resolves them.  Returns 0 or -errno. */
static int outfile_resolve(const char *path, int *dirfd, char **name)
{
	char *cur = strdup(path);
	int base = AT_FDCWD, e = ENOMEM;

	for (int hops = 0; cur; hops++) {
		char *slash = strrchr(cur, '/');
		const char *leaf = slash ? slash + 1 : cur;
		int nd;
		if (!slash)
			nd = openat(base, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		else if (slash == cur)
			nd = openat(base, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		else {
			*slash = 0;
			nd = openat(base, cur, O_PATH | O_DIRECTORY | O_CLOEXEC);
			*slash = '/';
		}
		e = errno;
		if (base != AT_FDCWD)
			close(base);
		base = nd;
		if (nd < 0)
			break;
		e = EISDIR;
		if (!*leaf || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0)
			break;
		struct stat st;
		if (fstatat(base, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode)) {
			e = ENOMEM;
			if (!(*name = strdup(leaf)))
				break;
			free(cur);
			*dirfd = base;
			return 0;
		}
		e = ELOOP;
		if (hops == OUTFILE_MAX_LINKS)
			break;
		char target[PATH_MAX];
		ssize_t n = readlinkat(base, leaf, target, sizeof target - 1);
		e = n < 0 ? errno : ENOENT;
		if (n <= 0)
			break;
		target[n] = 0;
		free(cur);
		cur = strdup(target);
		e = ENOMEM;
	}
	free(cur);
	if (base >= 0)
		close(base);
	return -e;
}

/* A name for a hidden temporary file beside name, different on each call. */
static char *outfile_tmpname(const char *name)
{
	static unsigned seq;
	struct timespec ts;
	char *s;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long x =
		(unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 20) ^ (++seq * 2654435761u);
	if (asprintf(&s, ".%.200s.tmp%08lx", name, x & 0xffffffffUL) < 0)
		return NULL;
	return s;
}

/* Gives fd the mode of the file it replaces, and as root its owner. */
static int outfile_keep_mode(int fd, const struct stat *old)
{
	if (geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) < 0)
		return -errno;
	return fchmod(fd, old->st_mode & 07777) < 0 ? -errno : 0;
}

static void outfile_set_id(struct outfile *of, const struct stat *st, bool exists)
{
	struct stat null;
	of->has_id = true;
	of->exists = exists;
	of->dev = st->st_dev;
	of->ino = st->st_ino;
	of->null_device = exists && S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 &&
			  S_ISCHR(null.st_mode) && st->st_rdev == null.st_rdev;
}

static void outfile_free(struct outfile *of)
{
	if (of->path && of->fd >= 0) /* a zeroed struct owns no fd */
		close(of->fd);
	if (of->path && of->dirfd >= 0)
		close(of->dirfd);
	free(of->path);
	free(of->name);
	free(of->tmp);
	free(of->buf);
	free(of->sink);
	memset(of, 0, sizeof *of);
	of->fd = of->dirfd = -1;
}

/* A device, FIFO or socket is written in place: renaming over it would
 * replace it with a regular file.  A FIFO with no reader fails now rather
 * than hang before the target starts. */
static int outfile_open_special(struct outfile *of, const struct stat *st, int flags, char **cause)
{
	bool append = flags & OUTFILE_APPEND;
	int fd = open(of->path,
		      O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0));
	if (fd < 0 && errno == ENXIO && S_ISFIFO(st->st_mode))
		return cause_set(cause, -ENXIO, "cannot write '%s': no process is reading the FIFO",
				 of->path);
	if (fd < 0)
		return outfile_fail(cause, errno, of->path);
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    !(of->fp = outfile_fdopen(of, fd, "w"))) {
		int e = errno;
		close(fd);
		return outfile_fail(cause, e, of->path);
	}
	of->kind = OUTFILE_INPLACE;
	outfile_set_id(of, st, true);
	return 0;
}

/* A regular file that is spanstat's own stdout or stderr, which the target
 * inherits and writes first (-o /dev/stdout, or -o log with > log): written
 * through that descriptor where the target left off, since replacing the
 * file would throw the target's output away.  Returns 1 when it is one, 0
 * when not, or -errno. */
static int outfile_open_std(struct outfile *of, const struct stat *given, char **cause)
{
	for (int std = STDOUT_FILENO; std <= STDERR_FILENO; std++) {
		struct stat st;
		if (fstat(std, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != given->st_dev ||
		    st.st_ino != given->st_ino)
			continue;
		int fd = fcntl(std, F_DUPFD_CLOEXEC, 3);
		if (fd < 0 || !(of->fp = outfile_fdopen(of, fd, "w"))) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return outfile_fail(cause, e, of->path);
		}
		of->kind = OUTFILE_INPLACE;
		outfile_set_id(of, given, true);
		return 1;
	}
	return 0;
}

/* The file the output is written to until commit: anonymous (O_TMPFILE)
 * where the filesystem and /proc allow, else named and hidden.  Returns an
 * fd open for reading and writing, or -errno. */
static int outfile_create_temp(struct outfile *of, int flags, mode_t mode)
{
	if (!(flags & OUTFILE_NAMED_TEMP) && access("/proc/self/fd", X_OK) == 0) {
		int fd = openat(of->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
		if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
			return fd < 0 ? -errno : fd;
	}
	for (int tries = 0; tries < 100; tries++) {
		char *tmp = outfile_tmpname(of->name);
		if (!tmp)
			return -ENOMEM;
		int fd = openat(of->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
				mode);
		if (fd >= 0) {
			of->tmp = tmp;
			return fd;
		}
		int e = errno;
		free(tmp);
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

int outfile_open(struct outfile *of, const char *path, int flags, char **cause)
{
	bool append = flags & OUTFILE_APPEND;
	struct stat st;
	int r, fd;

	memset(of, 0, sizeof *of);
	of->fd = of->dirfd = -1;
	if (strcmp(path, "-") == 0) {
		of->kind = OUTFILE_STDOUT;
		of->fp = stdout;
		if (fstat(STDOUT_FILENO, &st) == 0)
			outfile_set_id(of, &st, true);
		return 0;
	}
	if (!*path)
		return outfile_fail(cause, ENOENT, path);
	if (!(of->path = strdup(path)))
		return outfile_fail(cause, ENOMEM, path);
	struct stat given;
	bool found = stat(path, &given) == 0;
	if (found && S_ISDIR(given.st_mode)) {
		r = outfile_fail(cause, EISDIR, path);
		goto fail;
	}
	if (found && !S_ISREG(given.st_mode)) {
		if ((r = outfile_open_special(of, &given, flags, cause)) < 0)
			goto fail;
		return 0;
	}
	if (found && (r = outfile_open_std(of, &given, cause)) != 0) {
		if (r < 0)
			goto fail;
		return 0;
	}
	if ((r = outfile_resolve(path, &of->dirfd, &of->name)) < 0) {
		r = outfile_fail(cause, -r, path);
		goto fail;
	}
	bool exists = fstatat(of->dirfd, of->name, &st, 0) == 0;
	/* A file reached through a name that readlink cannot give back (a
	 * deleted file open in another process, through /proc): write it
	 * through the path as given, as the hard-link case does. */
	if (found && (!exists || st.st_dev != given.st_dev || st.st_ino != given.st_ino)) {
		of->copy = true;
		st = given;
		exists = true;
	}
	if (!exists && errno != ENOENT) {
		r = outfile_fail(cause, errno, path);
		goto fail;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		r = outfile_fail(cause, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, path);
		goto fail;
	}
	if (exists) {
		outfile_set_id(of, &st, true);
		/* As a shell's > would: a file we may not open for writing is
		 * not ours to replace, whatever the directory allows. */
		int wr = O_WRONLY | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0);
		fd = of->copy ? open(path, wr) : openat(of->dirfd, of->name, wr);
		if (fd < 0) {
			r = outfile_fail(cause, errno, path);
			goto fail;
		}
		if (append)
			of->fd = fd;
		else
			close(fd);
	} else {
		struct stat dst;
		if (fstat(of->dirfd, &dst) == 0)
			outfile_set_id(of, &dst, false);
	}
	if (append) {
		/* A missing log is created at commit: check now that it can be. */
		if (!exists && faccessat(of->dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
			r = outfile_fail(cause, errno, path);
			goto fail;
		}
		if (!(of->fp = open_memstream(&of->buf, &of->len))) {
			r = outfile_fail(cause, errno, path);
			goto fail;
		}
		of->kind = OUTFILE_APPENDING;
		return 0;
	}
	fd = outfile_create_temp(of, flags, exists ? 0600 : 0666);
	if (exists && (fd == -EACCES || fd == -EPERM || fd == -EROFS)) {
		/* The directory takes no new name but the file may be written,
		 * as a shell's > would: stage the output elsewhere and copy it
		 * in at commit. */
		FILE *t = tmpfile();
		fd = t ? fcntl(fileno(t), F_DUPFD_CLOEXEC, 3) : -1;
		fd = fd < 0 ? -errno : fd;
		if (t)
			fclose(t);
		of->in_place = true;
	}
	if (fd < 0) {
		r = outfile_fail(cause, -fd, path);
		goto fail;
	}
	if ((exists && !of->in_place && (r = outfile_keep_mode(fd, &st)) < 0) ||
	    !(of->fp = outfile_fdopen(of, fd, "w"))) {
		int e = r < 0 ? -r : errno;
		close(fd);
		if (of->tmp)
			unlinkat(of->dirfd, of->tmp, 0);
		r = outfile_fail(cause, e, path);
		goto fail;
	}
	of->kind = OUTFILE_REPLACE;
	return 0;
fail:
	outfile_free(of);
	return r;
}

/* Writes all of buf to fd. */
static int outfile_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* --append: the whole output in one O_APPEND write, so concurrent runs
 * appending to one log never interleave and the log is never rewritten. */
static int outfile_commit_append(struct outfile *of)
{
	int r = fclose(of->fp) == 0 ? 0 : -errno;
	of->fp = NULL;
	if (r < 0)
		return r;
	bool created = false; /* by this commit: taken back if nothing goes in */
	if (of->fd < 0) {
		of->fd =
			openat(of->dirfd, of->name,
			       O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
		created = of->fd >= 0;
		if (of->fd < 0 && errno == EEXIST)
			of->fd = openat(of->dirfd, of->name,
					O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
		if (of->fd < 0)
			return -errno;
	}
	/* the write as outfile_write_all's, counting what went in: a write
	 * cut short (a full disk) takes its part back off the log's end, as
	 * long as no other appender wrote after it */
	size_t done = 0;
	while (done < of->len && r == 0) {
		ssize_t w = write(of->fd, of->buf + done, of->len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = w < 0 ? -errno : -ENOSPC;
		else
			done += (size_t)w;
	}
	struct stat st;
	off_t end = done ? lseek(of->fd, 0, SEEK_CUR) : -1;
	if (r < 0 && end >= (off_t)done && fstat(of->fd, &st) == 0 && st.st_size == end)
		(void)!ftruncate(of->fd, end - (off_t)done);
	if (r < 0 && created && fstat(of->fd, &st) == 0 && st.st_size == 0)
		unlinkat(of->dirfd, of->name, 0);
	if (close(of->fd) < 0 && r == 0)
		r = -errno;
	of->fd = -1;
	return r;
}

/* A file with other hard links: rename would split them, so the new
 * contents are copied into the existing file.  Not atomic: a reader may see
 * it short, and a failure halfway leaves it cut; signals are held meanwhile
 * so that none cuts it. */
static int outfile_copy_into(struct outfile *of, int from)
{
	char buf[65536];
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	int to = of->copy ? open(of->path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
			  : openat(of->dirfd, of->name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (to < 0) {
		int e = errno;
		sigmask_set(SIG_SETMASK, &old, NULL);
		return -e;
	}
	/* the room first, past the old end without moving it: a full disk
	 * then leaves the old contents whole (a file system without fallocate
	 * is written as it comes); the new contents are written over the old,
	 * and the file cut to their size */
	struct stat fs;
	int r = fstat(from, &fs) < 0 ? -errno : 0;
	if (r == 0 && fs.st_size > 0 && fallocate(to, FALLOC_FL_KEEP_SIZE, 0, fs.st_size) < 0 &&
	    errno != EOPNOTSUPP && errno != ENOSYS)
		r = -errno;
	off_t off = 0;
	while (r == 0) {
		ssize_t n = pread(from, buf, sizeof buf, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		if ((r = outfile_write_all(to, buf, (size_t)n)) < 0)
			break;
		off += n;
	}
	if (r == 0 && ftruncate(to, off) < 0)
		r = -errno;
	if (close(to) < 0 && r == 0)
		r = -errno;
	sigmask_set(SIG_SETMASK, &old, NULL);
	return r;
}

/* Links the anonymous file fd into place: a hidden name, then rename over
 * the final name.  Every signal is held meanwhile, so none can leave the
 * hidden name behind. */
static int outfile_link(struct outfile *of, int fd)
{
	char proc[64];
	sigset_t all, old;
	int r = -EEXIST;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (int tries = 0; tries < 100 && r == -EEXIST; tries++) {
		char *tmp = outfile_tmpname(of->name);
		if (!tmp) {
			r = -ENOMEM;
			break;
		}
		r = linkat(AT_FDCWD, proc, of->dirfd, tmp, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
		if (r == 0 && renameat(of->dirfd, tmp, of->dirfd, of->name) < 0) {
			r = -errno;
			unlinkat(of->dirfd, tmp, 0);
			if (r == -EEXIST)
				r = -EIO; /* not a name clash: do not retry */
		}
		free(tmp);
	}
	sigmask_set(SIG_SETMASK, &old, NULL);
	return r;
}

static int outfile_commit_replace(struct outfile *of)
{
	int fd = of->sink_fd;
	struct stat cur;
	int r = 0;

	errno = 0;
	if (fflush(of->fp) != 0 || ferror(of->fp))
		r = outfile_stream_err(of);
	bool exists =
		(of->copy ? stat(of->path, &cur) : fstatat(of->dirfd, of->name, &cur, 0)) == 0 &&
		S_ISREG(cur.st_mode);
	if (r < 0)
		;
	else if (of->copy || of->in_place || (exists && cur.st_nlink > 1))
		r = outfile_copy_into(of, fd);
	else if (exists && (r = outfile_keep_mode(fd, &cur)) < 0)
		;
	else if (of->tmp) {
		if (renameat(of->dirfd, of->tmp, of->dirfd, of->name) < 0)
			r = -errno;
		else {
			free(of->tmp);
			of->tmp = NULL;
		}
	} else
		r = outfile_link(of, fd);
	/* The name cannot be renamed over (a sticky directory and someone
	 * else's file, a bind-mounted file): write the file in place, as a
	 * shell's > would, rather than lose the output. */
	if (exists && (r == -EPERM || r == -EACCES || r == -EBUSY || r == -EXDEV))
		r = outfile_copy_into(of, fd);
	if (of->tmp)
		unlinkat(of->dirfd, of->tmp, 0);
	if (fclose(of->fp) != 0 && r == 0)
		r = -errno;
	of->fp = NULL;
	return r;
}

int outfile_commit(struct outfile *of, char **cause)
{
	int r = 0;

	if (!of->fp)
		return 0;
	switch (of->kind) {
	case OUTFILE_STDOUT:
		of->fp = NULL;
		if (fflush(stdout) != 0)
			r = cause_set(cause, -errno, "cannot write standard output: %s",
				      strerror(errno));
		outfile_free(of);
		return r;
	case OUTFILE_INPLACE:
		errno = 0;
		r = fflush(of->fp) != 0 || ferror(of->fp) ? outfile_stream_err(of) : 0;
		if (fclose(of->fp) != 0 && r == 0)
			r = -errno;
		of->fp = NULL;
		break;
	case OUTFILE_APPENDING:
		r = outfile_commit_append(of);
		break;
	default:
		r = outfile_commit_replace(of);
		break;
	}
	if (r < 0)
		outfile_fail(cause, -r, of->path);
	outfile_free(of);
	return r;
}

void outfile_abort(struct outfile *of)
{
	if (of->fp && of->kind != OUTFILE_STDOUT)
		fclose(of->fp);
	of->fp = NULL;
	if (of->path && of->tmp && of->dirfd >= 0)
		unlinkat(of->dirfd, of->tmp, 0);
	outfile_free(of);
}

bool outfile_replaces(const struct outfile *of)
{
	return of->kind == OUTFILE_REPLACE;
}

bool outfile_same(const struct outfile *a, const struct outfile *b)
{
	if (!a->has_id || !b->has_id || a->exists != b->exists || a->null_device ||
	    b->null_device || a->dev != b->dev || a->ino != b->ino)
		return false;
	return a->exists || (a->name && b->name && strcmp(a->name, b->name) == 0);
}

bool outfile_is(const struct outfile *of, dev_t dev, ino_t ino)
{
	return of->has_id && of->exists && of->dev == dev && of->ino == ino;
}
