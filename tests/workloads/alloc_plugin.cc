// alloc_plugin.cc: a C++ library that alloc_any dlopen()s with RTLD_LOCAL, so
// that libstdc++ comes into the process after it started, and only into the
// library's own scope (as a Python extension written in C++ does).
// plugin_run() news and deletes 100 ints and reports what that allocated and
// freed: counts and usable sizes (allocs, frees, alloc bytes, free bytes).
#include <malloc.h>

#include <cstdint>

extern "C" void plugin_run(uint64_t *v)
{
	int *p[100];
	for (int i = 0; i < 100; i++) {
		p[i] = new int(i);
		v[0]++;
		v[2] += malloc_usable_size(p[i]);
	}
	for (int i = 0; i < 100; i++) {
		v[1]++;
		v[3] += malloc_usable_size(p[i]);
		delete p[i];
	}
}
