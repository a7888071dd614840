/* test_demangle.c: the --demangle modes (lib/spans/demangle.c) on symbols chosen
 * for what the "simple" walk must get right (operators, lambdas, anonymous
 * namespaces, ABI tags, qualifiers, clones, templates, std:: substitutions,
 * function-pointer parameters), the full text as c++filt (binutils 2.40)
 * prints it, names that pass through, and the name view (lib/spans/spannames.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "spannames.h"
#include "tap.h"

static const struct {
	const char *sym, *simple, *full;
} cases[] = {
	{"_ZN3app6Parser5depthEi", "app::Parser::depth", "app::Parser::depth(int)"},
	{"_ZNK3app6Parser4peekEv", "app::Parser::peek", "app::Parser::peek() const"},
	{"_ZN3app6ParserC2Ev", "app::Parser::Parser", "app::Parser::Parser()"},
	{"_ZN3app6ParserD1Ev", "app::Parser::~Parser", "app::Parser::~Parser()"},
	{"_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()",
	 "main::{lambda(int)#1}::operator()(int) const"},
	{"_ZN3appltERKNS_3VecES2_", "app::operator<",
	 "app::operator<(app::Vec const&, app::Vec const&)"},
	{"_ZN3applsERSoRKNS_3VecE", "app::operator<<",
	 "app::operator<<(std::basic_ostream<char, std::char_traits<char> >&, app::Vec const&)"},
	{"_ZNK3app3PtrptEv", "app::Ptr::operator->", "app::Ptr::operator->() const"},
	{"_ZNK3app4LessclEii", "app::Less::operator()", "app::Less::operator()(int, int) const"},
	{"_ZN3app3VeccviEv", "app::Vec::operator int", "app::Vec::operator int()"},
	{"_ZN12_GLOBAL__N_16helperEi", "(anonymous namespace)::helper",
	 "(anonymous namespace)::helper(int)"},
	{"_ZN3app4nameB5cxx11Ev", "app::name", "app::name[abi:cxx11]()"},
	{"_ZN3app3fooEv.isra.0", "app::foo", "app::foo() [clone .isra.0]"},
	{"_Z3fooPFviE", "foo", "foo(void (*)(int))"},
	{"_ZL4bumpi", "bump", "bump(int)"},
	{"_Z3maxIiET_S0_S0_", "max", "int max<int>(int, int)"},
	{"_ZN3app5twiceIdEET_S1_", "app::twice", "double app::twice<double>(double)"},
	{"_ZNSs6appendEPKc", "std::string::append",
	 "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::append(char "
	 "const*)"},
	{"_ZNSsC1ERKSs", "std::basic_string::basic_string",
	 "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string("
	 "std::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"},
	{"_ZNSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS5_EE9push_backEOS5_",
	 "std::vector::push_back",
	 "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
	 "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
	 "std::char_traits<char>, std::allocator<char> > > "
	 ">::push_back(std::__cxx11::basic_string<char, std::char_traits<char>, "
	 "std::allocator<char> >&&)"},
	/* special names: no simpler form, the full text */
	{"_ZTVN3app6ParserE", "vtable for app::Parser", "vtable for app::Parser"},
};

static void test_modes(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *s = demangle_symbol(cases[i].sym, DEMANGLE_SIMPLE);
		char *f = demangle_symbol(cases[i].sym, DEMANGLE_FULL);
		char *n = demangle_symbol(cases[i].sym, DEMANGLE_NO);
		is_str(s ? s : "(null)", cases[i].simple, "simple %s", cases[i].sym);
		is_str(f ? f : "(null)", cases[i].full, "full %s", cases[i].sym);
		ok(n == NULL, "no: %s as it is", cases[i].sym);
		free(s);
		free(f);
		free(n);
	}
}

/* Not mangled, or malformed: shown as they are (NULL) in every mode. */
static void test_pass_through(void)
{
	static const char *const as_is[] = {"main",   "work",	  "_Z3badX",
					    "_Z",     "_ZN5_bad", "",
					    "Z3foov", "_z3foov",  "0x10@libc.so.6"};
	for (size_t i = 0; i < sizeof as_is / sizeof *as_is; i++)
		for (int m = DEMANGLE_SIMPLE; m <= DEMANGLE_NO; m++)
			ok(demangle_symbol(as_is[i], (enum demangle_mode)m) == NULL,
			   "'%s' mode %d: as it is", as_is[i], m);
}

static void test_parse(void)
{
	enum demangle_mode m = DEMANGLE_NO;
	ok(demangle_mode_parse("simple", &m) == 0 && m == DEMANGLE_SIMPLE, "parse simple");
	ok(demangle_mode_parse("full", &m) == 0 && m == DEMANGLE_FULL, "parse full");
	ok(demangle_mode_parse("no", &m) == 0 && m == DEMANGLE_NO, "parse no");
	ok(demangle_mode_parse("Simple", &m) == -EINVAL, "parse: case matters");
	ok(demangle_mode_parse("", &m) == -EINVAL, "parse: empty");
	ok(demangle_mode_parse("yes", &m) == -EINVAL, "parse: unknown");
}

/* The view: ids without an entry show as they are; two raw names may show
 * one text; locations only where set. */
static void test_view(void)
{
	struct strtab t;
	struct spannames v;
	strtab_init(&t);
	spannames_init(&v, &t);
	uint32_t a = strtab_intern(&t, "_ZN3app5twiceIiEET_S1_", 23);
	uint32_t b = strtab_intern(&t, "_ZN3app5twiceIdEET_S1_", 23);
	uint32_t shown = strtab_intern(&t, "app::twice", 10);
	uint32_t file = strtab_intern(&t, "/src/app.cc", 11);
	uint32_t user = strtab_intern(&t, "load", 4);
	ok(spannames_set(&v, a, shown, file, 12) == 0, "view: set a");
	ok(spannames_set(&v, b, shown, 0, 0) == 0, "view: set b");
	ok(a != b, "view: two raw names stay two ids");
	is_str(spannames_text(&v, &t, a), "app::twice", "view: a shows simplified");
	is_str(spannames_text(&v, &t, b), "app::twice", "view: b shows the same text");
	is_str(spannames_text(&v, &t, user), "load", "view: a name without entry as it is");
	is_str(spannames_text(NULL, &t, a), "_ZN3app5twiceIiEET_S1_", "view: no view, raw");
	is_str(spannames_text(NULL, NULL, a), "", "view: nothing at all, empty");
	uint32_t line = 99;
	const char *f = spannames_where(&v, a, &line);
	ok(f && !strcmp(f, "/src/app.cc") && line == 12, "view: a's location");
	ok(!spannames_where(&v, b, &line) && line == 0, "view: b has none");
	ok(!spannames_where(&v, user, &line) && line == 0, "view: user name has none");
	ok(!spannames_where(&v, 100000, &line), "view: an id beyond the view has none");
	ok(spannames_set(&v, 70000, shown, 0, 0) == 0 && spannames_known(&v, 70000) &&
		   spannames_known(&v, a),
	   "view: grows and keeps what it had");
	ok(spannames_set(&v, 0, shown, 0, 0) == -EINVAL, "view: id 0 refused");
	spannames_release(&v);
	strtab_release(&t);
}

int main(void)
{
	test_modes();
	test_pass_through();
	test_parse();
	test_view();
	return tap_done();
}
