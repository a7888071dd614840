/* span_args.c: typed arguments on spans (spanstat_arg_*, issue 24), for
 * args.bats.  Every value is known:
 *
 * main: outside every span: u64 "setup" 42, string "mode" "fast".  Span "read" three times, with
 * u64 "bytes" 100, 200, 300; span "parse" twice, with i64 "delta" -5 then
 * 7, f64 "ratio" 0.5 then 1.5, bool "hit" 1 then 0, string "method" "GET"
 * then "POST"; inside "parse", span "inner" with string "method" "GET" and
 * u64 "bytes" 1000 (its own, not parse's).  Six spans "route" with string
 * "path": "/a" three times, "/b" twice, then "/c?x" cut to "/c" by its len.
 * Thread "worker": span "read" twice with u64 "bytes" 50 each.  A NULL key
 * and a NULL string are ignored. */
#include <pthread.h>
#include <spanstat.h>
#include <stdint.h>

static void *worker(void *arg)
{
	(void)arg;
	spanstat_thread_name("worker");
	for (int i = 0; i < 2; i++) {
		spanstat_begin("read");
		spanstat_arg_u64("bytes", 50);
		spanstat_end("read");
	}
	return NULL;
}

int main(void)
{
	static const char *const paths[] = {"/a", "/b", "/a", "/b", "/a"};
	spanstat_arg_u64("setup", 42);
	spanstat_arg_str("mode", "fast", SIZE_MAX);
	for (uint64_t i = 1; i <= 3; i++) {
		spanstat_begin("read");
		spanstat_arg_u64("bytes", 100 * i);
		spanstat_end("read");
	}
	for (int i = 0; i < 2; i++) {
		spanstat_begin("parse");
		spanstat_arg_i64("delta", i ? 7 : -5);
		spanstat_arg_f64("ratio", i ? 1.5 : 0.5);
		spanstat_begin("inner");
		if (!i) {
			spanstat_arg_str("method", "GET", SIZE_MAX);
			spanstat_arg_u64("bytes", 1000);
		}
		spanstat_end("inner");
		spanstat_arg_bool("hit", !i);
		spanstat_arg_str("method", i ? "POST" : "GET", SIZE_MAX);
		spanstat_arg_u64(NULL, 1);
		spanstat_arg_str("method", NULL, 3);
		spanstat_end("parse");
	}
	for (int i = 0; i < 5; i++) {
		spanstat_begin("route");
		spanstat_arg_str("path", paths[i], SIZE_MAX);
		spanstat_end("route");
	}
	spanstat_begin("route");
	spanstat_arg_str("path", "/c?x", 2);
	spanstat_end("route");
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
