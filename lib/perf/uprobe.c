/* uprobe.c: uprobe:PATH:SYMBOL and uretprobe:PATH:SYMBOL (uprobe.h) through
 * the kernel's uprobe PMU, as bpftrace and libbpf open them: attr.type is
 * the PMU's (sysfs type file), its retprobe format bit set for a return,
 * config1 (uprobe_path) points at the object's path and config2
 * (probe_offset) is the file offset of the probed instruction: the symbol's
 * address mapped through the program header of the PT_LOAD segment that
 * holds it.  The kernel reads the path when the event is opened.
 */
#include "config.h"

#include "uprobe.h"

#include "cause.h"
#include "tracefs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe"

bool uprobe_is_spec(const char *term)
{
	return strncmp(term, "uprobe:", 7) == 0 || strncmp(term, "uretprobe:", 10) == 0;
}

/* --- the PMU -------------------------------------------------------------- */

/* The first line of file, in buf: 0 or -errno. */
static int uprobe_read_line(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return -errno;
	char *got = fgets(buf, (int)size, f);
	int err = got ? 0 : ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!err)
		buf[strcspn(buf, "\n")] = 0;
	return err;
}

/* The PMU's type and the config bit of its retprobe format ("config:0"). */
static int uprobe_pmu(const char *term, uint32_t *type, unsigned *retbit, char **cause)
{
	char buf[64], *end;
	int err = uprobe_read_line(UPROBE_PMU "/type", buf, sizeof buf);
	if (err)
		return cause_set(cause, -EOPNOTSUPP,
				 "cannot probe '%s': no uprobe PMU on this machine (%s: %s)", term,
				 UPROBE_PMU "/type", strerror(-err));
	unsigned long t = strtoul(buf, &end, 10);
	if (end == buf || *end || t > UINT32_MAX)
		return cause_set(cause, -EINVAL, "cannot probe '%s': unreadable %s '%s'", term,
				 UPROBE_PMU "/type", buf);
	*type = (uint32_t)t;
	err = uprobe_read_line(UPROBE_PMU "/format/retprobe", buf, sizeof buf);
	unsigned long bit = 0;
	if (!err && strncmp(buf, "config:", 7) == 0)
		bit = strtoul(buf + 7, &end, 10);
	if (err || strncmp(buf, "config:", 7) != 0 || end == buf + 7 || *end || bit > 63)
		return cause_set(
			cause, -EOPNOTSUPP,
			"cannot probe '%s': the uprobe PMU has no retprobe format bit (%s)", term,
			UPROBE_PMU "/format/retprobe");
	*retbit = (unsigned)bit;
	return 0;
}

/* --- the object ----------------------------------------------------------- */

/* Whether path is a regular file that begins as ELF: opened without
 * blocking (a FIFO in $PATH must not wait for a writer) and checked before
 * it is read. */
static bool uprobe_is_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	struct stat st;
	unsigned char m[4];
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, m, 4) == 4 &&
		  memcmp(m, ELFMAG, SELFMAG) == 0;
	close(fd);
	return ok;
}

struct uprobe_dirs {
	char dir[16][PATH_MAX];
	int n;
};

static void uprobe_add_dir(struct uprobe_dirs *d, const char *dir, size_t len)
{
	if (!len || len >= PATH_MAX || d->n == 16)
		return;
	for (int i = 0; i < d->n; i++)
		if (strlen(d->dir[i]) == len && strncmp(d->dir[i], dir, len) == 0)
			return;
	memcpy(d->dir[d->n], dir, len);
	d->dir[d->n++][len] = 0;
}

/* The directories of the objects loaded in this process (libc's is the
 * machine's own library directory, /lib/x86_64-linux-gnu on Debian). */
static int uprobe_loaded_dir(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
	if (slash && name[0] == '/')
		uprobe_add_dir(arg, name, (size_t)(slash - name));
	return 0;
}

