/* span_dlcycle.c: a plugin loaded, called and unloaded many times, as a
 * program that reloads its plugins does.
 * Build: cc -O2 -g -finstrument-functions span_dlcycle.c -o span_dlcycle -ldl
 * (the plugin: span_reload_lib.c built -DNAME=alpha as DIR/libalpha.so)
 *
 * Usage: span_dlcycle DIR N: N times, dlopen DIR/libalpha.so, alpha_entry(2)
 * (2 alpha_leaf), dlclose.  Prints "cycles=N" on stdout.  Expected tree:
 * main;alpha_entry N times, main;alpha_entry;alpha_leaf 2N times. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
	char path[4096];
	snprintf(path, sizeof path, "%s/libalpha.so", dir);
	for (unsigned i = 0; i < n; i++) {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		void (*fn)(int) = h ? (void (*)(int))dlsym(h, "alpha_entry") : NULL;
		if (!fn) {
			fprintf(stderr, "span_dlcycle: %s\n", dlerror());
			return 2;
		}
		fn(2);
		dlclose(h);
	}
	printf("cycles=%u\n", n);
	return 0;
}
