/* demo.c: the workload README's quick start runs.  Built with
 * -finstrument-functions (no link change needed): spanstat injects its span
 * library and shows where the time goes, by function, as well as the
 * counters.  It parses, sorts and sums a generated data set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long seed = 88172645463325252ul;

static unsigned long next_random(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static char *generate(size_t n)
{
	char *text = malloc(n * 12 + 1), *p = text;
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%lu\n", next_random() % 1000000000ul);
	return text;
}

static size_t parse(const char *text, long *out)
{
	size_t n = 0;
	char *end;
	for (const char *p = text;; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			return n;
		out[n++] = v;
	}
}

static int compare(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static void sort(long *v, size_t n)
{
	qsort(v, n, sizeof *v, compare);
}

static long checksum(const long *v, size_t n)
{
	long s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + v[i];
	return s;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	long sum = 0;
	for (int round = 0; round < 3; round++) {
		char *text = generate(n);
		long *v = malloc(n * sizeof *v);
		size_t got = parse(text, v);
		sort(v, got);
		sum ^= checksum(v, got);
		free(v);
		free(text);
	}
	printf("demo: %zu numbers x 3 rounds, checksum %lx\n", n, (unsigned long)sum);
	return 0;
}
