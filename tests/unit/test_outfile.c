/* test_outfile.c: output files appear only when committed, replace or
 * append as asked, follow symlinks and keep hard links, survive their
 * directory being renamed, tell two spellings of one file apart from two
 * files, and leave nothing behind when aborted or unwritable. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static char dir[] = "/tmp/outfile-testXXXXXX";

/* Entries in a directory of the test's, "." and ".." aside. */
static int entries(const char *d)
{
	int n = 0;
	DIR *dp = opendir(d);
	struct dirent *e;
	while (dp && (e = readdir(dp)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (dp)
		closedir(dp);
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

static void spew(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* A path in the test directory. */
static const char *at(const char *name)
{
	static char bufs[4][512];
	static int i;
	char *b = bufs[i++ % 4];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
	return b;
}

static void empty_dir(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", dir, dir);
	if (system(cmd) != 0)
		exit(1);
}

static void test_replace(int flags, const char *how)
{
	struct outfile of;
	char *cause = NULL;
	const char *path = at("out.txt");

	empty_dir();
	is_int(outfile_open(&of, path, flags, &cause), 0, "%s: open", how);
	ok(access(path, F_OK) != 0, "%s: the final name does not exist before commit", how);
	is_int(entries(dir), flags & OUTFILE_NAMED_TEMP ? 1 : 0, "%s: the temporary file is %s",
	       how, flags & OUTFILE_NAMED_TEMP ? "named" : "anonymous");
	fputs("one\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "%s: commit", how);
	is_str(slurp(path), "one\n", "%s: committed contents", how);
	is_int(entries(dir), 1, "%s: no temporary file left after commit", how);

	is_int(outfile_open(&of, path, flags, &cause), 0, "%s: open to replace", how);
	ok(outfile_replaces(&of), "%s: a regular file is replaced whole", how);
	fputs("three\n", of.fp);
	outfile_abort(&of);
	is_str(slurp(path), "one\n", "%s: abort keeps the old file", how);
	is_int(entries(dir), 1, "%s: abort removes the temporary file", how);

	chmod(path, 0640);
	struct stat before, after;
	stat(path, &before);
	is_int(outfile_open(&of, path, flags, &cause), 0, "%s: open a 0640 file", how);
	fputs("two\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "%s: commit over it", how);
	stat(path, &after);
	is_int(after.st_mode & 07777, 0640, "%s: replacing keeps the mode", how);
	ok(after.st_ino != before.st_ino, "%s: replaced by rename, not rewritten", how);
	is_str(slurp(path), "two\n", "%s: new contents", how);

	unlink(path);
	umask(022);
	is_int(outfile_open(&of, path, flags, &cause), 0, "%s: open a new file", how);
	outfile_commit(&of, &cause);
	stat(path, &after);
	is_int(after.st_mode & 0777, 0644, "%s: a new file's mode follows the umask", how);
}

/* The directory is renamed between open and commit: the output lands in
 * the renamed directory and nothing is left anywhere else. */
static void test_renamed_dir(int flags, const char *how)
{
	struct outfile of;
	char *cause = NULL;

	empty_dir();
	mkdir(at("d"), 0755);
	is_int(outfile_open(&of, at("d/out.txt"), flags, &cause), 0, "%s: open in d/", how);
	fputs("moved\n", of.fp);
	ok(rename(at("d"), at("e")) == 0, "%s: rename d to e", how);
	is_int(outfile_commit(&of, &cause), 0, "%s: commit after the rename", how);
	is_str(slurp(at("e/out.txt")), "moved\n", "%s: the output is in e/", how);
	is_int(entries(at("e")), 1, "%s: and nothing else is", how);
	is_int(entries(dir), 1, "%s: no d/ recreated", how);

	mkdir(at("d"), 0755);
	is_int(outfile_open(&of, at("d/out.txt"), flags, &cause), 0, "%s: open in d/ again", how);
	rename(at("d"), at("f"));
	outfile_abort(&of);
	is_int(entries(at("f")), 0, "%s: abort after a rename leaves nothing", how);
}

static void test_append(void)
{
	struct outfile of;
	char *cause = NULL;
	struct stat before, after;
	const char *path = at("log");

	empty_dir();
	spew(path, "one\n");
	stat(path, &before);
	is_int(outfile_open(&of, path, OUTFILE_APPEND, &cause), 0, "open for append");
	ok(!outfile_replaces(&of), "an appended file is not replaced");
	fputs("two\n", of.fp);
	is_str(slurp(path), "one\n", "nothing is appended before commit");
	is_int(outfile_commit(&of, &cause), 0, "commit append");
	is_str(slurp(path), "one\ntwo\n", "appended");
	stat(path, &after);
	ok(after.st_ino == before.st_ino, "appending keeps the inode");
	is_int(entries(dir), 1, "no temporary file");

	is_int(outfile_open(&of, path, OUTFILE_APPEND, &cause), 0, "open for append again");
	fputs("lost\n", of.fp);
	outfile_abort(&of);
	is_str(slurp(path), "one\ntwo\n", "an aborted append adds nothing");

	is_int(outfile_open(&of, at("new"), OUTFILE_APPEND, &cause), 0, "append to a new file");
	ok(access(at("new"), F_OK) != 0, "it is not created before commit");
	outfile_abort(&of);
	ok(access(at("new"), F_OK) != 0, "nor by abort");
	is_int(outfile_open(&of, at("new"), OUTFILE_APPEND, &cause), 0, "append to a new file");
	fputs("first\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit it");
	is_str(slurp(at("new")), "first\n", "created at commit");
}

static void test_links(void)
{
	struct outfile of;
	char *cause = NULL;
	struct stat st, st2;

	empty_dir();
	mkdir(at("real"), 0755);
	spew(at("real/target"), "old\n");
	symlink("real/target", at("link"));
	is_int(outfile_open(&of, at("link"), 0, &cause), 0, "open through a symlink");
	fputs("new\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit through it");
	ok(lstat(at("link"), &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
	is_str(slurp(at("real/target")), "new\n", "the file it points to has the output");
	is_int(entries(at("real")), 1, "no temporary file beside the target");

	symlink("link", at("link2"));
	is_int(outfile_open(&of, at("link2"), OUTFILE_APPEND, &cause), 0, "append through two");
	fputs("more\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit");
	ok(lstat(at("link2"), &st) == 0 && S_ISLNK(st.st_mode), "a chain of links stays");
	is_str(slurp(at("real/target")), "new\nmore\n", "appended to the file at its end");

	symlink("real/missing", at("dangling"));
	is_int(outfile_open(&of, at("dangling"), 0, &cause), 0, "open a dangling symlink");
	fputs("made\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit");
	ok(lstat(at("dangling"), &st) == 0 && S_ISLNK(st.st_mode), "it stays a link");
	is_str(slurp(at("real/missing")), "made\n", "and the file it names is created");

	symlink("loop", at("loop"));
	is_int(outfile_open(&of, at("loop"), 0, &cause), -ELOOP, "a symlink loop fails");
	free(cause);
	cause = NULL;

	link(at("real/target"), at("hard"));
	stat(at("hard"), &st);
	is_int(outfile_open(&of, at("hard"), 0, &cause), 0, "open a hard-linked file");
	fputs("both\n", of.fp);
	is_str(slurp(at("real/target")), "new\nmore\n", "untouched before commit");
	is_int(outfile_commit(&of, &cause), 0, "commit");
	stat(at("hard"), &st2);
	ok(st2.st_ino == st.st_ino && st2.st_nlink == 2, "the hard link is kept");
	is_str(slurp(at("real/target")), "both\n", "every name sees the output");
	is_int(entries(dir), 6, "no temporary file left");
}

static void test_identity(void)
{
	struct outfile a, b;
	char *cause = NULL;

	empty_dir();
	mkdir(at("d"), 0755);
	char cwd[1024];
	if (!getcwd(cwd, sizeof cwd) || chdir(dir) < 0)
		return;
	static const char *const same[][2] = {
		{"x", "./x"}, {"x", "d/../x"}, {"d//y", "d/y"}, {"sl", "x"}};
	symlink("x", "sl");
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
			outfile_open(&a, same[i][0], 0, &cause);
			outfile_open(&b, same[i][1], 0, &cause);
			ok(outfile_same(&a, &b), "'%s' and '%s' are one file (%s)", same[i][0],
			   same[i][1], pass ? "existing" : "not existing");
			outfile_abort(&a);
			outfile_abort(&b);
		}
		spew("x", "");
		spew("d/y", "");
	}
	link("x", "hard");
	outfile_open(&a, "x", 0, &cause);
	outfile_open(&b, "hard", 0, &cause);
	ok(outfile_same(&a, &b), "a hard link is the same file");
	struct stat st;
	stat("x", &st);
	ok(outfile_is(&a, st.st_dev, st.st_ino), "outfile_is knows the file");
	outfile_abort(&b);
	outfile_open(&b, "z", 0, &cause);
	ok(!outfile_same(&a, &b), "two files are not the same");
	outfile_abort(&a);
	outfile_abort(&b);
	outfile_open(&a, "/dev/null", 0, &cause);
	outfile_open(&b, "/dev/null", 0, &cause);
	ok(!outfile_same(&a, &b), "the null device may be named twice");
	outfile_abort(&a);
	outfile_abort(&b);
	is_int(entries("."), 4, "nothing left behind by the opens");
	if (chdir(cwd) < 0)
		return;
}

static void test_special(void)
{
	struct outfile of;
	char *cause = NULL;
	struct stat st;

	empty_dir();
	is_int(outfile_open(&of, "/dev/null", 0, &cause), 0, "open /dev/null");
	ok(!outfile_replaces(&of), "a device is not replaced");
	fputs("gone\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit /dev/null");
	ok(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is still a device");

	mkfifo(at("fifo"), 0644);
	is_int(outfile_open(&of, at("fifo"), 0, &cause), -ENXIO, "a FIFO nobody reads fails");
	char want[600];
	snprintf(want, sizeof want, "cannot write '%s': no process is reading the FIFO",
		 at("fifo"));
	is_str(cause, want, "and says why");
	free(cause);
	cause = NULL;
	int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	is_int(outfile_open(&of, at("fifo"), 0, &cause), 0, "a FIFO with a reader opens");
	ok(!outfile_replaces(&of), "a FIFO is not replaced");
	fputs("piped\n", of.fp);
	is_int(outfile_commit(&of, &cause), 0, "commit the FIFO");
	char buf[64] = "";
	ssize_t n = read(rd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	is_str(buf, "piped\n", "the reader gets the output");
	close(rd);
	ok(stat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
	is_int(entries(dir), 1, "nothing else created");
}

static void test_errors(void)
{
	struct outfile of;
	char *cause = NULL;

	empty_dir();
	is_int(outfile_open(&of, at("no/such/out.txt"), 0, &cause), -ENOENT,
	       "a missing directory fails");
	char want[600];
	snprintf(want, sizeof want, "cannot write '%s': No such file or directory",
		 at("no/such/out.txt"));
	is_str(cause, want, "the message names the path and the reason");
	free(cause);
	cause = NULL;
	is_int(outfile_open(&of, "", 0, &cause), -ENOENT, "an empty path fails");
	is_str(cause, "cannot write '': No such file or directory", "and says so");
	free(cause);
	cause = NULL;
	is_int(outfile_open(&of, dir, 0, &cause), -EISDIR, "a directory fails");
	free(cause);
	cause = NULL;
	is_int(outfile_open(&of, at("newdir/"), 0, &cause), -ENOENT, "a missing dir/ fails");
	free(cause);
	cause = NULL;
	is_int(entries(dir), 0, "failures create nothing");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_replace(0, "O_TMPFILE");
	test_replace(OUTFILE_NAMED_TEMP, "named temp");
	test_renamed_dir(0, "O_TMPFILE");
	test_renamed_dir(OUTFILE_NAMED_TEMP, "named temp");
	test_append();
	test_links();
	test_identity();
	test_special();
	test_errors();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
