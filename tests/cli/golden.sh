#!/bin/sh
# SPDX-License-Identifier: MIT
# golden.sh - data-driven cases in tests/cli/golden/*.case (as jq's tests):
#
#   # comment lines, before the first section only
#   args: round -f fp16 --out hex        (the words after `fplab`, eval'ed)
#   --- input                            (stdin, optional, up to the next ---)
#   --- output                           (expected stdout, exactly)
#   --- status N                         (optional, default 0)
#
# Expected outputs are derived by hand; each case file says how.
. "$(dirname "$0")/lib.inc"

for c in "$SRCDIR"/tests/cli/golden/*.case; do
	name=$(basename "$c" .case)
	awk -v dir="$T" '
		/^--- input$/ { out = dir "/in"; printf "" > out; next }
		/^--- output$/ { out = dir "/want"; printf "" > out; next }
		/^--- status / { print $3 > (dir "/status"); out = ""; next }
		/^args: / && !out { sub(/^args: /, ""); print > (dir "/args"); next }
		out { print > out }
	' "$c" </dev/null || { fail "$name: cannot parse"; continue; }
	: > "$T/in.tmp"
	[ -f "$T/in" ] || : > "$T/in"
	[ -f "$T/want" ] || : > "$T/want"
	want_st=0
	[ -f "$T/status" ] && want_st=$(cat "$T/status")
	checks=$((checks + 1))
	(cd "$T" && eval "fplab $(cat "$T/args")") <"$T/in" >"$T/got" 2>"$T/err"
	st=$?
	if [ "$st" != "$want_st" ] || ! cmp -s "$T/got" "$T/want"; then
		fail "$name: status $st (want $want_st)"
		diff "$T/want" "$T/got" | sed 's/^/  /' >&2
		sed 's/^/  stderr: /' "$T/err" >&2
	fi
	rm -f "$T/in" "$T/want" "$T/status" "$T/args" "$T/got" "$T/err" "$T/in.tmp"
done
finish
