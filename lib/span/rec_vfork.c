/* rec_vfork.c: vfork, interposed (rec.h).
 *
 * A vfork()ed child runs on its parent's memory, the thread's recording
 * state included, until it execs or exits.  What it records must not go
 * into the parent's buffers, nor its -pg functions and lib calls onto the
 * parent's shadow stacks: from its vfork's return on, the thread's state
 * is hidden from it (rec_self, the lib calls' stack, the -pg stack: NULL),
 * so that each of its events is dropped and counted (rec_event_cold), its
 * functions' returns are not hijacked, and the parent, resumed,
 * finds its state as it left it.  The drops are counted in the process's total, as the child's
 * memory is the parent's: the parent's counts say the spans it lost, its tree holds none of them.
 * A child of such a child keeps the state hidden; the parent that vforked first shows it again. */
#include "config.h"

#include <errno.h>
#include <sys/types.h>

#include "rec.h"

__thread int rec_vforked __attribute__((tls_model("initial-exec")));
static __thread struct rec_thread *rec_vfork_self __attribute__((tls_model("initial-exec")));

#if ARCH_HAVE_VFORK
REC_NOI pid_t rec_vfork_after(long r, int level);
ARCH_VFORK(vfork, rec_vfork_after, rec_vforked);

/* After the system call, in the child (r 0) and then in the parent: level
 * is rec_vforked as the parent had it before the call. */
REC_NOI pid_t rec_vfork_after(long r, int level)
{
	if (r == 0) {
		rec_vforked = level + 1;
		if (level == 0) {
			rec_vfork_self = rec_self;
			rec_self = NULL;
			rec_plt_vfork(1);
			rec_mcount_vfork(1);
		}
		return 0;
	}
	if (rec_vforked != level) { /* the child hid the state: back */
		rec_vforked = level;
		if (level == 0) {
			rec_self = rec_vfork_self;
			rec_plt_vfork(0);
			rec_mcount_vfork(0);
		}
	}
	if (r < 0 && r >= -4095) {
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
}
#endif
