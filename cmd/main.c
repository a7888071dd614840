/* main.c: spanstat's command line: parse options, check them, open the
 * outputs, run the session, and turn failures into one line on stderr with
 * a documented exit status.  Everything else lives in lib/. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "events.h"
#include "launch.h"
#include "options.h"
#include "outfile.h"
#include "session.h"
#include "writer.h"

enum { EXIT_SPANSTAT = SESSION_EXIT_ERROR };

enum out_kind { OUT_SUMMARY, OUT_FOLDED, OUT_JSON, OUT_PERFETTO, OUT_MAX };

struct cli {
	struct evlist evl;
	unsigned runs, interval_ms;
	const char *sep;
	const char *path[OUT_MAX]; /* OUT_SUMMARY: -o FILE or NULL for stderr */
	bool append, spans_table, spans_location, folded_threads, list;
	enum demangle_mode demangle;
	struct outfile out[OUT_MAX];
	struct writer w[OUT_MAX];
	struct writer *wv[OUT_MAX];
	size_t nw;
};

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("spanstat: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_SPANSTAT);
}

/* A whole number in [min, max], or die naming the option. */
static unsigned parse_count(const char *opt, const char *s, unsigned min, unsigned max,
			    const char *why)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < min || v > max)
		die("invalid %s '%s': %s", opt, s, why);
	return (unsigned)v;
}

static int list_one(void *arg, const struct event_info *ei)
{
	FILE *fp = arg;
	fprintf(fp, "  %-44s %-10s %s%s\n", ei->name, ei->kind, ei->desc ? ei->desc : "",
		ei->usable ? "" : " (not supported here)");
	return 0;
}

static int do_list(const char *pattern)
{
	char *cause = NULL;
	if (events_list(pattern, list_one, stdout, &cause) < 0)
		die("cannot list events: %s", cause ? cause : "unknown error");
	if (fflush(stdout) != 0)
		die("cannot write the event list: %s", strerror(errno));
	return 0;
}

static void parse(struct cli *c, int argc, char **argv)
{
	char *so;
	void *lo;
	char *cause = NULL;

	if (options_getopt(&so, &lo) < 0)
		die("out of memory");
	opterr = 0;
	for (;;) {
		int idx = -1;
		int id = getopt_long(argc, argv, so, lo, &idx);
		if (id < 0)
			break;
		switch (id) {
		case OPT_EVENT:
			if (evlist_parse(&c->evl, optarg, &cause) < 0)
				die("%s", cause ? cause : "invalid event list");
			break;
		case OPT_REPEAT:
			c->runs = parse_count("--repeat", optarg, 1, 1000000,
					      "expected a whole number of runs, at least 1");
			break;
		case OPT_INTERVAL:
			c->interval_ms = parse_count("--interval-print", optarg, 10, 86400000,
						     "expected milliseconds, at least 10");
			break;
		case OPT_SEPARATOR:
			if (!*optarg)
				die("invalid --field-separator '': expected a separator");
			c->sep = optarg;
			break;
		case OPT_OUTPUT:
			c->path[OUT_SUMMARY] = optarg;
			break;
		case OPT_APPEND:
			c->append = true;
			break;
		case OPT_SPANS:
			c->spans_table = true;
			if (optarg && strcmp(optarg, "location") != 0)
				die("invalid --spans '%s': expected --spans or --spans=location",
				    optarg);
			c->spans_location = optarg != NULL;
			break;
		case OPT_DEMANGLE:
			if (demangle_mode_parse(optarg, &c->demangle) < 0)
				die("invalid --demangle '%s': expected simple, full or no", optarg);
			break;
		case OPT_FOLDED:
			c->path[OUT_FOLDED] = optarg;
			break;
		case OPT_FOLDED_THREADS:
			c->folded_threads = true;
			break;
		case OPT_JSON:
			c->path[OUT_JSON] = optarg;
			break;
		case OPT_PERFETTO:
			c->path[OUT_PERFETTO] = optarg;
			break;
		case OPT_LIST:
			c->list = true;
			break;
		case OPT_HELP:
			options_help(stdout);
			exit(fflush(stdout) ? EXIT_SPANSTAT : 0);
		case OPT_VERSION:
			printf("spanstat %s\n", PACKAGE_VERSION);
			exit(fflush(stdout) ? EXIT_SPANSTAT : 0);
		case ':':
			die("option '%s' needs an argument", argv[optind - 1]);
		default:
			for (const struct opt_def *o = options_table; optopt >= 256 && o->name; o++)
				if (o->id == optopt)
					die("option '--%s' takes no argument", o->name);
			if (optopt && optopt < 256)
				die("unknown option '-%c' (see 'spanstat --help')", optopt);
			die("unknown option '%s' (see 'spanstat --help')", argv[optind - 1]);
		}
	}
	free(so);
	free(lo);
}

