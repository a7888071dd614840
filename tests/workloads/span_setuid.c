/* span_setuid.c: a program that records spans, meant to be installed setuid
 * root (or setgid, or with file capabilities) by the privileged-process
 * tests.  Build: cc -O2 -g span_setuid.c -o span_setuid -lspanstat
 *
 * Names its thread "setuid-main", records "outer" 1x containing "inner" 3x
 * and a counter "items", then prints one line on stdout:
 *   secure=<AT_SECURE> euid=<n> egid=<n> on=<spanstat_on_> sigterm=<dfl|handler> fds=<list>
 * where <list> is every open descriptor, in order, comma-separated, each
 * followed by "c" when it is close-on-exec.  Exits 0. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <spanstat.h>

static volatile unsigned long sink;

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	spanstat_thread_name("setuid-main");
	spanstat_begin("outer");
	for (int i = 0; i < 3; i++) {
		spanstat_begin("inner");
		for (int k = 0; k < 10000; k++)
			sink += (unsigned long)k;
		spanstat_end("inner");
		spanstat_counter("items", i + 1);
	}
	spanstat_end("outer");

	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	int fds[256], n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < 256) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != dirfd(d))
			fds[n++] = fd;
	}
	if (d)
		closedir(d);
	qsort(fds, (size_t)n, sizeof *fds, cmp_int);
	printf("secure=%lu euid=%d egid=%d on=%d sigterm=%s fds=", getauxval(AT_SECURE),
	       (int)geteuid(), (int)getegid(), spanstat_on_,
	       sa.sa_handler == SIG_DFL ? "dfl" : "handler");
	for (int i = 0; i < n; i++)
		printf("%s%d%s", i ? "," : "", fds[i],
		       fcntl(fds[i], F_GETFD) & FD_CLOEXEC ? "c" : "");
	printf("\n");
	return 0;
}
