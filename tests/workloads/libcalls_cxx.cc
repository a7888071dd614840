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
//   libcalls_cxx N nested   N calls of lc_each(1, cb) whose callback throws,
//                    caught here, while a destructor on its way out throws
//                    and catches an exception of its own; then N getppid
//   libcalls_cxx N rethrow  the same, the callback rethrowing a caught
//                    exception with std::rethrow_exception
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
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

struct Inner {
	~Inner()
	{
		try {
			throw 1;
		} catch (int) {
		}
	}
};

static std::exception_ptr saved;

static int throw_nested(int)
{
	Inner in;
	throw 2;
}

static int throw_again(int)
{
	std::rethrow_exception(saved);
}

static int out_of_each(int n, int (*fn)(int))
{
	for (int i = 0; i < n; i++) {
		try {
			lc_each(1, fn);
		} catch (int) {
			caught++;
		}
	}
	for (int i = 0; i < n; i++)
		getppid();
	std::printf("lc_each %d\ngetppid %d\ncaught %d\n", n, n, caught);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	if (argc > 2 && strcmp(argv[2], "nested") == 0)
		return out_of_each(n, throw_nested);
	if (argc > 2 && strcmp(argv[2], "rethrow") == 0) {
		try {
			throw 3;
		} catch (int) {
			saved = std::current_exception();
		}
		return out_of_each(n, throw_again);
	}
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
