# pfreplay.bash: decoding a --perfetto trace with protoc (pf_decode, against
# the schema in tests/perfetto) and replaying it as
# trace_processor reads it; loaded by perfetto.bats and mpi.bats.  pf_load
# skips (fails under CI) with $PF_MISSING set when it cannot decode.

# The replay, as trace_processor reads a trace: a first pass in file order
# (PF_TOKENIZE) keeps each packet sequence's state (cleared by its first
# packet; its interned names, TracePacketDefaults and incremental clock),
# resolves timestamps to MONOTONIC ns, names and tracks, and reads the track
# descriptors; the events are then sorted by timestamp (stable, as
# trace_processor's sorter does), and a second pass (PF_PARSE) builds the
# slice stacks.  pf_load leaves one line per finding in TRACE.ev:
#   P uuid pid name                          process track (its last name)
#   T uuid pid tid name                      thread track (its last name)
#   C uuid parent name unit                  counter track
#   A uuid parent name                       a named track of slices (async
#                                            spans: its slices' pid, tid and
#                                            thread are -, -, async)
#   S uuid pid tid thread path unfinished    a closed slice; path is a;b;c
#                                            from the outermost open slice,
#                                            unfinished 1 when its begin or
#                                            end carries the debug annotation
#                                            "unfinished"
#   I uuid pid tid thread name               an instant event
#   V uuid value                             a counter sample
#   Q seq packets                            a packet sequence, its packets
#   E message                                what a consumer would drop or
#                                            misread: a sequence whose first
#                                            packet does not clear its state,
#                                            interned names used before their
#                                            definition on their sequence, a
#                                            MONOTONIC time without an earlier
#                                            snapshot holding BOOTTIME, a
#                                            clock the sequence has no
#                                            snapshot for, events on tracks
#                                            not yet described, descriptors
#                                            without a timestamp, an END with
#                                            nothing open, slices left open
# shellcheck disable=SC2016
PF_TOKENIZE='
function reset_packet() {
	delete f; nclk = 0; delete clk; delete clkts; delete clkinc
	nint = 0; delete iid; delete iname; pend = ""; ann_unf = 0
}
function err(m) { print "E packet " npk ": " m }
function pathof(d,   i, r) {
	r = ""
	for (i = 1; i <= d; i++) r = (r == "" ? st[i] : r "." st[i])
	return r
}
function clear_seq(seq,   key) {
	for (key in names) if (index(key, seq SUBSEP) == 1) delete names[key]
	delete defclk[seq]; delete deftrack[seq]; delete seqclk[seq]
	cleared[seq] = 1
}
function end_packet(   seq, i, d, u, n, c, ts, mono, incr) {
	npk++
	seq = f["trusted_packet_sequence_id"]
	if (seq == "" || seq == 0) err("no trusted_packet_sequence_id")
	if (int(f["sequence_flags"]) % 2 == 1) clear_seq(seq)
	else if (!(seq in npks)) err("sequence " seq " does not start by clearing its state")
	npks[seq]++
	if ("trace_packet_defaults" in f) {
		defclk[seq] = f["trace_packet_defaults.timestamp_clock_id"]
		deftrack[seq] = f["trace_packet_defaults.track_event_defaults.track_uuid"]
	}
	for (i = 1; i <= nint; i++) names[seq, iid[i]] = iname[i]
	if ("clock_snapshot" in f) {
		for (i = 1; i <= nclk; i++) for (d = 1; d <= nclk; d++) snap[clk[i], clk[d]] = 1
		mono = ""; incr = 0
		for (i = 1; i <= nclk; i++) {
			if (clk[i] + 0 == 3) mono = clkts[i]
			if (clk[i] + 0 >= 64 && clk[i] + 0 < 128) incr = i
		}
		if (incr) {
			if (!clkinc[incr] || mono == "") err("sequence clock not incremental or not tied to MONOTONIC")
			if (!((6, 3) in snap)) err("sequence clock before a snapshot holding BOOTTIME")
			seqclk[seq] = clk[incr]; seqval[seq] = clkts[incr] + 0; seqoff[seq] = mono - clkts[incr]
		}
		return
	}
	if ("timestamp" in f) {
		c = ("timestamp_clock_id" in f) ? f["timestamp_clock_id"] : defclk[seq]
		if (c == 3) {
			if (!((6, 3) in snap)) err("MONOTONIC time without an earlier snapshot holding BOOTTIME")
			ts = f["timestamp"] + 0
		} else if (c != "" && (seq in seqclk) && c == seqclk[seq]) {
			seqval[seq] += f["timestamp"]; ts = seqval[seq] + seqoff[seq]
		} else {
			err("timestamp on clock \"" c "\" with no snapshot on sequence " seq)
			return
		}
	}
	if ("track_descriptor.uuid" in f) {
		u = f["track_descriptor.uuid"]
		if ("track_descriptor.process.pid" in f) {
			kind[u] = "P"; pid[u] = f["track_descriptor.process.pid"]
			tname[u] = f["track_descriptor.process.process_name"]
		} else if ("track_descriptor.thread.tid" in f) {
			kind[u] = "T"; pid[u] = f["track_descriptor.thread.pid"]
			tid[u] = f["track_descriptor.thread.tid"]
			tname[u] = f["track_descriptor.thread.thread_name"]
		} else if ("track_descriptor.counter" in f) {
			kind[u] = "C"; tname[u] = f["track_descriptor.name"]
			parent[u] = f["track_descriptor.parent_uuid"]
			unit[u] = f["track_descriptor.counter.unit"] f["track_descriptor.counter.unit_name"]
		} else if ("track_descriptor.name" in f) {
			kind[u] = "A"; tname[u] = f["track_descriptor.name"]
			parent[u] = f["track_descriptor.parent_uuid"]
		} else if (!(u in kind)) kind[u] = "O"
		if (!("timestamp" in f)) err("track descriptor " u " without a timestamp")
	}
	if (!("track_event.type" in f)) return
	u = ("track_event.track_uuid" in f) ? f["track_event.track_uuid"] : deftrack[seq]
	if (!(u in kind)) err("event on undescribed track " u)
	if ("track_event.name_iid" in f) {
		if (!(seq in cleared)) err("interned name used before INCREMENTAL_STATE_CLEARED")
		if (!((seq, f["track_event.name_iid"]) in names)) err("undefined name iid " f["track_event.name_iid"] " on sequence " seq)
		n = names[seq, f["track_event.name_iid"]]
	} else n = f["track_event.name"]
	if (n == "") n = "-"
	if ("track_event.counter_value" in f) n = f["track_event.counter_value"]
	if ("track_event.double_counter_value" in f) n = f["track_event.double_counter_value"]
	printf "X %.0f %d %s %s %s %d\n", ts, npk, u, f["track_event.type"], n, ann_unf
}
/^packet \{$/ { reset_packet(); depth = 0; next }
/ \{$/ {
	s = $0; sub(/^ +/, "", s); sub(/ \{$/, "", s)
	st[++depth] = s; f[pathof(depth)] = ""; next
}
/^ *\}$/ { if (depth == 0) end_packet(); else depth--; next }
{
	s = $0; sub(/^ +/, "", s)
	k = substr(s, 1, index(s, ":") - 1); v = substr(s, index(s, ":") + 2)
	if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2)
	p = pathof(depth); key = (p == "" ? k : p "." k)
	f[key] = v
	if (key == "clock_snapshot.clocks.clock_id") clk[++nclk] = v
	if (key == "clock_snapshot.clocks.timestamp") clkts[nclk] = v
	if (key == "clock_snapshot.clocks.is_incremental") clkinc[nclk] = (v == "true")
	if (key == "interned_data.event_names.iid") pend = v
	if (key == "interned_data.event_names.name") { iid[++nint] = pend; iname[nint] = v }
	if (key == "track_event.debug_annotations.name" && v == "unfinished") ann_unf = 1
}
END {
	for (u in kind) {
		if (kind[u] == "P") print "P", u, pid[u], tname[u]
		if (kind[u] == "T") print "T", u, pid[u], tid[u], tname[u]
		if (kind[u] == "C") print "C", u, parent[u], tname[u], unit[u]
		if (kind[u] == "A") print "A", u, parent[u], tname[u]
	}
	for (q in npks) print "Q", q, npks[q]
}'
# shellcheck disable=SC2016
PF_PARSE='
FNR == NR {
	if ($1 == "T") { pid[$2] = $3; tid[$2] = $4; tname[$2] = $5 }
	if ($1 == "A") { pid[$2] = "-"; tid[$2] = "-"; tname[$2] = "async" }
	next
}
{
	u = $4; t = $5; n = $6
	if (t == "TYPE_SLICE_BEGIN") {
		sp[u]++; stk[u, sp[u]] = n; unf[u, sp[u]] = $7
	} else if (t == "TYPE_SLICE_END") {
		if (sp[u] < 1) { print "E end with no open slice on track " u " at " $2; next }
		path = stk[u, 1]
		for (d = 2; d <= sp[u]; d++) path = path ";" stk[u, d]
		print "S", u, pid[u], tid[u], tname[u], path, ($7 || unf[u, sp[u]]) ? 1 : 0
		sp[u]--
	} else if (t == "TYPE_INSTANT") {
		print "I", u, pid[u], tid[u], tname[u], n
	} else if (t == "TYPE_COUNTER") {
		print "V", u, n
	}
}
END { for (u in sp) if (sp[u] > 0) print "E track " u " ends with " sp[u] " open slices" }'

# pf_load TRACE: decodes TRACE into TRACE.txt with protoc and replays it into
# TRACE.ev; fails when protoc rejects the file or the replay finds an error.
pf_load() {
	[ -z "$PF_MISSING" ] || skip_or_fail "$PF_MISSING"
	pf_decode "$1" "$1.txt" || {
		echo "protoc could not decode $1" >&2
		return 1
	}
	awk "$PF_TOKENIZE" "$1.txt" >"$1.tok"
	grep -v '^X ' "$1.tok" >"$1.ev" || true
	grep '^X ' "$1.tok" | sort -s -k2,2n -k3,3n | awk "$PF_PARSE" "$1.ev" - >"$1.sl"
	cat "$1.sl" >>"$1.ev"
	rm "$1.tok" "$1.sl"
	if grep '^E ' "$1.ev" >&2; then
		return 1
	fi
}

