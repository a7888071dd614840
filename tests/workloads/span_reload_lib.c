/* span_reload_lib.c: an instrumented library built twice under two names,
 * for the unload/reload test (span_reload.c).
 * Build: cc -O2 -g -fPIC -shared -finstrument-functions -DNAME=alpha \
 *        span_reload_lib.c -o libalpha.so   (and -DNAME=beta: libbeta.so)
 * Both builds have the same layout, so that the second, loaded where the
 * first was unloaded, has its functions at the very same addresses. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static volatile unsigned long sink;

__attribute__((noinline)) void CAT(NAME, _leaf)(int i)
{
	sink += (unsigned long)i;
}

void CAT(NAME, _entry)(int n)
{
	for (int i = 0; i < n; i++)
		CAT(NAME, _leaf)(i);
}
