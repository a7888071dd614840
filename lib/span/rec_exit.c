/* rec_exit.c: _exit and _Exit, interposed (rec.h). */
#include "config.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "rec.h"

/* _exit and _Exit skip destructors, so a process ending through them (the
 * usual end of a forked child) lost everything it had buffered: send it
 * first, as exit() does through rec_disconnect.  A vfork()ed child shares
 * its parent's memory, buffers included, and must touch nothing: it is told
 * apart by its pid, which rec_atfork_child never set for it. */
static REC_NOI __attribute__((noreturn)) void rec_exit_now(rec_exit_fn real, int status)
{
	if (!rec_secure && (uint32_t)getpid() == rec_pid)
		rec_finish(0);
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

REC_API __attribute__((noreturn)) void _exit(int status)
{
	rec_exit_now(rec_real_exit, status);
}

REC_API __attribute__((noreturn)) void _Exit(int status)
{
	rec_exit_now(rec_real_Exit, status);
}
