#!/usr/bin/env bats
# quickstart.bats: README's Quick start works on a fresh machine both as root
# on an image without sudo and as a user with sudo: its first command runs
# tests/install-deps plainly, and install-deps elevates itself only when it
# must; it installs speedscope from npm once.  apt-get, sudo and npm are
# replaced by recording stubs on PATH.

load helpers

setup() {
	# a directory the unprivileged user can reach: the stubs, a copy of
	# install-deps and the log (bats' own temporary directories are private)
	dir=$(mktemp -d /tmp/spanstat-quickstart.XXXXXX)
	mkdir "$dir/stub"
	cp "$SRCDIR/tests/install-deps" "$dir/install-deps"
	printf '#!/bin/sh\necho "apt-get uid=$(id -u) $*" >>"%s/log"\n' "$dir" >"$dir/stub/apt-get"
	printf '#!/bin/sh\necho "npm uid=$(id -u) $*" >>"%s/log"\n' "$dir" >"$dir/stub/npm"
	# (a stub cannot grant root: it only records what it was asked to run)
	printf '#!/bin/sh\necho "sudo uid=$(id -u) $*" >>"%s/log"\n' "$dir" >"$dir/stub/sudo-present"
	: >"$dir/log"
	chmod 755 "$dir" "$dir/stub" "$dir/stub/apt-get" "$dir/stub/npm" "$dir/stub/sudo-present" \
		"$dir/install-deps"
	chmod 666 "$dir/log"
	cd "$dir"
}

teardown() {
	rm -rf "$dir"
}

quickstart_first() {
	awk '/^## Quick start/ { q = 1 } q && /^```/ { n++; next } q && n == 1 { print }' \
		"$SRCDIR/README.md" | sed -n 1p
}

@test "README's first command runs install-deps itself, not through sudo" {
	run quickstart_first
	assert_output --regexp '^sh tests/install-deps && '
}

@test "install-deps as root without sudo on PATH runs apt-get directly" {
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root"
	run env PATH="$dir/stub:/usr/bin:/bin" SPEEDSCOPE_PREFIX="$dir/speedscope" sh "$dir/install-deps"
	assert_success
	run cat log
	assert_line --index 0 "apt-get uid=0 update -qq"
	assert_line --partial "apt-get uid=0 install -y"
	refute_output --partial "sudo"
}

@test "install-deps installs speedscope from npm, at its pinned version, once" {
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root"
	run env PATH="$dir/stub:/usr/bin:/bin" SPEEDSCOPE_PREFIX="$dir/speedscope" sh "$dir/install-deps"
	assert_success
	run grep '^npm ' log
	assert_output --regexp "^npm uid=0 install --prefix $dir/speedscope .* speedscope@[0-9]+\.[0-9]+\.[0-9]+\$"
	# installed: a second run leaves it
	version=${output##*@}
	mkdir -p "$dir/speedscope/node_modules/speedscope"
	printf '{\n  "name": "speedscope",\n  "version": "%s"\n}\n' "$version" \
		>"$dir/speedscope/node_modules/speedscope/package.json"
	: >log
	run env PATH="$dir/stub:/usr/bin:/bin" SPEEDSCOPE_PREFIX="$dir/speedscope" sh "$dir/install-deps"
	assert_success
	run grep -c '^npm ' log
	assert_output 0
}

@test "install-deps as a user re-runs itself through sudo" {
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root to become another user"
	cp stub/sudo-present stub/sudo
	run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env -u NODE_EXTRA_CA_CERTS PATH="$dir/stub:/usr/bin:/bin" sh "$dir/install-deps"
	assert_success
	run cat log
	assert_output "sudo uid=65534 sh $dir/install-deps"
	# npm, as root, keeps trusting the user's extra certificate authorities
	: >log
	run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt PATH="$dir/stub:/usr/bin:/bin" \
		sh "$dir/install-deps"
	assert_success
	run cat log
	assert_output "sudo uid=65534 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt sh $dir/install-deps"
}

@test "install-deps as a user without sudo says what to do" {
	[ "$(id -u)" = 0 ] || skip_or_fail "needs root to become another user"
	run setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env PATH="$dir/stub:/usr/bin:/bin" sh "$dir/install-deps"
	assert_failure 1
	assert_output "install-deps: installing packages needs root: run this as root, or install sudo"
	run cat log
	assert_output ""
}
