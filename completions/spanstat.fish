# fish completion for spanstat: its options (exactly those of cmd/options.c,
# one `complete -c spanstat` line per option; tests/bats/docs.bats checks),
# event names for -e/--event from `spanstat --list`, files for the outputs,
# and after COMMAND that command's own completion; the subcommands diff,
# record (the measurement options) and report (the output options, then
# record files).

# True when spanstat's first word is the subcommand named (one of $argv)
# and the word being completed comes after it.
function __spanstat_subcommand
    set -l words (commandline -opc)
    set -q words[2]; and contains -- $words[2] $argv
end

# True until COMMAND (the first word that is neither an option nor an
# option's argument, or the word after --) is on the command line; never
# in spanstat diff or spanstat report, which run nothing.
function __spanstat_no_command
    set -l words (commandline -opc)
    set -e words[1]
    switch "$words[1]"
        case diff report
            return 1
        case record
            set -e words[1]
    end
    set -l skip 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --
                return 1
            case --list
                return 1
            case '--*=*'
            case --event --repeat --pid --tid --cpu --interval-print --field-separator --output --folded --json --perfetto --pprof --flamegraph --flamechart --record --demangle --min-duration --max-depth --filter --exclude --span-events --weight
                set skip 1
            case --interval-count --delay --timeout --pre --post --cgroup --for-each-cgroup --keep-last -D -G
                set skip 1
            case -e -r -p -t -C -I -x -o
                set skip 1
            case '-*'
            case '*'
                return 1
        end
    end
    return 0
end

# True where spanstat's output options go: before COMMAND, but not in
# spanstat record (its outputs come from spanstat report).
function __spanstat_outputs
    __spanstat_no_command; and not __spanstat_subcommand record
end

# The files ending in one of the suffixes $argv (without the dot), and the
# directories, that complete the word being typed.
function __spanstat_files
    set -l tok (commandline -ct)
    for f in $tok*
        if test -d $f
            printf '%s/\n' $f
        else if contains -- (string replace -r '.*\.' '' -- $f) $argv
            printf '%s\n' $f
        end
    end
end

# Event names with their kind, completed after the last ',' or '{' of the
# list being typed.
function __spanstat_events
    set -l tok (commandline -ct)
    set -l head (string match -r '^.*[,{]' -- $tok)
    # --event=LIST (--span-events=LIST) arrives here with its option: fish
    # completes the value.
    set head (string replace -r '^--(event|span-events)=' '' -- $head)
    spanstat --list 2>/dev/null | string replace -r '^\s+(\S+)\s+(\S+).*' "$head\$1\t\$2"
end

complete -c spanstat -f -n __spanstat_no_command -a '(__fish_complete_command)'
complete -c spanstat -f -n __fish_is_first_token -a diff -d 'Compare two sessions (record files or JSON)'
complete -c spanstat -f -n __fish_is_first_token -a record -d 'Run COMMAND, keep everything in a record file'
complete -c spanstat -f -n __fish_is_first_token -a report -d 'Make the outputs from record files'
complete -c spanstat -f -n 'not __spanstat_no_command; and not __spanstat_subcommand diff report record; and not __fish_seen_argument -l list' -a '(__fish_complete_subcommand -e -r -p -t -C -I -x -o --event --repeat --pid --tid --cpu --interval-print --field-separator --output --folded --json --perfetto --pprof --flamegraph --flamechart --record --demangle --min-duration --max-depth --filter --exclude --span-events --weight)'
complete -c spanstat -f -n 'not __spanstat_no_command; and __spanstat_subcommand record; and not __fish_seen_argument -l list' -a '(__fish_complete_subcommand --fcs-skip=2 -e -r -p -t -C -I -o --event --repeat --pid --tid --cpu --interval-print --output --demangle --min-duration --max-depth --filter --exclude --span-events)'
complete -c spanstat -f -n '__fish_seen_argument -l list' -a '(__spanstat_events)'

