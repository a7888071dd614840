/* test_filter.c: the span filters on both sides of SPANSTAT_FILTER:
 * spanstat's (lib/spans/spanfilter.c: TIME and glob checks, the TSC conversion,
 * the spec it writes) and libspanstat's (lib/span/filter.c: the parser on
 * good and malformed specs, glob matching of span names, the demangled-name
 * trimming, and the resolution of this binary's own functions, a static
 * one, a global one and a C++-mangled one, through its ELF symbol table). */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "filter.h"
#include "spanfilter.h"
#include "tap.h"

/* The functions resolved by address: noinline and used, so they exist. */
__attribute__((noinline, used)) static int tf_static_helper(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int tf_exported_fn(int x)
{
	return tf_static_helper(x) - 2;
}

/* A C function under a C++ symbol: ns::Klass::method(int). */
__attribute__((noinline, used)) static int tf_mangled(int x) __asm__("_ZN2ns5Klass6methodEi");
static int tf_mangled(int x)
{
	return x + 7;
}

static void test_parse_good(void)
{
	struct recf_spec s;

	is_int(recf_parse(NULL, &s), 0, "no variable: no filtering");
	ok(!recf_active(&s), "no variable: inactive");
	is_int(recf_parse("", &s), 0, "empty variable: no filtering");
	ok(!recf_active(&s), "empty variable: inactive");

	is_int(recf_parse("min=2000\ndepth=3\nfilter=a*\nexclude=*b\nfilter=main\n", &s), 0,
	       "a full spec parses");
	ok(recf_active(&s), "a full spec is active");
	is_int(s.min_dur, 2000, "min");
	is_int(s.max_depth, 3, "depth");
	is_int(s.nfilter, 2, "two filters");
	is_int(s.nexclude, 1, "one exclude");
	is_str(s.filter[0], "a*", "first filter");
	is_str(s.filter[1], "main", "second filter, in order");
	is_str(s.exclude[0], "*b", "the exclude");
	recf_release(&s);
	ok(!recf_active(&s) && !s.filter, "released");

	is_int(recf_parse("min=1", &s), 0, "no final newline");
	is_int(s.min_dur, 1, "min=1");
	ok(recf_active(&s), "min alone is active");
	recf_release(&s);

	is_int(recf_parse("depth=1\n", &s), 0, "depth alone");
	is_int(s.max_depth, 1, "depth=1");
	ok(recf_active(&s) && s.nfilter == 0 && s.nexclude == 0, "depth alone is active");
	recf_release(&s);

	is_int(recf_parse("exclude=with space=and=equals [x]\n", &s), 0,
	       "a glob keeps spaces and '='");
	is_str(s.nexclude == 1 ? s.exclude[0] : NULL, "with space=and=equals [x]", "glob text");
	is_int(s.nfilter, 0, "no filter");
	recf_release(&s);

	is_int(recf_parse("min=18446744073\n", &s), 0, "a large min");
	is_int(s.min_dur, 18446744073ull, "large min value");
	recf_release(&s);
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"min=",
		"min=0",
		"min=-1",
		"min=1x",
		"min= 1",
		"min=1\nmin=2",
		"depth=0",
		"depth=4294967296",
		"depth=1\ndepth=1",
		"filter=",
		"exclude=",
		"filter=cat:",
		"exclude=cat:",
		"bogus=1",
		"filter",
		"\n",
		"min=1\n\n",
		"MIN=1",
		"min=99999999999999999999",
		"filter=a\n\nfilter=b",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct recf_spec s;
		memset(&s, 0x5a, sizeof s);
		int r = recf_parse(bad[i], &s);
		ok(r == -1 && !recf_active(&s) && !s.filter && !s.exclude,
		   "malformed spec %zu is refused and leaves no filtering", i);
	}
}

