/* span_reload.c: code unloaded and loaded again at the same address.
 * Build: cc -O2 -g -finstrument-functions span_reload.c -o span_reload -ldl
 *
 * Usage: span_reload DIR: dlopens DIR/libalpha.so, calls alpha_entry(3)
 * (3 alpha_leaf), dlcloses it; dlopens DIR/libbeta.so, calls beta_entry(5),
 * dlcloses it; then libalpha.so again and alpha_entry(7).  Prints "same" on
 * stdout when beta loaded where alpha had been (the case under test),
 * "moved" otherwise.  Expected tree: main;alpha_entry 2x (10 alpha_leaf),
 * main;beta_entry 1x (5 beta_leaf). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *load(const char *dir, const char *lib, const char *sym, void (**fn)(int))
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, lib);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || !(*fn = (void (*)(int))dlsym(h, sym))) {
		fprintf(stderr, "span_reload: %s\n", dlerror());
		exit(2);
	}
	return h;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	void (*a)(int), (*b)(int), (*a2)(int);
	void *h = load(dir, "libalpha.so", "alpha_entry", &a);
	a(3);
	dlclose(h);
	h = load(dir, "libbeta.so", "beta_entry", &b);
	b(5);
	dlclose(h);
	h = load(dir, "libalpha.so", "alpha_entry", &a2);
	a2(7);
	dlclose(h);
	printf("%s\n", (void *)a == (void *)b ? "same" : "moved");
	return 0;
}
