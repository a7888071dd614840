/* outfile.h: output files that appear only when complete and never destroy
 * what they should not.  "-" means stdout.
 *
 * A regular file is written to an anonymous O_TMPFILE file in its directory
 * (a hidden named temporary file where the filesystem has no O_TMPFILE) and
 * put in place by rename at commit, keeping the replaced file's mode (and,
 * as root, its owner).  A symlinked final name is followed: the file it
 * points to is replaced and the link stays a link.  A file with other hard
 * links is rewritten in place at commit so every name sees the new contents
 * (the one case that is not atomic), as is a file the directory does not let
 * us rename over or create a temporary file beside (a sticky or read-only
 * directory, a bind mount): written in place, as a shell's > would.  A file
 * that is spanstat's own stdout or stderr is written through that
 * descriptor, after what the target wrote there.  --append writes the whole output with
 * one O_APPEND write at commit.  Devices and FIFOs are written in place; a
 * FIFO nobody reads fails at open.  Every later operation is relative to the
 * directory opened at outfile_open(), so renaming that directory meanwhile
 * leaves nothing behind and the output lands in the renamed directory.
 *
 * The caller owns struct outfile; outfile_commit() or outfile_abort() frees
 * what outfile_open() took, also when they fail. */
#ifndef SPANSTAT_OUTFILE_H
#define SPANSTAT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

enum outfile_flags {
	OUTFILE_APPEND = 1,	/* add to the end of the file */
	OUTFILE_NAMED_TEMP = 2, /* never use O_TMPFILE (as on filesystems without it) */
};

struct outfile {
	char *path;    /* the name as given, for messages; NULL for stdout */
	FILE *fp;      /* what the writers write to */
	int kind;      /* private: stdout, replace, append or in place */
	int dirfd;     /* the final file's directory, symlinks resolved, or -1 */
	char *name;    /* the final file's name in dirfd */
	int fd;	       /* append: the existing file opened O_APPEND, or -1 */
	char *tmp;     /* a named temporary file in dirfd, or NULL */
	bool copy;     /* commit rewrites path in place (no name to rename over) */
	bool in_place; /* commit rewrites dirfd/name in place (no temp beside it) */
	char *buf;     /* append: the output, collected in memory */
	size_t len;
	/* What the output is, to tell two outputs naming one file: the file's
	 * (dev, ino) when it exists, else its directory's plus name. */
	bool has_id, exists, null_device;
	dev_t dev;
	ino_t ino;
	struct outfile_sink *sink; /* private: the stream's descriptor and first error */
	int sink_fd;
};

/* Opens path for writing (flags: enum outfile_flags): everything that can
 * fail before the target starts fails here, with *cause set and nothing
 * created or changed.  Returns 0 or -errno. */
int outfile_open(struct outfile *of, const char *path, int flags, char **cause);
/* The first error (an errno) a write to the output met, 0 for none: what a
 * writer that saw only ferror() failed with. */
int outfile_error(const struct outfile *of);
/* err, a writer's -errno for of, or the write's own error in place of the
 * -EIO a writer that saw only ferror() returns. */
int outfile_why(const struct outfile *of, int err);
/* Puts the output in place.  Returns 0 or -errno (then nothing is left
 * behind and an existing file keeps its contents, except a hard-linked one
 * whose rewrite failed halfway). */
int outfile_commit(struct outfile *of, char **cause);
/* Whether commit puts a whole new file in place (false: the output is a
 * stream written as it goes, a FIFO, a device, spanstat's own stdout or
 * stderr, or appended to). */
bool outfile_replaces(const struct outfile *of);
/* Discards the output: removes any temporary file, changes nothing else. */
void outfile_abort(struct outfile *of);
/* Whether two open outputs name one file (the null device never counts). */
bool outfile_same(const struct outfile *a, const struct outfile *b);
/* Whether an open output is the existing file with this (dev, ino). */
bool outfile_is(const struct outfile *of, dev_t dev, ino_t ino);

#endif
