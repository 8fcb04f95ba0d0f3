#!/bin/sh
# SPDX-License-Identifier: MIT
# synopsis.sh - every command's `-h` usage equals the SYNOPSIS of its man
# page (and `fplab -h` the one of fplab(1)); every command in `fplab -h`
# has a page, and the command table is sorted.
. "$(dirname "$0")/lib.inc"

# Usage text on stdin -> one normalised synopsis per line.
from_usage() {
	awk '
		/^usage: / { sub(/^usage: /, ""); if (cur != "") print cur; cur = $0; next }
		/^   or: / { sub(/^   or: /, ""); if (cur != "") print cur; cur = $0; next }
		/^    [^ ]/ && cur != "" { sub(/^ +/, ""); cur = cur " " $0; next }
		{ exit }
		END { if (cur != "") print cur }' | tr -s ' '
}

# Man page source -> the same.
from_man() {
	awk '/^\.SH SYNOPSIS/ { on = 1; next } /^\.SH/ { on = 0 } on && !/^\./' "$1" |
		sed 's/\\-/-/g' |
		awk '/^    [^ ]/ { sub(/^ +/, ""); cur = cur " " $0; next }
		     { if (cur != "") print cur; cur = $0 }
		     END { if (cur != "") print cur }' | tr -s ' '
}

check_pair() {
	checks=$((checks + 1))
	if [ ! -f "$2" ]; then
		fail "$1: no man page $2"
		return
	fi
	from_usage <"$T/usage" >"$T/a"
	from_man "$2" >"$T/b"
	if [ ! -s "$T/a" ] || ! cmp -s "$T/a" "$T/b"; then
		fail "$1: -h usage and $(basename "$2") SYNOPSIS differ"
		diff "$T/a" "$T/b" | sed 's/^/  /' >&2
	fi
}

fplab -h >"$T/main" || fail "fplab -h exits $?"
cp "$T/main" "$T/usage"
check_pair "fplab" "$SRCDIR/man/fplab.1"

cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$T/main")
[ -n "$cmds" ] || fail "fplab -h lists no commands"
sorted=$(printf '%s\n' $cmds | LC_ALL=C sort)
checks=$((checks + 1))
[ "$(printf '%s\n' $cmds)" = "$sorted" ] || fail "command table not sorted: $cmds"

for c in $cmds; do
	fplab "$c" -h >"$T/usage" 2>"$T/err"
	rc=$?
	checks=$((checks + 1))
	[ "$rc" = 0 ] || fail "fplab $c -h exits $rc"
	[ -s "$T/err" ] && fail "fplab $c -h writes to stderr"
	check_pair "fplab $c" "$SRCDIR/man/fplab-$c.1"
done
finish
