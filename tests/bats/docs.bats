#!/usr/bin/env bats
# docs.bats: the documentation agrees with the binary.  --help (printed from
# cmd/options.c's table) is the reference; the man page's OPTIONS section,
# the bash, zsh and fish completions and README's Options table must offer
# exactly its options.  The man page renders without warnings, its examples
# run, the completions parse and complete, and --version is configure.ac's.
#
# Extraction rules (keep the formats so these keep working):
#   --help     option lines "  -e, --event=LIST  ..." / "      --append  ...":
#              the first "--name" of each line, and "-X," before it
#   man page   the tag line after each .TP in .SH OPTIONS, options written
#              "\-e" and "\-\-event"; examples are ".EX" lines "$ spanstat ...",
#              an optional trailing "# exit status N"
#   bash       what _spanstat puts in COMPREPLY for "spanstat -" and "spanstat
#              report -" (run for real)
#   zsh        _arguments specs, one per option name: '(excl)*-e+[...' or
#              '(excl)--event=[...'
#   fish       "complete -c spanstat ... -s X -l name ..." lines
#   README     the first cell of the table rows under "## Options"

load helpers

: "${DOCS_MAN1:=$SPANSTAT_MANDIR/man1/spanstat.1}"
: "${DOCS_BASHCOMP:=$SPANSTAT_DATADIR/bash-completion/completions/spanstat}"
: "${DOCS_ZSHCOMP:=$SPANSTAT_DATADIR/zsh/vendor-completions/_spanstat}"
: "${DOCS_FISHCOMP:=$SPANSTAT_DATADIR/fish/vendor_completions.d/spanstat.fish}"
: "${DOCS_README:=$SRCDIR/README.md}"
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

setup() {
	cd "$BATS_TEST_TMPDIR"
	# the completions run `spanstat --list`: the staged one must be found first
	PATH="$(dirname "$SPANSTAT"):$PATH"
}

# --- extraction: each prints one option per line, sorted ----------------------

help_options() {
	"$SPANSTAT" --help >help.txt || return 1
	sed -nE 's/^  (-[A-Za-z],|   ) --([a-z][a-z-]*).*/--\2/p' help.txt
	sed -nE 's/^  (-[A-Za-z]), --.*/\1/p' help.txt
}

# The .TP tag lines of the OPTIONS section.
man_option_tags() {
	awk '/^\.SH / { in_opts = ($2 == "OPTIONS") } in_opts && tag { print; tag = 0 }
	     in_opts && /^\.TP/ { tag = 1 }' "$DOCS_MAN1"
}

# roff's minus sign "\-" as the "-" it prints.
unescape_minus() {
	sed 's/\\-/-/g' "$@"
}

man_options() {
	man_option_tags | unescape_minus >tags.txt
	grep -oE -- '--[a-z][a-z-]*' tags.txt
	grep -oE -- '(^|[^-[:alnum:]])-[A-Za-z]([^-[:alnum:]]|$)' tags.txt | grep -oE -- '-[A-Za-z]'
}

