#!/bin/sh
# SPDX-License-Identifier: MIT
# floors.sh LOG - one table of every floor `make bench` measured (issue 24,
# item 8): from the log of the benches (sections "== NAME"), each line that
# states a floor's verdict (ending in "met" or "NOT met", or saying "not
# measurable here"), prefixed by its bench, then the counts.  The ratios
# are the benches' own, each from its run against its own baseline.
# POSIX sh and awk.
[ -r "$1" ] || { echo "floors.sh: cannot read '$1'" >&2; exit 2; }
awk '
	/^== / { bench = $2; sub(/.*\//, "", bench); next }
	/^[a-z]+: [0-9]+ rows? NOT met$/ { next }	# the bench own count line, not a floor
	/[^A-Za-z]NOT met$/ || /NOT met[ ,(]/ { rows[++n] = bench "\t" $0; bad++; next }
	/[^A-Za-z]met$/ || /[^A-Za-z]met[ ,(]/ { rows[++n] = bench "\t" $0; good++; next }
	/not measurable here/ { rows[++n] = bench "\t" $0; nm++; next }
	END {
		print "== floors (issue 24), one table: bench, then its line"
		for (i = 1; i <= n; i++) print rows[i]
		printf "floors: %d met, %d NOT met, %d not measurable here\n", good, bad, nm
	}
' "$1"
