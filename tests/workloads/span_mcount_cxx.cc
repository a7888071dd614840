// span_mcount_cxx.cc: C++ exceptions thrown through the functions of a -pg
// (or -pg -mfentry) build, against the same program built with
// -finstrument-functions (mcount.bats).
// Build: c++ -O2 -pg span_mcount_cxx.cc -o span_mcount_cxx
//
// main, 3 rounds of:
//   catcher   calls deep(4): deep under deep 4 levels, the last throws an
//             int; catcher catches it, then calls after() (a sibling of the
//             first deep, not a child of the unwound ones)
//   rethrower catches what deep(2) throws and rethrows it (throw;); main
//             catches it, then calls after()
// Exit status 0 when every exception arrived with its value, else 1.
// span_mcount_cxx pexit: a thread runs exiter, whose local object's
// destructor must run when exit_inner, called by it, calls pthread_exit()
// (the unwinder must read exiter's frame through exit_inner's hijacked
// return); exit status 1 when it did not.
#include <cstdio>
#include <cstring>
#include <pthread.h>

#define FN __attribute__((noinline))

static volatile int sink;
static int (*volatile deep_p)(int);

FN static int deep(int n)
{
	sink++;
	if (n == 0)
		throw 42;
	return deep_p(n - 1) + 1;
}

FN static void after()
{
	sink++;
}

FN static int catcher()
{
	int got = 0;
	try {
		deep(4);
	} catch (int e) {
		got = e;
	}
	after();
	return got;
}

FN static void rethrower()
{
	try {
		deep(2);
	} catch (int) {
		sink++;
		throw;
	}
}

static volatile int destroyed;

struct Guard {
	~Guard()
	{
		destroyed = 1;
	}
};

FN static void exit_inner()
{
	sink++;
	pthread_exit(nullptr);
}

FN static void *exiter(void *)
{
	Guard g;
	exit_inner();
	return nullptr;
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::strcmp(argv[1], "pexit") == 0) {
		pthread_t t;
		if (pthread_create(&t, nullptr, exiter, nullptr) != 0 ||
		    pthread_join(t, nullptr) != 0)
			return 2;
		if (!destroyed)
			std::fprintf(stderr,
				     "span_mcount_cxx: no destructor ran at pthread_exit\n");
		return destroyed ? 0 : 1;
	}
	deep_p = deep;
	int bad = 0;
	for (int i = 0; i < 3; i++) {
		if (catcher() != 42)
			bad = 1;
		try {
			rethrower();
			bad = 1;
		} catch (int e) {
			if (e != 42)
				bad = 1;
		}
		after();
	}
	if (bad)
		std::fprintf(stderr, "span_mcount_cxx: an exception came back wrong\n");
	return bad;
}