# Asks the bash completion itself: COMPREPLY for "spanstat" WORDS...
bash_complete() {
	bash -c '
		source "$1" || exit 1
		source "$2" || exit 1
		shift 2
		COMP_WORDS=(spanstat "$@")
		COMP_CWORD=$#
		COMP_LINE="spanstat $*"
		COMP_POINT=${#COMP_LINE}
		_spanstat spanstat "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMPLETION" "$DOCS_BASHCOMP" "$@"
}

# spanstat's and, for its own options (-j), spanstat report's
bash_options() {
	{
		bash_complete -
		bash_complete report -
	} | sed 's/=$//'
}

zsh_options() {
	sed -nE "s/^[[:space:]]*'(\([^)]*\))?\*?(--?[A-Za-z][a-z-]*)[-+=]?(\[|:|').*/\2/p" "$DOCS_ZSHCOMP"
}

fish_options() {
	# the option lines, with quoted strings (conditions, descriptions) removed
	grep -E '^[[:space:]]*complete[[:space:]]+-c[[:space:]]+spanstat[[:space:]]' "$DOCS_FISHCOMP" |
		sed -E "s/'[^']*'//g; s/\"[^\"]*\"//g" >fish.txt
	grep -oE '(^|[[:space:]])-s[[:space:]]+[A-Za-z]' fish.txt | sed -E 's/.*-s[[:space:]]+/-/'
	grep -oE '(^|[[:space:]])-l[[:space:]]+[a-z][a-z-]*' fish.txt | sed -E 's/.*-l[[:space:]]+/--/'
}

readme_options() {
	awk '/^## / { in_opts = ($0 ~ /^## Options/) } in_opts && /^\|/' "$DOCS_README" |
		cut -d'|' -f2 >readme.txt
	grep -oE -- '--[a-z][a-z-]*' readme.txt
	grep -oE -- '(^|[^-])-[A-Za-z]\b' readme.txt | grep -oE -- '-[A-Za-z]'
}

# same_options NAME FUNCTION: FUNCTION's options are exactly --help's.
same_options() {
	local ref got
	help_options >ref.lst || fail "'$SPANSTAT --help' failed"
	"$2" >got.lst || fail "cannot read the options of $1"
	ref=$(sort -u ref.lst)
	got=$(sort -u got.lst)
	[ "$(wc -l <<<"$ref")" -ge 10 ] || fail "too few options in --help: $ref"
	if [ "$ref" != "$got" ]; then
		echo "options in --help but not in $1:"
		comm -23 <(printf '%s\n' "$ref") <(printf '%s\n' "$got")
		echo "options in $1 but not in --help:"
		comm -13 <(printf '%s\n' "$ref") <(printf '%s\n' "$got")
		fail "$1 and --help disagree on the options"
	fi
}

# --- the option sets ---------------------------------------------------------

@test "the man page's OPTIONS section documents exactly --help's options" {
	same_options "man page $DOCS_MAN1" man_options
	# and each .TP item there is an option
	while IFS= read -r tag; do
		[[ $tag =~ \\-[A-Za-z] || $tag =~ \\-\\-[a-z] ]] || fail "OPTIONS item without an option: $tag"
	done < <(man_option_tags)
}

@test "the man page mentions no long option that spanstat lacks" {
	run help_options
	assert_success
	local known=$output o
	for o in $(unescape_minus "$DOCS_MAN1" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -qxF -- "$o" <<<"$known" || fail "the man page mentions $o, which --help lacks"
	done
}

@test "the bash completion offers exactly --help's options" {
	[ -r "$BASH_COMPLETION" ] || skip_or_fail "bash-completion not installed (Debian package bash-completion)"
	same_options "the bash completion $DOCS_BASHCOMP" bash_options
}

@test "the zsh completion declares exactly --help's options" {
	same_options "the zsh completion $DOCS_ZSHCOMP" zsh_options
}

@test "the fish completion declares exactly --help's options" {
	same_options "the fish completion $DOCS_FISHCOMP" fish_options
}

@test "README's Options table lists exactly --help's options" {
	if ! grep -q '^## Options' "$DOCS_README"; then
		skip "README.md has no '## Options' section to check"
	fi
	same_options "README.md's Options table" readme_options
}

# --- the subcommands: --help's table (cmd/main.c) is the reference -------------

help_subcommands() {
	"$SPANSTAT" --help >help.txt || return 1
	awk '/^Subcommands/ { on = 1; next } on && /^$/ { exit } on { print $1 }' help.txt | sort
}

@test "the subcommands of --help are the man page's, the completions', and each has --help" {
	run help_subcommands
	assert_success
	local ref=$output
	[ "$(wc -l <<<"$ref")" -ge 3 ] || fail "too few subcommands in --help: $ref"
	# the man page's SYNOPSIS: .SY "spanstat NAME"
	assert_equal "$(sed -nE 's/^\.SY "spanstat ([a-z]+)"$/\1/p' "$DOCS_MAN1" | sort)" "$ref"
	# bash: the words offered as spanstat's first word
	assert_equal "$(sed -nE "/cword == 1/ s/.*compgen -W '([a-z ]+)' -- .*/\1/p" "$DOCS_BASHCOMP" |
		tr ' ' '\n' | sort)" "$ref"
	# zsh: the subcommands array; fish: the first token's completions
	assert_equal "$(sed -nE "s/^[[:space:]]*'([a-z]+):.*/\1/p" "$DOCS_ZSHCOMP" | sort)" "$ref"
	assert_equal "$(sed -nE 's/.*-n __fish_is_first_token -a ([a-z]+) .*/\1/p' "$DOCS_FISHCOMP" |
		sort)" "$ref"
	for s in $ref; do
		run "$SPANSTAT" "$s" --help
		assert_success
		assert_line --index 0 --regexp "^Usage: spanstat $s "
	done
}

