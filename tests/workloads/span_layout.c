/* span_layout.c: a program that runs a child with SPANSTAT_VALUES changed
 * to another layout of the same length, as a program may rewrite the
 * environment of what it runs.
 * Build: cc -O2 -g span_layout.c -o span_layout -lspanstat
 * usage: span_layout [swap|keep|child]
 *   swap (the default): reverses the order of the items of SPANSTAT_VALUES
 *        (e.g. page-faults,context-switches becomes context-switches,
 *        page-faults) and runs itself as "child" with it, then waits
 *   keep: the same with SPANSTAT_VALUES untouched
 *   child: the span "touch" touches 64 MiB (16384 fresh pages: page faults,
 *        and barely any context switch), the span "idle" touches nothing */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanstat.h>

static int child(void)
{
	size_t len = 64u << 20;
	spanstat_begin("touch");
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; m != MAP_FAILED && i < len; i += 4096)
		m[i] = 1;
	spanstat_end("touch");
	spanstat_begin("idle");
	volatile int x = 0;
	for (int i = 0; i < 1000; i++)
		x += i;
	spanstat_end("idle");
	if (m != MAP_FAILED)
		munmap(m, len);
	return 0;
}

/* The items of s (comma-separated) in reverse order, into out. */
static void reverse_items(const char *s, char *out, size_t size)
{
	size_t n = strlen(s), o = 0;
	const char *end = s + n;
	out[0] = '\0';
	while (end > s) {
		const char *start = end;
		while (start > s && start[-1] != ',')
			start--;
		size_t k = (size_t)(end - start);
		if (o + k + 2 > size)
			break;
		if (o)
			out[o++] = ',';
		memcpy(out + o, start, k);
		o += k;
		out[o] = '\0';
		end = start > s ? start - 1 : s;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "swap";
	if (strcmp(mode, "child") == 0)
		return child();
	const char *v = getenv("SPANSTAT_VALUES");
	static char swapped[16384];
	if (v && strcmp(mode, "swap") == 0) {
		reverse_items(v, swapped, sizeof swapped);
		printf("SPANSTAT_VALUES %s -> %s\n", v, swapped);
		fflush(stdout);
		setenv("SPANSTAT_VALUES", swapped, 1);
	}
	pid_t pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}
