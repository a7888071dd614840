/* span_late.c: a process whose spans partly come after the span library's
 * exit path: it dlopens LIB (span_late_lib.c), never dlcloses it, records
 * 5x "work" and returns 0; LIB's destructor records its spans after the
 * library's own destructor ran.
 * Build: cc -O2 -g span_late.c -o span_late -ldl -lspanstat
 *
 *   span_late LIB */
#include <dlfcn.h>
#include <spanstat.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "span_late: %s\n", argc < 2 ? "usage: span_late LIB" : dlerror());
		return 1;
	}
	for (int i = 0; i < 5; i++) {
		spanstat_begin("work");
		spanstat_end("work");
	}
	return 0; /* LIB stays loaded */
}