# --- the completion scripts ---------------------------------------------------

@test "the bash completion is valid bash" {
	run bash -n "$DOCS_BASHCOMP"
	assert_success
	assert_output ''
}

@test "the zsh completion is valid zsh" {
	require_cmd zsh
	run zsh -n "$DOCS_ZSHCOMP"
	assert_success
	assert_output ''
}

@test "the fish completion is valid fish" {
	require_cmd fish
	run fish -n "$DOCS_FISHCOMP"
	assert_success
	assert_output ''
}

@test "bash completes options, event names and event lists" {
	[ -r "$BASH_COMPLETION" ] || skip_or_fail "bash-completion not installed (Debian package bash-completion)"
	run "$SPANSTAT" --list
	assert_success
	assert_line --regexp '^  task-clock +software '

	run bash_complete --ev
	assert_success
	assert_line --index 0 -- '--event='
	assert_equal "${#lines[@]}" 1

	run bash_complete -e task-c
	assert_success
	assert_line 'task-clock'
	refute_line --regexp '^[^t]'

	run bash_complete --event=task-clock,page-f
	assert_success
	assert_line 'task-clock,page-faults'

	# -p and -t take running ids, the one after the last comma too; -C CPUs
	sleep 30 &
	local pid=$!
	run bash_complete -p "$pid"
	kill "$pid"
	assert_success
	assert_line "$pid"
	run bash_complete --pid=1,"$$"
	assert_success
	assert_line "1,$$"
	run bash_complete -C ''
	assert_success
	assert_line 0
	refute_line "$(nproc)"

	# spanstat diff has its own options
	run bash_complete diff --th
	assert_success
	assert_line -- '--threshold='
	refute_line -- '--event='

	# after COMMAND, spanstat's own options are not offered
	run bash_complete -e task-clock -- true --ev
	assert_success
	[[ $output != *--event=* ]] || fail "spanstat's options offered after COMMAND: $output"
}

@test "fish completes options and event names" {
	require_cmd fish
	run fish -c 'source $argv[1]; complete -C"spanstat --ev"; complete -C"spanstat -e task-c"' "$DOCS_FISHCOMP"
	assert_success
	assert_line --regexp $'^--event\t'
	assert_line --regexp $'^task-clock\t'
}

@test "bash and fish complete PMU events and tracepoints, as --list names them" {
	[ -r "$BASH_COMPLETION" ] || skip_or_fail "bash-completion not installed (Debian package bash-completion)"
	run -0 "$SPANSTAT" --list
	assert_line --regexp '^  msr/tsc/ ' || skip_or_fail "no msr PMU here"
	assert_line --regexp '^  sched:sched_switch +tracepoint '
	run bash_complete -e msr/t
	assert_success
	assert_line 'msr/tsc/'
	run bash_complete --span-events task-clock,msr/t
	assert_success
	assert_line 'task-clock,msr/tsc/'
	run bash_complete -e sched:sched_swi
	assert_success
	assert_line 'sched_switch' # what follows the ':' bash breaks words at
	require_cmd fish
	run fish -c 'source $argv[1]; complete -C"spanstat --span-events=task-clock,msr/t"; complete -C"spanstat -e sched:sched_swi"' "$DOCS_FISHCOMP"
	assert_success
	assert_line --regexp $'^--span-events=task-clock,msr/tsc/\tmsr$'
	assert_line --regexp $'^sched:sched_switch\ttracepoint$'
}

