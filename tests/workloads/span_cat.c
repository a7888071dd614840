/* span_cat.c: spans with categories (spanstat_category, issue 24) on two
 * threads and the main thread, for categories.bats.
 *
 * Declared: read and write are "io", parse is "cpu"; "idle" gets "io" by
 * one declaration and "cpu" by a later one (the first holds); "plain" has
 * none.  Each of two threads: 3 x (read > parse), then write; main: one
 * "plain" around one "idle" and one "read" given by text. */
#include <pthread.h>
#include <spanstat.h>

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		spanstat_begin("read");
		spanstat_begin("parse");
		spanstat_end("parse");
		spanstat_end("read");
	}
	spanstat_begin("write");
	spanstat_end("write");
	return NULL;
}

int main(void)
{
	spanstat_category("read", "io");
	spanstat_category("write", "io");
	spanstat_category("parse", "cpu");
	spanstat_category("idle", "io");
	spanstat_category("idle", "cpu");
	spanstat_category("nothing", ""); /* ignored: no category */
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	spanstat_begin("plain");
	spanstat_begin("idle");
	spanstat_end("idle");
	spanstat_begin_text("read!", 4);
	spanstat_end_text("read", 4);
	spanstat_end("plain");
	return 0;
}
