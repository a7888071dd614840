/* outfile.c: output files that appear only when complete.  Each is written
 * to a hidden temporary file beside its final name (same filesystem, so the
 * rename is atomic) and renamed on commit; aborted runs remove it. */
#include "config.h"

#include "outfile.h"

#include "cause.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int outfile_fail(char **cause, int err, const char *what, const char *path)
{
	return cause_set(cause, -err, "%s '%s': %s", what, path, strerror(err));
}

/* Copies the current contents of path (if any) into fd, for --append. */
static int outfile_copy(const char *path, int fd)
{
	char buf[65536];
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : 0;
			close(in);
			return -e;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w < 0) {
				int e = errno;
				close(in);
				return -e;
			}
			off += w;
		}
	}
}

int outfile_open(struct outfile *of, const char *path, bool append, char **cause)
{
	memset(of, 0, sizeof *of);
	if (strcmp(path, "-") == 0) {
		of->fp = stdout;
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return outfile_fail(cause, EISDIR, "cannot write", path);
	/* A device, FIFO or socket (/dev/null, a named pipe) is written in
	 * place: renaming over it would replace it with a regular file. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : 0));
		if (fd < 0 || !(of->fp = fdopen(fd, append ? "a" : "w"))) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return outfile_fail(cause, e, "cannot write", path);
		}
		of->path = strdup(path);
		if (!of->path) {
			fclose(of->fp);
			of->fp = NULL;
			return outfile_fail(cause, ENOMEM, "cannot write", path);
		}
		return 0;
	}
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	if (asprintf(&of->tmp, "%.*s.%s.tmpXXXXXX", dirlen, path, path + dirlen) < 0) {
		of->tmp = NULL;
		return outfile_fail(cause, ENOMEM, "cannot write", path);
	}
	of->path = strdup(path);
	int fd = of->path ? mkostemp(of->tmp, O_CLOEXEC) : -1;
	if (fd < 0) {
		int e = of->path ? errno : ENOMEM;
		free(of->tmp);
		free(of->path);
		memset(of, 0, sizeof *of);
		return outfile_fail(cause, e, "cannot write", path);
	}
	/* mkostemp makes 0600; give the file the mode a plain open would. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, (append && stat(path, &st) == 0) ? (st.st_mode & 07777) : (0666 & ~mask));
	int r = append ? outfile_copy(path, fd) : 0;
	if (r == 0 && !(of->fp = fdopen(fd, "w")))
		r = -errno;
	if (r < 0) {
		close(fd);
		outfile_abort(of);
		return outfile_fail(cause, -r, "cannot write", path);
	}
	if (append)
		fseek(of->fp, 0, SEEK_END);
	return 0;
}

int outfile_commit(struct outfile *of, char **cause)
{
	int r = 0;
	if (!of->fp)
		return 0;
	if (!of->path) { /* stdout */
		if (fflush(of->fp) != 0)
			r = outfile_fail(cause, errno, "cannot write", "standard output");
		of->fp = NULL;
		return r;
	}
	if (ferror(of->fp))
		r = outfile_fail(cause, EIO, "cannot write", of->path);
	if (fclose(of->fp) != 0 && r == 0)
		r = outfile_fail(cause, errno, "cannot write", of->path);
	of->fp = NULL;
	if (r == 0 && of->tmp && rename(of->tmp, of->path) < 0)
		r = outfile_fail(cause, errno, "cannot rename to", of->path);
	if (r < 0 && of->tmp)
		unlink(of->tmp);
	free(of->tmp);
	free(of->path);
	of->tmp = of->path = NULL;
	return r;
}

void outfile_abort(struct outfile *of)
{
	if (of->fp && of->path)
		fclose(of->fp);
	of->fp = NULL;
	if (of->tmp)
		unlink(of->tmp);
	free(of->tmp);
	free(of->path);
	of->tmp = of->path = NULL;
}
