/* writes.c: an exact number of write() system calls, for tracepoint counts.
 * usage: writes N [SPANS]
 *   writes N bytes to /dev/null, one write() each; with SPANS, does so inside
 *   each of SPANS spans named "w" (built with the span library, see
 *   tracepoints.bats), and nothing else writes in them. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef WITH_SPANS
#include <spanstat.h>
#endif

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int spans = argc > 2 ? atoi(argv[2]) : 0;
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	for (int s = 0; s < (spans ? spans : 1); s++) {
#ifdef WITH_SPANS
		if (spans)
			spanstat_begin("w");
#endif
		for (int i = 0; i < n; i++)
			if (write(fd, "x", 1) != 1)
				return 1;
#ifdef WITH_SPANS
		if (spans)
			spanstat_end("w");
#endif
	}
	return close(fd) != 0;
}
