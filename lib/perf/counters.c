/* counters.c: opens the event list on a stopped child with perf_event_open
 * and reads it back (see counters.h).
 *
 * Every event is opened with inherit=1 (threads and children of the target
 * count too) and TOTAL_TIME_ENABLED/RUNNING|ID.  The first event of each
 * group that opens is its leader: disabled, enable_on_exec, so counting
 * starts at the target's exec and nothing of spanstat is counted; the others
 * join it through group_fd.  When a group's first event cannot be opened, the
 * next one that can becomes the leader, so a group with an unsupported
 * member still counts the rest together.  Groups of more than one event are
 * read with PERF_FORMAT_GROUP when the kernel takes it together with inherit
 * (older kernels answer EINVAL); otherwise every fd is read on its own.
 *
 * Failures: EACCES/EPERM are retried as perf does, without kernel and
 * hypervisor counting, when perf_event_paranoid > 1 forbids them and the
 * event also counts user space; the count is then flagged user_only.  Any
 * other error (ENOENT, EOPNOTSUPP, EINVAL, ENODEV ...) marks just that event
 * not supported.  Fatal are running out of fds or memory, a vanished pid, and
 * a permission refusal when it left nothing that could be counted.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cause.h"
#include "cgroup.h"
#include "counters.h"
#include "perfev.h"
#include "uprobe.h"

#define COUNTERS_RF_BASE \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

static size_t counters_group_size(const struct evlist *evl, int group)
{
	size_t n = 0;

	for (size_t i = 0; i < evl->n; i++)
		n += evl->ev[i].group == group;
	return n;
}

/* Whether event i is read through its leader's PERF_FORMAT_GROUP read. */
static bool counters_grouped(const struct counters *cs, size_t i)
{
	return cs->group_read && counters_group_size(cs->evl, cs->evl->ev[i].group) > 1;
}

/* What perf_event_paranoid allows, in words. */
static const char *counters_paranoid_meaning(int p)
{
	if (p == INT_MIN)
		return "unknown";
	if (p >= 3)
		return "no counting at all without CAP_PERFMON";
	if (p == 2)
		return "user space only without CAP_PERFMON";
	if (p >= 0)
		return "user and kernel space of your own processes";
	return "no restrictions";
}

static char *counters_eacces_cause(const struct event *ev, int err, int paranoid)
{
	char *msg = NULL, value[16];
	int want = ev->attr.exclude_user ? 1 : 2;

	if (paranoid == INT_MIN)
		snprintf(value, sizeof(value), "unreadable");
	else
		snprintf(value, sizeof(value), "%d", paranoid);
	if (paranoid != INT_MIN && paranoid <= want) {
		/* the sysctl is not what refused it */
		if (asprintf(&msg,
			     "cannot open event '%s': %s (perf_event_paranoid is %s: %s)\n"
			     "hint: the target may belong to another user, or a security module "
			     "refused it; root or CAP_PERFMON can count it",
			     ev->name, strerror(err), value,
			     counters_paranoid_meaning(paranoid)) < 0)
			msg = NULL;
		return msg;
	}
	if (asprintf(
		    &msg,
		    "no permission to count '%s' (/proc/sys/kernel/perf_event_paranoid is %s: %s)\n"
		    "hint: run as root or with CAP_PERFMON, or allow it for everyone with "
		    "'sysctl -w kernel.perf_event_paranoid=%d'%s",
		    ev->name, value, counters_paranoid_meaning(paranoid), want,
		    want == 2 ? " (user space; 1 adds the kernel)" : " (user and kernel space)") <
	    0)
		msg = NULL;
	return msg;
}

/* Index of the open leader of event i's group, or -1 when i leads. */
static int counters_leader_of(const struct counters *cs, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (cs->evl->ev[j].group == cs->evl->ev[i].group && cs->c[j].fd >= 0)
			return (int)j;
	return -1;
}

/* Opens event i at `at`; returns the fd or -errno (after the paranoid
 * fallback). */
