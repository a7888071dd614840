/* filter.c: libspanstat's span filters (filter.h): the parser of
 * SPANSTAT_FILTER, glob matching of span names, and the resolution of a
 * function's address to its names (ELF symbol tables read from the object's
 * file, C++ demangling through the process's own __cxa_demangle).  It runs
 * in any target process: no printing, no exiting, nothing beyond libc and
 * libdl, no locks (the per-object cache is a list published with
 * compare-and-swap), and allocation only in recf_parse() and while resolving
 * a name.  What resolving keeps (the objects' symbol tables) is mapped, not
 * taken from the program's heap: freed pieces of it there would be cut into
 * the program's later blocks, whose sizes --span-allocs counts; only the
 * demangler's short-lived strings come from malloc. */
#include "config.h"

#include "filter.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECF_NOI __attribute__((no_instrument_function))
#define RECF_NUM_MAX UINT64_C(1000000000000000000) /* 1e18: no overflow in 19 digits */
#define RECF_GLOBS_MAX 100000u

#if __ELF_NATIVE_CLASS == 64
#define RECF_ELFCLASS ELFCLASS64
#define RECF_ST_TYPE(i) ELF64_ST_TYPE(i)
#else
#define RECF_ELFCLASS ELFCLASS32
#define RECF_ST_TYPE(i) ELF32_ST_TYPE(i)
#endif

/* A function symbol of an object: its address before relocation and its
 * name, an offset into the object's names. */
struct recf_sym {
	uintptr_t value;
	uintptr_t size;
	uint32_t name;
};

/* One object file's function symbols, sorted by value; published once,
 * never changed or freed afterwards. */
struct recf_obj {
	struct recf_obj *next;
	uintptr_t bias;	      /* link_map l_addr */
	char *path;	      /* link_map l_name as it was, in the object's mapping */
	size_t len;	      /* of that mapping (the object and its path) */
	struct recf_sym *sym; /* one mapping with names, of tlen bytes */
	size_t nsym;
	char *names;
	size_t tlen;
};

typedef char *(*recf_demangle_fn)(const char *, char *, size_t *, int *);

static _Atomic(struct recf_obj *) recf_objs;

/* ---- the spec ------------------------------------------------------------ */

/* A decimal number of 1 to RECF_NUM_MAX from p[0..len), or 0. */
static RECF_NOI uint64_t recf_number(const char *p, size_t len)
{
	uint64_t v = 0;
	if (len == 0 || len > 19)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return v <= RECF_NUM_MAX ? v : 0;
}

/* Reads every line of env into s, adding the bytes its globs take to
 * *bytes; with store set it also copies the globs there (s's arrays and
 * store allocated by the caller).  -1: malformed. */
static RECF_NOI int recf_scan(const char *env, struct recf_spec *s, size_t *bytes, char *store)
{
	const char *p = env;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (!eq)
			return -1;
		size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
		const char *v = eq + 1;
		if (klen == 3 && memcmp(p, "min", 3) == 0) {
			if (s->min_dur || !(s->min_dur = recf_number(v, vlen)))
				return -1;
		} else if (klen == 5 && memcmp(p, "depth", 5) == 0) {
			uint64_t d = recf_number(v, vlen);
			if (s->max_depth || !d || d > UINT32_MAX)
				return -1;
			s->max_depth = (unsigned)d;
		} else if ((klen == 6 && memcmp(p, "filter", 6) == 0) ||
			   (klen == 7 && memcmp(p, "exclude", 7) == 0)) {
			bool inc = klen == 6;
			if (vlen == 0 || memchr(v, 0, vlen) ||
			    (vlen == sizeof RECF_CAT_PREFIX - 1 &&
			     memcmp(v, RECF_CAT_PREFIX, vlen) == 0))
				return -1;
			if (store) {
				char **slot =
					inc ? &s->filter[s->nfilter] : &s->exclude[s->nexclude];
				memcpy(store + *bytes, v, vlen);
				store[*bytes + vlen] = 0;
				*slot = store + *bytes;
			}
			if (inc)
				s->nfilter++;
			else
				s->nexclude++;
			*bytes += vlen + 1;
		} else {
			return -1;
		}
		p = nl ? nl + 1 : p + len;
	}
	return 0;
}

