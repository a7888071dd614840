# fuzz.mk: builds and runs the libFuzzer targets for the ring reader
# (fuzz_rings.c, FUZZ_RING_SECONDS, default 20), the context-switch records
# (fuzz_offcpu.c, FUZZ_OFFCPU_SECONDS, default 10), the line protocol
# (fuzz_lines.c, FUZZ_LINES_SECONDS, default 10), spanstat diff's JSON input
# (fuzz_diff.c, FUZZ_DIFF_SECONDS, default 10, seeds in tests/fuzz/diffcorpus/), the record file reader and
# `spanstat report` with every writer behind it (fuzz_record.c,
# FUZZ_RECORD_SECONDS, default 20, seeds in tests/fuzz/reccorpus/: real
# recordings, remade by `make -f tests/fuzz/fuzz.mk reccorpus` after
# `make tests/stage.stamp`; its outputs replayed and checked as below, in
# recout/) and for the span decoder and the
# writers (fuzz_decode.c: decoder + spantree + folded, JSON, Perfetto, pprof
# and the SVG flame graph and chart writers, with clang's
# -fsanitize=fuzzer,address,undefined) for FUZZ_SECONDS (default 30) over the
# committed seed corpus tests/fuzz/corpus/.  New inputs go to a scratch
# directory in the build tree, never into the source tree; a crash leaves
# crash-* there and fails the run.  Afterwards every seed and up to 300 of
# the inputs the fuzzer kept are replayed once with their JSON and Perfetto
# outputs saved, and tests/fuzz/check-outputs reads each with jq and protoc.
#   make fuzz                                  (from the top-level Makefile)
#   make -f tests/fuzz/fuzz.mk FUZZ_SECONDS=300
#   make -f tests/fuzz/fuzz.mk corpus          (regenerate the seeds)
#   make -f tests/fuzz/fuzz.mk reccorpus       (regenerate the record seeds)
srcdir ?= .
builddir ?= .
FUZZ_SECONDS ?= 30
FUZZ_CC ?= clang
FUZZ_DIR = $(builddir)/tests/fuzz
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined $(foreach d,base wire perf spans run out span,-I$(srcdir)/lib/$(d))
FUZZ_SRCS = $(srcdir)/tests/fuzz/fuzz_decode.c $(srcdir)/lib/spans/decoder.c $(srcdir)/lib/spans/wireframe.c $(srcdir)/lib/spans/norm.c \
	$(srcdir)/lib/base/strtab.c $(srcdir)/lib/base/u64map.c $(srcdir)/lib/spans/symbols.c $(srcdir)/lib/spans/spantree.c $(srcdir)/lib/spans/spanargs.c \
	$(srcdir)/lib/out/folded.c $(srcdir)/lib/out/json.c $(srcdir)/lib/out/perfetto.c $(srcdir)/lib/base/pbenc.c \
	$(srcdir)/lib/perf/metrics.c $(srcdir)/lib/base/utf8esc.c $(srcdir)/lib/spans/srcloc.c $(srcdir)/lib/spans/demangle.c \
	$(srcdir)/lib/spans/spannames.c $(srcdir)/lib/spans/spanweight.c $(srcdir)/lib/spans/spanmetric.c $(srcdir)/lib/spans/spanwalk.c $(srcdir)/lib/out/pprof.c \
	$(srcdir)/lib/out/svg.c $(srcdir)/lib/out/svgkit.c $(srcdir)/lib/out/flamechart.c $(srcdir)/lib/out/rankstat.c \
	$(srcdir)/lib/perf/aggr.c $(srcdir)/lib/base/cause.c
FUZZ_RING_SRCS = $(srcdir)/tests/fuzz/fuzz_rings.c $(srcdir)/lib/spans/ringsrc.c $(srcdir)/lib/spans/decoder.c $(srcdir)/lib/spans/wireframe.c $(srcdir)/lib/spans/norm.c \
	$(srcdir)/lib/base/strtab.c $(srcdir)/lib/base/u64map.c $(srcdir)/lib/spans/symbols.c $(srcdir)/lib/spans/srcloc.c \
	$(srcdir)/lib/spans/demangle.c $(srcdir)/lib/spans/spannames.c $(srcdir)/lib/base/utf8esc.c
FUZZ_RING_SECONDS ?= 20
FUZZ_OFFCPU_SRCS = $(srcdir)/tests/fuzz/fuzz_offcpu.c $(srcdir)/lib/perf/offcpu.c $(srcdir)/lib/base/u64map.c \
	$(srcdir)/lib/base/cause.c
