/* symbols.h: code addresses to function names for the decoder (WIRE_NAME_CODE
 * definitions), read from the ELF symbol tables (.symtab, so static functions
 * too, else .dynsym) with elfutils' libelf.  One cache entry per object path,
 * loaded on first use; the cache is bounded (SYMBOLS_MAX_OBJECTS).
 *
 * The writer of a code name reports `addr` (the function's run-time address)
 * and `base` (where its object was mapped: dladdr()'s dli_fbase, or
 * dl_iterate_phdr()'s dlpi_addr; both work).  For position-dependent
 * executables (ET_EXEC) symbol values are absolute and addr is used as is;
 * for PIE and shared objects (ET_DYN) the link-time address is
 * (addr - base) + the object's lowest PT_LOAD address (p_vaddr - p_offset,
 * page aligned), which covers prelinked objects too.  Source locations of
 * those functions come from the object's debug information (srcloc.h). */
#ifndef SPANSTAT_SYMBOLS_H
#define SPANSTAT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#define SYMBOLS_MAX_OBJECTS 1024

struct symbols;

struct symbols *symbols_new(void);
void symbols_free(struct symbols *s);
/* Writes the name of the function containing addr in the object at path into
 * buf (NUL-terminated, truncated to cap) and returns its length.  Without a
 * symbol (unreadable object, stripped, not ELF, address outside every
 * function) the name is "0x<addr - base in hex>@<basename of path>".
 * Only regular files are opened (never blocking on FIFOs or devices). */
size_t symbols_name(struct symbols *s, const char *path, uint64_t addr, uint64_t base, char *buf,
		    size_t cap);
/* The source location of the function containing addr in the object at
 * path (see srcloc.h): its file into buf (cut to cap) and *line.  0, or
 * -ENOENT without a symbol or debug information for it. */
int symbols_where(struct symbols *s, const char *path, uint64_t addr, uint64_t base, char *buf,
		  size_t cap, unsigned *line);

#endif