static int counters_open_one(struct counters *cs, size_t i, const struct counters_at *at,
			     int paranoid)
{
	const struct event *ev = &cs->evl->ev[i];
	struct counter *c = &cs->c[i];
	struct perf_event_attr attr = ev->attr;
	int lead = counters_leader_of(cs, i), fd;

	attr.size = sizeof(attr);
	attr.inherit = cs->inherit;
	if (cs->probe && cs->probe[i].err <= 0) {
		/* an inherited uprobe PMU event would fail the target's forks */
		if (cs->probe[i].err < 0)
			return -EOPNOTSUPP;
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = cs->probe[i].id;
		attr.config1 = attr.config2 = 0;
	}
	attr.read_format = COUNTERS_RF_BASE | (counters_grouped(cs, i) ? PERF_FORMAT_GROUP : 0);
	attr.disabled = lead < 0 && (cs->on_exec || cs->held);
	attr.enable_on_exec = lead < 0 && cs->on_exec;
	c->leader = lead < 0 ? (int)i : lead;
	c->user_only = false;
	if (cs->cgfd && cs->cgfd[i] >= 0)
		return perfev_open_cgroup(&attr, cs->cgfd[i], at->cpu,
					  lead < 0 ? -1 : cs->c[lead].fd);
	fd = perfev_open_cpu(&attr, at->pid, at->cpu, lead < 0 ? -1 : cs->c[lead].fd);
	if ((fd == -EACCES || fd == -EPERM) && paranoid > 1 && !attr.exclude_user &&
	    !attr.exclude_kernel) {
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		int fd2 = perfev_open_cpu(&attr, at->pid, at->cpu, lead < 0 ? -1 : cs->c[lead].fd);
		if (fd2 >= 0) {
			c->user_only = true;
			fd = fd2;
		}
	}
	return fd;
}

static void counters_close_fds(struct counters *cs)
{
	for (size_t i = 0; cs->all && i < cs->nat * cs->evl->n; i++) {
		if (cs->all[i].fd >= 0)
			close(cs->all[i].fd);
		cs->all[i].fd = -1;
	}
}

/* Makes set k the one opened and read. */
static void counters_set(struct counters *cs, size_t k)
{
	cs->c = cs->all + k * cs->evl->n;
}

static bool counters_fatal(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == ESRCH;
}

/* One pass over the list.  Returns 0, -EAGAIN to start over without group
 * reads, or a fatal -errno with *cause. */
static int counters_open_pass(struct counters *cs, const struct counters_at *at, int paranoid,
			      char **cause)
{
	const struct evlist *evl = cs->evl;
	int refused = -1, nopen = 0;

	for (size_t i = 0; i < evl->n; i++) {
		struct counter *c = &cs->c[i];
		if (event_is_tool(&evl->ev[i])) { /* measured, not opened */
			c->fd = -1;
			c->err = 0;
			continue;
		}
		int fd = counters_open_one(cs, i, at, paranoid);

		if (fd == -EINVAL && counters_grouped(cs, i) && c->leader == (int)i) {
			/* inherit with PERF_FORMAT_GROUP (rejected before Linux 6.x)? */
			cs->group_read = false;
			fd = counters_open_one(cs, i, at, paranoid);
			if (fd >= 0) {
				close(fd);
				return -EAGAIN;
			}
			cs->group_read = true;
		}
		if (fd < 0) {
			c->fd = -1;
			c->err = -fd;
			if (counters_fatal(-fd)) {
				if (cause && asprintf(cause, "cannot open event '%s': %s",
						      evl->ev[i].name, strerror(-fd)) < 0)
					*cause = NULL;
				return fd;
			}
			if ((fd == -EACCES || fd == -EPERM) && refused < 0)
				refused = (int)i;
			continue;
		}
		c->fd = fd;
		c->err = 0;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id) < 0) {
			/* kernels before 3.12: the id comes with the first read */
			c->id = 0;
		}
		nopen++;
	}
	if (nopen == 0 && refused >= 0) {
		if (cause)
			*cause = counters_eacces_cause(&evl->ev[refused], cs->c[refused].err,
						       paranoid);
		return -cs->c[refused].err;
	}
	return 0;
}

/* Every set, each pass from the first; sets whose task is gone are left
 * empty (attach), unless none is left. */
static int counters_open_sets(struct counters *cs, int paranoid, char **cause)
{
	size_t alive = 0;
	bool gone = false;
	int err = 0;
	for (size_t k = 0; k < cs->nat && err >= 0; k++) {
		counters_set(cs, k);
		char *why = NULL;
		err = counters_open_pass(cs, &cs->at[k], paranoid, &why);
		if (err == -ESRCH && !cs->on_exec) { /* a task that ended meanwhile */
			free(why);
			for (size_t i = 0; i < cs->evl->n; i++) {
				if (cs->c[i].fd >= 0)
					close(cs->c[i].fd);
				cs->c[i].fd = -1;
			}
			cs->gone[k] = true;
			gone = true;
			err = 0;
			continue;
		}
		if (err < 0 && cause)
			*cause = why;
		else
			free(why);
		alive += err >= 0;
	}
	if (err >= 0 && !alive && gone) {
		cause_set(cause, -ESRCH, "%s", "it exited before it could be counted");
		return -ESRCH;
	}
	return err;
}

