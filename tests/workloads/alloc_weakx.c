/* alloc_weakx.c: a program that uses jemalloc's API only when the process
 * has it (weak references tested at run time), for the test that
 * --span-allocs, which defines those functions, never makes such a program
 * crash where it ran without spanstat.
 * Build: cc -O2 -g alloc_weakx.c -o alloc_weakx   (no jemalloc linked)
 *
 * Prints "jemalloc api: absent" without spanstat; under --span-allocs the
 * functions exist and must behave: a zeroed, 64-aligned block of 100 bytes,
 * grown to 200 with its bytes kept, then freed.  Prints "ok" or what
 * failed.  Exits 0 when all went well. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <spanstat.h>

extern void *mallocx(size_t, int) __attribute__((weak));
extern void *rallocx(void *, size_t, int) __attribute__((weak));
extern void sdallocx(void *, size_t, int) __attribute__((weak));

int main(void)
{
	if (!mallocx || !rallocx || !sdallocx) {
		puts("jemalloc api: absent");
		return 0;
	}
	spanstat_begin("x");
	unsigned char *p = mallocx(100, 6 | 0x40); /* MALLOCX_LG_ALIGN(6) | MALLOCX_ZERO */
	if (!p || (uintptr_t)p % 64) {
		puts("mallocx failed");
		return 1;
	}
	for (int i = 0; i < 100; i++)
		if (p[i]) {
			puts("mallocx did not zero");
			return 1;
		}
	memset(p, 7, 100);
	p = rallocx(p, 200, 6);
	if (!p || (uintptr_t)p % 64 || p[99] != 7) {
		puts("rallocx failed");
		return 1;
	}
	sdallocx(p, 200, 0);
	spanstat_end("x");
	puts("ok");
	return 0;
}
