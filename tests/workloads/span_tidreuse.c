/* span_tidreuse.c: a process that ended unseen, its pid a thread's since.
 * Build: cc -O2 -g -pthread span_tidreuse.c -o span_tidreuse -lspanstat
 *
 * A forked child ("gone") records nothing and ends through the exit_group
 * system call, so no exit record tells its end.  Then an orphan creates
 * threads, one at a time, until one of them gets the child's pid for its
 * tid (the pid space wraps; at most 3 x pid_max threads): that thread
 * lives on 2 s (its stdio closed) while the parent returns.  /proc/PID
 * answers for a thread too: the child must not count as running.  Prints
 * "taken" or "not taken" (the pid went elsewhere: the check cannot be
 * made). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t want, tid;
static sem_t ready;

static void *thread(void *arg)
{
	(void)arg;
	pid_t self = (pid_t)syscall(SYS_gettid);
	tid = self;
	sem_post(&ready);
	if (self == want)
		sleep(2);
	return NULL;
}

int main(void)
{
	long max = 32768;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 32768;
		fclose(f);
	}
	pid_t gone = fork();
	if (gone == 0)
		syscall(SYS_exit_group, 0);
	if (gone < 0 || waitpid(gone, NULL, 0) != gone)
		return 1;
	want = gone;
	int told[2];
	if (pipe(told) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(told[0]);
		sem_init(&ready, 0, 0);
		for (long i = 0; i < 3 * max; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, thread, NULL) != 0)
				_exit(1);
			while (sem_wait(&ready) != 0)
				;
			if (tid == want) { /* the tid is the child's pid: keep it */
				if (write(told[1], "y", 1) != 1)
					_exit(1);
				for (int fd = 0; fd <= 2; fd++)
					close(fd);
				pthread_join(t, NULL);
				_exit(0);
			}
			pthread_join(t, NULL);
		}
		if (write(told[1], "n", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(told[1]);
	char c = 'n';
	if (pid < 0 || read(told[0], &c, 1) != 1)
		return 1;
	puts(c == 'y' ? "taken" : "not taken");
	return 0;
}
