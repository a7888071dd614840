/* span_script.c: spans in the order its arguments say, for the tests of
 * drops, mismatched ends, longjmp and exec.
 * Build: cc -O2 -g span_script.c -o span_script -lspanstat
 *
 *   span_script TOKEN...
 *   B:name:n   n begins of name        E:name:n   n ends of name
 *   I:name:n   n instants of name      fill:n     n begin/end pairs of "fill"
 *   stop       SIGSTOP to spanstat ($SPANSTAT_PIPE, reader.h), whose rings
 *              then fill: the events after it are dropped
 *   cont       SIGCONT to spanstat, then 100 ms for it to drain
 *   kont       SIGCONT to spanstat, without waiting
 *   setjmp     marks the place a later longjmp goes back to (once)
 *   longjmp    jumps there; the tokens after longjmp follow
 *   exec:path  execv(path), which may fail; the tokens after it follow
 * Each name's text is one string for the whole run.  Exits 0, or 2 on a
 * token it does not know. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

#include "reader.h"

static jmp_buf env;
static volatile int resume_at;

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* One string per text, so that begins and ends of a name share it. */
static const char *name_of(const char *text)
{
	static const char *names[64];
	static int n;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], text) == 0)
			return names[i];
	if (n == 64)
		exit(2);
	return names[n++] = strdup(text);
}

int main(int argc, char **argv)
{
	int reader = reader_pid();
	const char *fill = name_of("fill");
	spanstat_begin(fill); /* defined before any drop */
	spanstat_end(fill);
	for (volatile int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char op[8], text[64];
		long n = 1;
		if (strcmp(a, "setjmp") == 0) {
			if (setjmp(env))
				i = resume_at;
		} else if (strcmp(a, "longjmp") == 0) {
			resume_at = i;
			longjmp(env, 1);
		} else if (strcmp(a, "stop") == 0) {
			reader_signal(reader, SIGSTOP);
		} else if (strcmp(a, "kont") == 0) {
			reader_signal(reader, SIGCONT);
		} else if (strcmp(a, "cont") == 0) {
			reader_signal(reader, SIGCONT);
			nap_ms(100);
		} else if (strncmp(a, "fill:", 5) == 0) {
			for (long k = atol(a + 5); k > 0; k--) {
				spanstat_begin(fill);
				spanstat_end(fill);
			}
		} else if (strncmp(a, "exec:", 5) == 0) {
			char *av[] = {(char *)a + 5, NULL};
			execv(a + 5, av);
		} else if (sscanf(a, "%7[^:]:%63[^:]:%ld", op, text, &n) >= 2 && !op[1]) {
			const char *s = name_of(text);
			for (long k = 0; k < n; k++)
				if (op[0] == 'B')
					spanstat_begin(s);
				else if (op[0] == 'E')
					spanstat_end(s);
				else if (op[0] == 'I')
					spanstat_instant(s);
				else
					return 2;
		} else {
			fprintf(stderr, "span_script: %s: unknown token\n", a);
			return 2;
		}
	}
	return 0;
}
