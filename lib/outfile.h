/* outfile.h: output files written under a temporary name in the target's
 * directory and renamed into place only when complete, so a failed run never
 * leaves a partial file.  "-" means stdout. */
#ifndef SPANSTAT_OUTFILE_H
#define SPANSTAT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	char *path; /* final name; NULL for stdout/stderr */
	char *tmp;  /* temporary name while open */
	FILE *fp;
};

/* Creates the temporary file now (so an unwritable path fails before the
 * target starts).  append: start from the existing file's contents. */
int outfile_open(struct outfile *of, const char *path, bool append, char **cause);
/* Flushes, fsyncs nothing, renames into place.  Returns 0 or -errno. */
int outfile_commit(struct outfile *of, char **cause);
/* Removes the temporary file. */
void outfile_abort(struct outfile *of);

#endif
