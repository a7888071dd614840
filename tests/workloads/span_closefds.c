/* span_closefds.c: closes every file descriptor (as daemons and sandboxes
 * do), reopens 0..2 on /dev/null, then records spans, for the span tests.
 * Build: cc -O2 -g span_closefds.c -o span_closefds -lspanstat
 *
 *   span_closefds [range|loop]
 * "before" 1x (recorded before the close), then "after" 1x containing 1000x
 * "step".  range (default) uses close_range(0, ~0U, 0) and falls back to the
 * loop; loop closes 0..sysconf(_SC_OPEN_MAX)-1 one by one.  It then opens
 * many files so low and reused numbers are in play.  Exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <spanstat.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	int loop = argc > 1 && strcmp(argv[1], "loop") == 0;
	spanstat_begin("before");
	spanstat_end("before");
	if (loop || close_range(0, ~0U, 0) != 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 0; fd < (max > 0 ? max : 1024); fd++)
			close((int)fd);
	}
	for (int i = 0; i < 3; i++)
		open("/dev/null", O_RDWR);
	for (int i = 0; i < 20; i++)
		open("/dev/null", O_RDONLY);
	spanstat_begin("after");
	for (int i = 0; i < 1000; i++) {
		spanstat_begin("step");
		sink += (unsigned long)i;
		spanstat_end("step");
	}
	spanstat_end("after");
	return 0;
}