RECF_NOI int recf_parse(const char *env, struct recf_spec *s)
{
	struct recf_spec count;
	size_t bytes = 0;

	memset(s, 0, sizeof *s);
	memset(&count, 0, sizeof count);
	if (!env || !*env)
		return 0;
	/* first count, then allocate once and store */
	if (recf_scan(env, &count, &bytes, NULL) < 0 || count.nfilter > RECF_GLOBS_MAX ||
	    count.nexclude > RECF_GLOBS_MAX)
		return -1;
	size_t nglob = (size_t)count.nfilter + count.nexclude;
	char **block = NULL;
	if (nglob && !(block = malloc(nglob * sizeof *block + bytes)))
		return -1;
	s->filter = block;
	s->exclude = block ? block + count.nfilter : NULL;
	bytes = 0;
	recf_scan(env, s, &bytes, block ? (char *)(block + nglob) : NULL);
	return 0;
}

RECF_NOI void recf_release(struct recf_spec *s)
{
	free(s->filter);
	memset(s, 0, sizeof *s);
}

RECF_NOI int recf_active(const struct recf_spec *s)
{
	return s->min_dur || s->max_depth || s->nfilter || s->nexclude;
}

/* Whether glob g is a category's (RECF_CAT_PREFIX), and then the glob. */
static RECF_NOI const char *recf_cat_glob(const char *g)
{
	return strncmp(g, RECF_CAT_PREFIX, sizeof RECF_CAT_PREFIX - 1) == 0
		       ? g + sizeof RECF_CAT_PREFIX - 1
		       : NULL;
}

/* The globs of one kind (categories' or names') that match text. */
static RECF_NOI unsigned recf_match(const struct recf_spec *s, const char *text, bool cat)
{
	unsigned r = 0;
	if (!text)
		return 0;
	/* a name with its location (NAME 0x1f FILE:LINE, spanstat(3)) matches
	 * as NAME */
	char cut[1024];
	const char *sep = cat ? NULL : strchr(text, '\x1f');
	if (sep) {
		size_t n =
			(size_t)(sep - text) < sizeof cut ? (size_t)(sep - text) : sizeof cut - 1;
		memcpy(cut, text, n);
		cut[n] = '\0';
		text = cut;
	}
	for (unsigned i = 0; i < s->nfilter + s->nexclude; i++) {
		bool inc = i < s->nfilter;
		unsigned bit = inc ? RECF_FILTER : RECF_EXCLUDE;
		const char *g = inc ? s->filter[i] : s->exclude[i - s->nfilter];
		const char *cg = recf_cat_glob(g);
		if ((r & bit) || cat != (cg != NULL))
			continue;
		if (fnmatch(cat ? cg : g, text, 0) == 0)
			r |= bit;
	}
	return r;
}

RECF_NOI unsigned recf_classify_name(const struct recf_spec *s, const char *name)
{
	return recf_match(s, name, false);
}

RECF_NOI unsigned recf_classify_cat(const struct recf_spec *s, const char *cat)
{
	return recf_match(s, cat, true);
}

/* ---- function symbols of an object file --------------------------------- */

static RECF_NOI int recf_sym_cmp(const void *a, const void *b)
{
	const struct recf_sym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->size != y->size) /* the widest first: it contains the others */
		return x->size > y->size ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* n bytes of zeroed memory of our own, out of the program's heap; NULL if
 * none. */
