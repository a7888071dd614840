/* demangle.c: function symbols to the text spanstat shows (demangle.h).
 * FULL is libiberty's cplus_demangle_v3 with c++filt's options.  SIMPLE
 * walks the tree cplus_demangle_v3_components returns: a typed name (a
 * function and its type) keeps only its name, a template keeps only its
 * template's name, qualified and local names join their parts with "::",
 * and every other leaf (identifiers, operators, constructors, lambdas,
 * conversions) is printed by libiberty itself, so "operator()",
 * "operator<<", "operator->", "(anonymous namespace)" and "{lambda(int)#1}"
 * come out exactly as c++filt writes them.  Whatever the walk does not
 * know falls back to the FULL text. */
#include "config.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "grow.h"

/* c++filt's defaults: parameters, cv-qualifiers, std:: names in full */
#define DEMANGLE_FULL_OPTS (DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE)
/* for simple leaves: std::string rather than its full expansion */
#define DEMANGLE_LEAF_OPTS (DMGL_PARAMS | DMGL_ANSI)
#define DEMANGLE_MAX_DEPTH 64

struct demangle_buf {
	char *s;
	size_t len, cap;
	bool bad; /* out of memory, or a component the walk cannot show */
};

int demangle_mode_parse(const char *s, enum demangle_mode *mode)
{
	static const char *const name[] = {"simple", "full", "no"};
	for (int i = 0; i < 3; i++) {
		if (strcmp(s, name[i]) == 0) {
			*mode = (enum demangle_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

static void demangle_put(struct demangle_buf *b, const char *s, size_t n)
{
	if (b->bad)
		return;
	if (n >= SIZE_MAX - b->len || GROW(b->s, b->len + n + 1, b->cap, 64) < 0) {
		b->bad = true;
		return;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* A leaf printed by libiberty; a std:: substitution loses its template
 * arguments ("std::basic_string<char, ...>" as a scope is its full
 * expansion, a fixed libiberty string). */
static void demangle_leaf(struct demangle_buf *b, struct demangle_component *dc)
{
	if (dc->type == DEMANGLE_COMPONENT_SUB_STD) {
		const char *s = dc->u.s_string.string;
		size_t n = (size_t)dc->u.s_string.len;
		const char *lt = memchr(s, '<', n);
		demangle_put(b, s, lt ? (size_t)(lt - s) : n);
		return;
	}
	size_t size = 0;
	char *s = cplus_demangle_print(DEMANGLE_LEAF_OPTS, dc, 64, &size);
	if (!s) {
		b->bad = true;
		return;
	}
	demangle_put(b, s, strlen(s));
	free(s);
}

/* Appends the simple form of dc. */
static void demangle_simple(struct demangle_buf *b, struct demangle_component *dc, int depth)
{
	if (!dc || depth > DEMANGLE_MAX_DEPTH) {
		b->bad = true;
		return;
	}
	struct demangle_component *l = dc->u.s_binary.left, *r = dc->u.s_binary.right;
	switch (dc->type) {
	case DEMANGLE_COMPONENT_TYPED_NAME:  /* name + function type: the name */
	case DEMANGLE_COMPONENT_TEMPLATE:    /* name + arguments: the name */
	case DEMANGLE_COMPONENT_TAGGED_NAME: /* name + [abi:tag]: the name */
	case DEMANGLE_COMPONENT_CLONE:	     /* name + [clone .isra.0] */
	case DEMANGLE_COMPONENT_CONST_THIS:  /* the function's qualifiers */
	case DEMANGLE_COMPONENT_VOLATILE_THIS:
	case DEMANGLE_COMPONENT_RESTRICT_THIS:
	case DEMANGLE_COMPONENT_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_RVALUE_REFERENCE_THIS:
	case DEMANGLE_COMPONENT_TRANSACTION_SAFE:
	case DEMANGLE_COMPONENT_NOEXCEPT:
	case DEMANGLE_COMPONENT_THROW_SPEC:
		demangle_simple(b, l, depth + 1);
		return;
	case DEMANGLE_COMPONENT_QUAL_NAME:  /* scope::name */
	case DEMANGLE_COMPONENT_LOCAL_NAME: /* function::local entity */
		demangle_simple(b, l, depth + 1);
		demangle_put(b, "::", 2);
		demangle_simple(b, r, depth + 1);
		return;
	case DEMANGLE_COMPONENT_NAME:
	case DEMANGLE_COMPONENT_SUB_STD:
	case DEMANGLE_COMPONENT_CTOR:
	case DEMANGLE_COMPONENT_DTOR:
	case DEMANGLE_COMPONENT_OPERATOR:
	case DEMANGLE_COMPONENT_EXTENDED_OPERATOR:
	case DEMANGLE_COMPONENT_CONVERSION:
	case DEMANGLE_COMPONENT_LAMBDA:
	case DEMANGLE_COMPONENT_UNNAMED_TYPE:
	case DEMANGLE_COMPONENT_DEFAULT_ARG:
		demangle_leaf(b, dc);
		return;
	default: /* special names and anything newer: FULL */
		b->bad = true;
		return;
	}
}

char *demangle_symbol(const char *sym, enum demangle_mode mode)
{
	if (mode == DEMANGLE_NO || strncmp(sym, "_Z", 2) != 0)
		return NULL;
	char *full = cplus_demangle_v3(sym, DEMANGLE_FULL_OPTS);
	if (!full || mode == DEMANGLE_FULL)
		return full;
	void *mem = NULL;
	struct demangle_component *dc = cplus_demangle_v3_components(sym, DEMANGLE_LEAF_OPTS, &mem);
	struct demangle_buf b = {0};
	if (dc)
		demangle_simple(&b, dc, 0);
	free(mem);
	if (!dc || b.bad || !b.len) {
		free(b.s);
		return full;
	}
	free(full);
	return b.s;
}
