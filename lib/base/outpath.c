/* outpath.c: %-sequences in output file names (outpath.h). */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outpath.h"

/* The first of the variables that is set and not empty, else dflt. */
static const char *outpath_env(const char *const *names, const char *dflt)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		if (v && *v)
			return v;
	}
	return dflt;
}

static const char *const rank[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
static const char *const local[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
				    "SLURM_LOCALID", NULL};
static const char *const job[] = {"SLURM_JOB_ID", "PBS_JOBID", NULL};

const char *outpath_rank(void)
{
	return outpath_env(rank, NULL);
}

const char *outpath_local_rank(void)
{
	return outpath_env(local, NULL);
}

const char *outpath_job(void)
{
	return outpath_env(job, NULL);
}

int outpath_expand(const char *pattern, char **out, const char **why)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	*why = NULL;
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		char host[256], stamp[32];
		switch (*++p) {
		case 'r':
			fputs(outpath_env(rank, "0"), f);
			break;
		case 'l':
			fputs(outpath_env(local, "0"), f);
			break;
		case 'h':
			if (gethostname(host, sizeof host) != 0)
				snprintf(host, sizeof host, "localhost");
			host[sizeof host - 1] = '\0';
			fputs(host, f);
			break;
		case 'p':
			fprintf(f, "%d", (int)getpid());
			break;
		case 'j': {
			const char *j = outpath_env(job, NULL);
			if (!j) {
				time_t now = time(NULL);
				struct tm tm;
				strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S",
					 localtime_r(&now, &tm));
				j = stamp;
			}
			fputs(j, f);
			break;
		}
		case '%':
			fputc('%', f);
			break;
		case '\0':
			*why = "a '%' ends it (write %% for a '%')";
			break;
		default:
			*why = "unknown %-sequence (expected %r, %l, %h, %p, %j or %%)";
			break;
		}
		if (*why || !*p)
			break;
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	if (*why) {
		free(buf);
		return -EINVAL;
	}
	*out = buf;
	return 0;
}
