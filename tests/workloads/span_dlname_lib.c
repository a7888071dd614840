/* span_dlname_lib.c: a library whose span name is its own string, for
 * span_dlname.c.
 * Build: cc -O2 -g -fPIC -shared span_dlname_lib.c -o libdlname.so */
#include <spanstat.h>

void dlname_begin(void)
{
	spanstat_begin("dlname-span");
}
