/* span_dlname.c: a span left open whose name's string is unmapped by
 * dlclose, then ends that name no open span (the recorder compares names
 * by text with the open ones) and one that names the outer span.
 * Build: cc -O2 -g span_dlname.c -o span_dlname -ldl -lspanstat
 *
 *   span_dlname LIB   opens "outer", calls dlname_begin() of LIB (which
 *                     opens "dlname-span"), dlcloses LIB, ends "nope" (no
 *                     such span is open) and "outer"; prints "survived".
 * Passing a name that does not outlive its object breaks spanstat.h's
 * rule; the program must survive it all the same.  Exits 0, or 2 when
 * LIB cannot be loaded. */
#include <dlfcn.h>
#include <stdio.h>

#include <spanstat.h>

int main(int argc, char **argv)
{
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
