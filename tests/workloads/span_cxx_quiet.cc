// span_cxx_quiet.cc: C++ functions whose spans allocate known amounts, for
// spanvalues.bats: under the filters the recorder demangles each function's
// name on its first call, inside its caller's span, and what it allocates
// for that is its own, never the span's.  outer() allocates and frees one
// block of 100 bytes (104 usable under glibc); nothing else allocates.
// Build: g++ -O1 -finstrument-functions span_cxx_quiet.cc -lspanstat
#include <cstdlib>

namespace ns
{
struct Worker {
	__attribute__((noinline)) void load()
	{
		__asm__ volatile("");
	}
	__attribute__((noinline)) void crunch()
	{
		load();
	}
};
} // namespace ns

__attribute__((noinline)) void outer()
{
	void *volatile p = std::malloc(100);
	ns::Worker w;
	for (int i = 0; i < 3; i++)
		w.crunch();
	std::free(p);
}

int main()
{
	outer();
	return 0;
}
