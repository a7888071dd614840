/* span_sametext.c: one span name at two addresses (two arrays with the same
 * text), begun through one and ended through the other, 5 times, around an
 * inner span; spanstat matches names by their text, so: "same" 5x with
 * "in" 5x under it, nothing unmatched or unfinished.
 * Build: cc -O2 -g span_sametext.c -o span_sametext -lspanstat */
#include <spanstat.h>

static const char a[] = "same";
static const char b[] = "same";

int main(void)
{
	for (int i = 0; i < 5; i++) {
		spanstat_begin(a);
		spanstat_begin("in");
		spanstat_end("in");
		spanstat_end(b);
	}
	return 0;
}
