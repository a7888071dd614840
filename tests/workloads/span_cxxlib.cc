// span_cxxlib.cc: the shared-library half of span_cxx.cc, so that the
// C++ tests see symbols of a shared object demangled too.
// Build: g++ -O1 -g -fPIC -shared -finstrument-functions span_cxxlib.cc
//        -o libspan_cxxlib.so
namespace lib {

struct Shape {
	int w, h;
	int area() const;
};

static volatile int lib_sink;

__attribute__((noinline)) int Shape::area() const
{
	for (int i = 0; i < 1000; i++)
		lib_sink += i;
	return w * h;
}

// the entry point span_cxx.cc calls (mangled: lib::measure(int, int))
__attribute__((noinline)) int measure(int w, int h)
{
	Shape s{w, h};
	return s.area();
}

} // namespace lib
