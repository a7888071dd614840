// span_cxx.cc: a C++ program for the --demangle and location tests: names in
// namespaces, classes (constructor, destructor, const method), templates
// (two instantiations that simplify to one name), operators, a lambda, an
// anonymous namespace, a static function, std::vector<std::string>, a
// function whose symbol is a malformed mangled name, exceptions thrown
// through instrumented frames, a call into a shared library (span_cxxlib.cc)
// and a span of the user's own whose text looks mangled (never demangled).
// Build: g++ -O1 -g -finstrument-functions span_cxx.cc -o span_cxx
//        -L. -lspan_cxxlib -lspanstat
// Every function below runs a short loop, so each has self time.  The
// exception path runs THROWS times: app::outer -> app::inner, which throws
// on odd i and is caught in run.  Exits 0.
#include <string>
#include <vector>

#include "spanstat.h"

namespace lib {
int measure(int w, int h);
}

#define THROWS 20

static volatile int sink;

static void work()
{
	for (int i = 0; i < 1000; i++)
		sink += i;
}

namespace app {

class Parser {
      public:
	Parser() { work(); }
	~Parser() { work(); }
	__attribute__((noinline)) int depth(int n)
	{
		work();
		return n > 0 ? 1 + depth(n - 1) : 0;
	}
	__attribute__((noinline)) int peek() const
	{
		work();
		return 7;
	}
};

struct Vec {
	int x;
	__attribute__((noinline)) Vec operator+(const Vec &o) const
	{
		work();
		return Vec{x + o.x};
	}
};

__attribute__((noinline)) bool operator<(const Vec &a, const Vec &b)
{
	work();
	return a.x < b.x;
}

struct Less {
	__attribute__((noinline)) bool operator()(int a, int b) const
	{
		work();
		return a < b;
	}
};

template <typename T> __attribute__((noinline)) T twice(T v)
{
	work();
	return v + v;
}

__attribute__((noinline)) void inner(int i)
{
	work();
	if (i % 2)
		throw i;
}

__attribute__((noinline)) void outer(int i)
{
	work();
	inner(i);
	work();
}

} // namespace app

namespace {

__attribute__((noinline)) int helper(int v)
{
	work();
	return v + 1;
}

} // namespace

static __attribute__((noinline)) int bump(int v)
{
	work();
	return v + 2;
}

// a symbol no demangler accepts: shown as it is in every mode
extern "C" __attribute__((noinline)) void malformed(void) __asm__("_Z3badX");
extern "C" void malformed(void)
{
	work();
}

static __attribute__((noinline)) int run()
{
	int r = helper(1) + bump(2);
	{
		app::Parser p;
		r += p.depth(2) + p.peek();
	}
	r += app::twice<int>(3) + (int)app::twice<double>(1.5);
	app::Vec a{1}, b{2};
	r += (a + b).x + (a < b) + app::Less()(1, 2);
	auto square = [](int v) {
		work();
		return v * v;
	};
	r += square(4);
	std::vector<std::string> names;
	names.push_back(std::string("one"));
	r += (int)names.size();
	malformed();
	int caught = 0;
	for (int i = 0; i < THROWS; i++) {
		try {
			app::outer(i);
		} catch (int) {
			caught++;
		}
	}
	r += caught;
	spanstat_begin("_ZN4user4textEv");
	work();
	spanstat_end("_ZN4user4textEv");
	return r + lib::measure(2, 3);
}

int main()
{
	return run() > 0 ? 0 : 1;
}
