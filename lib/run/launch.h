/* launch.h: starting the target.  The child is forked and held before exec
 * (blocked on a pipe) so counters can be opened on it with enable_on_exec;
 * launch_go() lets it exec, and reports whether the exec failed and why. */
#ifndef SPANSTAT_LAUNCH_H
#define SPANSTAT_LAUNCH_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;   /* write end: one byte releases the child */
	int err_fd;  /* read end: the child's errno if exec fails, EOF on success */
	int keep_fd; /* fd the child keeps across exec (-1 none) */
};

/* Forks the child for argv (PATH searched as execvp does) with envp.  keep_fd,
 * if >= 0, stays open in the child across exec.  Returns 0 or -errno. */
int launch_start(struct launch *l, char *const argv[], char *const envp[], int keep_fd);
/* Releases the child.  Returns 0 when exec succeeded, else the child's -errno
 * (the child has then exited and been reaped). */
int launch_go(struct launch *l);
/* Kills and reaps a child that was never released. */
void launch_abort(struct launch *l);

/* Runs cmd with /bin/sh -c, as system(3) does but with the signals spanstat
 * blocked unblocked in it, and waits for it; *wstatus: as waitpid gives it.
 * 0, or -errno when it could not be started. */
int launch_shell(const char *cmd, int *wstatus);

/* Stats the file execvp would run for file (PATH searched when it has no
 * slash).  Returns 0, or -errno when there is none. */
int launch_which(const char *file, struct stat *st);

/* The program file (PATH searched) names, as the session names it to the
 * outputs: *path its absolute path with symbolic links resolved (as
 * /proc/PID/exe shows it once it runs), *build_id its GNU build id in hex
 * (NT_GNU_BUILD_ID), or NULL when it has none (not ELF, such as a script,
 * or built without one).  Both malloc'd, the caller's.  0, or -errno with
 * both NULL when there is no such file. */
int launch_exe(const char *file, char **path, char **build_id);

/* Whether --span-allocs can count the allocations of the program that file
 * (PATH searched) runs: 0, or -ENOTSUP with *why (malloc'd, "it is linked
 * statically", "it has a malloc of its own", "its interpreter '/x' ...")
 * saying why not: nothing can be preloaded into a static program, and a
 * malloc defined by the program (an allocator linked statically) comes
 * before any preloaded one.  A script is judged by its #! interpreter; a
 * file that cannot be read or is not ELF counts as countable (its exec says
 * what is wrong). */
int launch_alloc_check(const char *file, char **why);

/* Where library `lib` (libspanstat.so.0, libspanstat-alloc.so.0) is: beside this installation of
 * spanstat (so a DESTDIR or relocated install finds its own), else the build tree's, else LIBDIR.
 * Returns a malloc'd path, or NULL when none exists. */
char *launch_preload_path(const char *lib);
/* The same search for any installed file: name in dir (as installed), or
 * in tree (relative to cmd/ in the build tree). */
char *launch_find(const char *dir, const char *tree, const char *name);
/* The directory of the Python module spanstat.py, and the bash helper
 * spanstat.bash (spanstat-lines(5)), found the same way; NULL: none. */
char *launch_python_dir(void);
/* --python: the directory of spanstat's sitecustomize.py (malloc'd), or NULL */
char *launch_python_boot(void);
/* Whether the C part of the Python module (_spanstat.so) is in pydir. */
bool launch_python_ext(const char *pydir);
char *launch_shell_helper(void);

#endif
