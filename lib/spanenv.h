/* spanenv.h: the environment variables through which spanstat (launch.c
 * sets them) talks to the span library in the target (span/recorder.c reads
 * them).  Nothing else sets or reads them. */
#ifndef SPANSTAT_SPANENV_H
#define SPANSTAT_SPANENV_H

#define SPANSTAT_ENV_FD "SPANSTAT_FD"		/* write end of the pipe, inherited */
#define SPANSTAT_ENV_PIPE "SPANSTAT_PIPE"	/* /proc/<pid>/fd/<n>: reopen path */
#define SPANSTAT_ENV_PIPE_ID "SPANSTAT_PIPE_ID" /* "<st_dev>:<st_ino>" of the pipe */
#define SPANSTAT_ENV_CLOCK "SPANSTAT_CLOCK"	/* "tsc" or "mono" */
#define SPANSTAT_ENV_SHM "SPANSTAT_SHM"		/* /proc/<pid>/fd/<n>: the ring file (ring.h) */

#endif
