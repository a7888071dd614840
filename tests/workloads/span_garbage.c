/* span_garbage.c: writes pseudo-random bytes to every fd 0..1023 (including
 * spanstat's pipe), then records spans, for the span tests.
 * Build: cc -O2 -g span_garbage.c -o span_garbage -lspanstat
 *
 * Writes 3 bursts of 1000 bytes (a fixed-seed generator, so the bytes are the
 * same every run) to each fd; errors are ignored; SIGPIPE is ignored so a
 * closed reader cannot kill it.  Then "after-garbage" 1x containing 100x
 * "step", another round of garbage, and "last" 1x.  Exits 0. */
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include <spanstat.h>

static uint32_t state = 12345;

static uint8_t next_byte(void)
{
	state = state * 1103515245u + 12345u;
	return (uint8_t)(state >> 16);
}

static void spray(void)
{
	uint8_t buf[1000];
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < sizeof buf; i++)
			buf[i] = next_byte();
		for (int fd = 0; fd < 1024; fd++)
			if (write(fd, buf, sizeof buf) < 0)
				continue;
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	spray();
	spanstat_begin("after-garbage");
	for (int i = 0; i < 100; i++) {
		spanstat_begin("step");
		spanstat_end("step");
	}
	spanstat_end("after-garbage");
	spray();
	spanstat_begin("last");
	spanstat_end("last");
	return 0;
}
