/* span_late_lib.c: a library the span_late workload dlopens and never
 * dlcloses, whose destructor records spans.  It does not link libspanstat
 * (the program's copy serves it), so nothing orders its destructor before
 * the library's: glibc runs it after, once the library's exit path ran.
 * Build: cc -O2 -g -fPIC -shared span_late_lib.c -o liblate.so
 *        (-DNO_API -finstrument-functions: the spans are its functions')
 *
 * Its destructor records 7x "late" (NO_API: calls late_step 7 times, and is
 * a span itself): 14 events (16). */
#ifndef NO_API
#include <spanstat.h>
#endif

static volatile unsigned long sink;

__attribute__((noinline)) static void late_step(int i)
{
	sink += (unsigned long)i;
}

__attribute__((destructor)) static void late_fini(void)
{
	for (int i = 0; i < 7; i++) {
#ifndef NO_API
		spanstat_begin("late");
#endif
		late_step(i);
#ifndef NO_API
		spanstat_end("late");
#endif
	}
}
