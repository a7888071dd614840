/* launch.c: fork the target held before exec, release it, and learn whether
 * its exec worked.  The child waits on a pipe so the parent can attach
 * counters first; a close-on-exec error pipe carries exec's errno back. */
#include "config.h"

#include "launch.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void launch_child(char *const argv[], char *const envp[], int go, int err, int keep)
{
	char c;
	ssize_t n;

	if (keep >= 0)
		fcntl(keep, F_SETFD, 0);
	do
		n = read(go, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(125); /* spanstat went away before releasing us */
	/* Undo what spanstat blocked for itself: the target starts clean.  A
	 * signal that reached the held child (a terminal's, to the whole group)
	 * waited until now: it acts on the target as it starts. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvpe(argv[0], argv, envp);
	int e = errno;
	if (write(err, &e, sizeof e) != (ssize_t)sizeof e)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

int launch_start(struct launch *l, char *const argv[], char *const envp[], int keep_fd)
{
	int go[2], err[2];

	l->pid = -1;
	l->go_fd = l->err_fd = -1;
	l->keep_fd = keep_fd;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		launch_child(argv, envp, go[0], err[1], keep_fd);
	}
	close(go[0]);
	close(err[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = err[0];
	return 0;
}

int launch_go(struct launch *l)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, &c, 1) != 1)
		e = errno ? errno : EIO;
	close(l->go_fd);
	l->go_fd = -1;
	if (e) {
		launch_abort(l);
		return -e;
	}
	do
		n = read(l->err_fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof e) {
		while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
			;
		l->pid = -1;
		return -(e ? e : ENOEXEC);
	}
	return 0;
}

void launch_abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	l->pid = -1;
}

int launch_shell(const char *cmd, int *wstatus)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, wstatus, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The file execvp would run for file, as a malloc'd path (PATH searched
 * when it has no slash) with its stat; -errno when there is none. */
static int launch_search(const char *file, char **full, struct stat *st)
{
	*full = NULL;
	if (!*file)
		return -ENOENT;
	if (strchr(file, '/')) {
		if (stat(file, st) < 0)
			return -errno;
		return (*full = strdup(file)) ? 0 : -ENOMEM;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's default, as execvp uses */
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		/* an empty entry is the current directory */
		if (asprintf(full, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", file) < 0) {
			*full = NULL;
			return -ENOMEM;
		}
		if (access(*full, X_OK) == 0 && stat(*full, st) == 0 && S_ISREG(st->st_mode))
			return 0;
		free(*full);
		*full = NULL;
		if (!*end)
			return -ENOENT;
		p = end;
	}
}

int launch_which(const char *file, struct stat *st)
{
	char *full;
	int r = launch_search(file, &full, st);
	free(full);
	return r;
}

/* The GNU build id of the ELF file at path, in hex, or NULL. */
static char *launch_build_id(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return NULL;
	char *hex = NULL;
	Elf *e = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && elf_version(EV_CURRENT) != EV_NONE
			 ? elf_begin(fd, ELF_C_READ, NULL)
			 : NULL;
	const void *id;
	ssize_t n = e && elf_kind(e) == ELF_K_ELF ? dwelf_elf_gnu_build_id(e, &id) : -1;
	if (n > 0 && n <= 64 && (hex = malloc(2 * (size_t)n + 1))) {
		const unsigned char *b = id;
		for (ssize_t i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", b[i]);
	}
	if (e)
		elf_end(e);
	close(fd);
	return hex;
}

int launch_exe(const char *file, char **path, char **build_id)
{
	struct stat st;
	char *full;
	*path = *build_id = NULL;
	int r = launch_search(file, &full, &st);
	if (r < 0)
		return r;
	*path = realpath(full, NULL);
	r = *path ? 0 : -errno;
	free(full);
	if (r < 0)
		return r;
	*build_id = launch_build_id(*path);
	return 0;
}

/* Whether the ELF file e defines a function of the malloc family itself. */
static bool launch_own_malloc(Elf *e)
{
	static const char *const names[] = {"malloc", "free", "calloc", "realloc"};
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			for (size_t k = 0; name && k < sizeof names / sizeof *names; k++)
				if (strcmp(name, names[k]) == 0)
					return true;
		}
	}
	return false;
}

/* What keeps the counter from the program at path ("is linked statically",
 * "has a malloc of its own"), or NULL.  A script's interpreter is judged
 * instead, once (depth), and named in *interp (malloc'd). */
static const char *launch_alloc_path(const char *path, int depth, char **interp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return NULL;
	char head[256];
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head - 1, 0)
							       : -1;
	if (n >= 2 && head[0] == '#' && head[1] == '!') {
		close(fd);
		head[n] = 0;
		char *ip = head + 2 + strspn(head + 2, " \t");
		ip[strcspn(ip, " \t\r\n")] = 0;
		const char *what = depth == 0 && *ip ? launch_alloc_path(ip, 1, interp) : NULL;
		if (what && !(*interp = strdup(ip)))
			what = NULL;
		return what;
	}
	const char *what = NULL;
	Elf *e = n > 0 && elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL)
							     : NULL;
	size_t np = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &np) == 0) {
		bool dynamic = false;
		for (size_t i = 0; i < np; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				dynamic = true;
		}
		if (!dynamic)
			what = "is linked statically";
		else if (launch_own_malloc(e))
			what = "has a malloc of its own";
	}
	if (e)
		elf_end(e);
	close(fd);
	return what;
}

