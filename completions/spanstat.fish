# fish completion for spanstat: its options (exactly those of cmd/options.c,
# one `complete -c spanstat` line per option; tests/bats/docs.bats checks),
# event names for -e/--event from `spanstat --list`, files for the outputs,
# and after COMMAND that command's own completion.

# True until COMMAND (the first word that is neither an option nor an
# option's argument, or the word after --) is on the command line.
function __spanstat_no_command
    set -l words (commandline -opc)
    set -e words[1]
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
            case --event --repeat --pid --tid --cpu --interval-print --field-separator --output --folded --json --perfetto --pprof --flamegraph --flamechart --demangle --min-duration --max-depth --filter --exclude --span-events --weight
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

# Event names with their kind, completed after the last ',' or '{' of the
# list being typed.
function __spanstat_events
    set -l tok (commandline -ct)
    set -l head (string match -r '^.*[,{]' -- $tok)
    # --event=LIST arrives here with its option: fish completes the value.
    set head (string replace -r '^--event=' '' -- $head)
    spanstat --list 2>/dev/null | string replace -r '^\s+(\S+)\s+(\S+).*' "$head\$1\t\$2"
end

complete -c spanstat -f -n __spanstat_no_command -a '(__fish_complete_command)'
complete -c spanstat -f -n 'not __spanstat_no_command; and not __fish_seen_argument -l list' -a '(__fish_complete_subcommand -e -r -p -t -C -I -x -o --event --repeat --pid --tid --cpu --interval-print --field-separator --output --folded --json --perfetto --pprof --flamegraph --flamechart --demangle --min-duration --max-depth --filter --exclude --span-events --weight)'
complete -c spanstat -f -n '__fish_seen_argument -l list' -a '(__spanstat_events)'

complete -c spanstat -n __spanstat_no_command -s e -l event -x -a '(__spanstat_events)' -d 'Events to count, in perf syntax'
complete -c spanstat -n __spanstat_no_command -s r -l repeat -x -d 'Run COMMAND N times; print means and spread'
complete -c spanstat -n __spanstat_no_command -s p -l pid -x -a '(__fish_complete_pids)' -d 'Count running processes instead of COMMAND'
complete -c spanstat -n __spanstat_no_command -s t -l tid -x -d 'Count running threads'
complete -c spanstat -n __spanstat_no_command -s a -l all-cpus -d 'Count system-wide, on every CPU'
complete -c spanstat -n __spanstat_no_command -s C -l cpu -x -d 'Count system-wide on these CPUs (0,2-3)'
complete -c spanstat -n __spanstat_no_command -s I -l interval-print -x -d 'Print counts every MS milliseconds'
complete -c spanstat -n __spanstat_no_command -s x -l field-separator -x -d 'Print counts as CSV with separator SEP'
complete -c spanstat -n __spanstat_no_command -s o -l output -r -F -d 'Write the summary to FILE instead of stderr'
complete -c spanstat -n __spanstat_no_command -l append -d 'Append to the --output FILE'
complete -c spanstat -n __spanstat_no_command -l spans -d 'Collect spans; print the span table'
complete -c spanstat -n __spanstat_no_command -l demangle -x -a 'simple full no' -d 'How C++ function names show'
complete -c spanstat -n __spanstat_no_command -l span-events -x -a '(__spanstat_events)' -d 'Count these events in every span'
complete -c spanstat -n __spanstat_no_command -l span-allocs -d 'Count each span\'s allocations and frees'
complete -c spanstat -n __spanstat_no_command -l weight -x -a 'wall cpu off-cpu allocs alloc-bytes' -d 'What --folded counts'
complete -c spanstat -n __spanstat_no_command -l no-off-cpu -d 'Do not split span times into on- and off-CPU'
complete -c spanstat -n __spanstat_no_command -l folded -r -F -d 'Write spans as folded stacks to FILE'
complete -c spanstat -n __spanstat_no_command -l folded-threads -d 'Root folded stacks in process and thread'
complete -c spanstat -n __spanstat_no_command -l compensate -d 'Take the instrumentation\'s own cost out of span times'
complete -c spanstat -n __spanstat_no_command -l json -r -F -d 'Write the results as JSON to FILE'
complete -c spanstat -n __spanstat_no_command -l perfetto -r -F -d 'Write a Perfetto trace to FILE'
complete -c spanstat -n __spanstat_no_command -l pprof -r -F -d 'Write the spans as a gzipped pprof profile'
complete -c spanstat -n __spanstat_no_command -l flamegraph -r -F -d 'Write the spans as an SVG flame graph'
complete -c spanstat -n __spanstat_no_command -l flamechart -r -F -d 'Write every span in time order as an SVG flame chart'
complete -c spanstat -n __spanstat_no_command -l min-duration -x -d 'Send no span shorter than TIME (500ns, 2us, 1ms)'
complete -c spanstat -n __spanstat_no_command -l max-depth -x -d 'Send no span deeper than N'
complete -c spanstat -n __spanstat_no_command -l filter -x -d 'Send only spans inside a span matching GLOB'
complete -c spanstat -n __spanstat_no_command -l exclude -x -d 'Send no span matching GLOB, nor any under it'
complete -c spanstat -n __spanstat_no_command -l list -d 'List the events usable here'
complete -c spanstat -n __spanstat_no_command -s h -l help -d 'Show the help'
complete -c spanstat -n __spanstat_no_command -s V -l version -d 'Show the version'

# spanstat diff [OPTIONS] OLD NEW: its own options (a loop: they are not
# spanstat's, whose option lines tests/bats/docs.bats reads)
for o in threshold alpha json folded flamegraph
    complete -c spanstat -n '__fish_seen_subcommand_from diff' -l $o -r
end
