/* span_names.c: span and thread names that the folded grammar cannot hold
 * as they are (spaces, ';', '%', control bytes, UTF-8), for
 * the folded-output tests.
 * Build: cc -O2 -g span_names.c -o span_names -lspanstat
 *
 * The main thread is named "my thread;1" and records, each span 1x and each
 * with a short busy loop of its own so that every path has self time:
 *   "has space" containing "semi;colon" containing "per%cent"
 *   "tab\there\nnewline"
 *   "caf\xc3\xa9" (UTF-8 "cafe" with an acute e)
 * Folded (percent-escaped): has space, has space;semi%3Bcolon,
 * has space;semi%3Bcolon;per%25cent, tab%09here%0Anewline, caf\xc3\xa9.
 * Exits 0. */
#include <spanstat.h>

static volatile unsigned long sink;

static void busy(void)
{
	for (int i = 0; i < 20000; i++)
		sink += (unsigned long)i;
}

static void one(const char *name)
{
	spanstat_begin(name);
	busy();
	spanstat_end(name);
}

int main(void)
{
	spanstat_thread_name("my thread;1");
	spanstat_begin("has space");
	busy();
	spanstat_begin("semi;colon");
	busy();
	one("per%cent");
	spanstat_end("semi;colon");
	spanstat_end("has space");
	one("tab\there\nnewline");
	one("caf\xc3\xa9");
	return 0;
}
