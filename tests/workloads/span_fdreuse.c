/* span_fdreuse.c: closes every descriptor but 0..2, then opens a file of its
 * own at every free number (as a server holding a thousand files or
 * sockets does), then starts a thread that records spans.
 * Build: cc -O2 -g -pthread span_fdreuse.c -o span_fdreuse -lspanstat
 *
 * Usage: span_fdreuse FILE N: FILE (created, one page of 'x') is opened
 * read-write at every free descriptor number below the soft RLIMIT_NOFILE;
 * a thread then records N spans "t".  Prints "fds=F file=ok" on stdout when
 * FILE still holds its page of 'x' and nothing more ("file=changed"
 * otherwise).  Expected: exactly N "t", and FILE unchanged. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void *run(void *arg)
{
	unsigned long n = (unsigned long)arg;
	for (unsigned long i = 0; i < n; i++) {
		spanstat_begin("t");
		spanstat_end("t");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "fdreuse.dat";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	char page[4096];
	memset(page, 'x', sizeof page);
	spanstat_begin("before");
	spanstat_end("before");
	if (close_range(3, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < (max > 0 ? max : 1024); fd++)
			close((int)fd);
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, page, sizeof page) != (ssize_t)sizeof page)
		return 2;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	unsigned fds = 1;
	for (int i = fd + 1; i < (int)rl.rlim_cur && i < 4096; i++)
		if (fcntl(i, F_GETFD) < 0 && dup2(fd, i) == i)
			fds++;
	pthread_t th;
	pthread_create(&th, NULL, run, (void *)n);
	pthread_join(th, NULL);
	char back[8192];
	ssize_t got = pread(fd, back, sizeof back, 0);
	int same = got == (ssize_t)sizeof page && memcmp(back, page, sizeof page) == 0;
	printf("fds=%u file=%s\n", fds, same ? "ok" : "changed");
	return 0;
}