/* The first ELF file matching pattern in dir, realpath'd into *out. */
static bool uprobe_find_in(const char *dir, const char *pattern, char **out)
{
	char want[PATH_MAX + 64];
	if (snprintf(want, sizeof want, "%s/%s", dir, pattern) >= (int)sizeof want)
		return false;
	glob_t g;
	if (glob(want, 0, NULL, &g) != 0)
		return false;
	bool found = false;
	for (size_t i = 0; i < g.gl_pathc && !found; i++) {
		struct stat st;
		if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    uprobe_is_elf(g.gl_pathv[i]))
			found = (*out = realpath(g.gl_pathv[i], NULL)) != NULL;
	}
	globfree(&g);
	return found;
}

static bool uprobe_globsafe(const char *s)
{
	return !strpbrk(s, "*?[]{}\\");
}

/* A bare name: a program in $PATH, else a library (NAME, NAME.so[.*],
 * libNAME.so[.*]) in the loaded objects' directories or the standard ones. */
static bool uprobe_search(const char *name, char **out)
{
	if (!uprobe_globsafe(name))
		return false;
	const char *p = getenv("PATH");
	while (p && *p) {
		size_t len = strcspn(p, ":");
		char file[PATH_MAX];
		if (len && len + strlen(name) + 2 <= sizeof file) {
			snprintf(file, sizeof file, "%.*s/%s", (int)len, p, name);
			if (access(file, X_OK) == 0 && uprobe_is_elf(file))
				return (*out = realpath(file, NULL)) != NULL;
		}
		p += len + (p[len] == ':');
	}
	static const char *const std[] = {"/lib64", "/usr/lib64", "/lib", "/usr/lib",
					  "/usr/local/lib"};
	struct uprobe_dirs *d = calloc(1, sizeof *d);
	if (!d)
		return false;
	dl_iterate_phdr(uprobe_loaded_dir, d);
	for (size_t i = 0; i < sizeof std / sizeof std[0]; i++)
		uprobe_add_dir(d, std[i], strlen(std[i]));
	bool lib = strncmp(name, "lib", 3) == 0;
	const char *forms[] = {"%s", "%s.so", "%s.so.*", "lib%s.so", "lib%s.so.*"};
	bool found = false;
	for (int i = 0; i < d->n && !found; i++)
		for (size_t f = 0; f < sizeof forms / sizeof forms[0] && !found; f++) {
			if (lib && f >= 3)
				break;
			char pattern[NAME_MAX + 16];
			if (snprintf(pattern, sizeof pattern, forms[f], name) < (int)sizeof pattern)
				found = uprobe_find_in(d->dir[i], pattern, out);
		}
	free(d);
	return found;
}

