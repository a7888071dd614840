/* srcloc.h: source locations of functions from an object's DWARF debug
 * information (elfutils' libdw): the file and line where the function at a
 * link-time address is declared (the subprogram's DW_AT_decl_file and
 * DW_AT_decl_line), else the line table's row at that address.  The debug
 * information is the object's own, else a separate debug file found by
 * build-id under /usr/lib/debug/.build-id/.  Used by symbols.c, which owns
 * the per-object cache and the run-time to link-time address translation. */
#ifndef SPANSTAT_SRCLOC_H
#define SPANSTAT_SRCLOC_H

#include <stddef.h>
#include <stdint.h>

struct srcloc;

/* The debug information of the ELF file at path, or NULL when it has none
 * (or cannot be read, or out of memory).  No file descriptor stays open. */
struct srcloc *srcloc_open(const char *path);
void srcloc_close(struct srcloc *sl);
/* The location of the function containing vaddr: its file into buf (an
 * absolute path when the compile unit's directory is known; cut to cap) and
 * *line.  0, or -ENOENT when unknown. */
int srcloc_find(struct srcloc *sl, uint64_t vaddr, char *buf, size_t cap, unsigned *line);

#endif