FUZZ_OFFCPU_SECONDS ?= 10
FUZZ_LINES_SRCS = $(srcdir)/tests/fuzz/fuzz_lines.c $(srcdir)/lib/spans/linesrc.c $(srcdir)/lib/spans/decoder.c \
	$(srcdir)/lib/spans/wireframe.c $(srcdir)/lib/spans/norm.c $(srcdir)/lib/base/strtab.c $(srcdir)/lib/base/u64map.c \
	$(srcdir)/lib/spans/symbols.c $(srcdir)/lib/spans/srcloc.c $(srcdir)/lib/spans/demangle.c $(srcdir)/lib/spans/spannames.c \
	$(srcdir)/lib/base/utf8esc.c $(srcdir)/lib/spans/spantree.c $(srcdir)/lib/spans/spanargs.c
FUZZ_LINES_SECONDS ?= 10
FUZZ_DIFF_SRCS = $(srcdir)/tests/fuzz/fuzz_diff.c $(srcdir)/lib/out/diff.c $(srcdir)/lib/base/stats.c \
	$(srcdir)/lib/base/strtab.c $(srcdir)/lib/base/cause.c $(srcdir)/lib/out/svg.c $(srcdir)/lib/out/svgkit.c \
	$(srcdir)/lib/spans/spantree.c $(srcdir)/lib/spans/spanargs.c $(srcdir)/lib/spans/spanwalk.c $(srcdir)/lib/spans/spanweight.c $(srcdir)/lib/spans/spanmetric.c $(srcdir)/lib/base/utf8esc.c \
	$(srcdir)/lib/base/u64map.c
FUZZ_DIFF_SECONDS ?= 10
FUZZ_RECORD_SRCS = $(srcdir)/tests/fuzz/fuzz_record.c $(srcdir)/lib/out/recfile.c $(srcdir)/lib/out/recreport.c \
	$(srcdir)/lib/out/analysis.c $(srcdir)/lib/base/stats.c $(srcdir)/lib/base/cause.c $(srcdir)/lib/base/strtab.c \
	$(srcdir)/lib/spans/spannames.c $(srcdir)/lib/spans/spantree.c $(srcdir)/lib/spans/spanargs.c $(srcdir)/lib/base/u64map.c $(srcdir)/lib/out/summary.c \
	$(srcdir)/lib/out/csv.c $(srcdir)/lib/out/fmt.c $(srcdir)/lib/perf/metrics.c $(srcdir)/lib/out/json.c \
	$(srcdir)/lib/out/rankstat.c $(srcdir)/lib/base/utf8esc.c $(srcdir)/lib/out/folded.c $(srcdir)/lib/spans/spanwalk.c \
	$(srcdir)/lib/spans/spanweight.c $(srcdir)/lib/spans/spanmetric.c $(srcdir)/lib/out/perfetto.c $(srcdir)/lib/base/pbenc.c $(srcdir)/lib/out/pprof.c \
	$(srcdir)/lib/out/svg.c $(srcdir)/lib/out/svgkit.c $(srcdir)/lib/out/flamechart.c $(srcdir)/lib/perf/aggr.c \
	$(srcdir)/lib/out/rawrep.c $(srcdir)/lib/spans/decoder.c $(srcdir)/lib/spans/wireframe.c $(srcdir)/lib/spans/norm.c \
	$(srcdir)/lib/spans/symbols.c $(srcdir)/lib/spans/srcloc.c $(srcdir)/lib/spans/demangle.c \
	$(srcdir)/lib/spans/linesrc.c $(srcdir)/lib/perf/offcpu.c $(srcdir)/lib/spans/wirepack.c
FUZZ_RECORD_SECONDS ?= 20
FUZZ_LIBS = -ldw -lelf -liberty $(shell pkg-config --libs libcjson) -lz -lm
FUZZ_CFLAGS += -DHAVE_CONFIG_H -I$(builddir) $(shell pkg-config --cflags libcjson)

