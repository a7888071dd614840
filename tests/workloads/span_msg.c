/* span_msg.c: messages on threads' timelines (spanstat_message, issue 24),
 * for messages.bats.
 *
 * main: "start" (spanstat_message), then inside span "work": "in work"; a
 * text whose len stops before its end ("cut" of "cut here"), one with a NUL
 * within len ("nul" of "nul\0after"), one of 2000 'x' (kept: 1024), a NULL
 * (ignored).  Thread "chatty": 70 messages "line 0" .. "line 69" formatted
 * into one buffer.  Thread "quiet": one message "bye" and no span.  With
 * the argument "fork", a child process says "child" too. */
#include <pthread.h>
#include <spanstat.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *chatty(void *arg)
{
	(void)arg;
	char buf[32];
	spanstat_thread_name("chatty");
	spanstat_begin("chat");
	for (int i = 0; i < 70; i++) {
		int n = snprintf(buf, sizeof buf, "line %d", i);
		spanstat_message_text(buf, (size_t)n);
	}
	spanstat_end("chat");
	return NULL;
}

static void *quiet(void *arg)
{
	(void)arg;
	spanstat_thread_name("quiet");
	spanstat_message("bye");
	return NULL;
}

int main(int argc, char **argv)
{
	static char big[2001];
	memset(big, 'x', 2000);
	spanstat_message("start");
	spanstat_begin("work");
	spanstat_message("in work");
	spanstat_message_text("cut here", 3);
	spanstat_message_text("nul\0after", 9);
	spanstat_message(big);
	spanstat_message(NULL);
	spanstat_end("work");
	pthread_t a, b;
	pthread_create(&a, NULL, chatty, NULL);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, quiet, NULL);
	pthread_join(b, NULL);
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		pid_t c = fork();
		if (c == 0) {
			spanstat_message("child");
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
	return 0;
}
