/* opt_loop.c: a CPU-bound workload whose speed depends on the compiler's
 * optimisation, for spanstat diff's before/after test: built at -O0 and at
 * -O2 it does the same work (the same spans, the same number of times, the
 * same checksum) in clearly different time.
 *   opt_loop [N]   N rounds (default 4) of "multiply" (a naive 96x96
 *                  matrix product) and "scan" (a prefix sum over 256 Ki
 *                  integers), each round a span "round" around the two
 * Prints the checksum; exits 0. */
#include <stdio.h>
#include <stdlib.h>

#include <spanstat.h>

enum { DIM = 96, LEN = 256 * 1024 };

static double a[DIM][DIM], b[DIM][DIM], c[DIM][DIM];
static unsigned v[LEN];

static void multiply(void)
{
	spanstat_begin("multiply");
	for (int i = 0; i < DIM; i++)
		for (int j = 0; j < DIM; j++) {
			double s = 0;
			for (int k = 0; k < DIM; k++)
				s += a[i][k] * b[k][j];
			c[i][j] = s;
		}
	spanstat_end("multiply");
}

static unsigned scan(void)
{
	spanstat_begin("scan");
	unsigned s = 0;
	for (int i = 0; i < LEN; i++) {
		s += v[i] ^ (s >> 3);
		v[i] = s;
	}
	spanstat_end("scan");
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	for (int i = 0; i < DIM; i++)
		for (int j = 0; j < DIM; j++) {
			a[i][j] = (double)((i * 7 + j * 3) % 11) / 11;
			b[i][j] = (double)((i * 5 + j) % 13) / 13;
		}
	for (int i = 0; i < LEN; i++)
		v[i] = (unsigned)i * 2654435761u;
	unsigned sum = 0;
	for (int r = 0; r < rounds; r++) {
		spanstat_begin("round");
		multiply();
		sum += scan();
		spanstat_end("round");
	}
	printf("%u %.6f\n", sum, c[DIM - 1][DIM - 1]);
	return 0;
}
