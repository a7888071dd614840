/* mkcorpus.c: writes the fuzzer's seed corpus (tests/fuzz/corpus/) from
 * encode.h: valid streams using every record type, plus a few classic bad
 * cases, each prefixed with fuzz_decode.c's 3 control bytes.
 * usage: mkcorpus DIR   (run by `make -f tests/fuzz/fuzz.mk corpus`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "ring.h"

static uint8_t buf[1 << 16];
static size_t len;

#define PUT(call) (len += (call))
#define ROOM (sizeof buf - len)
#define AT (buf + len)

static void hello(uint32_t pid, uint32_t ppid, enum wire_clock clk, const char *name)
{
	PUT(enc_hello(AT, ROOM, pid, ppid, clk, 1000, 1000, name, strlen(name)));
}

static void name(uint32_t pid, uint32_t id, const char *s)
{
	PUT(enc_name(AT, ROOM, pid, 0, id, WIRE_NAME_STRING, 0, 0, s, strlen(s)));
}

static void events_seq(uint32_t pid, uint32_t tid, uint64_t base, uint32_t seq, uint32_t dropped,
		       size_t n, const uint64_t *w)
{
	uint64_t rec[WIRE_MAX_RECORD / 8];
	memcpy(rec + ENC_EVENTS_FIRST_WORD, w, n * 8);
	size_t l = enc_events_close(rec, pid, tid, base, seq, dropped, n);
	memcpy(AT, rec, l);
	len += l;
}

/* Each thread's next record number within the seed being built. */
static struct {
	uint32_t pid, tid, seq;
} seqs[16];
static unsigned nseqs;

static void events(uint32_t pid, uint32_t tid, uint64_t base, size_t n, const uint64_t *w)
{
	unsigned i = 0;
	while (i < nseqs && (seqs[i].pid != pid || seqs[i].tid != tid))
		i++;
	if (i == nseqs && nseqs < 16) {
		seqs[i].pid = pid;
		seqs[i].tid = tid;
		seqs[i].seq = 0;
		nseqs++;
	}
	events_seq(pid, tid, base, i < 16 ? seqs[i].seq++ : 0, 0, n, w);
}
#define EVENTS(pid, tid, base, ...)                        \
	do {                                               \
		const uint64_t w_[] = {__VA_ARGS__};       \
		events(pid, tid, base, sizeof w_ / 8, w_); \
	} while (0)
#define B(id, dt) wire_event(WIRE_OP_BEGIN, id, dt)
#define ARG(key, type) \
	RING_CTL(RING_CTL_ARG | (uint64_t)(key) << 8 | (uint64_t)(type) << WIRE_ARG_TYPE_SHIFT)
#define E(id, dt) wire_event(WIRE_OP_END, id, dt)
#define I(id, dt) wire_event(WIRE_OP_INSTANT, id, dt)
#define C(id, dt) wire_event(WIRE_OP_COUNTER, id, dt)

static const char *dir;
static int nseed;

static void emit(uint8_t c0, uint8_t c1, uint8_t c2)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/seed-%02d", dir, ++nseed);
	FILE *f = fopen(path, "wb");
	uint8_t ctl[3] = {c0, c1, c2};
	if (!f || fwrite(ctl, 1, 3, f) != 3 || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	len = 0;
	nseqs = 0;
}