static int uprobe_path(const char *term, const char *given, char **out, char **cause)
{
	*out = NULL;
	if (!strchr(given, '/')) {
		if (uprobe_search(given, out))
			return 0;
		return cause_set(cause, -ENOENT,
				 "cannot probe '%s': no program '%s' in $PATH and no library '%s' "
				 "in the library directories",
				 term, given, given);
	}
	struct stat st;
	if (stat(given, &st) < 0)
		return cause_set(cause, -errno, "cannot probe '%s': '%s': %s", term, given,
				 strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cause_set(cause, -EINVAL, "cannot probe '%s': '%s' is not a regular file",
				 term, given);
	*out = realpath(given, NULL);
	if (!*out)
		return cause_set(cause, -errno, "cannot probe '%s': '%s': %s", term, given,
				 strerror(errno));
	return 0;
}

/* --- symbols -------------------------------------------------------------- */

#define UPROBE_NSUGGEST 3

/* A definition of the wanted name: of its default version (or none), or
 * of an older one kept for old binaries (memcpy@GLIBC_2.2.5 beside the
 * default memcpy@@GLIBC_2.14), which serves only when there is no other. */
struct uprobe_def {
	bool found, ifunc;
	GElf_Addr value;
	GElf_Xword size;
};

struct uprobe_sym {
	const char *want;
	struct uprobe_def def[2]; /* [0] the default version, [1] an older one */
	bool undefined;
	int limit;
	char *near[UPROBE_NSUGGEST];
	int dist[UPROBE_NSUGGEST];
	int nnear;
};

/* Edit distance of a and b (b's first n bytes), or limit+1 past it. */
static int uprobe_distance(const char *a, const char *b, size_t nb, int limit)
{
	size_t na = strlen(a);
	if ((na > nb ? na - nb : nb - na) > (size_t)limit || nb > 255)
		return limit + 1;
	int row[2][256];
	for (size_t j = 0; j <= nb; j++)
		row[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		int *prev = row[(i - 1) & 1], *cur = row[i & 1], best = cur[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
			if (d < best)
				best = d;
		}
		if (best > limit)
			return limit + 1;
	}
	return row[na & 1][nb];
}

/* Keeps name (its first n bytes) among the closest, first ones winning ties. */
static void uprobe_consider(struct uprobe_sym *s, const char *name, size_t n)
{
	int d = uprobe_distance(s->want, name, n, s->limit);
	if (d > s->limit)
		return;
	for (int i = 0; i < s->nnear; i++)
		if (strlen(s->near[i]) == n && strncmp(s->near[i], name, n) == 0)
			return;
	int at = s->nnear;
	while (at > 0 && s->dist[at - 1] > d)
		at--;
	if (at >= UPROBE_NSUGGEST)
		return;
	char *copy = strndup(name, n);
	if (!copy)
		return;
	if (s->nnear == UPROBE_NSUGGEST)
		free(s->near[--s->nnear]);
	memmove(&s->near[at + 1], &s->near[at], (size_t)(s->nnear - at) * sizeof s->near[0]);
	memmove(&s->dist[at + 1], &s->dist[at], (size_t)(s->nnear - at) * sizeof s->dist[0]);
	s->near[at] = copy;
	s->dist[at] = d;
	s->nnear++;
}

/* Looks for s->want among the symbols of one table (versym: its
 * .gnu.version, or NULL); the first defined function (or untyped code label)
 * of each kind of version wins. */
static void uprobe_scan(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, Elf_Data *versym,
			struct uprobe_sym *s)
{
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, wlen = strlen(s->want);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym es;
		if (!gelf_getsym(data, (int)i, &es))
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, es.st_name);
		int type = GELF_ST_TYPE(es.st_info);
		if (!name || !*name ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		size_t base = strcspn(name, "@"); /* malloc@@GLIBC_2.2.5 is malloc */
		bool match = strcmp(name, s->want) == 0 ||
			     (base == wlen && strncmp(name, s->want, wlen) == 0);
		if (!match) {
			if (es.st_shndx != SHN_UNDEF && type != STT_NOTYPE)
				uprobe_consider(s, name, base);
			continue;
		}
		if (es.st_shndx == SHN_UNDEF || !es.st_value) {
			s->undefined = true;
			continue;
		}
		GElf_Versym vs = 0;
		bool old = (name[base] == '@' && name[base + 1] != '@') ||
			   (versym && gelf_getversym(versym, (int)i, &vs) && (vs & 0x8000));
		struct uprobe_def *d = &s->def[old];
		if (!d->found) {
			*d = (struct uprobe_def){true, type == STT_GNU_IFUNC, es.st_value,
						 es.st_size};
		}
	}
}

/* .symtab first, then .dynsym (with its .gnu.version). */
static void uprobe_find_sym(Elf *elf, struct uprobe_sym *s)
{
	static const Elf64_Word order[] = {SHT_SYMTAB, SHT_DYNSYM};
	for (size_t k = 0; k < 2 && !s->def[0].found && !s->def[1].found; k++) {
		Elf_Scn *scn = NULL, *tab = NULL;
		Elf_Data *versym = NULL;
		GElf_Shdr sh, tabsh;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == order[k] && !tab) {
				tab = scn;
				tabsh = sh;
			} else if (sh.sh_type == SHT_GNU_versym && order[k] == SHT_DYNSYM) {
				versym = elf_getdata(scn, NULL);
			}
		}
		Elf_Data *data = tab ? elf_getdata(tab, NULL) : NULL;
		if (data)
			uprobe_scan(elf, data, &tabsh, versym, s);
	}
}

