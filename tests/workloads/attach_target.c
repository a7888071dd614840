/* attach_target.c: a process to attach to (-p, -t).  Prints its pid and
 * its second thread's tid, then waits; each SIGUSR1 makes the second thread
 * touch 4096 fresh pages (4096 page faults) and prints "done N"; SIGTERM
 * ends it.  usage: attach_target */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static sigset_t set;
static pid_t worker_tid;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int todo, done;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	worker_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	for (;;) {
		while (!todo)
			pthread_cond_wait(&cv, &mu);
		todo--;
		pthread_mutex_unlock(&mu);
		size_t len = 4096u * 4096u;
		char *m =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (size_t i = 0; m != MAP_FAILED && i < len; i += 4096)
			m[i] = 1;
		if (m != MAP_FAILED)
			munmap(m, len);
		pthread_mutex_lock(&mu);
		printf("done %d\n", ++done);
		fflush(stdout);
	}
	return NULL;
}

int main(void)
{
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_mutex_lock(&mu);
	while (!worker_tid)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("pid %d tid %d\n", (int)getpid(), (int)worker_tid);
	fflush(stdout);
	for (;;) {
		int sig;
		sigwait(&set, &sig);
		if (sig == SIGTERM)
			return 0;
		pthread_mutex_lock(&mu);
		todo++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}
