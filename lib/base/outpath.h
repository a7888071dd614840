/* outpath.h: output file names with the job's coordinates in them, so that
 * every rank of a cluster job (mpirun, srun) writes its own files:
 *   %r  the rank: OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID, the first
 *       set (0 outside a job)
 *   %l  the rank on this node: OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or
 *       SLURM_LOCALID (0 outside a job)
 *   %h  this host's name
 *   %p  spanstat's pid
 *   %j  the job: SLURM_JOB_ID or PBS_JOBID, else spanstat's start time
 *       (YYYYmmdd-HHMMSS, local time)
 *   %%  a '%'
 * Any other '%' is an error. */
#ifndef SPANSTAT_OUTPATH_H
#define SPANSTAT_OUTPATH_H

/* *out: the expanded name (malloc'd).  0, or -EINVAL with *why (static text
 * naming the bad sequence) or -ENOMEM. */
int outpath_expand(const char *pattern, char **out, const char **why);

/* The job's coordinates as %r, %l and %j take them from the environment:
 * the first variable set, or NULL outside a job. */
const char *outpath_rank(void);
const char *outpath_local_rank(void);
const char *outpath_job(void);

#endif
