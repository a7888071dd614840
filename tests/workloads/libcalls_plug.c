/* libcalls_plug.c: the plugin libcalls.c's dlopen mode loads: plug_run(n)
 * calls getppid n times through this object's PLT (built with
 * -DPLUG_CALL=getpid: getpid, the cycle mode's second plugin). */
#include <unistd.h>

#ifndef PLUG_CALL
#define PLUG_CALL getppid
#endif

int plug_run(int n)
{
	for (int i = 0; i < n; i++)
		PLUG_CALL();
	return n;
}
