/* pfm.c: everything spanstat asks of libpfm4 (lazy initialisation, encoding
 * names into perf_event_attr, enumeration for listings and suggestions),
 * and the sysfs view of the kernel's PMUs that decides what is usable here.
 * libpfm4 is loaded with dlopen() the first time a name needs it: linked
 * normally, its 700 KB of relocated tables cost every run about 1 ms.
 */
#include "config.h"

#include "pfm.h"

#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* linux/perf_event.h came first (through pfm.h), so libpfm4's copy of
 * struct perf_event_attr is skipped and the kernel's is used. */
#include <perfmon/pfmlib_perf_event.h>

#include "cause.h"
#include "evtable.h"

/* The libpfm4 functions used here, resolved by pfm_load(). */
static struct {
	pfm_err_t (*initialize)(void);
	const char *(*strerror)(int);
	int (*get_os_event_encoding)(const char *, int, pfm_os_t, void *);
	pfm_err_t (*get_pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
	pfm_err_t (*get_event_info)(int, pfm_os_t, pfm_event_info_t *);
	int (*get_event_next)(int);
	pfm_err_t (*get_event_attr_info)(int, int, pfm_os_t, pfm_event_attr_info_t *);
} pfm_lib;

#define pfm_initialize pfm_lib.initialize
#define pfm_strerror pfm_lib.strerror
#define pfm_get_os_event_encoding pfm_lib.get_os_event_encoding
#define pfm_get_pmu_info pfm_lib.get_pmu_info
#define pfm_get_event_info pfm_lib.get_event_info
#define pfm_get_event_next pfm_lib.get_event_next
#define pfm_get_event_attr_info pfm_lib.get_event_attr_info

#define PFM_SYSFS_DIR "/sys/bus/event_source/devices"

static bool pfm_done;
static int pfm_status;

bool pfm_initialised(void)
{
	return pfm_done && pfm_status == PFM_SUCCESS;
}

/* Loads libpfm4; returns NULL or dlerror()'s message. */
static const char *pfm_load(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
#define PFM_SYM(field, sym)                              \
	if (!(*(void **)&pfm_lib.field = dlsym(h, sym))) \
		return dlerror();
	PFM_SYM(initialize, "pfm_initialize")
	PFM_SYM(strerror, "pfm_strerror")
	PFM_SYM(get_os_event_encoding, "pfm_get_os_event_encoding")
	PFM_SYM(get_pmu_info, "pfm_get_pmu_info")
	PFM_SYM(get_event_info, "pfm_get_event_info")
	PFM_SYM(get_event_next, "pfm_get_event_next")
	PFM_SYM(get_event_attr_info, "pfm_get_event_attr_info")
#undef PFM_SYM
	return NULL;
}

int pfm_setup(char **cause)
{
	static const char *load_error;
	if (!pfm_done) {
		pfm_done = true;
		load_error = pfm_load();
		pfm_status = load_error ? PFM_ERR_NOINIT : pfm_initialize();
	}
	if (load_error)
		return cause_set(cause, -EIO, "cannot load libpfm4 (%s): %s", PFM_SONAME,
				 load_error);
	if (pfm_status != PFM_SUCCESS)
		return cause_set(cause, -EIO, "cannot initialise libpfm4: %s",
				 pfm_strerror(pfm_status));
	return 0;
}

static int pfm_try(const char *name, int plm, struct perf_event_attr *attr)
{
	/* libpfm4 writes its own struct perf_event_attr, whose size may differ
	 * from the kernel headers': give it room and copy the common part. */
	union {
		struct perf_event_attr attr;
		char room[1024];
	} buf;
	memset(&buf, 0, sizeof buf);
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof arg);
	arg.size = sizeof arg;
	arg.attr = &buf.attr;
	int r = pfm_get_os_event_encoding(name, plm, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r == PFM_SUCCESS) {
		*attr = buf.attr;
		attr->size = sizeof *attr;
	}
	return r;
}

int pfm_encode(const char *name, unsigned levels, struct perf_event_attr *attr, char **cause)
{
	int err = pfm_setup(cause);
	if (err)
		return err;
	int plm = PFM_PLM0 | PFM_PLM3;
	if (levels)
		plm = (levels & PFM_LEVEL_USER ? PFM_PLM3 : 0) |
		      (levels & PFM_LEVEL_KERNEL ? PFM_PLM0 : 0) |
		      (levels & PFM_LEVEL_HV ? PFM_PLMH : 0);
	int r = pfm_try(name, plm, attr);
	if (r == PFM_ERR_NOTFOUND && strchr(name, '.')) {
		/* perf's JSON spelling event.umask is libpfm4's event:umask */
		char *alt = strdup(name);
		if (!alt)
			return -ENOMEM;
		for (char *p = alt; *p; p++)
			if (*p == '.')
				*p = ':';
		r = pfm_try(alt, plm, attr);
		free(alt);
	}
	if (r == PFM_ERR_NOTFOUND)
		return -ENOENT;
	if (r != PFM_SUCCESS)
		return cause_set(cause, -EINVAL, "invalid event '%s': %s", name, pfm_strerror(r));
	return 0;
}

