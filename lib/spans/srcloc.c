/* srcloc.c: function addresses to source file and line with libdw
 * (srcloc.h).  The ELF file is mapped (ELF_C_READ_MMAP) and its descriptor
 * closed at once, so many objects can stay open without holding fds. */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srcloc.h"

struct srcloc {
	Elf *elf;
	Dwarf *dw;
	Elf *debug_elf; /* a separate debug file's, or NULL */
};

/* Maps the regular file at path; NULL when it is not one or not ELF. */
static Elf *srcloc_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	Elf *elf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (elf_kind(elf) != ELF_K_ELF || elf_cntl(elf, ELF_C_FDDONE) != 0)) {
		elf_end(elf);
		elf = NULL;
	}
	close(fd);
	return elf;
}

/* The separate debug file of elf by build-id, mapped, or NULL. */
static Elf *srcloc_debug_elf(Elf *elf)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	if (n < 2 || n > 64)
		return NULL;
	const unsigned char *b = id;
	char path[64 + 2 * 64 + 16];
	int k = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", b[0]);
	for (ssize_t i = 1; i < n; i++)
		k += snprintf(path + k, sizeof path - (size_t)k, "%02x", b[i]);
	snprintf(path + k, sizeof path - (size_t)k, ".debug");
	return srcloc_elf(path);
}

struct srcloc *srcloc_open(const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	struct srcloc *sl = calloc(1, sizeof *sl);
	if (!sl)
		return NULL;
	sl->elf = srcloc_elf(path);
	if (sl->elf)
		sl->dw = dwarf_begin_elf(sl->elf, DWARF_C_READ, NULL);
	if (sl->elf && !sl->dw && (sl->debug_elf = srcloc_debug_elf(sl->elf)))
		sl->dw = dwarf_begin_elf(sl->debug_elf, DWARF_C_READ, NULL);
	if (!sl->dw) {
		srcloc_close(sl);
		return NULL;
	}
	return sl;
}

void srcloc_close(struct srcloc *sl)
{
	if (!sl)
		return;
	if (sl->dw)
		dwarf_end(sl->dw);
	if (sl->debug_elf)
		elf_end(sl->debug_elf);
	if (sl->elf)
		elf_end(sl->elf);
	free(sl);
}

/* The compile unit whose ranges hold vaddr: through .debug_aranges, else
 * by asking every unit (clang emits no aranges by default). */
static bool srcloc_cu(Dwarf *dw, uint64_t vaddr, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, vaddr, cu))
		return true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, vaddr) > 0)
			return true;
		off = next;
	}
	return false;
}

/* Whether die's decl_file is index 0: in DWARF 5 the unit's primary source
 * file (clang writes it), which older libdw (0.188) refuses as "no file". */
static bool srcloc_file0(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Word idx;
	return dwarf_attr_integrate(die, DW_AT_decl_file, &at) && dwarf_formudata(&at, &idx) == 0 &&
	       idx == 0;
}

int srcloc_find(struct srcloc *sl, uint64_t vaddr, char *buf, size_t cap, unsigned *line)
{
	Dwarf_Die cu, *scope = NULL;
	if (!sl || !srcloc_cu(sl->dw, vaddr, &cu))
		return -ENOENT;
	const char *f = NULL;
	int ln = 0;
	int n = dwarf_getscopes(&cu, vaddr, &scope);
	for (int i = 0; i < n; i++) { /* innermost first: the function itself */
		if (dwarf_tag(&scope[i]) != DW_TAG_subprogram)
			continue;
		f = dwarf_decl_file(&scope[i]);
		if (!f && srcloc_file0(&scope[i]))
			f = dwarf_diename(&cu);
		if (!f || dwarf_decl_line(&scope[i], &ln) != 0)
			f = NULL;
		break;
	}
	free(scope);
	if (!f || ln <= 0) {
		Dwarf_Line *row = dwarf_getsrc_die(&cu, vaddr);
		f = row ? dwarf_linesrc(row, NULL, NULL) : NULL;
		if (!f || dwarf_lineno(row, &ln) != 0)
			return -ENOENT;
	}
	if (ln <= 0 || !cap)
		return -ENOENT;
	/* a relative name is relative to the unit's compilation directory */
	Dwarf_Attribute at;
	const char *dir =
		f[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
	if (dir && dir[0] == '/')
		snprintf(buf, cap, "%s/%s", dir, f);
	else
		snprintf(buf, cap, "%s", f);
	*line = (unsigned)ln;
	return 0;
}