static RECF_NOI void *recf_map(size_t n)
{
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

static RECF_NOI void recf_sift(struct recf_sym *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && recf_sym_cmp(&a[c], &a[c + 1]) < 0)
			c++;
		if (recf_sym_cmp(&a[i], &a[c]) >= 0)
			return;
		struct recf_sym t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

/* Sorts a[0..n) by recf_sym_cmp in place: a heap sort, since glibc's qsort
 * takes its scratch from malloc. */
static RECF_NOI void recf_sort(struct recf_sym *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		recf_sift(a, i, n);
	for (size_t end = n; end-- > 1;) {
		struct recf_sym t = a[0];
		a[0] = a[end];
		a[end] = t;
		recf_sift(a, 0, end);
	}
}

/* The section table of the ELF image at m (size bytes), checked; NULL if it
 * is not a native ELF file with one. */
static RECF_NOI const ElfW(Shdr) * recf_sections(const unsigned char *m, size_t size, size_t *n)
{
	const ElfW(Ehdr) *eh = (const void *)m;
	if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != RECF_ELFCLASS || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff == 0 || eh->e_shoff >= size || eh->e_shoff % sizeof(void *))
		return NULL;
	const ElfW(Shdr) *sh = (const void *)(m + eh->e_shoff);
	size_t room = (size - eh->e_shoff) / sizeof *sh;
	*n = eh->e_shnum;
	if (*n == 0 && room > 0) /* extended numbering: the count is in section 0 */
		*n = (size_t)sh[0].sh_size;
	return *n && *n <= room ? sh : NULL;
}

/* Fills o with the function symbols of the table of type `type` in the
 * image; 0, or -1 if it has no usable such table. */
static RECF_NOI int recf_load_table(struct recf_obj *o, const unsigned char *m, size_t size,
				    const ElfW(Shdr) * sh, size_t nsh, unsigned type)
{
	for (size_t i = 0; i < nsh; i++) {
		const ElfW(Shdr) *st = &sh[i];
		if (st->sh_type != type)
			continue;
		if (st->sh_entsize != sizeof(ElfW(Sym)) || st->sh_link >= nsh ||
		    st->sh_offset > size || st->sh_size > size - st->sh_offset ||
		    st->sh_offset % sizeof(void *))
			return -1;
		const ElfW(Shdr) *ss = &sh[st->sh_link];
		if (ss->sh_type != SHT_STRTAB || ss->sh_offset > size ||
		    ss->sh_size > size - ss->sh_offset || ss->sh_size == 0 ||
		    ss->sh_size > UINT32_MAX || m[ss->sh_offset + ss->sh_size - 1] != 0)
			return -1;
		const ElfW(Sym) *sym = (const void *)(m + st->sh_offset);
		const char *str = (const char *)(m + ss->sh_offset);
		size_t n = st->sh_size / sizeof *sym, k = 0, bytes = 0;
		for (int pass = 0; pass < 2; pass++) {
			for (size_t j = 0; j < n; j++) {
				unsigned t = RECF_ST_TYPE(sym[j].st_info);
				if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
				    sym[j].st_shndx == SHN_UNDEF || sym[j].st_name == 0 ||
				    sym[j].st_name >= ss->sh_size)
					continue;
				const char *nm = str + sym[j].st_name;
				size_t len = strlen(nm) + 1;
				if (pass == 1) {
					memcpy(o->names + bytes, nm, len);
					o->sym[k] = (struct recf_sym){(uintptr_t)sym[j].st_value,
								      (uintptr_t)sym[j].st_size,
								      (uint32_t)bytes};
				}
				k++;
				bytes += len;
			}
			if (pass == 0) {
				if (k == 0 || bytes > UINT32_MAX)
					return -1;
				o->tlen = k * sizeof *o->sym + bytes;
				o->sym = recf_map(o->tlen);
				if (!o->sym)
					return -1;
				o->names = (char *)(o->sym + k);
				o->nsym = k;
				k = bytes = 0;
			}
		}
		recf_sort(o->sym, o->nsym);
		return 0;
	}
	return -1;
}

/* Reads the function symbols of the object file at path into o (.symtab,
 * else .dynsym); o stays empty when there are none. */
