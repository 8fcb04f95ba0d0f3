# SPDX-License-Identifier: MIT
# experiments/lib.sh - helpers shared by the experiments (POSIX sh),
# sourced by each as `. "$(dirname "$0")/lib.sh"` (run from the source
# tree's root, `sh experiments/X.sh FPLAB`, as `make experiments` does).
# Not an experiment: `make experiments` runs experiments/*.sh, and run on
# its own this file defines what follows and exits 0.
#
# TSV_AWK, awk functions for a program reading fplab's --tsv reports
# (awk -F '\t' ... "$TSV_AWK"'PROGRAM'): report columns are read by name,
# never by position, so a column added to a report breaks no experiment
# and a column that has gone is an error.
#   tsvhead()          the current record is the header: c[NAME] = its field
#   tsvcol(NAMES)      the field of the first of the |-separated NAMES the
#                      header has ("a|b": a column renamed); none: a message
#                      "SCRIPT: no column NAMES in the report", tsv_bad = 1
#                      and exit 1 (an END block that prints starts with
#                      `if (tsv_bad) exit 1`)
#   seeds_spread(x, key)
#                      over the seeds S[1..ns] (ns = split(seeds, S, " ")),
#                      the values x[key, S[i]]: their mean m (the sum of
#                      the numbers over ns), least lo, largest hi and
#                      spread sp = hi - lo, the one "spread" the
#                      experiments print ("[spread: largest - smallest]");
#                      nan = 1 when a value is not a number (nan, inf),
#                      which is left out of all four (m is then not the
#                      mean: print nan).  A key of several parts is joined
#                      with SUBSEP: x[a, b, s] is seeds_spread(x, a SUBSEP b).

# The script's name, for the messages.
_exp_name=${0##*/}

# shellcheck disable=SC2016,SC2034 # awk text, used by the sourcing scripts
TSV_AWK='
	function tsvhead(   i) { for (i = 1; i <= NF; i++) c[$i] = i }
	function tsvcol(names,   k, n, v) {
		n = split(names, v, "|")
		for (k = 1; k <= n; k++)
			if (v[k] in c)
				return c[v[k]]
		printf "%s: no column %s in the report\n", "'"$_exp_name"'", names > "/dev/stderr"
		tsv_bad = 1
		exit 1
	}
	function seeds_spread(x, key,   i, y, first) {
		m = 0; nan = 0; first = 1
		for (i = 1; i <= ns; i++) {
			y = x[key, S[i]]
			if (y != y + 0 || y == "nan" || y == "-nan" || y == "inf" || y == "-inf") {
				nan = 1
				continue
			}
			m += y
			if (first || y < lo) lo = y
			if (first || y > hi) hi = y
			first = 0
		}
		m /= ns; sp = hi - lo
	}
'

# tag NAMES VALUES: the TSV report on stdin with columns put in front: the
# header gets NAMES, every row VALUES (tab-separated, "\t" written so)
tag() {
	awk -v h="$1" -v v="$2" 'NR == 1 { print h "\t" $0; next } { print v "\t" $0 }'
}

# tag_into FILE NAMES VALUES: tag's output appended to FILE, the header
# only when FILE is still empty (one header for the runs of every seed)
tag_into() {
	if [ -s "$1" ]; then
		tag "$2" "$3" | tail -n +2 >>"$1"
	else
		tag "$2" "$3" >>"$1"
	fi
}
