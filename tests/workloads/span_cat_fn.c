/* span_cat_fn.c: categories of functions' spans, for categories.bats: main
 * declares "load" io, "crunch" cpu and "getppid" sys, then calls crunch()
 * three times, each calling load() once, and getppid() twice.  Built with
 * -finstrument-functions or -pg (spans named by the functions' symbols);
 * getppid is a span under --lib-calls. */
#include <unistd.h>

#include <spanstat.h>

__attribute__((noinline)) void load(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void crunch(void)
{
	load();
}

int main(void)
{
	spanstat_category("load", "io");
	spanstat_category("crunch", "cpu");
	spanstat_category("getppid", "sys");
	for (int i = 0; i < 3; i++)
		crunch();
	for (int i = 0; i < 2; i++)
		(void)getppid();
	return 0;
}