static bool pfm_pmu_info(pfm_pmu_t pmu, pfm_pmu_info_t *pi)
{
	memset(pi, 0, sizeof *pi);
	pi->size = sizeof *pi;
	return pfm_get_pmu_info(pmu, pi) == PFM_SUCCESS && pi->is_present;
}

static bool pfm_event_info(int idx, pfm_event_info_t *ei)
{
	memset(ei, 0, sizeof *ei);
	ei->size = sizeof *ei;
	return pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, ei) == PFM_SUCCESS;
}

void pfm_each_name(void (*fn)(void *arg, const char *name, const char *pmu), void *arg)
{
	if (!pfm_initialised())
		return;
	pfm_pmu_t pmu;
	pfm_for_all_pmus(pmu)
	{
		pfm_pmu_info_t pi;
		if (!pfm_pmu_info(pmu, &pi))
			continue;
		for (int i = pi.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ei;
			if (pfm_event_info(i, &ei))
				fn(arg, ei.name, pi.name);
		}
	}
}

/* The kernel's PMUs, read from sysfs once. */
struct pfm_kpmu {
	char name[64];
	int type;
};

static struct pfm_kpmu pfm_kpmus[128];
static int pfm_nkpmus = -1;

static void pfm_scan_sysfs(void)
{
	if (pfm_nkpmus >= 0)
		return;
	pfm_nkpmus = 0;
	DIR *d = opendir(PFM_SYSFS_DIR);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) && pfm_nkpmus < (int)(sizeof pfm_kpmus / sizeof pfm_kpmus[0])) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof pfm_kpmus[0].name)
			continue;
		struct pfm_kpmu *k = &pfm_kpmus[pfm_nkpmus];
		strcpy(k->name, de->d_name);
		k->type = -1;
		char path[sizeof PFM_SYSFS_DIR + sizeof k->name + 8];
		snprintf(path, sizeof path, "%s/%s/type", PFM_SYSFS_DIR, k->name);
		FILE *fp = fopen(path, "r");
		if (fp) {
			if (fscanf(fp, "%d", &k->type) != 1)
				k->type = -1;
			fclose(fp);
		}
		pfm_nkpmus++;
	}
	closedir(d);
}

static bool pfm_kernel_has(const char *name)
{
	pfm_scan_sysfs();
	for (int i = 0; i < pfm_nkpmus; i++)
		if (strcasecmp(pfm_kpmus[i].name, name) == 0)
			return true;
	return false;
}

bool pfm_kernel_core_pmu(void)
{
	pfm_scan_sysfs();
	for (int i = 0; i < pfm_nkpmus; i++)
		if (pfm_kpmus[i].type == PERF_TYPE_RAW)
			return true;
	return pfm_kernel_has("cpu_core") || pfm_kernel_has("cpu_atom");
}

/* Whether some kernel PMU starts with prefix and, when digits is not empty,
 * ends in those digits (libpfm4 "skx_unc_cha3" ~ kernel "uncore_cha_3"). */
static bool pfm_kernel_has_prefix(const char *prefix, const char *digits)
{
	size_t np = strlen(prefix), nd = strlen(digits);
	pfm_scan_sysfs();
	for (int i = 0; i < pfm_nkpmus; i++) {
		const char *k = pfm_kpmus[i].name;
		size_t nk = strlen(k);
		if (strncasecmp(k, prefix, np) != 0)
			continue;
		if (nd == 0 || (nk >= np + nd && strcmp(k + nk - nd, digits) == 0 &&
				(nk == np + nd || k[nk - nd - 1] < '0' || k[nk - nd - 1] > '9')))
			return true;
	}
	return false;
}

/* Whether the kernel has the PMU libpfm4 calls pi->name.  Core PMUs match
 * the kernel's core PMU (cpu_atom for libpfm4's E-core/Atom PMUs on hybrid
 * machines); others match by name, by Intel's "uncore_<box>" naming, by
 * AMD's "amd_<unit>" naming, or RAPL as "power". */
