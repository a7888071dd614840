// libcalls_cxx.cc: exceptions thrown through library calls, for the
// --lib-calls tests (libcalls.bats).  Not instrumented: its library calls
// through the PLT are the spans.
// Build: g++ -O1 libcalls_cxx.cc -L. -llibcalls_cxxlib
//
//   libcalls_cxx N   N calls of lc_throw(i) (libcalls_cxxlib.cc), the odd
//                    ones throwing, caught here; then lc_each(N, cb), whose
//                    callback calls lc_throw(k) and catches what it throws
//                    (the catch inside a library call in flight); then N
//                    getppid.  It prints its counts as "NAME COUNT" lines.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

extern "C" int lc_throw(int i);
extern "C" int lc_each(int n, int (*fn)(int));

static int caught;

static int cb(int k)
{
	try {
		return lc_throw(k);
	} catch (int) {
		caught++;
		return 0;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < n; i++) {
		try {
			lc_throw(i);
		} catch (int) {
			caught++;
		}
	}
	lc_each(n, cb);
	for (int i = 0; i < n; i++)
		getppid();
	std::printf("lc_throw %d\nlc_each 1\ngetppid %d\ncaught %d\n", 2 * n, n, caught);
	return 0;
}