static RECF_NOI void recf_load(struct recf_obj *o, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	size_t nsh;
	const ElfW(Shdr) *sh = recf_sections(m, size, &nsh);
	if (sh && recf_load_table(o, m, size, sh, nsh, SHT_SYMTAB) < 0)
		recf_load_table(o, m, size, sh, nsh, SHT_DYNSYM);
	munmap(m, size);
}

static RECF_NOI void recf_obj_free(struct recf_obj *o)
{
	if (o->sym)
		munmap(o->sym, o->tlen);
	munmap(o, o->len);
}

static RECF_NOI struct recf_obj *recf_find(struct recf_obj *from, struct recf_obj *to,
					   uintptr_t bias, const char *path)
{
	for (struct recf_obj *o = from; o && o != to; o = o->next)
		if (o->bias == bias && strcmp(o->path, path) == 0)
			return o;
	return NULL;
}

/* The cache entry of the object lm names, parsed on first use.  Two threads
 * may parse one object at once: the first to publish wins. */
static RECF_NOI struct recf_obj *recf_object(const struct link_map *lm)
{
	const char *path = lm->l_name ? lm->l_name : "";
	struct recf_obj *head = atomic_load(&recf_objs);
	struct recf_obj *o = recf_find(head, NULL, lm->l_addr, path);
	if (o)
		return o;
	size_t plen = strlen(path) + 1;
	o = recf_map(sizeof *o + plen);
	if (!o)
		return NULL;
	o->len = sizeof *o + plen;
	o->bias = lm->l_addr;
	o->path = memcpy((char *)(o + 1), path, plen);
	/* the main program's l_name is empty: its file is /proc/self/exe */
	recf_load(o, *path ? path : "/proc/self/exe");
	for (;;) {
		o->next = head;
		if (atomic_compare_exchange_weak(&recf_objs, &head, o))
			return o;
		struct recf_obj *won = recf_find(head, o->next, o->bias, o->path);
		if (won) {
			recf_obj_free(o);
			return won;
		}
	}
}

