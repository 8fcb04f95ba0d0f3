#!/bin/sh
# SPDX-License-Identifier: MIT
# examples.sh - run the EXAMPLES of every man page.  In the EXAMPLES
# section, inside .nf/.fi, a line "$ COMMAND" is run with sh in a scratch
# directory (with `fplab` on PATH) and the lines after it, up to the next
# "$ " or .fi, are its expected stdout.  Roff escapes \- and \e are undone.
# A roff comment '.\" needs KEY' just before a command names a row of
# `fplab info` (a native kernel, native_fma32) that must say "yes"; the
# example is skipped, with a message, on a CPU where it does not.
. "$(dirname "$0")/lib.inc"

have_man=1
command -v man >/dev/null 2>&1 || have_man=0

for page in "$SRCDIR"/man/*.[15]; do
	name=$(basename "$page")
	rm -rf "$T/ex" && mkdir "$T/ex"
	awk -v dir="$T/ex" '
		/^\.SH EXAMPLES/ { on = 1; next }
		/^\.SH/ { on = 0 }
		!on { next }
		/^\.nf/ { nf = 1; next }
		/^\.fi/ { nf = 0; next }
		!nf { next }
		/^\.\\" needs / { need = $3; next }
		{ gsub(/\\-/, "-"); gsub(/\\e/, "\\") }
		/^\$ / { n++; sub(/^\$ /, ""); print > (dir "/cmd." n); printf "" > (dir "/want." n)
			  if (need != "") print need > (dir "/need." n); need = ""; next }
		n { print > (dir "/want." n) }
	' "$page"
	i=1
	while [ -f "$T/ex/cmd.$i" ]; do
		cmd=$(cat "$T/ex/cmd.$i")
		i=$((i + 1))
		case $cmd in *"fplab help"*) [ $have_man = 1 ] || continue ;; esac
		if [ -f "$T/ex/need.$((i - 1))" ]; then
			need=$(cat "$T/ex/need.$((i - 1))")
			if ! "$FPLAB" info --tsv | grep -q "^$need	yes"; then
				echo "examples.sh: skip $name: example '$cmd': $need is not usable here"
				continue
			fi
		fi
		checks=$((checks + 1))
		(cd "$T/ex" && sh -c "$cmd") >"$T/got" 2>"$T/err" </dev/null
		if ! cmp -s "$T/got" "$T/ex/want.$((i - 1))"; then
			fail "$name: example '$cmd'"
			diff "$T/ex/want.$((i - 1))" "$T/got" | sed 's/^/  /' >&2
			sed 's/^/  stderr: /' "$T/err" >&2
		fi
	done
	checks=$((checks + 1))
	[ "$i" -gt 1 ] || fail "$name has no EXAMPLES"
done
finish
