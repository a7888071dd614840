/* libcalls.c: an ordinary program (no -finstrument-functions, no API) whose
 * library calls through the PLT --lib-calls makes spans, for libcalls.bats.
 * It prints how many calls of each kind it made ("NAME COUNT" lines), so
 * that the tests compare the spans with its own counts.  The library calls
 * it counts are getppid() (one cheap call the compiler cannot elide) and
 * the calls each mode names.
 * Build: cc -O2 libcalls.c -o libcalls -L. -llibcalls_lib -pthread -ldl
 * (libcalls_lib.c: lc_tail; libcalls_plug.c: the dlopen mode's plugin)
 *
 *   libcalls plain N      N getppid
 *   libcalls threads T N  T threads, each N getppid (pthread_create and
 *                         pthread_join T each)
 *   libcalls exit N       N getppid, then qsort whose comparison calls
 *                         getppid then exit(0): qsort and exit never return
 *   libcalls longjmp N    N rounds: setjmp, then qsort whose comparison
 *                         calls getppid then longjmp()s out of qsort; then
 *                         N getppid outside
 *   libcalls pexit N      a thread calls qsort whose comparison calls
 *                         getppid then pthread_exit; main then N getppid
 *   libcalls fork N       fork; the child and the parent each N getppid
 *                         (the child _exit()s, the parent waits)
 *   libcalls exec N       execs itself as "plain N"
 *   libcalls signal N     N rounds of sigsuspend() (SIGUSR1 blocked
 *                         outside it) while a thread sends SIGUSR1: the
 *                         handler calls write() inside the sigsuspend call;
 *                         and N raise(SIGUSR1), the handler inside raise
 *   libcalls tail N       N calls of lc_tail (libcalls_lib.c), which
 *                         tail-calls getppid through its own PLT; and N of
 *                         own_tail, this program's tail call to getppid
 *   libcalls dlopen N PLUGIN  dlopen PLUGIN, dlsym plug_run, run it: N
 *                         getppid made by the plugin
 *   libcalls cycle N PLUGIN PLUGIN2  N times: dlopen PLUGIN (odd times:
 *                         PLUGIN2, built to call getpid), plug_run(1),
 *                         dlclose; it prints "getpid COUNT" too
 *   libcalls reload N PLUGIN  N times: dlopen PLUGIN, plug_run(1),
 *                         dlclose: N getppid, each load's own
 *   libcalls rehook N PLUGIN PLUGIN2  dlopen PLUGIN, then point its GOT
 *                         slot of getppid at a hook that counts and calls
 *                         what the slot held (as PLT hooking libraries do);
 *                         N times: dlopen PLUGIN2, plug_run(1), dlclose
 *                         PLUGIN2; it prints "hooked COUNT" too
 *   libcalls dlthreads N PLUGIN PLUGIN2  4 threads, each N times: dlopen
 *                         PLUGIN or PLUGIN2 (by turns), plug_run(1),
 *                         dlclose; it prints "getpid COUNT" too */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int lc_tail(void); /* libcalls_lib.c */

static jmp_buf env;
static int nget;
static int how; /* what the comparison does after its getppid: 0 exit, 1 longjmp, 2 pthread_exit */

static int cmp(const void *a, const void *b)
{
	getppid();
	nget++;
	if (how == 0) {
		printf("getppid %d\nqsort 1\nexit 1\n", nget);
		fflush(stdout);
		exit(0);
	}
	if (how == 1)
		longjmp(env, 1);
	pthread_exit(NULL);
	return *(const int *)a - *(const int *)b;
}

static void sort_some(void)
{
	int v[4] = {4, 3, 2, 1};
	qsort(v, 4, sizeof v[0], cmp);
}

static void gets_(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
	nget += n;
}

static void *worker(void *arg)
{
	gets_(*(int *)arg);
	return NULL;
}

static void *sorter(void *arg)
{
	(void)arg;
	how = 2;
	sort_some();
	return NULL;
}

static volatile sig_atomic_t nsig;
static int devnull;
static void on_usr1(int sig)
{
	(void)sig;
	if (write(devnull, "x", 1) == 1)
		nsig++;
}

static pthread_t mainthread;
static void *sender(void *arg)
{
	int n = *(int *)arg;
	for (int i = 0; i < n; i++) {
		int seen = nsig;
		while (nsig == seen) {
			pthread_kill(mainthread, SIGUSR1);
			usleep(1000);
		}
	}
	return NULL;
}

__attribute__((noinline)) int own_tail(void)
{
	return getppid();
}

/* rehook: the GOT slot of getppid of the object named hook_obj */
static const char *hook_obj;
static uintptr_t *hook_slot;
static pid_t (*hook_next)(void);
static int hooked;

static int find_slot(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || strcmp(info->dlpi_name, hook_obj) != 0)
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	const ElfW(Rela) *rel = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	size_t relsz = 0;
	for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
		uintptr_t p = d->d_un.d_ptr;
		if (p < info->dlpi_addr)
			p += info->dlpi_addr;
		if (d->d_tag == DT_JMPREL)
			rel = (const void *)p;
		else if (d->d_tag == DT_PLTRELSZ)
			relsz = d->d_un.d_val;
		else if (d->d_tag == DT_SYMTAB)
			sym = (const void *)p;
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)p;
	}
	for (size_t i = 0; rel && sym && str && i < relsz / sizeof *rel; i++)
		if (!strcmp(str + sym[ELF64_R_SYM(rel[i].r_info)].st_name, "getppid"))
			hook_slot = (uintptr_t *)(info->dlpi_addr + rel[i].r_offset);
	return 1;
}

