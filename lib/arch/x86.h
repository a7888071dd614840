/* x86.h: arch.h for x86-64 and i386; included by arch.h only. */
#ifndef SPANSTAT_ARCH_X86_H
#define SPANSTAT_ARCH_X86_H

#include <cpuid.h>
#include <stdbool.h>
#include <stdint.h>
#include <x86intrin.h>

/* The time stamp counter, and whether it ticks at one rate in every
 * C-state and P-state (CPUID 0x80000007, EDX bit 8): then it is a clock. */
#define ARCH_HAVE_TSC 1
ARCH_INLINE uint64_t arch_tsc(void)
{
	return __rdtsc();
}

ARCH_INLINE bool arch_tsc_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1u;
}

/* The performance counter the perf mmap page's index names (index - 1). */
#define ARCH_HAVE_RDPMC 1
ARCH_INLINE uint64_t arch_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

#if defined(__x86_64__)
/* A setjmp-family function `name` that first calls `note`(env, which,
 * caller's stack pointer), which returns the real function or NULL, then
 * tail-jumps to it (or returns 0): rdi = env, rsi = savemask (__sigsetjmp),
 * kept across the note; rdx = the caller's stack pointer.  The tail jump
 * leaves the caller's frame and return address exactly as a direct call to
 * the real function would. */
#define ARCH_HAVE_SETJMP_TRAMPOLINE 1
#define ARCH_SETJMP_TRAMPOLINE(name, which, note)          \
	__asm__(".text\n"                                  \
		".globl " #name "\n"                       \
		".type " #name ", @function\n" #name ":\n" \
		"	endbr64\n"                               \
		"	lea 8(%rsp), %rdx\n"                     \
		"	push %rdi\n"                             \
		"	push %rsi\n"                             \
		"	sub $8, %rsp\n"                          \
		"	mov $" #which ", %esi\n"           \
		"	call " #note "\n"                  \
		"	add $8, %rsp\n"                          \
		"	pop %rsi\n"                              \
		"	pop %rdi\n"                              \
		"	test %rax, %rax\n"                       \
		"	jz 1f\n"                                 \
		"	jmp *%rax\n"                             \
		"1:	xor %eax, %eax\n"                      \
		"	ret\n"                                   \
		".size " #name ", .-" #name "\n")
#endif

#endif
