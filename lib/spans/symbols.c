/* symbols.c: function names for code addresses (symbols.h).  Each object is
 * read once with libelf: its function symbols (.symtab, else .dynsym) are
 * copied into a sorted array with a string pool, and the ELF file is closed
 * again, so nothing stays mapped.  Objects that cannot be read are cached as
 * empty so they are not retried for every name.  Source locations come from
 * the object's debug information (srcloc.c), opened on the first request. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srcloc.h"
#include "symbols.h"

struct symbols_sym {
	uint64_t value, size;
	uint32_t name; /* offset in the pool */
	uint32_t global;
};

struct symbols_obj {
	char *path;
	bool exec;	    /* ET_EXEC: absolute addresses */
	uint64_t link_base; /* ET_DYN: link address of the mapped ELF header */
	struct symbols_sym *sym;
	size_t nsym;
	char *pool;
	struct srcloc *dw; /* debug information, NULL: none */
	bool dw_tried;
};

struct symbols {
	struct symbols_obj *obj;
	size_t nobj;
	size_t last; /* index of the last object used + 1, 0: none */
	bool elf_ok;
};

struct symbols *symbols_new(void)
{
	struct symbols *s = calloc(1, sizeof *s);
	if (s)
		s->elf_ok = elf_version(EV_CURRENT) != EV_NONE;
	return s;
}

static void symbols_obj_release(struct symbols_obj *o)
{
	free(o->path);
	free(o->sym);
	free(o->pool);
	srcloc_close(o->dw);
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nobj; i++)
		symbols_obj_release(&s->obj[i]);
	free(s->obj);
	free(s);
}

static int symbols_cmp(const void *a, const void *b)
{
	const struct symbols_sym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* at one address prefer a global, then a sized symbol */
	if (x->global != y->global)
		return x->global ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return 0;
}

/* Copies the function symbols of one symbol table section into o. */
static int symbols_read_table(struct symbols_obj *o, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	size_t poolcap = 4096, poollen = 0, nsym = 0;
	struct symbols_sym *sym = malloc((n ? n : 1) * sizeof *sym);
	char *pool = malloc(poolcap);
	if (!sym || !pool)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym es;
		if (!gelf_getsym(data, (int)i, &es))
			break;
		int type = GELF_ST_TYPE(es.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || es.st_shndx == SHN_UNDEF ||
		    es.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, es.st_name);
		if (!name || !*name)
			continue;
		size_t len = strlen(name) + 1;
		if (poollen + len > UINT32_MAX)
			break;
		if (poollen + len > poolcap) {
			while (poollen + len > poolcap)
				poolcap *= 2;
			char *p = realloc(pool, poolcap);
			if (!p)
				goto nomem;
			pool = p;
		}
		memcpy(pool + poollen, name, len);
		sym[nsym].value = es.st_value;
		sym[nsym].size = es.st_size;
		sym[nsym].name = (uint32_t)poollen;
		sym[nsym].global = GELF_ST_BIND(es.st_info) != STB_LOCAL;
		nsym++;
		poollen += len;
	}
	qsort(sym, nsym, sizeof *sym, symbols_cmp);
	o->sym = sym;
	o->nsym = nsym;
	o->pool = pool;
	return 0;
nomem:
	free(sym);
	free(pool);
	return -ENOMEM;
}

/* Loads what o needs from the ELF file at o->path; failures leave it empty. */
static void symbols_load(struct symbols *s, struct symbols_obj *o)
{
	if (!s->elf_ok)
		return;
	int fd = open(o->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	o->exec = eh.e_type == ET_EXEC;
	size_t nph = 0;
	bool have_load = false;
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t lb = (ph.p_vaddr - ph.p_offset) & ~(uint64_t)4095;
			if (!have_load || lb < o->link_base)
				o->link_base = lb;
			have_load = true;
		}
	}
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh, dynsh, tabsh;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !tab) {
			tab = scn;
			tabsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dynsh = sh;
		}
	}
	if (tab)
		symbols_read_table(o, elf, tab, &tabsh);
	if (!o->nsym && dyn) {
		free(o->sym);
		free(o->pool);
		o->sym = NULL;
		o->pool = NULL;
		symbols_read_table(o, elf, dyn, &dynsh);
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static struct symbols_obj *symbols_obj_get(struct symbols *s, const char *path)
{
	if (s->last && strcmp(s->obj[s->last - 1].path, path) == 0)
		return &s->obj[s->last - 1];
	for (size_t i = 0; i < s->nobj; i++) {
		if (strcmp(s->obj[i].path, path) == 0) {
			s->last = i + 1;
			return &s->obj[i];
		}
	}
	if (s->nobj == SYMBOLS_MAX_OBJECTS)
		return NULL;
	if (s->nobj % 16 == 0) {
		struct symbols_obj *obj = realloc(s->obj, (s->nobj + 16) * sizeof *obj);
		if (!obj)
			return NULL;
		s->obj = obj;
	}
	struct symbols_obj *o = &s->obj[s->nobj];
	memset(o, 0, sizeof *o);
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	s->nobj++;
	s->last = s->nobj;
	symbols_load(s, o);
	return o;
}

static const struct symbols_sym *symbols_find(const struct symbols_obj *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nsym;
	while (lo < hi) { /* first symbol with value > vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (o->sym[mid].value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* the best symbol at the greatest address <= vaddr sorts first there */
	uint64_t v = o->sym[lo - 1].value;
	size_t i = lo - 1;
	while (i > 0 && o->sym[i - 1].value == v)
		i--;
	const struct symbols_sym *sy = &o->sym[i];
	if (sy->size && vaddr - sy->value >= sy->size)
		return NULL;
	return sy;
}

static uint64_t symbols_vaddr(const struct symbols_obj *o, uint64_t addr, uint64_t base)
{
	return o->exec ? addr : o->link_base + (addr - base);
}

size_t symbols_name(struct symbols *s, const char *path, uint64_t addr, uint64_t base, char *buf,
		    size_t cap)
{
	const char *name = NULL;
	struct symbols_obj *o = s && path && *path ? symbols_obj_get(s, path) : NULL;
	if (o && o->nsym) {
		const struct symbols_sym *sy = symbols_find(o, symbols_vaddr(o, addr, base));
		name = sy ? o->pool + sy->name : NULL;
	}
	int n;
	if (name) {
		n = snprintf(buf, cap, "%s", name);
	} else {
		const char *slash = path ? strrchr(path, '/') : NULL;
		const char *bn = slash ? slash + 1 : path ? path : "";
		n = snprintf(buf, cap, "0x%llx@%s", (unsigned long long)(addr - base),
			     *bn ? bn : "?");
	}
	if (n < 0)
		n = 0;
	return (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

int symbols_where(struct symbols *s, const char *path, uint64_t addr, uint64_t base, char *buf,
		  size_t cap, unsigned *line)
{
	struct symbols_obj *o = s && path && *path ? symbols_obj_get(s, path) : NULL;
	if (!o || !o->nsym)
		return -ENOENT;
	if (!o->dw_tried) {
		o->dw_tried = true;
		o->dw = srcloc_open(o->path);
	}
	if (!o->dw)
		return -ENOENT;
	uint64_t vaddr = symbols_vaddr(o, addr, base);
	const struct symbols_sym *sy = symbols_find(o, vaddr);
	return srcloc_find(o->dw, sy ? sy->value : vaddr, buf, cap, line);
}
