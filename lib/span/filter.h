/* filter.h: the span filters of libspanstat, decided inside the target
 * (spanstat's --min-duration, --max-depth, --filter, --exclude).  spanstat
 * hands them over in SPANSTAT_FILTER (spanenv.h): one item per line,
 *
 *   min=<u64>      spans shorter than this, in the target's clock units
 *                  (TSC ticks when SPANSTAT_CLOCK is "tsc", else ns), are
 *                  not sent
 *   depth=<N>      spans deeper than N per thread (outermost: 1) are not sent
 *   filter=<glob>  only spans inside a span whose name matches (repeatable)
 *   exclude=<glob> a matching span and everything under it are not sent
 *                  (repeatable)
 *
 * A glob that starts with "cat:" matches the span's category (the rest of it,
 * not empty, against what spanstat_category() declared for the name), any
 * other glob its name; a span without a category matches no category glob.
 *
 * each line ended by '\n' (optional after the last).  Numbers are decimal
 * digits, min and depth at least 1 and given at most once; a glob is an
 * fnmatch(3) pattern (no flags), not empty.  Anything else is malformed.
 *
 * recf_parse() owns the only allocation of a spec (released by
 * recf_release()); the name resolution of recf_classify_code() allocates
 * what it caches (one entry per object file, kept for the life of the
 * process, published without locks so that it is safe from any thread and
 * after fork).  Nothing here prints, exits or is exported from the .so. */
#ifndef SPANSTAT_SPAN_FILTER_H
#define SPANSTAT_SPAN_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define RECF_HIDDEN __attribute__((visibility("hidden"), no_instrument_function))

struct recf_spec {
	uint64_t min_dur;   /* 0: none */
	unsigned max_depth; /* 0: none */
	unsigned nfilter, nexclude;
	char **filter, **exclude; /* globs; one allocation, owned by the spec */
};

#define RECF_FILTER 1u	/* name matches a --filter glob */
#define RECF_EXCLUDE 2u /* name matches an --exclude glob */

/* Parses SPANSTAT_FILTER's value (env may be NULL: no filtering).  Returns
 * 0, or -1 on a malformed spec, and then *s is empty (no filtering). */
RECF_HIDDEN int recf_parse(const char *env, struct recf_spec *s);
/* Frees what recf_parse() allocated; *s is empty afterwards. */
RECF_HIDDEN void recf_release(struct recf_spec *s);
/* Whether any item is set. */
RECF_HIDDEN int recf_active(const struct recf_spec *s);
#define RECF_CAT_PREFIX "cat:" /* a glob of categories, not of names */

/* RECF_FILTER and/or RECF_EXCLUDE, for a span's name (by the globs of
 * names). */
RECF_HIDDEN unsigned recf_classify_name(const struct recf_spec *s, const char *name);
/* The same for a span's category (by the "cat:" globs); NULL: none. */
RECF_HIDDEN unsigned recf_classify_cat(const struct recf_spec *s, const char *cat);
/* RECF_FILTER and/or RECF_EXCLUDE, for the function at addr (an
 * -finstrument-functions function): its symbol from the ELF symbol table of
 * its object on disk (.symtab, else .dynsym), and for a C++ symbol the
 * demangled text (when __cxa_demangle is in the process), that text without
 * its parameters and return type ("ns::Class::method"), and that again
 * without template arguments and ABI tags, as `--demangle=simple` shows it.
 * Any of them matching counts; an address without a symbol matches nothing.
 * Without filter or exclude globs it resolves nothing and returns 0. */
RECF_HIDDEN unsigned recf_classify_code(const struct recf_spec *s, uintptr_t addr);
/* The same, and the category globs against the category cat_of() gives
 * each of those texts (the name a function's spans are shown by is one of
 * them, and its category is the text's, as spanstat_category() declared). */
typedef const char *(*recf_cat_of_fn)(const char *text);
RECF_HIDDEN unsigned recf_classify_code_cat(const struct recf_spec *s, uintptr_t addr,
					    recf_cat_of_fn cat_of);

/* For the tests: the symbol recf_classify_code() resolves addr to (NULL if
 * none), valid for the life of the process. */
RECF_HIDDEN const char *recf_symbol(uintptr_t addr);
/* For the tests: the name part of a demangled function's text, written to
 * out (cap bytes): level 1 drops parameters, qualifiers and return type;
 * level 2 also template arguments and ABI tags.  Returns 0, or -1 when the
 * text does not look like a function or out is too small. */
RECF_HIDDEN int recf_base_name(const char *demangled, int level, char *out, size_t cap);

#endif