/* Checks what only makes sense together, before anything is created. */
static void check(struct cli *c, int nargs)
{
	if (c->append && !c->path[OUT_SUMMARY])
		die("--append needs --output FILE");
	if (c->folded_threads && !c->path[OUT_FOLDED])
		die("--folded-threads needs --folded FILE");
	const char *stdout_user = NULL;
	static const char *const optname[OUT_MAX] = {"--output", "--folded", "--json",
						     "--perfetto"};
	for (int k = 0; k < OUT_MAX; k++) {
		if (!c->path[k] || strcmp(c->path[k], "-") != 0)
			continue;
		if (stdout_user)
			die("%s and %s cannot both write to standard output", stdout_user,
			    optname[k]);
		stdout_user = optname[k];
	}
	for (int a = 0; a < OUT_MAX; a++)
		for (int b = a + 1; b < OUT_MAX; b++)
			if (c->path[a] && c->path[b] && strcmp(c->path[a], "-") != 0 &&
			    strcmp(c->path[a], c->path[b]) == 0)
				die("%s and %s name the same file '%s'", optname[a], optname[b],
				    c->path[a]);
	if (nargs == 0)
		die("missing COMMAND (see 'spanstat --help')");
}

static void add_writer(struct cli *c, enum out_kind k, const struct writer_ops *ops, FILE *fp)
{
	struct writer *w = &c->w[k];
	memset(w, 0, sizeof *w);
	w->ops = ops;
	w->fp = fp;
	w->opts.csv_sep = c->sep;
	w->opts.spans_table = c->spans_table;
	w->opts.spans_location = c->spans_location;
	w->opts.folded_threads = c->folded_threads;
	c->wv[c->nw++] = w;
}

static void release_writers(struct cli *c)
{
	for (size_t i = 0; i < c->nw; i++)
		if (c->wv[i]->ops->release)
			c->wv[i]->ops->release(c->wv[i]);
	c->nw = 0;
}

static void abort_outputs(struct cli *c)
{
	release_writers(c);
	for (int k = 0; k < OUT_MAX; k++)
		outfile_abort(&c->out[k]);
}

/* Creates every output now, so a bad path fails before the target starts. */
static void open_outputs(struct cli *c)
{
	static const struct writer_ops *const ops[OUT_MAX] = {
		NULL, &folded_writer_ops, &json_writer_ops, &perfetto_writer_ops};
	char *cause = NULL;

	for (int k = 0; k < OUT_MAX; k++) {
		if (!c->path[k])
			continue;
		if (outfile_open(&c->out[k], c->path[k], k == OUT_SUMMARY && c->append, &cause) <
		    0) {
			abort_outputs(c);
			die("%s", cause ? cause : "cannot open an output file");
		}
	}
	FILE *sfp = c->path[OUT_SUMMARY] ? c->out[OUT_SUMMARY].fp : stderr;
	add_writer(c, OUT_SUMMARY, c->sep ? &csv_writer_ops : &summary_writer_ops, sfp);
	for (int k = OUT_FOLDED; k < OUT_MAX; k++)
		if (c->path[k])
			add_writer(c, k, ops[k], c->out[k].fp);
}

int main(int argc, char **argv)
{
	struct cli c;
	char *cause = NULL;

	memset(&c, 0, sizeof c);
	c.runs = 1;
	evlist_init(&c.evl);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout is an error we report */
	parse(&c, argc, argv);
	if (c.list) {
		if (argc - optind > 1)
			die("--list takes at most one PATTERN");
		return do_list(optind < argc ? argv[optind] : NULL);
	}
	check(&c, argc - optind);
	if (c.evl.n == 0 && evlist_add_defaults(&c.evl, &cause) < 0)
		die("%s", cause ? cause : "cannot set up the default events");
	/* Any span output turns collection on; --json then includes spans. */
	bool spans = c.spans_table || c.path[OUT_FOLDED] || c.path[OUT_PERFETTO];
	char *preload = NULL;
	if (spans && !(preload = launch_preload_path()))
		die("cannot find the span library libspanstat.so.0 (is spanstat installed?)");
	open_outputs(&c);

	struct session_opts so = {
		.argc = argc - optind,
		.argv = argv + optind,
		.evl = &c.evl,
		.runs = c.runs,
		.interval_ms = c.interval_ms,
		.spans = spans,
		.preload = preload,
		.demangle = c.demangle,
		.writers = c.wv,
		.nwriters = c.nw,
	};
	int code;
	if (session_run(&so, &code, &cause) < 0) {
		abort_outputs(&c);
		fprintf(stderr, "spanstat: %s\n", cause ? cause : "failed");
		free(cause);
		free(preload);
		evlist_release(&c.evl);
		return code;
	}
	for (int k = 0; k < OUT_MAX; k++) {
		char *why = NULL;
		if (outfile_commit(&c.out[k], &why) < 0) {
			fprintf(stderr, "spanstat: %s\n", why ? why : "cannot write output");
			free(why);
			abort_outputs(&c);
			/* the target's failure outranks ours */
			code = code ? code : EXIT_SPANSTAT;
		}
	}
	release_writers(&c);
	if (!c.path[OUT_SUMMARY] && fflush(stderr) != 0)
		code = code ? code : EXIT_SPANSTAT;
	free(preload);
	free(cause);
	evlist_release(&c.evl);
	return code;
}