static void test_classify_name(void)
{
	struct recf_spec s;
	recf_parse("filter=parse_*\nfilter=main\nexclude=*_slow\nexclude=x[0-9]?\n", &s);
	is_int(recf_classify_name(&s, "parse_line"), RECF_FILTER, "filter glob");
	is_int(recf_classify_name(&s, "main"), RECF_FILTER, "filter literal");
	is_int(recf_classify_name(&s, "mainly"), 0, "a literal matches whole names only");
	is_int(recf_classify_name(&s, "parse_slow"), RECF_FILTER | RECF_EXCLUDE, "both");
	is_int(recf_classify_name(&s, "read_slow"), RECF_EXCLUDE, "exclude glob");
	/* a name with its place (NAME 0x1f FILE:LINE) matches as NAME */
	is_int(recf_classify_name(&s, "main\037/src/app.py:3"), RECF_FILTER,
	       "a located name matches by its name");
	is_int(recf_classify_name(&s, "mainly\037/src/main:3"), 0, "and never by its place");
	is_int(recf_classify_name(&s, "x1y"), RECF_EXCLUDE, "bracket and ?");
	is_int(recf_classify_name(&s, "xay"), 0, "bracket mismatch");
	is_int(recf_classify_name(&s, ""), 0, "empty name");
	is_int(recf_classify_name(&s, NULL), 0, "no name");
	recf_release(&s);

	recf_parse("filter=a/*\n", &s);
	is_int(recf_classify_name(&s, "a/b/c"), RECF_FILTER, "no FNM_PATHNAME: * crosses /");
	recf_release(&s);
	recf_parse("exclude=.*\n", &s);
	is_int(recf_classify_name(&s, ".hidden"), RECF_EXCLUDE, "no FNM_PERIOD: . is plain");
	recf_release(&s);
	recf_parse("filter=a\\*\n", &s);
	is_int(recf_classify_name(&s, "a*"), RECF_FILTER, "backslash quotes");
	is_int(recf_classify_name(&s, "ab"), 0, "a quoted * is literal");
	recf_release(&s);
	recf_parse("min=5\n", &s);
	is_int(recf_classify_name(&s, "anything"), 0, "no globs: nothing matches");
	recf_release(&s);
}

/* "cat:" globs match categories only, the others names only. */
static void test_classify_cat(void)
{
	struct recf_spec s;
	ok(recf_parse("filter=cat:io\nexclude=cat:d*\nfilter=cat*\n", &s) == 0, "cat: globs parse");
	is_int(recf_classify_cat(&s, "io"), RECF_FILTER, "a category glob matches a category");
	is_int(recf_classify_cat(&s, "debug"), RECF_EXCLUDE, "a category glob with *");
	is_int(recf_classify_cat(&s, "iox"), 0, "a category glob matches whole categories");
	is_int(recf_classify_cat(&s, "cat:io"), 0, "a name glob never matches a category");
	is_int(recf_classify_cat(&s, NULL), 0, "no category matches nothing");
	is_int(recf_classify_name(&s, "io"), 0, "a category glob never matches a name");
	is_int(recf_classify_name(&s, "cat:io"), RECF_FILTER, "a name glob still matches");
	is_int(recf_classify_name(&s, "dbg"), 0, "an exclude category glob never matches a name");
	recf_release(&s);
	recf_parse("filter=[c]at:x\n", &s);
	is_int(recf_classify_name(&s, "cat:x"), RECF_FILTER, "[c]at: matches a name starting cat:");
	is_int(recf_classify_cat(&s, "x"), 0, "[c]at: is no category glob");
	recf_release(&s);
}

static void test_base_name(void)
{
	static const struct {
		const char *dm, *l1, *l2;
	} cases[] = {
		{"ns::Klass::method(int)", "ns::Klass::method", "ns::Klass::method"},
		{"app::Parser::peek() const", "app::Parser::peek", "app::Parser::peek"},
		{"main::{lambda(int)#1}::operator()(int) const",
		 "main::{lambda(int)#1}::operator()", "main::{lambda(int)#1}::operator()"},
		{"app::operator<(app::Vec const&, app::Vec const&)", "app::operator<",
		 "app::operator<"},
		{"app::operator<<(std::ostream&, app::Vec const&)", "app::operator<<",
		 "app::operator<<"},
		{"app::Ptr::operator->() const", "app::Ptr::operator->", "app::Ptr::operator->"},
		{"app::Vec::operator int()", "app::Vec::operator int", "app::Vec::operator int"},
		{"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper",
		 "(anonymous namespace)::helper"},
		{"app::name[abi:cxx11]()", "app::name[abi:cxx11]", "app::name"},
		{"app::foo() [clone .isra.0]", "app::foo", "app::foo"},
		{"foo(void (*)(int))", "foo", "foo"},
		{"int max<int>(int, int)", "max<int>", "max"},
		{"double app::twice<double>(double)", "app::twice<double>", "app::twice"},
		{"std::vector<int, std::allocator<int> > app::make<int>(unsigned long)",
		 "app::make<int>", "app::make"},
		{"app::Box<std::pair<int, int> >::get() const",
		 "app::Box<std::pair<int, int> >::get", "app::Box::get"},
	};
	char out[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		out[0] = 0;
		recf_base_name(cases[i].dm, 1, out, sizeof out);
		is_str(out, cases[i].l1, "without parameters: %s", cases[i].dm);
		out[0] = 0;
		recf_base_name(cases[i].dm, 2, out, sizeof out);
		is_str(out, cases[i].l2, "without templates too: %s", cases[i].dm);
	}
	is_int(recf_base_name("not_a_function", 1, out, sizeof out), -1, "no parameters: -1");
	is_int(recf_base_name("ns::f(int)", 1, out, 4), -1, "too small: -1");
}

