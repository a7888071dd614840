/* test_folded.c: the folded-stacks writer (lib/out/folded.c): every line checked
 * against the grammar `frame(;frame)* VALUE`, escaping (and that it reverses),
 * exact lines for known stacks, sorting, and thread/process root frames. */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spantree.h"
#include "strtab.h"
#include "tap.h"
#include "writer.h"

static struct strtab names;
static uint32_t n_main, n_work, n_semi, n_pct, n_ctl, n_utf, n_proc, n_thr;

static void span(struct span_trees *st, uint32_t pid, uint32_t tid, uint32_t depth, uint32_t name,
		 uint64_t b, uint64_t e, int open_only)
{
	struct span_event ev = {
		.kind = SPAN_BEGIN, .pid = pid, .tid = tid, .ts = b, .name = name, .depth = depth};
	if (open_only != 2)
		span_trees_event(st, &ev);
	if (open_only == 1)
		return;
	ev.kind = SPAN_END;
	ev.ts = e;
	ev.begin_ts = b;
	span_trees_event(st, &ev);
}

/* Writes st through folded_writer_ops into a string (caller frees). */
static char *write_folded(const struct span_trees *st, int threads, int *rc)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	struct run_head h = {.strings = &names, .spans = true};
	struct report r = {.head = &h, .spans = st};
	struct writer w = {.ops = &folded_writer_ops, .fp = fp, .head = &h};
	w.opts.folded_threads = threads;
	*rc = w.ops->finish(&w, &r);
	fclose(fp);
	return out;
}

/* The grammar, as flame graph tools read it: each line split at its LAST
 * space into the stack and a decimal VALUE > 0; the stack is frames of bytes
 * other than ';' and control characters (spaces allowed), joined by ';'. */
static int grammar_ok(const char *text, int *nlines)
{
	*nlines = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			return 0;
		const char *sp = memrchr(p, ' ', (size_t)(nl - p));
		if (!sp || sp == p)
			return 0;
		int frame_len = 0;
		for (const char *q = p; q < sp; q++) {
			unsigned char c = (unsigned char)*q;
			if (c == ';') {
				if (!frame_len)
					return 0;
				frame_len = 0;
			} else if (c < 0x20 || c == 0x7f) {
				return 0;
			} else {
				frame_len++;
			}
		}
		if (!frame_len || sp + 1 == nl || sp[1] == '0')
			return 0;
		for (const char *q = sp + 1; q < nl; q++)
			if (!isdigit((unsigned char)*q))
				return 0;
		(*nlines)++;
		p = nl + 1;
	}
	return 1;
}

static int sorted(const char *text)
{
	const char *prev = NULL;
	size_t prevlen = 0;
	for (const char *p = text; *p;) {
		const char *sp = memrchr(p, ' ', (size_t)(strchr(p, '\n') - p));
		size_t l = (size_t)(sp - p);
		if (prev) {
			int c = memcmp(prev, p, l < prevlen ? l : prevlen);
			if (c > 0 || (c == 0 && prevlen > l))
				return 0;
		}
		prev = p;
		prevlen = l;
		p = strchr(p, '\n') + 1;
	}
	return 1;
}

/* Percent-decoding of one frame, to check the escape reverses. */
static void unescape(const char *f, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (f[i] == '%' && i + 2 < n + 1) {
			char hex[3] = {f[i + 1], f[i + 2], 0};
			out[o++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			out[o++] = f[i];
		}
	}
	out[o] = '\0';
}

static void build(struct span_trees *st)
{
	span_trees_init(st);
	struct span_event p = {.kind = SPAN_PROCESS, .pid = 10, .name = n_proc, .value = 1};
	span_trees_event(st, &p);
	struct span_event t = {.kind = SPAN_THREAD, .pid = 10, .tid = 11, .name = n_thr};
	span_trees_event(st, &t);
	/* thread 10: main[0,1000]{ do work[100,400]{a;b[150,250]} 100%[500,600] } */
	span(st, 10, 10, 0, n_main, 0, 1000, 1);
	span(st, 10, 10, 1, n_work, 100, 400, 1);
	span(st, 10, 10, 2, n_semi, 150, 250, 0);
	span(st, 10, 10, 1, n_work, 100, 400, 2);
	span(st, 10, 10, 1, n_pct, 500, 600, 0);
	span(st, 10, 10, 0, n_main, 0, 1000, 2);
	/* thread 11: main[0,50]{ tab\there[10,50] }  ünï[60,61] */
	span(st, 10, 11, 0, n_main, 0, 50, 1);
	span(st, 10, 11, 1, n_ctl, 10, 50, 0);
	span(st, 10, 11, 0, n_main, 0, 50, 2);
	span(st, 10, 11, 0, n_utf, 60, 61, 0);
	/* thread 12: a zero-length span: no line */
	span(st, 10, 12, 0, n_main, 70, 70, 0);
}

