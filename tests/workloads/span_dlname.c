/* span_dlname.c: a span left open whose name's string is unmapped by
 * dlclose, then ends that name no open span (the recorder compares names
 * by text with the open ones) and one that names the outer span.
 * Build: cc -O2 -g span_dlname.c -o span_dlname -ldl -lspanstat
 *
 *   span_dlname LIB   opens "outer", calls dlname_begin() of LIB (which
 *                     opens "dlname-span"), dlcloses LIB, ends "nope" (no
 *                     such span is open) and "outer"; prints "survived".
 *   span_dlname LIB N loads and unloads LIB N times (no span of it), then
 *                     100 times begins "x" and "y" and ends them through
 *                     other strings of the same texts; prints "survived".
 * Passing a name that does not outlive its object breaks spanstat.h's
 * rule; the program must survive it all the same.  Exits 0, or 2 when
 * LIB cannot be loaded. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <spanstat.h>

static int cycle(const char *lib, int n)
{
	for (int i = 0; i < n; i++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return 2;
		dlclose(h);
	}
	static char x1[] = "x", y1[] = "y", y2[] = "y", x2[] = "x";
	for (int i = 0; i < 100; i++) {
		spanstat_begin(x1);
		spanstat_begin(y1);
		spanstat_end(y2);
		spanstat_end(x2);
	}
	puts("survived");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return cycle(argv[1], atoi(argv[2]));
	if (argc != 2)
		return 2;
	spanstat_begin("outer");
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void (*f)(void) = h ? (void (*)(void))dlsym(h, "dlname_begin") : NULL;
	if (!f) {
		fprintf(stderr, "span_dlname: %s\n", dlerror());
		return 2;
	}
	f();
	dlclose(h);
	spanstat_end("nope");
	spanstat_end("outer");
	puts("survived");
	return 0;
}