/* The file offset of virtual address v: through the executable PT_LOAD
 * segment that holds it in the file. */
static bool uprobe_offset(Elf *elf, GElf_Addr v, uint64_t *off)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (v >= ph.p_vaddr && v - ph.p_vaddr < ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* "SYMBOL", "SYMBOL+OFFSET" or "0xADDR" into its parts. */
static bool uprobe_split_target(const char *t, char **sym, uint64_t *add, bool *addr)
{
	char *end;
	*sym = NULL;
	*add = 0;
	*addr = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
	if (*addr) {
		if (!isxdigit((unsigned char)t[2]))
			return false;
		errno = 0;
		*add = strtoull(t + 2, &end, 16);
		return !*end && !errno;
	}
	const char *plus = strchr(t, '+');
	size_t len = plus ? (size_t)(plus - t) : strlen(t);
	if (!len)
		return false;
	if (plus) {
		if (!isdigit((unsigned char)plus[1]))
			return false;
		errno = 0;
		*add = strtoull(plus + 1, &end, 0);
		if (*end || errno)
			return false;
	}
	*sym = strndup(t, len);
	return *sym != NULL;
}

static int uprobe_not_found(const char *term, const char *path, struct uprobe_sym *s, char **cause)
{
	if (s->def[0].found || s->def[1].found) /* the one that would serve is an IFUNC */
		return cause_set(cause, -EINVAL,
				 "cannot probe '%s': '%s' is an indirect function (IFUNC) in '%s': "
				 "its callers jump to an implementation chosen at load time; "
				 "probe that one",
				 term, s->want, path);
	if (s->undefined)
		return cause_set(cause, -ENOENT,
				 "cannot probe '%s': '%s' is not defined in '%s' (it is imported: "
				 "probe the library that defines it)",
				 term, s->want, path);
	char hint[512] = "";
	size_t used = 0;
	for (int i = 0; i < s->nnear && used < sizeof hint; i++) {
		const char *sep = i == 0 ? " (did you mean " : i == s->nnear - 1 ? " or " : ", ";
		used += (size_t)snprintf(hint + used, sizeof hint - used, "%s'%s'%s", sep,
					 s->near[i], i == s->nnear - 1 ? "?)" : "");
	}
	return cause_set(cause, -ENOENT, "cannot probe '%s': no function '%s' in '%s'%s", term,
			 s->want, path, hint);
}

/* The file offset of what target names in the ELF object at path. */
static int uprobe_locate(const char *term, const char *path, const char *target, uint64_t *off,
			 char **cause)
{
	char *sym;
	uint64_t add;
	bool addr;
	if (!uprobe_split_target(target, &sym, &add, &addr))
		return cause_set(cause, -EINVAL,
				 "cannot probe '%s': expected SYMBOL, SYMBOL+OFFSET or 0xADDRESS "
				 "after the path, not '%s'",
				 term, target);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(sym);
		return cause_set(cause, -EINVAL, "cannot probe '%s': libelf: %s", term,
				 elf_errmsg(-1));
	}
	/* not blocking: the file stat found regular may be a FIFO by now */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		free(sym);
		return cause_set(cause, -errno, "cannot probe '%s': '%s': %s", term, path,
				 strerror(errno));
	}
	int err = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	struct uprobe_sym s = {.want = sym};
	GElf_Addr v = add;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		err = cause_set(cause, -EINVAL, "cannot probe '%s': '%s' is not an ELF object",
				term, path);
		goto out;
	}
	if (sym) {
		int len = (int)strlen(sym);
		s.limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
		uprobe_find_sym(elf, &s);
		const struct uprobe_def *d = &s.def[!s.def[0].found];
		if (!d->found || d->ifunc) {
			err = uprobe_not_found(term, path, &s, cause);
			goto out;
		}
		if (d->size && add >= d->size) {
			err = cause_set(cause, -EINVAL,
					"cannot probe '%s': offset %llu is past the end of '%s' "
					"(%llu bytes)",
					term, (unsigned long long)add, sym,
					(unsigned long long)d->size);
			goto out;
		}
		v = d->value + add;
	}
	if (!uprobe_offset(elf, v, off))
		err = cause_set(
			cause, -EINVAL,
			"cannot probe '%s': address 0x%llx is in no executable segment of '%s'",
			term, (unsigned long long)v, path);