static void basic(uint32_t pid, enum wire_clock clk)
{
	hello(pid, 1, clk, "app");
	name(pid, 1, "main");
	name(pid, 2, "work");
	name(pid, 3, "counter");
	EVENTS(pid, pid, 2000, B(1, 0), B(2, 10), I(2, 3), C(3, 1), 42, E(2, 20), E(1, 5));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return 2;
	}
	dir = argv[1];

	basic(10, WIRE_CLOCK_MONOTONIC); /* one thread, every op */
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_TSC); /* TSC, fed in three pieces */
	emit(2 | 4, 60, 150);

	basic(10, WIRE_CLOCK_MONOTONIC); /* threads, names, exits, drops */
	PUT(enc_thread_name(AT, ROOM, 10, 11, "worker", 6));
	EVENTS(10, 11, 2100, B(2, 0), B(1, 1));
	EVENTS(10, 12, 2100, B(2, 0), E(2, 9));
	uint64_t v = 5;
	PUT(enc_simple(AT, ROOM, WIRE_DROPPED, 10, 11, &v, 8));
	struct wire_unfollowed uf = {3, 12288}; /* --lib-calls out of room */
	PUT(enc_simple(AT, ROOM, WIRE_UNFOLLOWED, 10, 0, &uf, sizeof uf));
	PUT(enc_simple(AT, ROOM, WIRE_NOLATE, 10, 0, &uf, 0)); /* no ring file */
	v = 2300;
	PUT(enc_simple(AT, ROOM, WIRE_THREAD_EXIT, 10, 11, &v, 8));
	struct wire_exit ex = {2400, 6, 0};
	PUT(enc_simple(AT, ROOM, WIRE_EXIT, 10, 0, &ex, sizeof ex));
	emit(1 | 8, 100, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* fork child and exec */
	hello(20, 10, WIRE_CLOCK_MONOTONIC, "child");
	name(20, 1, "cmain");
	EVENTS(20, 20, 3000, B(1, 0));
	hello(20, 10, WIRE_CLOCK_MONOTONIC, "exec'd");
	name(20, 1, "new");
	EVENTS(20, 20, 4000, B(1, 0), E(1, 1));
	emit(2, 30, 200);

	hello(10, 1, WIRE_CLOCK_MONOTONIC, "app"); /* code names */
	PUT(enc_name(AT, ROOM, 10, 0, 1, WIRE_NAME_CODE, 0x1130, 0, "/bin/true", 9));
	PUT(enc_name(AT, ROOM, 10, 0, 2, WIRE_NAME_CODE, 0x7f0000001000, 0x7f0000000000,
		     "/nonexistent.so", 15));
	EVENTS(10, 10, 100, B(1, 0), B(2, 1), E(2, 1), E(1, 1));
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* mismatches, undefined ids */
	EVENTS(10, 10, 5000, E(1, 0), B(9, 1), B(1, 1), B(2, 1), B(3, 1), E(1, 1), E(9, 1),
	       B(WIRE_ID_MAX, 1), C(1, 1));
	emit(0, 0, 0);

	memcpy(AT, "garbage SP\x01", 11); /* garbage around records */
	len += 11;
	basic(10, WIRE_CLOCK_MONOTONIC);
	memcpy(AT, "\x53\x50\x4e\x01\xff\xff", 6);
	len += 6;
	name(10, 4, "late");
	EVENTS(10, 10, 6000, B(4, 0), E(4, 1));
	memcpy(AT, "tail", 4);
	len += 4;
	emit(1, 128, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* a truncated last record */
	len -= 12;
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* lost records, drops, empty name */
	name(10, 4, "");
	EVENTS(10, 10, 5000, B(1, 0), B(4, 1), B(2, 1));
	const uint64_t after[] = {E(2, 0), E(4, 1), B(4, 1), E(4, 1), E(1, 1)};
	events_seq(10, 10, 6000, 5, 100, 5, after); /* records 2..4 lost */
	events_seq(10, 10, 6100, 6, 130, 0, after); /* only news: more drops */
	events_seq(10, 10, 6200, 0, 0, 2, after);   /* starts over */
	struct wire_exit lost = {7000, 0, 500};
	PUT(enc_simple(AT, ROOM, WIRE_EXIT, 10, 0, &lost, sizeof lost));
	hello(30, 10, WIRE_CLOCK_MONOTONIC, "noexit"); /* never exits */
	name(30, 1, "x");
	EVENTS(30, 30, 100, B(1, 0));
	emit(0, 0, 0);

	hello(10, 1, WIRE_CLOCK_MONOTONIC, "deep"); /* deep nesting, full record */
	name(10, 1, "r");
	uint64_t w[ENC_EVENTS_MAX_WORDS];
	for (size_t i = 0; i < ENC_EVENTS_MAX_WORDS; i++)
		w[i] = i < 300 ? B(1, 1) : E(1, 1);
	events(10, 10, 1, ENC_EVENTS_MAX_WORDS, w);
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* a drop told: 1 of 2 open spans stays */
	EVENTS(10, 11, 2100, B(1, 0), B(2, 1));
	struct wire_resync rs = {40, 1, 1, 0};
	PUT(enc_simple(AT, ROOM, WIRE_RESYNC, 10, 11, &rs, sizeof rs));
	events_seq(10, 11, 2200, 1, 40, 4, (const uint64_t[]){B(3, 0), B(2, 1), E(2, 1), E(1, 1)});
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* a thread that could not open an event */
	struct wire_uncounted un = {1, 0};
	PUT(enc_simple(AT, ROOM, WIRE_UNCOUNTED, 10, 11, &un, sizeof un));
	EVENTS(10, 11, 2100, B(1, 0), E(1, 1));
	emit(0, 0, 0);

	hello(10, 1, WIRE_CLOCK_MONOTONIC, "app"); /* categories (spanstat_category) */
	PUT(enc_category(AT, ROOM, 10, 10, "main", 4, "io", 2));
	PUT(enc_category(AT, ROOM, 10, 10, "main", 4, "cpu", 3));
	PUT(enc_category(AT, ROOM, 10, 10, "", 0, "empty", 5));
	name(10, 1, "main");
	name(10, 2, "work");
	EVENTS(10, 10, 2000, B(1, 0), B(2, 10), I(1, 3), E(2, 20), E(1, 5));
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* messages (spanstat_message) */
	PUT(enc_message(AT, ROOM, 10, 10, 2010, "hello", 5));
	PUT(enc_message(AT, ROOM, 10, 11, 2020, "", 0));
	EVENTS(10, 11, 2030, B(2, 0), E(2, 1));
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* async spans (spanstat_async_*) */
	PUT(enc_async(AT, ROOM, 10, 10, 2010, 7, WIRE_ASYNC_BEGIN, "req", 3));
	PUT(enc_async(AT, ROOM, 10, 11, 2020, 7, WIRE_ASYNC_ENTER, NULL, 0));
	PUT(enc_async(AT, ROOM, 10, 11, 2025, 8, WIRE_ASYNC_BEGIN, "child", 5));
	PUT(enc_async(AT, ROOM, 10, 12, 2030, 7, WIRE_ASYNC_ENTER, NULL, 0));
	PUT(enc_async(AT, ROOM, 10, 11, 2040, 7, WIRE_ASYNC_EXIT, NULL, 0));
	PUT(enc_async(AT, ROOM, 10, 12, 2050, 7, WIRE_ASYNC_EXIT, NULL, 0));
	PUT(enc_async(AT, ROOM, 10, 10, 2060, 7, WIRE_ASYNC_END, NULL, 0));
	PUT(enc_async(AT, ROOM, 10, 12, 2070, 8, WIRE_ASYNC_ENTER, NULL, 0));
	EVENTS(10, 11, 2080, B(2, 0), E(2, 1));
	emit(0, 0, 0);

	basic(10, WIRE_CLOCK_MONOTONIC); /* typed arguments (spanstat_arg_*) */
	name(10, 2, "bytes");
	name(10, 3, "GET");
	EVENTS(10, 10, 2000, ARG(2, WIRE_ARG_U64), 7, B(1, 0), ARG(2, WIRE_ARG_U64), 100,
	       ARG(2, WIRE_ARG_I64), (uint64_t)-5, ARG(2, WIRE_ARG_F64),
	       UINT64_C(0x3fe0000000000000), ARG(2, WIRE_ARG_BOOL), 1, ARG(2, WIRE_ARG_STR), 3,
	       E(1, 5));
	emit(0, 0, 0);
	return 0;
}