complete -c spanstat -n __spanstat_no_command -s e -l event -x -a '(__spanstat_events)' -d 'Events to count, in perf syntax'
complete -c spanstat -n __spanstat_no_command -s r -l repeat -x -d 'Run COMMAND N times; print means and spread'
complete -c spanstat -n __spanstat_no_command -s p -l pid -x -a '(__fish_complete_pids)' -d 'Count running processes instead of COMMAND'
complete -c spanstat -n __spanstat_no_command -s t -l tid -x -d 'Count running threads'
complete -c spanstat -n __spanstat_no_command -s a -l all-cpus -d 'Count system-wide, on every CPU'
complete -c spanstat -n __spanstat_no_command -s C -l cpu -x -d 'Count system-wide on these CPUs (0,2-3)'
complete -c spanstat -n __spanstat_outputs -s A -l no-aggr -d 'A row per CPU (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l per-thread -d 'A row per thread (with -p, -t or -a)'
complete -c spanstat -n __spanstat_outputs -l per-core -d 'A row per core (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l per-die -d 'A row per die (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l per-socket -d 'A row per socket (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l per-node -d 'A row per NUMA node (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l per-cache -d 'A row per cache instance (with -a or -C)'
complete -c spanstat -n __spanstat_outputs -l no-merge -d 'Accepted for perf: each event is one PMU\'s'
complete -c spanstat -n __spanstat_no_command -s I -l interval-print -x -d 'Print counts every MS milliseconds'
complete -c spanstat -n __spanstat_no_command -l interval-count -x -d 'With -I, print N intervals, then no more'
complete -c spanstat -n __spanstat_no_command -s D -l delay -x -d 'Start counting MS milliseconds after COMMAND starts'
complete -c spanstat -n __spanstat_no_command -l timeout -x -d 'Stop after MS milliseconds; COMMAND gets SIGTERM'
complete -c spanstat -n __spanstat_no_command -l keep-last -x -a '128K 1M 64M 1G' -d 'Keep only the last SIZE of events in the record file or traces (flight recorder)'
complete -c spanstat -n __spanstat_no_command -s n -l null -d 'Count nothing, only the times'
complete -c spanstat -n __spanstat_no_command -l pre -x -d 'Shell command to run before each run'
complete -c spanstat -n __spanstat_no_command -l post -x -d 'Shell command to run after each run'
complete -c spanstat -n __spanstat_outputs -s G -l cgroup -x -d 'With -a or -C, count the events before it in these cgroups'
complete -c spanstat -n __spanstat_outputs -l for-each-cgroup -x -d 'With -a or -C, count every event in each of these cgroups'
complete -c spanstat -n __spanstat_outputs -s x -l field-separator -x -d 'Print counts as CSV with separator SEP'
complete -c spanstat -n __spanstat_outputs -s o -l output -r -F -d 'Write the summary to FILE instead of stderr'
complete -c spanstat -n __spanstat_outputs -l append -d 'Append to the --output FILE'
complete -c spanstat -n __spanstat_outputs -l spans -d 'Collect spans; print the span table'
complete -c spanstat -n __spanstat_no_command -l demangle -x -a 'simple full no' -d 'How C++ function names show'
complete -c spanstat -n __spanstat_no_command -l span-events -x -a '(__spanstat_events)' -d 'Count these events in every span'
complete -c spanstat -n __spanstat_no_command -l span-allocs -d 'Count each span\'s allocations and frees'
complete -c spanstat -n __spanstat_no_command -l span-args -d 'Keep the spans\' typed arguments when no output streams spans'
complete -c spanstat -n __spanstat_no_command -l python -d 'Every Python function call a span (=c: C functions too)'
complete -c spanstat -n __spanstat_outputs -l weight -x -a 'wall cpu off-cpu allocs alloc-bytes' -d 'What --folded, --pprof and --json count'
complete -c spanstat -n __spanstat_no_command -l no-off-cpu -d 'Do not split span times into on- and off-CPU'
complete -c spanstat -n __spanstat_no_command -l lib-calls -d 'Make library calls through the PLT spans (=GLOB)'
complete -c spanstat -n __spanstat_no_command -l lib-calls-all -d 'With --lib-calls: the libraries\' calls too'
complete -c spanstat -n __spanstat_no_command -l no-spans -d 'Collect no spans: --json and a record hold counts only'
complete -c spanstat -n __spanstat_outputs -l folded -r -F -d 'Write spans as folded stacks to FILE'
complete -c spanstat -n __spanstat_outputs -l folded-threads -d 'Root folded stacks in process and thread'
complete -c spanstat -n __spanstat_outputs -l compensate -d 'Take the instrumentation\'s own cost out of span times'
complete -c spanstat -n __spanstat_outputs -l json -r -F -d 'Write the results, spans included, as JSON to FILE'
complete -c spanstat -n __spanstat_outputs -l perfetto -r -F -d 'Write a Perfetto trace to FILE'
complete -c spanstat -n __spanstat_outputs -l pprof -r -F -d 'Write the spans as a gzipped pprof profile'
complete -c spanstat -n __spanstat_outputs -l flamegraph -r -F -d 'Write the spans as an SVG flame graph'
complete -c spanstat -n __spanstat_outputs -l flamechart -r -F -d 'Write every span in time order as an SVG flame chart'
complete -c spanstat -n __spanstat_outputs -l record -r -F -d 'Also keep the whole session in the record FILE'
complete -c spanstat -n __spanstat_no_command -l min-duration -x -d 'Send no span shorter than TIME (500ns, 2us, 1ms)'
complete -c spanstat -n __spanstat_no_command -l max-depth -x -d 'Send no span deeper than N'
complete -c spanstat -n __spanstat_no_command -l filter -x -d 'Send only spans inside a span matching GLOB'
complete -c spanstat -n __spanstat_no_command -l exclude -x -d 'Send no span matching GLOB, nor any under it'
complete -c spanstat -n __spanstat_no_command -l list -d 'List the events usable here'
complete -c spanstat -n __spanstat_no_command -s h -l help -d 'Show the help'
complete -c spanstat -n __spanstat_no_command -s V -l version -d 'Show the version'

# The subcommands' options are declared in loops: tests/bats/docs.bats reads
# the option lines above as spanstat's own.

# spanstat diff [OPTIONS] OLD NEW: its own options, then record files or
# JSON documents
for o in threshold alpha primary-paths
    complete -c spanstat -n '__spanstat_subcommand diff' -l $o -x
end
for o in all
    complete -c spanstat -n '__spanstat_subcommand diff' -l $o
end
for o in json folded flamegraph
    complete -c spanstat -n '__spanstat_subcommand diff' -l $o -r -F
end
complete -c spanstat -f -n '__spanstat_subcommand diff; and not string match -q -- "-*" (commandline -ct)' -k -a '(__spanstat_files rec json)'

# spanstat record [-o FILE] [OPTIONS] [--] COMMAND: -o names the record file
# (the other measurement options are spanstat's, above)
for o in o:output
    set -l so (string split : -- $o)
    complete -c spanstat -n '__spanstat_subcommand record; and __spanstat_no_command' -s $so[1] -l $so[2] -r -F -d 'The record file (default spanstat.rec)'
end

# spanstat report [OPTIONS] FILE...: the outputs, then record files
for o in o:output
    set -l so (string split : -- $o)
    complete -c spanstat -n '__spanstat_subcommand report' -s $so[1] -l $so[2] -r -F -d 'Write the summary to FILE instead of stdout'
end
for o in x:field-separator
    set -l so (string split : -- $o)
    complete -c spanstat -n '__spanstat_subcommand report' -s $so[1] -l $so[2] -x -d 'Print counts as CSV with separator SEP'
end
for o in 'folded:Write spans as folded stacks to FILE' \
    'json:Write the results as JSON to FILE' \
    'perfetto:Write one Perfetto trace of every rank to FILE' \
    'pprof:Write the spans as a gzipped pprof profile' \
    'flamegraph:Write the spans as an SVG flame graph' \
    'flamechart:Write every span in time order as an SVG flame chart'
    set -l lo (string split -m 1 : -- $o)
    complete -c spanstat -n '__spanstat_subcommand report' -l $lo[1] -r -F -d $lo[2]
end
for o in 'append:Append to the --output FILE' \
    'spans:Print the span table' \
    'folded-threads:Root folded stacks in process and thread' \
    'compensate:Take the instrumentation\'s own cost out of span times'
    set -l lo (string split -m 1 : -- $o)
    complete -c spanstat -n '__spanstat_subcommand report' -l $lo[1] -d $lo[2]
end
for o in weight
    complete -c spanstat -n '__spanstat_subcommand report' -l $o -x -a 'wall cpu off-cpu allocs alloc-bytes' -d 'What --folded counts'
end
complete -c spanstat -n '__spanstat_subcommand report' -s j -l jobs -x -d 'Make the outputs with N threads (same bytes for any N)'
for o in h:help:'Show the help' V:version:'Show the version'
    set -l so (string split -m 2 : -- $o)
    complete -c spanstat -n '__spanstat_subcommand report' -s $so[1] -l $so[2] -d $so[3]
end
complete -c spanstat -f -n '__spanstat_subcommand report; and not string match -q -- "-*" (commandline -ct)' -k -a '(__spanstat_files rec)'
