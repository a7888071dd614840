/* test_lines.c: the span line protocol (lib/spans/linesrc.c) through a decoder's
 * normaliser: every op, the time forms, tid '-', names with spaces and
 * empty, lines split across feeds anyhow, malformed and over-long lines
 * counted and skipped, a partial last line, processes shared with the
 * binary stream, and the X line; times checked against the process's start
 * and the spans around them, and NULs in names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decoder.h"
#include "linesrc.h"
#include "tap.h"

/* What the sink saw, as "K pid/tid name@ts[-begin]" words. */
struct seen {
	char buf[8192];
	size_t len;
	const struct decoder *d;
};

static void sink(void *arg, const struct span_event *ev)
{
	struct seen *s = arg;
	static const char kinds[] = "PTBEICX";
	const char *name = ev->name ? strtab_get(decoder_strings(s->d), ev->name) : "";
	if (s->len < sizeof s->buf - 128)
		s->len += (size_t)snprintf(
			s->buf + s->len, sizeof s->buf - s->len, "%c%u/%u:%s@%llu%s ",
			kinds[ev->kind], ev->pid, ev->tid,
			ev->kind == SPAN_PROCESS || ev->kind == SPAN_THREAD ? "" : name,
			(unsigned long long)ev->ts, ev->flags & SPAN_F_UNFINISHED ? "u" : "");
}

static struct decoder *fresh(struct seen *s)
{
	memset(s, 0, sizeof *s);
	struct decoder *d = decoder_new(NULL);
	s->d = d;
	decoder_add_sink(d, (struct span_sink){sink, s});
	return d;
}

static void feed(struct linesrc *ls, const char *text, size_t piece)
{
	size_t n = strlen(text);
	for (size_t i = 0; i < n; i += piece)
		linesrc_feed(ls, text + i, n - i < piece ? n - i : piece, 7777);
}

/* Lines whose times contradict, each bad, the rest taken as they are. */
static void test_times(void)
{
	struct seen s;
	struct decoder *d = fresh(&s);
	struct linesrc *ls = linesrc_new(d, 0);
	/* a pid above PID_MAX_LIMIT: no /proc entry, only the start counts */
	linesrc_set_start(ls, 1000);
	feed(ls,
	     "B 4999999 - 500 early\n"	/* before the command started */
	     "B 4999999 - 2000 outer\n" /* the process begins here */
	     "I 4999999 - 1500 old\n"	/* before its first line: fine (no /proc) */
	     "B 4999999 - 1999 child\n" /* before its parent */
	     "B 4999999 - 2010 inner\n"
	     "E 4999999 - 2020 inner\n"
	     "E 4999999 - 2015 outer\n" /* before inner ended in it */
	     "B 4999999 - 2030 late\n"
	     "E 4999999 - 2025 late\n" /* before it began */
	     "E 4999999 - 2040 late\n"
	     "X 4999999 - 2035\n"	  /* before late ended in outer */
	     "E 4999999 - 1 nothing\n"	  /* before the start, and naming nothing */
	     "E 4999999 - 2050 nothing\n" /* naming no open span: unmatched, not bad */
	     "E 4999999 - 2060 outer\n",
	     1000);
	is_int(linesrc_stats(ls)->bad, 6, "six lines out of time are bad");
	is_int(decoder_stats(d)->unmatched, 1, "an end naming no open span is unmatched");
	is_str(s.buf,
	       "P4999999/0:@2000 T4999999/4999999:@2000 B4999999/4999999:outer@2000 "
	       "I4999999/4999999:old@1500 "
	       "B4999999/4999999:inner@2010 E4999999/4999999:inner@2020 B4999999/4999999:late@2030 "
	       "E4999999/4999999:late@2040 E4999999/4999999:outer@2060 ",
	       "the others are taken, nested in time");
	linesrc_free(ls);
	decoder_free(d);

	/* an end naming an outer span checks the spans it closes too */
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	feed(ls, "B 99999 - 10 a\nB 99999 - 20 b\nB 99999 - 30 c\nE 99999 - 25 a\nE 99999 - 35 a\n",
	     100);
	is_int(linesrc_stats(ls)->bad, 1, "an outer end before an inner span's begin is bad");
	ok(strstr(s.buf, "E99999/99999:c@35u E99999/99999:b@35u E99999/99999:a@35 ") != NULL,
	   "the later one closes them; without a start set, no start is checked");
	linesrc_free(ls);
	decoder_free(d);

	/* our own process: its start from /proc */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned long long ns =
		(unsigned long long)now.tv_sec * 1000000000u + (unsigned long long)now.tv_nsec;
	char text[256];
	snprintf(text, sizeof text, "B %d - 2000 before-me\nB %d - %llu me\nE %d - %llu me\n",
		 (int)getpid(), (int)getpid(), ns, (int)getpid(), ns + 5);
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	linesrc_set_start(ls, 1000);
	feed(ls, text, 1000);
	is_int(linesrc_stats(ls)->bad, 1, "a time before the process began, from /proc, is bad");
	is_int(linesrc_stats(ls)->events, 2, "a time since, taken");
	linesrc_free(ls);
	decoder_free(d);

	/* a NUL in a name */
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	linesrc_feed(ls, "B 5 - 10 na\0me\nI 5 - 10 \0\nI 5 - 10 name\0\n", 41, 1);
	is_int(linesrc_stats(ls)->bad, 3, "a NUL anywhere in a name: bad");
	linesrc_free(ls);
	decoder_free(d);
}