.PHONY: fuzz corpus reccorpus
fuzz: $(FUZZ_DIR)/fuzz_decode $(FUZZ_DIR)/fuzz_rings $(FUZZ_DIR)/fuzz_offcpu $(FUZZ_DIR)/fuzz_lines \
	$(FUZZ_DIR)/fuzz_diff $(FUZZ_DIR)/fuzz_record
	rm -rf $(FUZZ_DIR)/cwork && mkdir -p $(FUZZ_DIR)/cwork
	cd $(FUZZ_DIR) && ./fuzz_record -max_total_time=$(FUZZ_RECORD_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=16384 -print_final_stats=1 cwork \
		'$(abspath $(srcdir))/tests/fuzz/reccorpus'
	rm -rf $(FUZZ_DIR)/recout && mkdir -p $(FUZZ_DIR)/recout
	cd $(FUZZ_DIR) && { ls -d '$(abspath $(srcdir))'/tests/fuzz/reccorpus/*; \
		ls -d cwork/* 2>/dev/null | head -n 300; } | \
		FUZZ_OUT_DIR=recout xargs ./fuzz_record -runs=1 >recreplay.log 2>&1 || \
		{ tail -n 20 recreplay.log; exit 1; }
	sh $(srcdir)/tests/fuzz/check-outputs $(FUZZ_DIR)/recout '$(abspath $(srcdir))'
	rm -rf $(FUZZ_DIR)/dwork && mkdir -p $(FUZZ_DIR)/dwork
	cd $(FUZZ_DIR) && ./fuzz_diff -max_total_time=$(FUZZ_DIFF_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 dwork \
		'$(abspath $(srcdir))/tests/fuzz/diffcorpus'
	rm -rf $(FUZZ_DIR)/lwork && mkdir -p $(FUZZ_DIR)/lwork
	cd $(FUZZ_DIR) && ./fuzz_lines -max_total_time=$(FUZZ_LINES_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=16384 -print_final_stats=1 lwork
	rm -rf $(FUZZ_DIR)/owork && mkdir -p $(FUZZ_DIR)/owork
	cd $(FUZZ_DIR) && ./fuzz_offcpu -max_total_time=$(FUZZ_OFFCPU_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=8192 -print_final_stats=1 owork
	rm -rf $(FUZZ_DIR)/rwork && mkdir -p $(FUZZ_DIR)/rwork
	cd $(FUZZ_DIR) && ./fuzz_rings -max_total_time=$(FUZZ_RING_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=20000 -print_final_stats=1 rwork
	rm -rf $(FUZZ_DIR)/work && mkdir -p $(FUZZ_DIR)/work
	cd $(FUZZ_DIR) && ./fuzz_decode -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
		-rss_limit_mb=1024 -max_len=20000 -print_final_stats=1 \
		work '$(abspath $(srcdir))/tests/fuzz/corpus'
	rm -rf $(FUZZ_DIR)/out && mkdir -p $(FUZZ_DIR)/out
	cd $(FUZZ_DIR) && { ls -d '$(abspath $(srcdir))'/tests/fuzz/corpus/*; \
		ls -d work/* 2>/dev/null | head -n 300; } | \
		FUZZ_OUT_DIR=out xargs ./fuzz_decode -runs=1 >replay.log 2>&1 || \
		{ tail -n 20 replay.log; exit 1; }
	sh $(srcdir)/tests/fuzz/check-outputs $(FUZZ_DIR)/out '$(abspath $(srcdir))'

$(FUZZ_DIR)/fuzz_rings: $(FUZZ_RING_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_RING_SRCS) -o $@ $(FUZZ_LIBS)

$(FUZZ_DIR)/fuzz_record: $(FUZZ_RECORD_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_RECORD_SRCS) -o $@ $(FUZZ_LIBS)

$(FUZZ_DIR)/fuzz_diff: $(FUZZ_DIFF_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_DIFF_SRCS) -o $@ $(FUZZ_LIBS)

$(FUZZ_DIR)/fuzz_lines: $(FUZZ_LINES_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_LINES_SRCS) -o $@ $(FUZZ_LIBS)

$(FUZZ_DIR)/fuzz_offcpu: $(FUZZ_OFFCPU_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_OFFCPU_SRCS) -o $@

$(FUZZ_DIR)/fuzz_decode: $(FUZZ_SRCS) $(wildcard $(srcdir)/lib/*.h)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SRCS) -o $@ $(FUZZ_LIBS)

corpus: $(FUZZ_DIR)/mkcorpus
	rm -f $(srcdir)/tests/fuzz/corpus/seed-[0-9]*
	mkdir -p $(srcdir)/tests/fuzz/corpus
	$(FUZZ_DIR)/mkcorpus $(srcdir)/tests/fuzz/corpus

$(FUZZ_DIR)/mkcorpus: $(srcdir)/tests/fuzz/mkcorpus.c $(srcdir)/lib/wire/encode.h
	mkdir -p $(FUZZ_DIR)
	$(CC) -std=gnu11 -Wall -Wextra -O1 $(foreach d,base wire perf spans run out span,-I$(srcdir)/lib/$(d)) $< -o $@

reccorpus:
	sh $(srcdir)/tests/fuzz/mkreccorpus '$(abspath $(builddir))/tests/stage/usr/local' \
		'$(abspath $(srcdir))' $(srcdir)/tests/fuzz/reccorpus