/* Makes the uprobes of the list in tracefs, for counting with inherit
 * (uprobe_tracefs_add says why); one that cannot be made is not supported. */
static int counters_probes(struct counters *cs)
{
	const struct evlist *evl = cs->evl;
	bool any = false;
	for (size_t i = 0; i < evl->n; i++)
		any |= evl->ev[i].probe_path != NULL;
	if (!any)
		return 0;
	cs->probe = calloc(evl->n, sizeof *cs->probe);
	if (!cs->probe)
		return -ENOMEM;
	for (size_t i = 0; i < evl->n; i++) {
		struct counters_probe *p = &cs->probe[i];
		p->err = evl->ev[i].probe_path
				 ? uprobe_tracefs_add(&evl->ev[i].attr, evl->ev[i].probe_path,
						      p->name, sizeof p->name, &p->id)
				 : 1;
		if (p->err == 0 && !p->id)
			p->err = -EINVAL;
	}
	return 0;
}

static int counters_open_common(struct counters *cs, const struct evlist *evl,
				const struct counters_at *at, size_t n, bool inherit, bool on_exec,
				char **cause)
{
	size_t maxgroup = 1;
	int paranoid = perfev_paranoid(), err;

	memset(cs, 0, sizeof(*cs));
	cs->evl = evl;
	cs->nat = n ? n : 1;
	cs->inherit = inherit;
	cs->on_exec = on_exec;
	cs->held = !on_exec;
	cs->all = calloc(cs->nat * (evl->n ? evl->n : 1), sizeof(*cs->all));
	cs->at = calloc(cs->nat, sizeof(*cs->at));
	cs->gone = calloc(cs->nat, sizeof(*cs->gone));
	cs->tmp = calloc(evl->n ? evl->n : 1, sizeof(*cs->tmp));
	for (size_t i = 0; i < evl->n; i++) {
		size_t g = counters_group_size(evl, evl->ev[i].group);
		if (g > maxgroup)
			maxgroup = g;
	}
	cs->nbuf = 3 + 2 * maxgroup;
	cs->buf = calloc(cs->nbuf, sizeof(*cs->buf));
	if (!cs->all || !cs->at || !cs->gone || !cs->tmp || !cs->buf) {
		counters_close(cs);
		return -ENOMEM;
	}
	memcpy(cs->at, at, cs->nat * sizeof(*at));
	for (size_t i = 0; i < cs->nat * evl->n; i++)
		cs->all[i].fd = -1;
	if (cgroup_any(evl)) {
		for (size_t k = 0; k < cs->nat; k++)
			if (cs->at[k].pid != -1 || cs->at[k].cpu < 0) {
				counters_close(cs);
				return cause_set(cause, -EINVAL, "%s",
						 "cgroups are counted system-wide only (-a or -C)");
			}
		if (!(cs->cgfd = malloc(evl->n * sizeof(*cs->cgfd)))) {
			counters_close(cs);
			return -ENOMEM;
		}
		for (size_t i = 0; i < evl->n; i++)
			cs->cgfd[i] = -1;
		for (size_t i = 0; i < evl->n; i++) {
			int fd = evl->ev[i].cgroup ? cgroup_open(evl->ev[i].cgroup, cause) : -1;
			if (evl->ev[i].cgroup && fd < 0) {
				counters_close(cs);
				return fd;
			}
			cs->cgfd[i] = fd;
		}
	}
	if (inherit && counters_probes(cs) < 0) {
		counters_close(cs);
		return -ENOMEM;
	}
	cs->group_read = true;
	err = counters_open_sets(cs, paranoid, cause);
	if (err == -EAGAIN) {
		counters_close_fds(cs);
		memset(cs->gone, 0, cs->nat * sizeof(*cs->gone));
		err = counters_open_sets(cs, paranoid, cause);
	}
	if (err < 0)
		counters_close(cs);
	return err;
}

int counters_open_at(struct counters *cs, const struct evlist *evl, const struct counters_at *at,
		     size_t n, bool inherit, char **cause)
{
	return counters_open_common(cs, evl, at, n, inherit, false, cause);
}

static void counters_ioctl(struct counters *cs, unsigned long req)
{
	for (size_t k = 0; k < cs->nat; k++)
		for (size_t i = 0; i < cs->evl->n; i++) {
			const struct counter *c = &cs->all[k * cs->evl->n + i];
			if (c->fd >= 0 && c->leader == (int)i)
				ioctl(c->fd, req, PERF_IOC_FLAG_GROUP);
		}
}