static void test_classify_code(void)
{
	struct recf_spec s;

	is_str(recf_symbol((uintptr_t)tf_static_helper), "tf_static_helper",
	       "a static function resolves from .symtab");
	is_str(recf_symbol((uintptr_t)tf_exported_fn), "tf_exported_fn",
	       "a global function resolves");
	is_str(recf_symbol((uintptr_t)tf_exported_fn + 1), "tf_exported_fn",
	       "an address inside a function resolves to it");
	is_str(recf_symbol((uintptr_t)tf_mangled), "_ZN2ns5Klass6methodEi", "a C++ symbol");
	void *libc_fn = dlsym(RTLD_DEFAULT, "getpid");
	ok(libc_fn && recf_symbol((uintptr_t)libc_fn), "a libc function resolves");
	ok(recf_symbol(0) == NULL, "address 0 resolves to nothing");
	static char data[16];
	ok(recf_symbol((uintptr_t)data) == NULL, "data resolves to no function");

	recf_parse("filter=tf_static_*\nexclude=tf_exported_fn\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_static_helper), RECF_FILTER,
	       "static function matches --filter");
	is_int(recf_classify_code(&s, (uintptr_t)tf_exported_fn), RECF_EXCLUDE,
	       "global function matches --exclude");
	is_int(recf_classify_code(&s, (uintptr_t)tf_mangled), 0, "no match");
	is_int(recf_classify_code(&s, (uintptr_t)data), 0, "data matches nothing");
	recf_release(&s);

	recf_parse("min=3\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_static_helper), 0, "no globs: 0");
	recf_release(&s);

	recf_parse("filter=_ZN2ns*\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_mangled), RECF_FILTER,
	       "the symbol itself matches");
	recf_release(&s);

	/* demangling needs __cxa_demangle in the process: bring libstdc++ in */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	ok(cxx != NULL, "libstdc++ loads (%s)", cxx ? "ok" : dlerror());
	recf_parse("filter=ns::Klass::method\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_mangled), RECF_FILTER,
	       "the demangled name without parameters matches");
	recf_release(&s);
	recf_parse("exclude=ns::Klass::method(int)\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_mangled), RECF_EXCLUDE,
	       "the full demangled text matches");
	recf_release(&s);
	recf_parse("exclude=*::Klass::*\nfilter=ns::*(char)\n", &s);
	is_int(recf_classify_code(&s, (uintptr_t)tf_mangled), RECF_EXCLUDE,
	       "a glob over the demangled name; a wrong signature does not match");
	recf_release(&s);
}

/* Categories the tests declare: of a C symbol, and of a C++ function by its
 * name without parameters. */
static const char *tf_cat_of(const char *text)
{
	if (strcmp(text, "tf_static_helper") == 0)
		return "io";
	if (strcmp(text, "ns::Klass::method") == 0)
		return "cpu";
	return NULL;
}

static void test_classify_code_cat(void)
{
	struct recf_spec s;
	recf_parse("filter=cat:io\n", &s);
	is_int(recf_classify_code_cat(&s, (uintptr_t)tf_static_helper, tf_cat_of), RECF_FILTER,
	       "cat: matches the category of a function's symbol");
	is_int(recf_classify_code_cat(&s, (uintptr_t)tf_exported_fn, tf_cat_of), 0,
	       "a function without a category matches no cat: glob");
	is_int(recf_classify_code(&s, (uintptr_t)tf_static_helper), 0,
	       "without categories, cat: matches no function");
	static char data[16];
	is_int(recf_classify_code_cat(&s, (uintptr_t)data, tf_cat_of), 0,
	       "data matches no category");
	recf_release(&s);
	recf_parse("exclude=cat:c*\n", &s);
	is_int(recf_classify_code_cat(&s, (uintptr_t)tf_mangled, tf_cat_of), RECF_EXCLUDE,
	       "a C++ function by the category of its demangled name");
	is_int(recf_classify_code_cat(&s, (uintptr_t)tf_static_helper, tf_cat_of), 0,
	       "another category does not match");
	recf_release(&s);
	recf_parse("filter=tf_static_*\nexclude=cat:io\n", &s);
	is_int(recf_classify_code_cat(&s, (uintptr_t)tf_static_helper, tf_cat_of),
	       RECF_FILTER | RECF_EXCLUDE, "a name glob and a category glob both count");
	recf_release(&s);
}

static void test_spanstat_side(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {{"1ns", 1},	      {"500ns", 500},	   {"2us", 2000},
		    {"1ms", 1000000}, {"3s", 3000000000u}, {"1000000s", 1000000000000000u},
		    {"007us", 7000}};
	static const char *const bad[] = {
		"",	"5",   "0ns",  "0s",	   "1.5ms",
		"1 ms", "1MS", "ms",   "-1ns",	   "+1ns",
		"1msx", "1m",  "1sec", "1000001s", "99999999999999999999ns"};
	const char *why;
	uint64_t ns;

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		ns = 0;
		is_int(spanfilter_parse_time(good[i].s, &ns, &why), 0, "TIME '%s' parses",
		       good[i].s);
		is_int(ns, good[i].ns, "TIME '%s' in ns", good[i].s);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		is_int(spanfilter_parse_time(bad[i], &ns, &why), -EINVAL, "TIME '%s' is refused",
		       bad[i]);
		ok(why && *why, "with a reason: %s", why ? why : "(none)");
	}
	ok(spanfilter_parse_time("5", &ns, &why) < 0 && strstr(why, "ns, us, ms or s"),
	   "a bare number's error names the units");

	struct spanfilter f;
	spanfilter_init(&f);
	ok(!spanfilter_any(&f), "no filter set");
	why = NULL;
	is_int(spanfilter_add(&f, false, "", &why), -EINVAL, "an empty glob is refused");
	ok(why && strstr(why, "pattern"), "why: %s", why ? why : "(none)");
	why = NULL;
	is_int(spanfilter_add(&f, true, "a\nb", &why), -EINVAL, "a newline is refused");
	ok(why && strstr(why, "newline"), "why: %s", why ? why : "(none)");
	is_int(spanfilter_add(&f, true, "a\\nb", &why), 0, "a backslash and an n are fine");
	is_int(f.nexclude, 1, "refused globs were not added");
	is_int(f.nfilter, 0, "nor any filter");
	is_int(spanfilter_add(&f, false, "main", &why), 0, "a filter");
	is_int(spanfilter_add(&f, false, "parse_*", &why), 0, "another filter");
	f.min_ns = 2000;
	f.max_depth = 4;
	ok(spanfilter_any(&f), "filters set");

	/* what spanstat writes, the span library reads back */
	char *spec = NULL;
	is_int(spanfilter_spec(&f, NULL, &spec), 0, "a spec in ns");
	is_str(spec, "min=2000\ndepth=4\nfilter=main\nfilter=parse_*\nexclude=a\\nb\n",
	       "the spec text");
	struct recf_spec rs;
	is_int(recf_parse(spec, &rs), 0, "the span library parses it");
	ok(rs.min_dur == 2000 && rs.max_depth == 4 && rs.nfilter == 2 && rs.nexclude == 1 &&
		   strcmp(rs.filter[1], "parse_*") == 0 && strcmp(rs.exclude[0], "a\\nb") == 0,
	   "and gets every item back");
	recf_release(&rs);
	free(spec);

	/* 3 GHz: a tick is 341/1024 ns; 2000 ns is 6005.9 ticks, rounded up */
	struct spanclock clk = {.mult = 341, .shift = 10, .valid = 1};
	is_int(spanfilter_ticks(2000, &clk), 6006, "ns to ticks, rounded up");
	is_int((spanfilter_ticks(2000, &clk) * 341) >> 10, 2000, "which is at least 2000 ns");
	is_int(((spanfilter_ticks(2000, &clk) - 1) * 341) >> 10, 1999, "and one less is not");
	is_int(spanfilter_ticks(1, &clk), 4, "1 ns: 4 ticks");
	is_int(spanfilter_ticks(1000000000000000u, &clk), 3002932551319649u, "the largest TIME");
	is_int(spanfilter_spec(&f, &clk, &spec), 0, "a spec in ticks");
	is_str(spec, "min=6006\ndepth=4\nfilter=main\nfilter=parse_*\nexclude=a\\nb\n",
	       "min in ticks");
	free(spec);
	clk.valid = 0;
	is_int(spanfilter_spec(&f, &clk, &spec), 0, "an invalid clock");
	ok(spec && strncmp(spec, "min=2000\n", 9) == 0, "keeps ns");
	free(spec);
	spanfilter_release(&f);

	spanfilter_init(&f);
	f.max_depth = 1;
	is_int(spanfilter_spec(&f, &clk, &spec), 0, "depth alone");
	is_str(spec, "depth=1\n", "only what is set is written");
	free(spec);
	spanfilter_release(&f);
}

int main(void)
{
	test_classify_cat();
	test_parse_good();
	test_parse_bad();
	test_classify_name();
	test_base_name();
	test_classify_code();
	test_classify_code_cat();
	test_spanstat_side();
	return tap_done();
}