/* dlthreads: each thread's loads */
static const char *dl_plug[2];
static int dl_rounds, dl_got[2][4];

static void *dl_loader(void *arg)
{
	int t = *(int *)arg;
	for (int i = 0; i < dl_rounds; i++) {
		int w = (i + t) & 1;
		void *h = dlopen(dl_plug[w], RTLD_NOW | RTLD_LOCAL);
		int (*run)(int) = h ? (int (*)(int))dlsym(h, "plug_run") : NULL;
		if (!run)
			exit(2);
		dl_got[w][t] += run(1);
		dlclose(h);
	}
	return NULL;
}

static pid_t hook(void)
{
	hooked++;
	return hook_next();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	int n = argc > 2 ? atoi(argv[2]) : 10;
	if (!strcmp(mode, "plain")) {
		gets_(n);
	} else if (!strcmp(mode, "threads")) {
		int t = n, each = argc > 3 ? atoi(argv[3]) : 10;
		pthread_t th[64];
		for (int i = 0; i < t && i < 64; i++)
			pthread_create(&th[i], NULL, worker, &each);
		for (int i = 0; i < t && i < 64; i++)
			pthread_join(th[i], NULL);
		nget = t * each;
		printf("pthread_create %d\npthread_join %d\n", t, t);
	} else if (!strcmp(mode, "exit")) {
		gets_(n);
		how = 0;
		sort_some();
	} else if (!strcmp(mode, "longjmp")) {
		how = 1;
		for (int i = 0; i < n; i++)
			if (!setjmp(env))
				sort_some();
		gets_(n);
		printf("qsort %d\n", n);
	} else if (!strcmp(mode, "pexit")) {
		pthread_t th;
		pthread_create(&th, NULL, sorter, NULL);
		pthread_join(th, NULL);
		gets_(n);
		printf("qsort 1\n");
	} else if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		gets_(n);
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
		nget = 2 * n;
	} else if (!strcmp(mode, "exec")) {
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "plain", argv[2], (char *)NULL);
		return 127;
	} else if (!strcmp(mode, "signal")) {
		devnull = open("/dev/null", O_WRONLY);
		signal(SIGUSR1, on_usr1);
		sigset_t block, old;
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, &old);
		mainthread = pthread_self();
		pthread_t th;
		pthread_create(&th, NULL, sender, &n);
		for (int i = 0; i < n; i++) {
			int seen = nsig;
			while (nsig == seen)
				sigsuspend(&old);
		}
		pthread_join(th, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		for (int i = 0; i < n; i++)
			raise(SIGUSR1);
		printf("sigsuspend-writes %d\nraise %d\nwrite %d\n", n, n, (int)nsig);
	} else if (!strcmp(mode, "tail")) {
		for (int i = 0; i < n; i++)
			lc_tail();
		for (int i = 0; i < n; i++)
			own_tail();
		nget = 2 * n;
		printf("lc_tail %d\n", n);
	} else if (!strcmp(mode, "dlopen")) {
		void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
		int (*run)(int) = h ? (int (*)(int))dlsym(h, "plug_run") : NULL;
		if (!run)
			return 2;
		nget = run(n);
	} else if (!strcmp(mode, "cycle")) {
		for (int i = 0; i < n; i++) {
			void *h = dlopen(argv[3 + (i & 1)], RTLD_NOW | RTLD_LOCAL);
			int (*run)(int) = h ? (int (*)(int))dlsym(h, "plug_run") : NULL;
			if (!run)
				return 2;
			run(1);
			dlclose(h);
		}
		nget = (n + 1) / 2;
		printf("getpid %d\n", n / 2);
	} else if (!strcmp(mode, "reload")) {
		for (int i = 0; i < n; i++) {
			void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
			int (*run)(int) = h ? (int (*)(int))dlsym(h, "plug_run") : NULL;
			if (!run)
				return 2;
			nget += run(1);
			if (dlclose(h) != 0)
				return 2;
		}
	} else if (!strcmp(mode, "rehook")) {
		void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
		int (*run)(int) = h ? (int (*)(int))dlsym(h, "plug_run") : NULL;
		hook_obj = argv[3];
		dl_iterate_phdr(find_slot, NULL);
		if (!run || !hook_slot)
			return 2;
		uintptr_t pg = (uintptr_t)hook_slot & ~(uintptr_t)4095;
		if (mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE) != 0)
			return 2;
		hook_next = (pid_t(*)(void)) * hook_slot;
		*hook_slot = (uintptr_t)hook;
		for (int i = 0; i < n; i++) {
			void *h2 = dlopen(argv[4], RTLD_NOW | RTLD_LOCAL);
			if (!h2)
				return 2;
			nget += run(1);
			dlclose(h2);
		}
		printf("hooked %d\n", hooked);
	} else if (!strcmp(mode, "dlthreads")) {
		pthread_t th[4];
		int id[4], ngetpid = 0;
		dl_plug[0] = argv[3];
		dl_plug[1] = argv[4];
		dl_rounds = n;
		for (int i = 0; i < 4; i++) {
			id[i] = i;
			pthread_create(&th[i], NULL, dl_loader, &id[i]);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			nget += dl_got[0][i];
			ngetpid += dl_got[1][i];
		}
		printf("getpid %d\n", ngetpid);
	}
	printf("getppid %d\n", nget);
	return 0;
}