void counters_enable(struct counters *cs)
{
	counters_ioctl(cs, PERF_EVENT_IOC_ENABLE);
}

void counters_disable(struct counters *cs)
{
	counters_ioctl(cs, PERF_EVENT_IOC_DISABLE);
}

int counters_open(struct counters *cs, const struct evlist *evl, pid_t pid, char **cause)
{
	struct counters_at at = {pid, -1};
	return counters_open_common(cs, evl, &at, 1, true, true, cause);
}

int counters_open_held(struct counters *cs, const struct evlist *evl, pid_t pid, char **cause)
{
	struct counters_at at = {pid, -1};
	return counters_open_common(cs, evl, &at, 1, true, false, cause);
}

/* Raw totals (raw/enabled/running, state OK or NOT_SUPPORTED) into out. */
static void counters_fetch(struct counters *cs, struct count *out)
{
	const struct evlist *evl = cs->evl;

	for (size_t i = 0; i < evl->n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].user_only = cs->c[i].user_only;
		if (cs->c[i].fd < 0 && !event_is_tool(&evl->ev[i])) {
			out[i].state = COUNT_NOT_SUPPORTED;
			out[i].err = cs->c[i].err;
		}
	}
	for (size_t i = 0; i < evl->n; i++) {
		struct counter *c = &cs->c[i];
		uint64_t *b = cs->buf;
		ssize_t n;

		if (c->fd < 0)
			continue;
		if (!counters_grouped(cs, i)) {
			n = read(c->fd, b, 4 * sizeof(*b));
			if (n < (ssize_t)(3 * sizeof(*b))) {
				out[i].err = n < 0 ? errno : EIO;
				continue;
			}
			out[i].raw = b[0];
			out[i].enabled = b[1];
			out[i].running = b[2];
			continue;
		}
		if (c->leader != (int)i)
			continue; /* filled from its leader's read */
		n = read(c->fd, b, cs->nbuf * sizeof(*b));
		if (n < (ssize_t)(3 * sizeof(*b)))
			continue;
		for (uint64_t k = 0; k < b[0] && 3 + 2 * k + 1 < (uint64_t)n / sizeof(*b); k++) {
			uint64_t value = b[3 + 2 * k], id = b[3 + 2 * k + 1];
			for (size_t j = i; j < evl->n; j++) {
				if (cs->c[j].fd >= 0 && cs->c[j].leader == (int)i &&
				    cs->c[j].id == id) {
					out[j].raw = value;
					out[j].enabled = b[1];
					out[j].running = b[2];
					break;
				}
			}
		}
	}
}

/* Sets state and value from raw/enabled/running. */
static void counters_scale(const struct event *ev, struct count *c)
{
	double v = (double)c->raw;

	if (c->state == COUNT_NOT_SUPPORTED)
		return;
	if (c->running == 0) {
		c->state = COUNT_NOT_COUNTED;
		c->value = 0;
		return;
	}
	c->state = COUNT_OK;
	if (c->running < c->enabled)
		v = v * (double)c->enabled / (double)c->running;
	c->value = v * (ev->scale != 0 ? ev->scale : 1.0);
}

/* Adds set counts a into the totals o: counted somewhere is counted. */
static void counters_add(struct count *o, const struct count *a, bool first)
{
	if (first) {
		*o = *a;
		return;
	}
	if (a->state != COUNT_NOT_SUPPORTED) {
		if (o->state == COUNT_NOT_SUPPORTED)
			o->err = 0;
		o->state = a->state;
	}
	o->raw += a->raw;
	o->enabled += a->enabled;
	o->running += a->running;
	o->user_only |= a->user_only;
}

static uint64_t counters_sub(uint64_t now, uint64_t prev)
{
	return now > prev ? now - prev : 0;
}

/* Set k's counts into cs->tmp: totals, or (delta) what came since the
 * previous delta read. */
static void counters_fetch_set(struct counters *cs, size_t k, bool delta)
{
	counters_set(cs, k);
	counters_fetch(cs, cs->tmp);
	for (size_t i = 0; delta && i < cs->evl->n; i++) {
		struct counter *c = &cs->c[i];
		struct count *o = &cs->tmp[i];
		if (o->state == COUNT_NOT_SUPPORTED)
			continue;
		uint64_t raw = o->raw, ena = o->enabled, run = o->running;
		o->raw = counters_sub(raw, c->prev_raw);
		o->enabled = counters_sub(ena, c->prev_enabled);
		o->running = counters_sub(run, c->prev_running);
		c->prev_raw = raw;
		c->prev_enabled = ena;
		c->prev_running = run;
	}
}

