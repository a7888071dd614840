/* libcalls_plug.c: the plugin libcalls.c's dlopen mode loads: plug_run(n)
 * calls getppid n times through this object's PLT. */
#include <unistd.h>

int plug_run(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
	return n;
}