int launch_alloc_check(const char *file, char **why)
{
	struct stat st;
	char *full, *interp = NULL;
	*why = NULL;
	if (launch_search(file, &full, &st) < 0)
		return 0;
	const char *what = launch_alloc_path(full, 0, &interp);
	free(full);
	if (!what)
		return 0;
	int r = interp ? asprintf(why, "its interpreter '%s' %s", interp, what)
		       : asprintf(why, "it %s", what);
	if (r < 0)
		*why = NULL;
	free(interp);
	return -ENOTSUP;
}

static char *launch_try(const char *fmt, const char *a, const char *b)
{
	char *p = NULL;
	if (asprintf(&p, fmt, a, b) < 0)
		return NULL;
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

char *launch_find(const char *dir, const char *tree, const char *name)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *p = NULL;
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		/* installed: <root>BINDIR/spanstat -> <root>dir/ */
		size_t bl = strlen(BINDIR), el = strlen(exe);
		if (el >= bl && strcmp(exe + el - bl, BINDIR) == 0) {
			char root[PATH_MAX];
			snprintf(root, sizeof root, "%.*s", (int)(el - bl), exe);
			snprintf(root + strlen(root), sizeof root - strlen(root), "%s", dir);
			p = launch_try("%s/%s", root, name);
		}
		/* the build tree: cmd/spanstat -> cmd/tree/ */
		if (!p) {
			strncat(exe, tree, sizeof exe - strlen(exe) - 1);
			p = launch_try("%s/%s", exe, name);
		}
	}
	if (!p)
		p = launch_try("%s/%s", dir, name);
	return p;
}

char *launch_preload_path(const char *lib)
{
	return launch_find(LIBDIR, "/../lib/span/.libs", lib);
}

char *launch_python_dir(void)
{
	char *p = launch_find(PYTHONDIR, "/../lib/python", "spanstat.py");
	if (p)
		*strrchr(p, '/') = '\0';
	return p;
}

char *launch_python_boot(void)
{
	char *p = launch_find(PKGDATADIR "/python", "/../lib/python", "sitecustomize.py");
	if (p)
		*strrchr(p, '/') = '\0';
	return p;
}

bool launch_python_ext(const char *pydir)
{
	char *p = pydir ? launch_try("%s/%s", pydir, "_spanstat.so") : NULL;
	free(p);
	return p != NULL;
}

char *launch_shell_helper(void)
{
	return launch_find(PKGDATADIR, "/../lib/shell", "spanstat.bash");
}