# --- the man page -------------------------------------------------------------

@test "the man page renders without warnings" {
	require_cmd groff
	run groff -man -Tutf8 -ww -z "$DOCS_MAN1"
	assert_success
	assert_output ''
	if command -v man >/dev/null; then
		run env MANWIDTH=80 man --warnings -l "$DOCS_MAN1"
		assert_success
		assert_output --partial 'EXIT STATUS'
		run sh -c 'MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null' _ "$DOCS_MAN1"
		assert_output ''
	fi
}

@test "the man page has the sections a user looks for" {
	local s
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS EVENTS OUTPUT 'EXIT STATUS' ENVIRONMENT \
		FILES EXAMPLES 'SEE ALSO'; do
		grep -qE "^\.SH \"?$s\"?\$" "$DOCS_MAN1" || fail "no $s section in $DOCS_MAN1"
	done
	for s in 125 126 127 SPANSTAT_FD SPANSTAT_PIPE SPANSTAT_PIPE_ID SPANSTAT_CLOCK LD_PRELOAD; do
		grep -qw -- "$s" "$DOCS_MAN1" || fail "$DOCS_MAN1 does not mention $s"
	done
}

# The "$ spanstat" lines of the EXAMPLES .EX blocks, roff escapes undone.
man_examples() {
	awk '/^\.EX/ { ex = 1; next } /^\.EE/ { ex = 0 } ex && /^\$ spanstat / { sub(/^\$ /, ""); print }' "$DOCS_MAN1" |
		sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\&//g' -e 's/\\e/\\/g'
}

@test "every runnable example of the man page works as documented" {
	run man_examples
	assert_success
	local examples=$output line cmd want word ran=0 skipped=0
	export S=$SPANSTAT
	while IFS= read -r line; do
		[[ $line != *\\* ]] || fail "example with a roff escape this test cannot undo: $line"
		want=0
		if [[ $line =~ \#\ exit\ status\ ([0-9]+)$ ]]; then
			want=${BASH_REMATCH[1]}
		fi
		# the target after "--" and every command after "|" must exist here
		cmd=
		for word in $(sed -nE 's/.* -- ([^ ]+).*/\1/p' <<<"$line") \
			$(sed -nE 's/.*\| *([^ ]+).*/\1/p' <<<"$line"); do
			command -v "$word" >/dev/null 2>&1 || cmd=$word
		done
		if [ -n "$cmd" ]; then
			echo "# not run (needs $cmd): $line" >&3
			skipped=$((skipped + 1))
			continue
		fi
		run bash -c "\"\$S\"${line#spanstat}" </dev/null
		[ "$status" -eq "$want" ] ||
			fail "'$line' exited $status, documented $want; output: $output"
		if [ "$want" -lt 125 ] || [ "$want" -gt 127 ]; then
			! grep -q '^spanstat:' <<<"$output" ||
				fail "'$line' reported an error: $output"
		fi
		ran=$((ran + 1))
	done <<<"$examples"
	# the page promises runnable examples: a broken extraction must not pass
	[ "$ran" -ge 8 ] || fail "only $ran examples ran ($skipped skipped)"
}

@test "--version is configure.ac's version, and so is the man page's" {
	local v
	v=$(sed -nE 's/^AC_INIT\(\[spanstat\], *\[([^]]+)\].*/\1/p' "$SRCDIR/configure.ac")
	[ -n "$v" ] || fail "no version in $SRCDIR/configure.ac"
	run "$SPANSTAT" --version
	assert_success
	assert_output "spanstat $v"
	grep -qE "^\.TH SPANSTAT 1 .*\"spanstat $v\"" "$DOCS_MAN1" ||
		fail "$DOCS_MAN1's .TH does not say spanstat $v"
}
