/* span_args_many.c: N (argv[1]) spans "op", each with u64 "bytes" i when
 * argv[2] is 1, without an argument when 0: what arguments add to a
 * record file, for args.bats. */
#include <spanstat.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	int with = argc > 2 && atoi(argv[2]);
	for (long i = 0; i < n; i++) {
		spanstat_begin("op");
		if (with)
			spanstat_arg_u64("bytes", (unsigned long)i);
		spanstat_end("op");
	}
	return 0;
}
