// alloc_cxx.cc: C++ allocations inside spans: 100 news of a 40-byte object
// and a vector of 1000 ints in "news", then their deletes in "deletes", and
// 10 over-aligned objects (aligned new, aligned_alloc underneath) in
// "aligned".  For --span-allocs: new and delete reach malloc and free.
#include <spanstat.h>

#include <cstdio>
#include <new>
#include <vector>

struct Obj {
	long v[5];
};

struct alignas(256) Wide {
	char c[256];
};

int main()
{
	std::vector<Obj *> objs;
	objs.reserve(100); // before the span: only the news count there
	std::vector<int> *ints = nullptr;
	spanstat_begin("news");
	for (int i = 0; i < 100; i++)
		objs.push_back(new Obj());
	ints = new std::vector<int>(1000);
	spanstat_end("news");
	spanstat_begin("deletes");
	for (Obj *o : objs)
		delete o;
	delete ints;
	spanstat_end("deletes");
	spanstat_begin("aligned");
	for (int i = 0; i < 10; i++) {
		Wide *w = new Wide();
		if (reinterpret_cast<unsigned long>(w) % 256) {
			std::puts("misaligned");
			return 1;
		}
		delete w;
	}
	spanstat_end("aligned");
	return 0;
}