int main(void)
{
	struct seen s;
	struct decoder *d = fresh(&s);
	struct linesrc *ls = linesrc_new(d, 1000000000);
	const char *text = "B 99999 - 100 load data\n"
			   "B 99999 99998 110 \n"
			   "I 99999 - 120 mark\n"
			   "C 99999 - 130 -42 queue\n"
			   "E 99999 99998 140 \n"
			   "E 99999 - @1.5 load data\n"
			   "B 99999 - - later\n"
			   "E 99999 - @1,6 later\n";
	feed(ls, text, 1000);
	linesrc_finish(ls);
	decoder_finish(d);
	is_str(s.buf,
	       "P99999/0:@100 T99999/99999:@100 B99999/99999:load data@100 "
	       "T99999/99998:@110 B99999/99998:@110 I99999/99999:mark@120 "
	       "C99999/99999:queue@130 E99999/99998:@140 E99999/99999:load data@500000000 "
	       "B99999/99999:later@7777 E99999/99999:later@600000000 X99999/0:@600000000 ",
	       "every op, tid '-', empty names and names with spaces, '@' times with '.' and ','");
	is_int(linesrc_stats(ls)->lines, 8, "eight lines taken");
	is_int(linesrc_stats(ls)->events, 8, "all of them events");
	is_int(decoder_stats(d)->lines, 8, "the decoder counts them");
	linesrc_free(ls);
	decoder_free(d);

	/* the same in every split */
	for (size_t piece = 1; piece <= 7; piece += 3) {
		char want[8192];
		d = fresh(&s);
		ls = linesrc_new(d, 1000000000);
		feed(ls, text, 1000);
		linesrc_finish(ls);
		decoder_finish(d);
		memcpy(want, s.buf, s.len + 1);
		linesrc_free(ls);
		decoder_free(d);
		d = fresh(&s);
		ls = linesrc_new(d, 1000000000);
		feed(ls, text, piece);
		linesrc_finish(ls);
		decoder_finish(d);
		is_str(s.buf, want, "fed %zu bytes at a time: the same events", piece);
		linesrc_free(ls);
		decoder_free(d);
	}

	/* malformed: each counted, none trusted */
	static const char *const bad[] = {"Q 5 - 100 x\n",
					  "B x - 100 x\n",
					  "B 0 - 100 x\n",
					  "B 5 5x 100 x\n",
					  "B 5 - 1e9 x\n",
					  "B 5 - 99999999999999999999 x\n",
					  "C 5 - 100 12q x\n",
					  "B 5 - 100\n",
					  "B5 - 100 x\n",
					  "\n",
					  "X\n",
					  "B 5 4294967296 1 x\n",
					  "C 5 - 1 9223372036854775808 x\n",
					  "B 5 - @ x\n",
					  "B 5 - -5 x\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		d = fresh(&s);
		ls = linesrc_new(d, 0);
		feed(ls, bad[i], 100);
		linesrc_finish(ls);
		ok(linesrc_stats(ls)->bad == 1 && linesrc_stats(ls)->lines == 0,
		   "bad line %zu is counted, not taken", i);
		linesrc_free(ls);
		decoder_free(d);
	}
	/* the extremes that are fine */
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	feed(ls,
	     "C 5 - 1 -9223372036854775808 min\nB 4294967295 4294967295 18446744073709551615 x\n",
	     100);
	is_int(linesrc_stats(ls)->lines, 2, "INT64_MIN and the largest pid, tid and time parse");
	linesrc_free(ls);
	decoder_free(d);

	/* too long: skipped up to its newline, in any split */
	char *big = malloc(LINES_MAX_LINE + 64);
	memset(big, 'a', LINES_MAX_LINE + 10);
	strcpy(big + LINES_MAX_LINE + 10, "\nI 5 - 1 ok\n");
	for (size_t piece = 1000; piece <= 5000; piece += 4000) {
		d = fresh(&s);
		ls = linesrc_new(d, 0);
		feed(ls, big, piece);
		is_int(linesrc_stats(ls)->bad, 1,
		       "a line over the limit is one bad line (pieces of %zu)", piece);
		is_int(linesrc_stats(ls)->lines, 1, "and the next line is taken");
		linesrc_free(ls);
		decoder_free(d);
	}
	/* exactly the limit, newline included, is fine */
	memset(big, 'a', LINES_MAX_LINE);
	memcpy(big, "I 5 - 1 ", 8);
	big[LINES_MAX_LINE - 1] = '\n';
	big[LINES_MAX_LINE] = '\0';
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	feed(ls, big, 999);
	is_int(linesrc_stats(ls)->lines, 1, "a line of exactly LINES_MAX_LINE bytes is taken");
	linesrc_free(ls);
	decoder_free(d);
	free(big);

	/* a partial last line, and X */
	d = fresh(&s);
	ls = linesrc_new(d, 0);
	feed(ls, "B 5 - 100 open\nX 5 - 150\nB 6 - 1 tail", 100);
	linesrc_finish(ls);
	ok(strstr(s.buf, "E5/5:open@150u") != NULL, "X ends the process's open spans, unfinished");
	is_int(linesrc_stats(ls)->bad, 1, "a partial last line is bad");
	decoder_finish(d);
	linesrc_free(ls);
	decoder_free(d);
	test_times();
	return tap_done();
}
