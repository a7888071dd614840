/* mpi_imbalance.c: an MPI job with a known imbalance, for merging the record
 * files of its ranks.  Every rank runs, inside span "rank_main":
 *   barrier  a barrier, so that the ranks start "work" together
 *   work     spins on the CPU (arithmetic, no sleeping): 30 ms by the clock;
 *            rank 2 twice as long, 60 ms, and until it has had 60 ms of CPU
 *            time.  With more ranks than CPUs (or other load) a spin bounded
 *            by CPU time alone would stretch every rank's span by how long it
 *            was scheduled out, blurring the 2:1 ratio of the spans' times;
 *            one bounded by the clock alone would leave rank 2 little more
 *            CPU time than the others.  So the others' spans last 30 ms,
 *            rank 2's at least 60 ms, with at least 60 ms of CPU time in it
 *            against at most 30 ms in theirs
 *   wait     a barrier again
 * The barriers sleep while they wait (MPI_Ibarrier, tested every
 * millisecond): MPI_Barrier spins in Open MPI, and would give the ranks that
 * wait CPU time (task-clock) and take the CPU from the ones still working.
 * Rank 2 is then the max of "rank_main;work" and of task-clock, with an
 * imbalance (max - mean) / max of the span of at least 0.375.
 * usage: mpi_imbalance [MS]  (MS: the work of a rank other than 2; 30) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <spanstat.h>

static double ms_of(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* spin WALL CPU: spins until WALL ms have passed and the thread has had CPU
 * ms of CPU time */
static void spin(long wall, long cpu)
{
	volatile unsigned long x = 0;
	double w0 = ms_of(CLOCK_MONOTONIC), c0 = ms_of(CLOCK_THREAD_CPUTIME_ID);
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i * 3 + 1;
	} while (ms_of(CLOCK_MONOTONIC) - w0 < (double)wall ||
		 ms_of(CLOCK_THREAD_CPUTIME_ID) - c0 < (double)cpu);
}

static void sleeping_barrier(void)
{
	MPI_Request req;
	int done = 0;
	struct timespec ms1 = {0, 1000 * 1000};
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	for (;;) {
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (done)
			break;
		nanosleep(&ms1, NULL);
	}
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 30;
	int rank = 0, size = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	spanstat_begin("rank_main");
	spanstat_begin("barrier");
	sleeping_barrier();
	spanstat_end("barrier");
	spanstat_begin("work");
	if (rank == 2)
		spin(2 * ms, 2 * ms);
	else
		spin(ms, 0);
	spanstat_end("work");
	spanstat_begin("wait");
	sleeping_barrier();
	spanstat_end("wait");
	spanstat_end("rank_main");

	printf("rank %d of %d done\n", rank, size);
	MPI_Finalize();
	return 0;
}