static bool pfm_pmu_usable(const pfm_pmu_info_t *pi)
{
	if (pi->type == PFM_PMU_TYPE_CORE) {
		if (pfm_kernel_has("cpu_core") || pfm_kernel_has("cpu_atom")) {
			const char *d = pi->desc ? pi->desc : "";
			bool atom = strstr(d, "E-Core") || strstr(d, "E-core") || strstr(d, "Atom");
			return pfm_kernel_has(atom ? "cpu_atom" : "cpu_core");
		}
		return pfm_kernel_core_pmu();
	}
	if (pfm_kernel_has(pi->name))
		return true;
	if (strstr(pi->name, "rapl"))
		return pfm_kernel_has("power");
	const char *unc = strstr(pi->name, "unc_");
	if (unc) {
		char prefix[64], digits[16];
		const char *box = unc + 4;
		size_t n = strlen(box), nd = 0;
		while (nd < n && box[n - nd - 1] >= '0' && box[n - nd - 1] <= '9')
			nd++;
		if (n - nd == 0 || nd >= sizeof digits)
			return false;
		snprintf(prefix, sizeof prefix, "uncore_%.*s", (int)(n - nd), box);
		memcpy(digits, box + n - nd, nd);
		digits[nd] = '\0';
		return pfm_kernel_has_prefix(prefix, digits);
	}
	const char *last = strrchr(pi->name, '_');
	if (last && strncmp(pi->name, "amd64_", 6) == 0) {
		char kname[64];
		snprintf(kname, sizeof kname, "amd_%s", last + 1);
		return pfm_kernel_has(kname);
	}
	return false;
}

struct pfm_lister {
	event_list_fn fn;
	void *arg;
	char *name;
	size_t cap;
};

static int pfm_emit(struct pfm_lister *l, const char *pmu, const char *ev, const char *umask,
		    const char *desc, bool usable)
{
	size_t need = strlen(pmu) + strlen(ev) + (umask ? strlen(umask) + 1 : 0) + 3;
	if (need > l->cap) {
		char *p = realloc(l->name, need);
		if (!p)
			return -ENOMEM;
		l->name = p;
		l->cap = need;
	}
	snprintf(l->name, l->cap, "%s::%s%s%s", pmu, ev, umask ? ":" : "", umask ? umask : "");
	struct event_info info = {l->name, desc ? desc : "", pmu, usable};
	return l->fn(l->arg, &info);
}

/* One event's usability: for libpfm4's OS-generic PMUs (perf, perf_raw) the
 * event maps to a kernel generic event, so trust the open; otherwise the
 * PMU decides. */
static bool pfm_event_usable(const pfm_pmu_info_t *pi, bool pmu_usable, const char *ev)
{
	if (pi->type != PFM_PMU_TYPE_OS_GENERIC)
		return pmu_usable;
	char name[256];
	snprintf(name, sizeof name, "%s::%s", pi->name, ev);
	struct perf_event_attr attr;
	if (pfm_try(name, PFM_PLM3, &attr) != PFM_SUCCESS)
		return false;
	return evtable_usable(attr.type, attr.config);
}

static int pfm_list_pmu(struct pfm_lister *l, const pfm_pmu_info_t *pi)
{
	bool pmu_usable = pfm_pmu_usable(pi);
	for (int i = pi->first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t ei;
		if (!pfm_event_info(i, &ei))
			continue;
		bool usable = pfm_event_usable(pi, pmu_usable, ei.name);
		int r = pfm_emit(l, pi->name, ei.name, NULL, ei.desc, usable);
		if (r)
			return r;
		for (int a = 0; a < ei.nattrs; a++) {
			pfm_event_attr_info_t ai;
			memset(&ai, 0, sizeof ai);
			ai.size = sizeof ai;
			if (pfm_get_event_attr_info(i, a, PFM_OS_PERF_EVENT_EXT, &ai) !=
				    PFM_SUCCESS ||
			    ai.type != PFM_ATTR_UMASK)
				continue;
			r = pfm_emit(l, pi->name, ei.name, ai.name, ai.desc ? ai.desc : ei.desc,
				     usable);
			if (r)
				return r;
		}
	}
	return 0;
}

int pfm_list(event_list_fn fn, void *arg, char **cause)
{
	int r = pfm_setup(cause);
	if (r)
		return r;
	struct pfm_lister l = {fn, arg, NULL, 0};
	pfm_pmu_t pmu;
	pfm_for_all_pmus(pmu)
	{
		pfm_pmu_info_t pi;
		if (!pfm_pmu_info(pmu, &pi))
			continue;
		r = pfm_list_pmu(&l, &pi);
		if (r)
			break;
	}
	free(l.name);
	return r;
}
