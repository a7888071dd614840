// libcalls_cxxlib.cc: libcalls_cxx.cc's shared library.  lc_throw(i) calls
// getppid() through this library's PLT, then throws i when i is odd;
// lc_each(n, fn) calls fn(k) for k < n (a library call that calls back).
#include <unistd.h>

extern "C" int lc_throw(int i)
{
	getppid();
	if (i & 1)
		throw i;
	return i;
}

extern "C" int lc_each(int n, int (*fn)(int))
{
	int s = 0;
	for (int k = 0; k < n; k++)
		s += fn(k);
	return s;
}