out:
	for (int i = 0; i < s.nnear; i++)
		free(s.near[i]);
	if (elf)
		elf_end(elf);
	close(fd);
	free(sym);
	return err;
}

int uprobe_resolve(const char *term, struct perf_event_attr *attr, char **path, char **cause)
{
	*path = NULL;
	bool ret = strncmp(term, "uretprobe:", 10) == 0;
	const char *rest = term + (ret ? 10 : 7), *colon = strrchr(rest, ':');
	if (!colon || colon == rest || !colon[1])
		return cause_set(cause, -EINVAL, "cannot probe '%s': expected %s:PATH:SYMBOL", term,
				 ret ? "uretprobe" : "uprobe");
	uint32_t type = 0;
	unsigned retbit = 0;
	int err = uprobe_pmu(term, &type, &retbit, cause);
	if (err)
		return err;
	char *given = strndup(rest, (size_t)(colon - rest)), *real = NULL;
	if (!given)
		return -ENOMEM;
	err = uprobe_path(term, given, &real, cause);
	free(given);
	uint64_t off = 0;
	if (!err)
		err = uprobe_locate(term, real, colon + 1, &off, cause);
	if (err) {
		free(real);
		return err;
	}
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = type;
	attr->config = ret ? UINT64_C(1) << retbit : 0;
	attr->config1 = (uint64_t)(uintptr_t)real; /* uprobe_path */
	attr->config2 = off;			   /* probe_offset */
	*path = real;
	return 0;
}

/* --- inherited counting: a probe in tracefs ------------------------------- */

/* tracefs's uprobe_events (beside its events directory), in buf. */
static int uprobe_events_file(char *buf, size_t size)
{
	int err = tracefs_events_dir(buf, size);
	if (err)
		return err;
	char *slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof "/uprobe_events" > size)
		return -ENAMETOOLONG;
	strcpy(slash, "/uprobe_events");
	return 0;
}

/* Writes one command line to uprobe_events: 0 or -errno. */
static int uprobe_events_write(const char *line)
{
	char file[256];
	int err = uprobe_events_file(file, sizeof file);
	if (err)
		return err;
	int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(line);
	ssize_t n = write(fd, line, len);
	err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return err;
}

int uprobe_tracefs_add(const struct perf_event_attr *attr, const char *path, char *name,
		       size_t size, uint64_t *id)
{
	static unsigned seq;
	/* uprobe_events splits its line at blanks: such a path cannot be said */
	for (const char *c = path; *c; c++)
		if (isspace((unsigned char)*c))
			return -EINVAL;
	char group[32], event[32];
	snprintf(group, sizeof group, "spanstat_%ld", (long)getpid());
	snprintf(event, sizeof event, "u%u", seq++);
	if ((size_t)snprintf(name, size, "%s/%s", group, event) >= size)
		return -ENAMETOOLONG;
	size_t len = strlen(path) + 128;
	char *line = malloc(len);
	if (!line)
		return -ENOMEM;
	snprintf(line, len, "%c:%s %s:0x%llx\n", attr->config ? 'r' : 'p', name, path,
		 (unsigned long long)attr->config2);
	int err = uprobe_events_write(line);
	free(line);
	if (err)
		return err;
	err = tracefs_id(group, event, id);
	if (err)
		uprobe_tracefs_del(name);
	return err;
}

void uprobe_tracefs_del(const char *name)
{
	char line[80];
	if ((size_t)snprintf(line, sizeof line, "-:%s\n", name) < sizeof line)
		(void)uprobe_events_write(line);
}
