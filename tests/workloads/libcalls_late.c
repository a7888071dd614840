/* libcalls_late.c: library calls after the span library's exit path, for
 * --lib-calls: main calls getppid 5 times; its destructor (run before the
 * library's) registers an exit handler of no object, which glibc runs once
 * every destructor ran, and which calls getppid 7 times: 14 events that
 * come too late to be spans.
 * Build: cc -O2 libcalls_late.c -o libcalls_late */
#include <unistd.h>

int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static volatile long sink;

static void late_handler(void *arg)
{
	(void)arg;
	for (int i = 0; i < 7; i++)
		sink += getppid();
}

__attribute__((destructor)) static void register_late(void)
{
	__cxa_atexit(late_handler, NULL, NULL);
}

int main(void)
{
	for (int i = 0; i < 5; i++)
		sink += getppid();
	return 0;
}
