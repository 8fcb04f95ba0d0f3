#!/bin/sh
# SPDX-License-Identifier: MIT
# models_doc.sh - the manual lists the orders and profiles the library
# has (issue 23, item 7).  `fplab models` prints the library's one table
# of each (fpl_accum_orders, fpl_accum_profiles); every list of them in
# the man pages and README.md must be that list, in that order, and the
# messages that list them must too.  Then a fact of fplab-models(7) that
# a reference written from the page must reproduce: without C, pairwise
# returns the tree's value T itself (no +0 + T), blocked adds block 0 to
# R = +0.
. "$(dirname "$0")/lib.inc"

M=$SRCDIR/man

# The man page $1 as text, one paragraph per line (paragraphs split at
# .TP .IP .PP .SH .SS .nf; a .TP paragraph starts with "TP: ", a heading
# is "SH: NAME"), font requests' arguments joined as roff joins them
# (.BR a b -> ab, .B a b -> a b), \- \& \f? undone.
render() {
	awk '
	function args(s, join,    out, w, c, i, q, n) {
		out = ""; w = ""; q = 0; n = 0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\"") { q = !q; continue }
			if (c == " " && !q) {
				if (w != "" || n) { out = out (n && join ? " " : "") w; n++ }
				w = ""; continue
			}
			w = w c
		}
		if (w != "") out = out (n && join ? " " : "") w
		return out
	}
	function flush() { if (p != "") print p; p = "" }
	function add(t) { p = p == "" || p ~ /: $/ ? p t : p " " t }
	/^\.\\"/ { next }
	/^\./ {
		req = $1; sub(/^\.[^ ]* ?/, "")
		if (req ~ /^\.(SH|SS)$/) { flush(); print "SH: " args($0, 1); next }
		if (req == ".TP") { flush(); p = "TP: "; next }
		if (req ~ /^\.(PP|LP|P|IP|nf|fi|sp)$/) { flush(); next }
		if (req ~ /^\.(B|I|SM)$/) { add(args($0, 1)); next }
		if (req ~ /^\.(BR|RB|BI|IB|IR|RI)$/) { add(args($0, 0)); next }
		next
	}
	{ add($0) }
	END { flush() }
	' "$1" | sed 's/\\-/-/g; s/\\&//g; s/\\f[BIRP]//g; s/\\e/\\/g; s/  */ /g'
}

fplab models --tsv >"$T/models" || fail "fplab models failed"
profiles=$(awk -F '\t' '$1 == "profile" { printf "%s%s", n++ ? ", " : "", $2 }' "$T/models")
orders=$(awk -F '\t' '$1 == "order" { printf "%s%s", n++ ? ", " : "", $2 }' "$T/models")
# the library's table, as the test knows it from the issues: ten profiles
# (six CPU units, four H100 tensor-core GEMMs), nine orders (a profile or order added to the library lands in every
# list below through this test)
checks=$((checks + 1))
[ "$(echo "$profiles" | tr ',' '\n' | wc -l)" = 10 ] && [ "$(echo "$orders" | tr ',' '\n' | wc -l)" = 9 ] \
	|| fail "fplab models: expected 10 profiles and 9 orders: '$profiles' / '$orders'"

# same WHAT GOT: GOT must be WANT (set by the caller).
same() {
	checks=$((checks + 1))
	[ "$2" = "$want" ] || fail "$1: the list is '$2', fplab models says '$want'"
}

# --- --profile and --order in the command pages
want=$profiles
for page in fplab-dot.1 fplab-gemm.1; do
	got=$(render "$M/$page" | grep '^TP: --profile NAME' | sed 's/^[^(]*(//; s/;.*//')
	same "$page --profile" "$got"
done
want=$orders
for page in fplab-dot.1 fplab-gemm.1 fplab-reduce.1; do
	got=$(render "$M/$page" | grep '^TP: --order ORDER' | sed 's/^TP: --order ORDER,\.\.\. //; s/ (default)//; s/;.*//')
	same "$page --order" "$got"