/* The symbol containing the unrelocated address a, or NULL. */
static RECF_NOI const char *recf_lookup(const struct recf_obj *o, uintptr_t a)
{
	size_t lo = 0, hi = o->nsym;
	while (lo < hi) { /* the first symbol above a */
		size_t mid = lo + (hi - lo) / 2;
		if (o->sym[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	uintptr_t v = o->sym[lo - 1].value;
	while (lo > 1 && o->sym[lo - 2].value == v)
		lo--;
	const struct recf_sym *s = &o->sym[lo - 1];
	if (a == s->value || a - s->value < s->size)
		return o->names + s->name;
	return NULL;
}

RECF_NOI const char *recf_symbol(uintptr_t addr)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!addr || !dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	struct recf_obj *o = recf_object(lm);
	if (o && o->nsym)
		return recf_lookup(o, addr - lm->l_addr);
	/* no symbol table on disk: what the dynamic linker knows */
	if (info.dli_sname && (uintptr_t)info.dli_saddr == addr)
		return info.dli_sname;
	return NULL;
}

/* ---- demangled names ----------------------------------------------------- */

/* Length of the operator name starting at n (after "operator"), and in
 * *conv whether it is a conversion (or new/delete): a type follows. */
static RECF_NOI size_t recf_operator(const char *n, bool *conv)
{
	size_t k = 0;
	*conv = false;
	if (n[0] == ' ') {
		*conv = true;
		return strlen(n);
	}
	if ((n[0] == '(' && n[1] == ')') || (n[0] == '[' && n[1] == ']'))
		return 2;
	while (n[k] && strchr("<>=-!+*/%&|^~,", n[k]))
		k++;
	return k;
}

RECF_NOI int recf_base_name(const char *dm, int level, char *out, size_t cap)
{
	const char *close = strrchr(dm, ')');
	if (!close)
		return -1;
	/* the parameter list: the '(' matching the last ')' */
	const char *open = NULL;
	int depth = 0;
	for (const char *p = close; p >= dm; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0) {
			open = p;
			break;
		}
	}
	if (!open || open == dm)
		return -1;
	size_t end = (size_t)(open - dm), start = 0, len = 0;
	/* the return type of a template function: up to the last space
	 * outside brackets, operator names excepted */
	depth = 0;
	for (size_t i = 0; i < end; i++) {
		char c = dm[i];
		if (strncmp(dm + i, "operator", 8) == 0 && (i == 0 || strchr(": ~", dm[i - 1]))) {
			bool conv;
			i += 8 + recf_operator(dm + i + 8, &conv) - 1;
			if (conv)
				break;
		} else if (c == '<' || c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			depth--;
		} else if (c == ' ' && depth == 0) {
			start = i + 1;
		}
	}
	for (size_t i = start; i < end; i++) {
		if (level >= 2 && strncmp(dm + i, "operator", 8) == 0 &&
		    (i == 0 || strchr(": ~", dm[i - 1]))) {
			bool conv;
			size_t k = 8 + recf_operator(dm + i + 8, &conv);
			if (i + k > end)
				k = end - i;
			if (len + k >= cap)
				return -1;
			memcpy(out + len, dm + i, k);
			len += k;
			i += k - 1;
			continue;
		}
		char c = dm[i];
		if (level >= 2 && (c == '<' || strncmp(dm + i, "[abi:", 5) == 0)) {
			char o = c, cl = c == '<' ? '>' : ']';
			int d = 0;
			for (; i < end; i++) {
				if (dm[i] == o)
					d++;
				else if (dm[i] == cl && --d == 0)
					break;
			}
			if (i == end)
				return -1;
			continue;
		}
		if (len + 1 >= cap)
			return -1;
		out[len++] = c;
	}
	if (len == 0)
		return -1;
	out[len] = 0;
	return 0;
}

/* The process's C++ demangler, or NULL (a C program without libstdc++). */
static RECF_NOI recf_demangle_fn recf_demangler(void)
{
	static _Atomic(recf_demangle_fn) fn;
	recf_demangle_fn f = atomic_load(&fn);
	if (!f) {
		f = (recf_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (f)
			atomic_store(&fn, f);
	}
	return f;
}

/* What the name globs say of text, and the category globs of its category
 * (by cat_of, when given). */
static RECF_NOI unsigned recf_classify_text(const struct recf_spec *s, const char *text,
					    recf_cat_of_fn cat_of)
{
	unsigned r = recf_classify_name(s, text);
	if (cat_of)
		r |= recf_classify_cat(s, cat_of(text));
	return r;
}

RECF_NOI unsigned recf_classify_code_cat(const struct recf_spec *s, uintptr_t addr,
					 recf_cat_of_fn cat_of)
{
	if (!s->nfilter && !s->nexclude)
		return 0;
	const char *sym = recf_symbol(addr);
	if (!sym)
		return 0;
	unsigned r = recf_classify_text(s, sym, cat_of);
	recf_demangle_fn dem;
	if (strncmp(sym, "_Z", 2) != 0 || !(dem = recf_demangler()))
		return r;
	int status = -1;
	char *dm = dem(sym, NULL, NULL, &status);
	if (!dm || status != 0) {
		free(dm);
		return r;
	}
	r |= recf_classify_text(s, dm, cat_of);
	size_t cap = strlen(dm) + 1;
	char small[512];
	char *base = cap <= sizeof small ? small : malloc(cap);
	for (int level = 1; base && level <= 2; level++)
		if (recf_base_name(dm, level, base, cap) == 0)
			r |= recf_classify_text(s, base, cat_of);
	if (base != small)
		free(base);
	free(dm);
	return r;
}

RECF_NOI unsigned recf_classify_code(const struct recf_spec *s, uintptr_t addr)
{
	return recf_classify_code_cat(s, addr, NULL);
}