/* Every set read once, added into the totals out and, with units, into
 * its unit's row of units (unit_of[k]; nunits rows of evl->n).  Sets whose
 * task ended before it could be counted add nothing; a unit with nothing
 * added is <not counted>. */
static int counters_collect(struct counters *cs, bool delta, struct count *out,
			    const size_t *unit_of, size_t nunits, struct count *units)
{
	const size_t n = cs->evl->n;
	bool *seen = NULL;
	if (!cs->all)
		return -EBADF;
	if (units && !(seen = calloc(nunits ? nunits : 1, sizeof *seen)))
		return -ENOMEM;
	bool first = true;
	for (size_t k = 0; k < cs->nat; k++) {
		if (cs->gone[k] && !(first && k + 1 == cs->nat))
			continue;
		counters_fetch_set(cs, k, delta);
		for (size_t i = 0; i < n; i++)
			counters_add(&out[i], &cs->tmp[i], first);
		first = false;
		size_t u = units ? unit_of[k] : 0;
		if (!units || u >= nunits || cs->gone[k])
			continue;
		for (size_t i = 0; i < n; i++)
			counters_add(&units[u * n + i], &cs->tmp[i], !seen[u]);
		seen[u] = true;
	}
	for (size_t i = 0; i < n; i++)
		counters_scale(&cs->evl->ev[i], &out[i]);
	for (size_t u = 0; units && u < nunits; u++)
		for (size_t i = 0; i < n; i++) {
			struct count *c = &units[u * n + i];
			if (!seen[u])
				*c = (struct count){.state = COUNT_NOT_COUNTED};
			else
				counters_scale(&cs->evl->ev[i], c);
		}
	free(seen);
	return 0;
}

int counters_read(struct counters *cs, struct count *out)
{
	return counters_collect(cs, false, out, NULL, 0, NULL);
}

int counters_delta(struct counters *cs, struct count *out)
{
	return counters_collect(cs, true, out, NULL, 0, NULL);
}

int counters_read_units(struct counters *cs, struct count *out, const size_t *unit_of,
			size_t nunits, struct count *units)
{
	return counters_collect(cs, false, out, unit_of, nunits, units);
}

int counters_delta_units(struct counters *cs, struct count *out, const size_t *unit_of,
			 size_t nunits, struct count *units)
{
	return counters_collect(cs, true, out, unit_of, nunits, units);
}

void counters_tools(const struct evlist *evl, struct count *out, uint64_t duration_ns,
		    uint64_t user_ns, uint64_t system_ns)
{
	for (size_t i = 0; i < evl->n; i++) {
		if (!event_is_tool(&evl->ev[i]))
			continue;
		uint64_t v = evl->ev[i].attr.config == EVENT_TOOL_DURATION ? duration_ns
			     : evl->ev[i].attr.config == EVENT_TOOL_USER   ? user_ns
									   : system_ns;
		memset(&out[i], 0, sizeof out[i]);
		out[i].raw = out[i].enabled = out[i].running = v;
		counters_scale(&evl->ev[i], &out[i]);
	}
}

void counters_tools_units(const struct evlist *evl, const struct count *out, struct count *units,
			  size_t nunits)
{
	for (size_t i = 0; i < evl->n; i++) {
		if (!event_is_tool(&evl->ev[i]))
			continue;
		for (size_t u = 0; u < nunits; u++)
			units[u * evl->n + i] =
				u ? (struct count){.state = COUNT_NOT_COUNTED} : out[i];
	}
}

void counters_close(struct counters *cs)
{
	counters_close_fds(cs);
	for (size_t i = 0; cs->probe && i < cs->evl->n; i++)
		if (cs->probe[i].err == 0)
			uprobe_tracefs_del(cs->probe[i].name);
	free(cs->probe);
	cs->probe = NULL;
	for (size_t i = 0; cs->cgfd && i < cs->evl->n; i++)
		if (cs->cgfd[i] >= 0)
			close(cs->cgfd[i]);
	free(cs->cgfd);
	cs->cgfd = NULL;
	free(cs->all);
	free(cs->at);
	free(cs->gone);
	free(cs->tmp);
	free(cs->buf);
	cs->c = cs->all = NULL;
	cs->at = NULL;
	cs->gone = NULL;
	cs->tmp = NULL;
	cs->buf = NULL;
	cs->nbuf = 0;
	cs->nat = 0;
}
