/* span_reload_dep.c: a plugin unloaded with the library it pulled in, then
 * another plugin whose library loads where that one was.
 * Build: cc -O2 -g -finstrument-functions span_reload_dep.c -o span_reload_dep -ldl
 * (DIR holds libplugx.so -> libdepx.so and libplugy.so -> libdepy.so, from
 * span_plug_lib.c and span_reload_lib.c: same layouts, other names)
 *
 * Usage: span_reload_dep DIR: dlopens libplugx.so, plugx_entry(3) (depx_entry,
 * 3 depx_leaf), dlcloses it (libdepx.so goes with it); then libplugy.so,
 * plugy_entry(5) (depy_entry, 5 depy_leaf), dlclose.  Prints "same" when
 * depy_entry loaded where depx_entry had been (the case under test), "moved"
 * otherwise.  Expected tree: main;plugx_entry;depx_entry;depx_leaf 3x and
 * main;plugy_entry;depy_entry;depy_leaf 5x. */
#include <dlfcn.h>
#include <stdio.h>

static void *load(const char *dir, const char *lib, const char *sym, const char *dep,
		  void (**fn)(int), void **depfn)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, lib);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || !(*fn = (void (*)(int))dlsym(h, sym)) || !(*depfn = dlsym(h, dep))) {
		fprintf(stderr, "span_reload_dep: %s\n", dlerror());
		return NULL;
	}
	return h;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	void (*x)(int), (*y)(int);
	void *dx, *dy;
	void *h = load(dir, "libplugx.so", "plugx_entry", "depx_entry", &x, &dx);
	if (!h)
		return 2;
	x(3);
	dlclose(h);
	h = load(dir, "libplugy.so", "plugy_entry", "depy_entry", &y, &dy);
	if (!h)
		return 2;
	y(5);
	dlclose(h);
	printf("%s\n", dx == dy ? "same" : "moved");
	return 0;
}
