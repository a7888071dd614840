/* span_deep.c: spans for the JSON robustness tests.
 *   span_deep DEPTH       one recursion DEPTH spans deep ("level" at every
 *                         depth, so DEPTH distinct stack paths), a leaf "leaf"
 *   span_deep bytes       spans and a thread name that are not valid UTF-8:
 *                         "bad\xff\xfe", "trunc\xe2\x82", "pct%41" and the
 *                         valid "caf\xc3\xa9"; thread named "t\x80x"
 * Build: cc -O2 -g span_deep.c -o span_deep -lspanstat.  Exits 0. */
#include <spanstat.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

static void level(long n)
{
	spanstat_begin("level");
	if (n > 1) {
		level(n - 1);
	} else {
		spanstat_begin("leaf");
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		spanstat_end("leaf");
	}
	spanstat_end("level");
}

static void one(const char *name)
{
	spanstat_begin(name);
	sink++;
	spanstat_end(name);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bytes") == 0) {
		spanstat_thread_name("t\x80x");
		one("bad\xff\xfe");
		one("trunc\xe2\x82");
		one("pct%41");
		one("caf\xc3\xa9");
		return 0;
	}
	level(argc > 1 ? atol(argv[1]) : 4000);
	return 0;
}