static void test_merged(void)
{
	struct span_trees st;
	build(&st);
	int rc, n;
	char *out = write_folded(&st, 0, &rc);
	is_int(rc, 0, "merged: finish ok");
	is_str(out,
	       "main 610\n"
	       "main;100%25 100\n"
	       "main;do work 200\n"
	       "main;do work;a%3Bb 100\n"
	       "main;tab%09here 40\n"
	       "\xc3\xbcn\xc3\xaf 1\n",
	       "merged: exact lines");
	ok(grammar_ok(out, &n) && n == 6, "merged: every line matches the grammar");
	ok(sorted(out), "merged: sorted by path");
	free(out);
	span_trees_release(&st);
}

static void test_threads(void)
{
	struct span_trees st;
	build(&st);
	int rc, n;
	char *out = write_folded(&st, 1, &rc);
	is_int(rc, 0, "threads: finish ok");
	is_str(out,
	       "my app-10;my app-10/10;main 600\n"
	       "my app-10;my app-10/10;main;100%25 100\n"
	       "my app-10;my app-10/10;main;do work 200\n"
	       "my app-10;my app-10/10;main;do work;a%3Bb 100\n"
	       "my app-10;worker%3B1-10/11;main 10\n"
	       "my app-10;worker%3B1-10/11;main;tab%09here 40\n"
	       "my app-10;worker%3B1-10/11;\xc3\xbcn\xc3\xaf 1\n",
	       "threads: process and thread root frames");
	ok(grammar_ok(out, &n) && n == 7, "threads: every line matches the grammar");
	ok(sorted(out), "threads: sorted");

	/* every frame decodes back to a name we gave */
	int back = 1;
	for (char *p = out; *p;) {
		char *sp = memrchr(p, ' ', (size_t)(strchr(p, '\n') - p));
		char *f = p;
		while (f < sp) {
			char *semi = memchr(f, ';', (size_t)(sp - f));
			char *fe = semi ? semi : sp;
			char name[256];
			unescape(f, (size_t)(fe - f), name);
			char *dash = strrchr(name, '-');
			if (dash && strncmp(f, "my app-", 7) && strncmp(f, "worker", 6))
				dash = NULL;
			if (dash)
				*dash = '\0';
			back &= strtab_lookup(&names, name, strlen(name)) != 0;
			f = fe + 1;
		}
		p = strchr(p, '\n') + 1;
	}
	ok(back, "threads: frames percent-decode to the original names");
	free(out);
	span_trees_release(&st);
}

static void test_empty(void)
{
	struct span_trees st;
	span_trees_init(&st);
	int rc;
	char *out = write_folded(&st, 0, &rc);
	ok(rc == 0 && out && !*out, "no spans: empty output");
	free(out);
	span_trees_release(&st);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct report r = {0};
	struct writer w = {.ops = &folded_writer_ops, .fp = fp};
	is_int(w.ops->finish(&w, &r), 0, "no span collection: finish ok");
	fclose(fp);
	is_int(len, 0, "no span collection: nothing written");
	free(buf);
	is_str(folded_writer_ops.name, "folded", "ops name");
}

int main(void)
{
	strtab_init(&names);
	n_main = strtab_intern(&names, "main", 4);
	n_work = strtab_intern(&names, "do work", 7);
	n_semi = strtab_intern(&names, "a;b", 3);
	n_pct = strtab_intern(&names, "100%", 4);
	n_ctl = strtab_intern(&names, "tab\there", 8);
	n_utf = strtab_intern(&names, "\xc3\xbcn\xc3\xaf", 5);
	n_proc = strtab_intern(&names, "my app", 6);
	n_thr = strtab_intern(&names, "worker;1", 8);
	test_merged();
	test_threads();
	test_empty();
	strtab_release(&names);
	return tap_done();
}
