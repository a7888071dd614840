/* span_cat_fn.c: categories of -finstrument-functions functions, for
 * categories.bats: main declares "load" io and "crunch" cpu, then calls
 * crunch() three times, each calling load() once.  Built with
 * -finstrument-functions (spans named by the functions' symbols). */
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
	for (int i = 0; i < 3; i++)
		crunch();
	return 0;
}
