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

/* vfork, as the C library's: the caller's return address is kept in a
 * register across the system call (the child runs on the parent's stack
 * and may overwrite the slot), then put back, and the call goes on to
 * `after`(result, level) as a tail call: it returns to the vfork's caller,
 * in the child and then in the parent.  level is the thread-local int
 * `level` before the call (read in the parent: the child may change it). */
#define ARCH_HAVE_VFORK 1
#define ARCH_VFORK(name, after, level)                         \
	__asm__(".text\n"                                      \
		".globl " #name "\n"                           \
		".type " #name ", @function\n" #name ":\n"     \
		"	endbr64\n"                                   \
		"	mov " #level "@gottpoff(%rip), %rax\n" \
		"	mov %fs:(%rax), %esi\n"                      \
		"	pop %rdi\n"                                  \
		"	mov $58, %eax\n" /* SYS_vfork */       \
		"	syscall\n"                                   \
		"	push %rdi\n"                                 \
		"	mov %rax, %rdi\n"                            \
		"	jmp " #after "\n"                      \
		".size " #name ", .-" #name "\n")

/* The entry points of -pg and -pg -mfentry builds, and the return trampoline
 * (lib/span/rec_mcount.c).  mcount and _mcount are called after the
 * function's prologue, which -pg makes keep a frame pointer: the function's
 * return address is at 8(%rbp); __fentry__ is called before it: at 8(%rsp)
 * on entry.  Each saves the argument registers (and rax: the vector count
 * of a variadic call, r10: a nested function's static chain) and calls
 * enter(address in the function, the slot of its return address), the
 * stack aligned for it (mcount is called as any function is; __fentry__
 * before the function's frame: with the stack 8 bytes lower), while
 * `on` is non-zero; otherwise it adds 2 (the call's begin and end) to
 * *late when that is set (the calls after the exit path, counted) and
 * tail-jumps to *real (the C library's, for gprof) or returns.
 * The return trampoline is where a hijacked function returns to: it keeps
 * the return registers (rax, rdx, xmm0, xmm1; st0 and st1 are untouched,
 * the library's C code having no x87 instruction) across exit(the slot the
 * return address was in), and jumps where exit says.
 * `self` is mcount under a name of the library's own (hidden). */
#define ARCH_HAVE_MCOUNT 1
#define ARCH_MCOUNT_SAVE(frame)          \
	"	sub $" #frame ", %rsp\n" \
	"	mov %rdi, 0(%rsp)\n"           \
	"	mov %rsi, 8(%rsp)\n"           \
	"	mov %rdx, 16(%rsp)\n"          \
	"	mov %rcx, 24(%rsp)\n"          \
	"	mov %r8, 32(%rsp)\n"           \
	"	mov %r9, 40(%rsp)\n"           \
	"	mov %rax, 48(%rsp)\n"          \
	"	mov %r10, 56(%rsp)\n"          \
	"	movups %xmm0, 64(%rsp)\n"      \
	"	movups %xmm1, 80(%rsp)\n"      \
	"	movups %xmm2, 96(%rsp)\n"      \
	"	movups %xmm3, 112(%rsp)\n"     \
	"	movups %xmm4, 128(%rsp)\n"     \
	"	movups %xmm5, 144(%rsp)\n"     \
	"	movups %xmm6, 160(%rsp)\n"     \
	"	movups %xmm7, 176(%rsp)\n"     \
	"	mov " #frame "(%rsp), %rdi\n"
/* gcc -pg may call mcount with the stack 8 bytes off the ABI's 16-byte
 * alignment (a function it takes for a leaf, -O0, whose frame is 8 mod 16
 * after the prologue): the hook, C that may keep SSE values on its stack
 * (movdqa), is called on a stack aligned here, rbx (callee-saved) holding
 * the real one. */
#define ARCH_MCOUNT_ALIGNED_CALL(fn) \
	"	push %rbx\n"               \
	"	mov %rsp, %rbx\n"          \
	"	and $-16, %rsp\n"          \
	"	call " #fn "\n"      \
	"	mov %rbx, %rsp\n"          \
	"	pop %rbx\n"
#define ARCH_MCOUNT_RESTORE(frame)   \
	"	mov 0(%rsp), %rdi\n"       \
	"	mov 8(%rsp), %rsi\n"       \
	"	mov 16(%rsp), %rdx\n"      \
	"	mov 24(%rsp), %rcx\n"      \
	"	mov 32(%rsp), %r8\n"       \
	"	mov 40(%rsp), %r9\n"       \
	"	mov 48(%rsp), %rax\n"      \
	"	mov 56(%rsp), %r10\n"      \
	"	movups 64(%rsp), %xmm0\n"  \
	"	movups 80(%rsp), %xmm1\n"  \
	"	movups 96(%rsp), %xmm2\n"  \
	"	movups 112(%rsp), %xmm3\n" \
	"	movups 128(%rsp), %xmm4\n" \
	"	movups 144(%rsp), %xmm5\n" \
	"	movups 160(%rsp), %xmm6\n" \
	"	movups 176(%rsp), %xmm7\n" \
	"	add $" #frame ", %rsp\n"
#define ARCH_MCOUNT_TRAMPOLINES(on, late, enter, exit, ret, real_mcount, real_fentry, self)       \
	__asm__(".text\n"                                                                         \
		".globl mcount\n"                                                                 \
		".type mcount, @function\n"                                                       \
		".globl _mcount\n"                                                                \
		".type _mcount, @function\n"                                                      \
		".globl " #self "\n"                                                              \
		".hidden " #self "\n"                                                             \
		"mcount:\n"                                                                       \
		"_mcount:\n" #self ":\n"                                                          \
		"	endbr64\n"                                                                      \
		"	cmpl $0, " #on "(%rip)\n"                                                 \
		"	je 1f\n" ARCH_MCOUNT_SAVE(                                                \
			200) "	lea 8(%rbp), %rsi\n" ARCH_MCOUNT_ALIGNED_CALL(enter)              \
			ARCH_MCOUNT_RESTORE(                                                      \
				200) "	ret\n"                                                     \
				     "1:	mov " #late "(%rip), %r11\n"                      \
				     "	test %r11, %r11\n"                                         \
				     "	jz 3f\n"                                                   \
				     "	lock addq $2, (%r11)\n"                                    \
				     "3:	mov " #real_mcount "(%rip), %r11\n"               \
				     "	test %r11, %r11\n"                                         \
				     "	jz 2f\n"                                                   \
				     "	jmp *%r11\n"                                               \
				     "2:	ret\n"                                                   \
				     ".size mcount, .-mcount\n"                                   \
				     ".size _mcount, .-_mcount\n"                                 \
				     ".globl __fentry__\n"                                        \
				     ".type __fentry__, @function\n"                              \
				     "__fentry__:\n"                                              \
				     "	endbr64\n"                                                 \
				     "	cmpl $0, " #on "(%rip)\n"                                 \
				     "	je 1f\n" ARCH_MCOUNT_SAVE(                                \
					     208) "	lea 216(%rsp), %rsi\n"                        \
						  "	call " #enter "\n" ARCH_MCOUNT_RESTORE(   \
							  208) "	ret\n"                           \
							       "1:	mov " #late               \
							       "(%rip), %r11\n"                   \
							       "	test %r11, %r11\n"               \
							       "	jz 3f\n"                         \
							       "	lock addq $2, (%r11)\n"          \
							       "3:	mov " #real_fentry        \
							       "(%rip), %r11\n"                   \
							       "	test %r11, %r11\n"               \
							       "	jz 2f\n"                         \
							       "	jmp *%r11\n"                     \
							       "2:	ret\n"                         \
							       ".size __fentry__, "               \
							       ".-__fentry__\n"                   \
							       ".globl " #ret "\n"                \
							       ".hidden " #ret "\n"               \
							       ".type " #ret ", @function\n" #ret \
							       ":\n"                              \
							       "	endbr64\n"                       \
							       "	sub $48, %rsp\n"                 \
							       "	mov %rax, 0(%rsp)\n"             \
							       "	mov %rdx, 8(%rsp)\n"             \
							       "	movups %xmm0, 16(%rsp)\n"        \
							       "	movups %xmm1, 32(%rsp)\n"        \
							       "	lea 40(%rsp), %rdi\n"            \
							       "	call " #exit "\n"         \
							       "	mov %rax, %r11\n"                \
							       "	mov 0(%rsp), %rax\n"             \
							       "	mov 8(%rsp), %rdx\n"             \
							       "	movups 16(%rsp), %xmm0\n"        \
							       "	movups 32(%rsp), %xmm1\n"        \
							       "	add $48, %rsp\n"                 \
							       "	jmp *%r11\n"                     \
							       ".size " #ret ", .-" #ret "\n")

/* A function as -pg builds it, for the calibration: fn calls `self` (the
 * library's mcount) after its prologue; `site` is where that call returns. */
#define ARCH_MCOUNT_CALIB_FN(fn, site, self)           \
	__asm__(".text\n"                              \
		".globl " #fn "\n"                     \
		".hidden " #fn "\n"                    \
		".globl " #site "\n"                   \
		".hidden " #site "\n"                  \
		".type " #fn ", @function\n" #fn ":\n" \
		"	endbr64\n"                           \
		"	push %rbp\n"                         \
		"	mov %rsp, %rbp\n"                    \
		"	call " #self "\n" #site ":\n"  \
		"	pop %rbp\n"                          \
		"	ret\n"                               \
		".size " #fn ", .-" #fn "\n")
#endif

#if defined(__x86_64__)
/* Library calls through the PLT (span/rec_plt.c).  A patched GOT slot points
 * at a stub of ARCH_PLT_STUB bytes that loads its slot's index into r11d
 * (call-clobbered, never an argument) and jumps through the pointer at the
 * start of its page of stubs to `entry`.  `entry` saves every argument
 * register (rdi rsi rdx rcx r8 r9, rax for varargs, r10 the static chain,
 * xmm0-7), calls enter(index, address of the return address), which returns
 * the function to run (and may have replaced the return address with `ret`),
 * restores them and jumps there: the callee finds the stack and registers
 * its caller left.  `ret` is where such a call returns: it saves the return
 * registers (rax rdx xmm0 xmm1), calls leave(stack pointer after the
 * return), which returns the real return address, restores them and jumps
 * there.  The x87 registers (long double results) are not touched by the C
 * code in between, which is built without x87 arithmetic. */
#define ARCH_HAVE_PLT_HOOK 1
#define ARCH_PLT_STUB 16u
#define ARCH_PLT_TRAMPOLINES(entry, ret, enter, leave)       \
	__asm__(".text\n"                                    \
		".type " #entry ", @function\n" #entry ":\n" \
		"	sub $200, %rsp\n"                          \
		"	mov %rdi, 0(%rsp)\n"                       \
		"	mov %rsi, 8(%rsp)\n"                       \
		"	mov %rdx, 16(%rsp)\n"                      \
		"	mov %rcx, 24(%rsp)\n"                      \
		"	mov %r8, 32(%rsp)\n"                       \
		"	mov %r9, 40(%rsp)\n"                       \
		"	mov %rax, 48(%rsp)\n"                      \
		"	mov %r10, 56(%rsp)\n"                      \
		"	movaps %xmm0, 64(%rsp)\n"                  \
		"	movaps %xmm1, 80(%rsp)\n"                  \
		"	movaps %xmm2, 96(%rsp)\n"                  \
		"	movaps %xmm3, 112(%rsp)\n"                 \
		"	movaps %xmm4, 128(%rsp)\n"                 \
		"	movaps %xmm5, 144(%rsp)\n"                 \
		"	movaps %xmm6, 160(%rsp)\n"                 \
		"	movaps %xmm7, 176(%rsp)\n"                 \
		"	mov %r11d, %edi\n"                         \
		"	lea 200(%rsp), %rsi\n"                     \
		"	call " #enter "\n"                   \
		"	mov %rax, %r11\n"                          \
		"	mov 0(%rsp), %rdi\n"                       \
		"	mov 8(%rsp), %rsi\n"                       \
		"	mov 16(%rsp), %rdx\n"                      \
		"	mov 24(%rsp), %rcx\n"                      \
		"	mov 32(%rsp), %r8\n"                       \
		"	mov 40(%rsp), %r9\n"                       \
		"	mov 48(%rsp), %rax\n"                      \
		"	mov 56(%rsp), %r10\n"                      \
		"	movaps 64(%rsp), %xmm0\n"                  \
		"	movaps 80(%rsp), %xmm1\n"                  \
		"	movaps 96(%rsp), %xmm2\n"                  \
		"	movaps 112(%rsp), %xmm3\n"                 \
		"	movaps 128(%rsp), %xmm4\n"                 \
		"	movaps 144(%rsp), %xmm5\n"                 \
		"	movaps 160(%rsp), %xmm6\n"                 \
		"	movaps 176(%rsp), %xmm7\n"                 \
		"	add $200, %rsp\n"                          \
		"	jmp *%r11\n"                               \
		".size " #entry ", .-" #entry "\n"           \
		".type " #ret ", @function\n" #ret ":\n"     \
		"	sub $48, %rsp\n"                           \
		"	mov %rax, 0(%rsp)\n"                       \
		"	mov %rdx, 8(%rsp)\n"                       \
		"	movaps %xmm0, 16(%rsp)\n"                  \
		"	movaps %xmm1, 32(%rsp)\n"                  \
		"	lea 48(%rsp), %rdi\n"                      \
		"	call " #leave "\n"                   \
		"	mov %rax, %r11\n"                          \
		"	mov 0(%rsp), %rax\n"                       \
		"	mov 8(%rsp), %rdx\n"                       \
		"	movaps 16(%rsp), %xmm0\n"                  \
		"	movaps 32(%rsp), %xmm1\n"                  \
		"	add $48, %rsp\n"                           \
		"	jmp *%r11\n"                               \
		".size " #ret ", .-" #ret "\n")

/* Writes stub `index` at `at` (ARCH_PLT_STUB bytes), jumping through the
 * pointer at `via`: mov $index, %r11d; jmp *via(%rip); int3 padding. */
ARCH_INLINE void arch_plt_stub(unsigned char *at, uint32_t index, const void *via)
{
	int32_t disp = (int32_t)((const unsigned char *)via - (at + 12));
	at[0] = 0x41;
	at[1] = 0xbb;
	__builtin_memcpy(at + 2, &index, 4);
	at[6] = 0xff;
	at[7] = 0x25;
	__builtin_memcpy(at + 8, &disp, 4);
	__builtin_memset(at + 12, 0xcc, 4);
}
#endif

#endif
