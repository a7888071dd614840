// alloc_any_cxx.cc: every form of C++ new and delete inside spans, for
// --span-allocs under any allocator (glibc's, jemalloc's or tcmalloc's, which
// define the operators themselves).  As alloc_any.c, the program counts the
// blocks it gets and frees and their usable sizes, prints per span
//   expect NAME ALLOCS FREES ALLOC_BYTES FREE_BYTES
// and, under libspanstat-alloc, checks the counter's own changes over each
// span ("FAIL: ..." where they differ).  Span "throw" has new fail with
// std::bad_alloc and catches it: the exception object's own allocation is
// the runtime's, so only its balance is known (it prints "caught").
#include <dlfcn.h>
#include <malloc.h>
#include <spanstat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

namespace
{

struct Obj {
	long v[5];
};

struct Counted { // a destructor: new[] keeps a cookie, delete[] is sized
	long v[3];
	~Counted()
	{
		v[0] = 0;
	}
};

struct alignas(256) Wide {
	char c[256];
};

struct Expect {
	const char *name;
	uint64_t v[4]; // allocs, frees, alloc bytes, free bytes
	uint64_t c0[4];
};

Expect spans[16];
int nspans;
Expect *cur;
const uint64_t *(*counts)();
char failed[16][96];
int nfailed;

void begin(const char *name)
{
	cur = &spans[nspans++];
	cur->name = name;
	if (counts)
		std::memcpy(cur->c0, counts(), sizeof cur->c0);
	spanstat_begin(name);
}

void end()
{
	spanstat_end(cur->name);
	if (!counts)
		return;
	const uint64_t *c = counts();
	for (int k = 0; k < 4; k++)
		if (c[k] - cur->c0[k] != cur->v[k] && nfailed < 16)
			std::snprintf(failed[nfailed++], sizeof failed[0],
				      "FAIL: span %s: count %d is %llu, expected %llu", cur->name,
				      k, static_cast<unsigned long long>(c[k] - cur->c0[k]),
				      static_cast<unsigned long long>(cur->v[k]));
}

template <typename T> T *got(T *p)
{
	if (p) {
		cur->v[0]++;
		cur->v[2] += malloc_usable_size(p);
	}
	return p;
}

// A block about to be freed: its usable size from where it starts (an array
// with a cookie starts before the pointer new[] returned).
void gone_at(void *base)
{
	if (base) {
		cur->v[1]++;
		cur->v[3] += malloc_usable_size(base);
	}
}

template <typename T> T *gone(T *p)
{
	gone_at(const_cast<void *>(static_cast<const void *>(p)));
	return p;
}

// new[] of a class with a destructor: the block starts one size_t before.
template <typename T> void *array_base(T *p)
{
	return p ? reinterpret_cast<char *>(p) - sizeof(size_t) : nullptr;
}

Obj *objs[100];
int *ints[10];
Counted *arrs[10];

} // namespace

int main()
{
	counts = reinterpret_cast<const uint64_t *(*)()>(
		dlsym(RTLD_DEFAULT, "spanstat__alloc_counts"));
	bool bad = false;
	begin("warm");
	end();
	begin("new");
	for (auto &o : objs)
		o = got(new Obj());
	end();
	begin("delete"); // sized: the type is complete
	for (auto &o : objs)
		delete gone(o);
	end();
	begin("new[]");
	for (auto &a : ints)
		a = got(new int[250]());
	for (auto &a : arrs) {
		a = new Counted[7];
		got(array_base(a));
	}
	end();
	begin("delete[]");
	for (auto &a : ints)
		delete[] gone(a);
	for (auto &a : arrs) {
		gone_at(array_base(a));
		delete[] a;
	}
	end();
	begin("aligned");
	for (int i = 0; i < 10; i++) {
		Wide *w = got(new Wide());
		bad |= reinterpret_cast<uintptr_t>(w) % 256 != 0;
		delete gone(w);
	}
	Wide *ws = got(new Wide[3]);
	bad |= reinterpret_cast<uintptr_t>(ws) % 256 != 0;
	delete[] gone(ws);
	end();
	begin("operators"); // each operator named, as a program or library may call them
	void *p = got(::operator new(100));
	::operator delete(gone(p), 100);
	p = got(::operator new[](200));
	::operator delete[](gone(p), 200);
	p = got(::operator new(300, std::nothrow));
	::operator delete(gone(p), std::nothrow);
	p = got(::operator new[](400, std::nothrow));
	::operator delete[](gone(p), std::nothrow);
	p = got(::operator new(500, std::align_val_t(128)));
	bad |= reinterpret_cast<uintptr_t>(p) % 128 != 0;
	::operator delete(gone(p), std::align_val_t(128));
	p = got(::operator new[](600, std::align_val_t(512)));
	::operator delete[](gone(p), std::align_val_t(512));
	p = got(::operator new(700, std::align_val_t(64), std::nothrow));
	::operator delete(gone(p), std::align_val_t(64), std::nothrow);
	p = got(::operator new[](800, std::align_val_t(64), std::nothrow));
	::operator delete[](gone(p), std::align_val_t(64), std::nothrow);
	p = got(::operator new(900, std::align_val_t(32)));
	::operator delete(gone(p), 900, std::align_val_t(32));
	p = got(::operator new[](1000, std::align_val_t(32)));
	::operator delete[](gone(p), 1000, std::align_val_t(32));
	p = got(::operator new(10));
	::operator delete(gone(p));
	p = got(::operator new[](20));
	::operator delete[](gone(p));
	end();
	begin("throw");
	volatile size_t huge = SIZE_MAX / 4;
	bool caught = false;
	try {
		char *c = new char[huge];
		c[0] = 1;
		delete[] c;
	} catch (const std::bad_alloc &) {
		caught = true;
	}
	void *none = ::operator new(huge, std::nothrow);
	spanstat_end("throw");
	nspans--; // its counts are not all known: checked by spanstat's balance
	for (int i = 0; i < nspans; i++)
		std::printf("expect %s %llu %llu %llu %llu\n", spans[i].name,
			    static_cast<unsigned long long>(spans[i].v[0]),
			    static_cast<unsigned long long>(spans[i].v[1]),
			    static_cast<unsigned long long>(spans[i].v[2]),
			    static_cast<unsigned long long>(spans[i].v[3]));
	std::puts(caught && !none ? "caught" : "FAIL: new of a huge size did not fail");
	for (int i = 0; i < nfailed; i++)
		std::puts(failed[i]);
	if (bad)
		std::puts("FAIL: misaligned");
	return bad || nfailed || !caught;
}
