/* demangle.h: the text spanstat shows for a function symbol (--demangle).
 * Demangling is libiberty's (the GNU demangler that c++filt, gdb and perf
 * use); this file adds only the choice of mode and the "simple" form, built
 * from libiberty's component tree rather than by cutting printed text.
 *
 * - DEMANGLE_FULL: what c++filt prints (parameters, templates, qualifiers).
 * - DEMANGLE_SIMPLE: the scopes and the function's name without parameter
 *   lists, template arguments, ABI tags, cv/ref qualifiers of the function
 *   or clone suffixes: "app::Parser::depth", "std::vector::push_back",
 *   "main::{lambda(int)#1}::operator()", "(anonymous namespace)::helper".
 *   Lambda and unnamed-type names keep libiberty's text, which tells them
 *   apart.  Special names (vtables, thunks, guards) are shown in full.
 * - DEMANGLE_NO: the symbol as it is.
 * Names that are not mangled ("_Z" prefix) and malformed mangled names are
 * shown as they are. */
#ifndef SPANSTAT_DEMANGLE_H
#define SPANSTAT_DEMANGLE_H

enum demangle_mode {
	DEMANGLE_SIMPLE, /* the default */
	DEMANGLE_FULL,
	DEMANGLE_NO,
};

/* "simple", "full" or "no" into *mode: 0, or -EINVAL. */
int demangle_mode_parse(const char *s, enum demangle_mode *mode);
/* The text to show for sym under mode, malloc'd for the caller to free; NULL
 * when sym shows as it is (mode no, not mangled, malformed) or on
 * out-of-memory (the symbol then shows as it is too). */
char *demangle_symbol(const char *sym, enum demangle_mode mode);

#endif