done

# --- fplab-models(7): the tags of its Orders and Profiles subsections
tags() {
	render "$M/fplab-models.7" | awk -v sec="$1" '
		/^SH: / { on = $0 == "SH: " sec; next }
		on && /^TP: / { printf "%s%s", n++ ? ", " : "", $2 }'
}
want=$orders
same "fplab-models(7) Orders" "$(tags Orders)"
want=$profiles
same "fplab-models(7) Profiles" "$(tags Profiles)"

# --- fplab-native(7): its PROFILES section has every profile (in its own
# order: the native kernels' twins first)
want=$(echo "$profiles" | tr -d ' ' | tr ',' '\n' | sort | tr '\n' ' ')
got=$(render "$M/fplab-native.7" | awk '/^SH: / { on = $0 == "SH: PROFILES"; next }
	on && /^TP: / { print $2 }' | sort | tr '\n' ' ')
same "fplab-native(7) PROFILES" "$got"

# --- fplab(3): the orders and the named profiles of fplab/accum.h
want=$profiles
got=$(render "$M/fplab.3" | grep 'named profiles (' | sed 's/.*named profiles (//; s/).*//')
same "fplab(3) profiles" "$got"
want=$orders
got=$(render "$M/fplab.3" | grep 'order of the additions (' \
	| sed 's/.*order of the additions (//; s/; .*//; s/ and /, /')
same "fplab(3) orders" "$got"

# --- README.md: --order a|b|... and --profile a|b|...
# a|b at bracket depth 0 -> a, b (fused:F[:W[:tz|ne]] keeps its |)
bars() {
	awk '{ for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
		d += c == "[" ? 1 : c == "]" ? -1 : 0
		printf "%s", c == "|" && !d ? ", " : c } }'
}
want=$orders
got=$(tr '\n' ' ' <"$SRCDIR/README.md" | sed 's/.*(`--order *//; s/`).*//' | bars)
same "README.md --order" "$got"
want=$profiles
got=$(tr '\n' ' ' <"$SRCDIR/README.md" | sed 's/.*`--profile \([^`]*\)`.*/\1/' | bars)
same "README.md --profile" "$got"

# --- the messages that list them
want=$(echo "$orders" | sed 's/\(.*\), /\1 or /')
expect_fail "a bad order lists the spellings" 2 "expected $(echo "$want" | sed 's/[][|.]/\\&/g') \(" \
	fplab dot --gen ones -n 2 --order pairs:3
want=$(echo "$profiles" | sed 's/,//g')
expect_fail "an unknown profile lists them" 2 "unknown profile 'xyzzy' \(profiles: $want\)" \
	fplab dot --gen ones -n 2 --profile xyzzy

# --- fplab-models(7) on a one-term dot without C, products exact, e4m3fn
# in and accumulating (p = 4, smallest subnormal 2^-9): a = -2^-6,
# b = 2^-6, a b = -2^-12, below half of 2^-9, rounds to -0 (the sign of
# the exact value).  sequential: fma(a, b, +0) = -0.  pairwise: the leaf
# is that fma, -0, and without C the result is T = -0 (+0 + -0 would be
# +0).  blocked:4: block 0 is -0, then R = +0 + -0 = +0 in fp32 (R starts
# from +0).  evenodd: u = -0 + +0 = +0 (the odd chain is empty, +0), then
# S = +0 + +0 = +0.
printf -- '-0.015625\n' >"$T/a.txt"
printf '0.015625\n' >"$T/b.txt"
expect_out "one -0 term: sequential, pairwise, blocked, evenodd" "$(printf '%s\n' \
	"order result" "sequential -0" "pairwise:1 -0" "blocked:4:fp32 0" "evenodd:32 0")" \
	sh -c "fplab dot -a '$T/a.txt' -b '$T/b.txt' -f e4m3fn --acc e4m3fn \
		--order sequential,pairwise,blocked:4,evenodd --tsv | cut -f5,8 | tr '\t' ' '"

finish
