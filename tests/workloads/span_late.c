/* span_late.c: a process whose spans partly come after the span library's
 * exit path.  It records 5x "work" (but with "only") and returns 0.
 * Build: cc -O2 -g span_late.c -o span_late -ldl -lspanstat
 *
 *   span_late LIB    dlopens LIB (span_late_lib.c) and never dlcloses it:
 *                    LIB's destructor records its spans after the
 *                    library's own destructor ran
 *   span_late exit   its destructor (before the library's) registers an
 *                    exit handler that runs after every destructor (glibc
 *                    runs handlers registered meanwhile once _dl_fini is
 *                    done); the handler records 7x "late": 14 events
 *   span_late only   as exit, without the 5x "work": its only spans are
 *                    late */
#include <dlfcn.h>
#include <spanstat.h>
#include <stdio.h>
#include <string.h>

int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static int exit_mode;

static void late_handler(void *arg)
{
	(void)arg;
	for (int i = 0; i < 7; i++) {
		spanstat_begin("late");
		spanstat_end("late");
	}
}

__attribute__((destructor)) static void register_late(void)
{
	if (exit_mode) /* no object's: run by exit(), not by a dlclose's finalize */
		__cxa_atexit(late_handler, NULL, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("span_late: usage: span_late LIB|exit|only\n", stderr);
		return 1;
	}
	int only = strcmp(argv[1], "only") == 0;
	exit_mode = only || strcmp(argv[1], "exit") == 0;
	if (!exit_mode && !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "span_late: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 5 && !only; i++) {
		spanstat_begin("work");
		spanstat_end("work");
	}
	return 0; /* LIB stays loaded */
}
