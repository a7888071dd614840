/* tap.h: a minimal TAP producer for the C unit tests: ok(), is_int(),
 * is_str(), is_dbl() print one test point each; tap_done() prints the plan
 * and a "N passed, N failed" line and returns the exit status. */
#ifndef SPANSTAT_TAP_H
#define SPANSTAT_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed;

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 2, 3))) static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

/* A line of commentary. */
__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

/* n test points that cannot run here: skipped, or failed under CI
 * (SPANSTAT_REQUIRE_ALL), where everything must run. */
static inline void skip(int n, const char *why)
{
	int must = getenv("SPANSTAT_REQUIRE_ALL") != NULL;
	for (int i = 0; i < n; i++) {
		tap_n++;
		tap_failed += must;
		printf("%sok %d # %s %s\n", must ? "not " : "", tap_n, must ? "required:" : "SKIP",
		       why);
	}
	fflush(stdout);
}

#define is_int(got, want, ...)                                           \
	do {                                                             \
		long long g_ = (long long)(got), w_ = (long long)(want); \
		if (!ok(g_ == w_, __VA_ARGS__))                          \
			printf("#   got %lld, want %lld\n", g_, w_);     \
	} while (0)

__attribute__((format(printf, 3, 4))) static inline int is_str(const char *got, const char *want,
							       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(got && want && strcmp(got, want) == 0, fmt, ap);
	va_end(ap);
	if (!r)
		printf("#   got  '%s'\n#   want '%s'\n", got ? got : "(null)",
		       want ? want : "(null)");
	return r;
}

#define is_dbl(got, want, eps, ...)                                  \
	do {                                                         \
		double g_ = (got), w_ = (want);                      \
		if (!ok(fabs(g_ - w_) <= (eps), __VA_ARGS__))        \
			printf("#   got %.9g, want %.9g\n", g_, w_); \
	} while (0)

/* Finds rel under $SRCDIR or the current directory (the source tree),
 * writing the full path to out.  Returns 0, or -1 when it is in neither. */
static inline int tap_find_source(const char *rel, char *out, size_t size)
{
	char cwd[2048];
	const char *bases[2] = {getenv("SRCDIR"), getcwd(cwd, sizeof cwd) ? cwd : NULL};
	for (int i = 0; i < 2; i++) {
		if (!bases[i])
			continue;
		snprintf(out, size, "%s/%s", bases[i], rel);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

static inline int tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", tap_n, tap_n - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}

#endif
