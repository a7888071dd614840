// span_pgnest.cc: an exception whose unwinding runs destructors that throw
// and catch exceptions of their own, through the functions of a -pg build,
// against the -finstrument-functions build's tree (mcount.bats).
// Build: c++ -O2 -pg span_pgnest.cc -o span_pgnest
//
// main, N rounds (default 10): level1 -> level2 -> inner_throw throws i;
// a Guard in level2 and one in level1 each, in their destructors, call
// inner_throw and catch what it throws, while i is still in flight; main
// catches i.  Prints "caught N"; exit status 0 when every round's value
// arrived.
#include <cstdio>
#include <cstdlib>

#define FN __attribute__((noinline))

static volatile int sink;

FN static void inner_throw(int v)
{
	sink++;
	throw v;
}

struct Guard {
	FN ~Guard()
	{
		try {
			inner_throw(-1);
		} catch (int) {
			sink++;
		}
	}
};

FN static void level2(int v)
{
	Guard g;
	sink++;
	inner_throw(v);
}

FN static void level1(int v)
{
	Guard g;
	level2(v);
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 10, caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			level1(i);
		} catch (int v) {
			caught += v == i;
		}
	}
	std::printf("caught %d\n", caught);
	return caught == n ? 0 : 1;
}
