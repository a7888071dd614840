/* libcalls_lib.c: libcalls.c's shared library: lc_tail tail-calls getppid
 * through this library's PLT (built -O2 -fPIC -shared: a jmp). */
#include <unistd.h>

int lc_tail(void)
{
	return getppid();
}
