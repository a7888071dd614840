/* test_outfile.c: output files appear only when committed, replace or
 * append as asked, and leave nothing behind when aborted or unwritable. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static int entries(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

int main(void)
{
	char dir[] = "/tmp/outfile-testXXXXXX", path[256], *cause = NULL;
	struct outfile of;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/out.txt", dir);

	is_int(outfile_open(&of, path, false, &cause), 0, "open creates a temporary file");
	ok(access(path, F_OK) != 0, "the final name does not exist before commit");
	is_int(entries(dir), 1, "one temporary file in the directory");
	fputs("one\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit");
	is_str(slurp(path), "one\n", "committed contents");
	is_int(entries(dir), 1, "no temporary file left after commit");

	is_int(outfile_open(&of, path, true, &cause), 0, "open for append");
	fputs("two\n", of.fp);
	is_str(slurp(path), "one\n", "the old file is untouched until commit");
	is_int(outfile_commit(&of, &cause), 0, "commit append");
	is_str(slurp(path), "one\ntwo\n", "appended");

	is_int(outfile_open(&of, path, false, &cause), 0, "open to replace");
	fputs("three\n", of.fp);
	outfile_abort(&of);
	is_str(slurp(path), "one\ntwo\n", "abort keeps the old file");
	is_int(entries(dir), 1, "abort removes the temporary file");

	char missing[300];
	snprintf(missing, sizeof missing, "%s/no/such/out.txt", dir);
	is_int(outfile_open(&of, missing, false, &cause), -ENOENT, "missing directory fails");
	char want[400];
	snprintf(want, sizeof want, "cannot write '%s': No such file or directory", missing);
	is_str(cause, want, "the message names the path and the reason");
	free(cause);
	cause = NULL;
	is_int(outfile_open(&of, dir, false, &cause), -EISDIR, "a directory fails");
	free(cause);

	struct stat st;
	umask(022);
	is_int(outfile_open(&of, path, false, &cause), 0, "reopen");
	outfile_commit(&of, &cause);
	stat(path, &st);
	is_int(st.st_mode & 0777, 0644, "mode follows the umask like a plain open");

	/* devices are written in place, never replaced by a regular file */
	is_int(outfile_open(&of, "/dev/null", false, &cause), 0, "open /dev/null");
	fputs("gone\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit /dev/null");
	ok(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is still a device");
	is_int(entries(dir), 1, "nothing else created");

	unlink(path);
	rmdir(dir);
	return tap_done();
}
