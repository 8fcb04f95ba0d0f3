#!/bin/sh
# SPDX-License-Identifier: MIT
# help.sh - `fplab help` without man: through groff, through nroff, and
# the plain rendering when neither exists (each path forced by a PATH of
# symlinks to just the tools it needs); `-h` of a rounding command; the
# "fplab: COMMAND:" prefix on getopt's own messages; the --version hint;
# one "No space left on device" message for output to /dev/full.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# onpath DIR TOOL...: DIR holds fplab and links to the TOOLs found.
onpath() {
	_d=$T/$1
	shift
	mkdir -p "$_d" && ln -sf "$FPLAB" "$_d/fplab" || return 1
	for _t in "$@"; do
		_p=$(command -v "$_t") || return 1
		ln -sf "$_p" "$_d/$_t"
	done
}

# help_check WHAT DIR: `fplab help round` and `fplab help` with PATH=DIR
# print the pages as plain text (no escapes, no overstrikes), exit 0.
help_check() {
	checks=$((checks + 1))
	PATH=$2 fplab help round >help.txt 2>help.err
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$1: fplab help round exits $rc: $(head -c 300 help.err)"
	elif ! grep -q '^SYNOPSIS$' help.txt || ! grep -q 'fplab round \[-f FORMAT\]' help.txt; then
		fail "$1: fplab help round shows no SYNOPSIS: $(head -c 300 help.txt)"
	elif LC_ALL=C grep -q "$(printf '[\010\033]')" help.txt; then
		fail "$1: escapes or overstrikes in the output"
	elif grep -q '^\.' help.txt; then
		fail "$1: roff requests left in the output"
	fi
	checks=$((checks + 1))
	PATH=$2 fplab help >help.txt 2>help.err || fail "$1: fplab help exits $?"
	grep -q 'DIFFERENCES FROM CPFLOAT' help.txt || fail "$1: fplab help does not show fplab(1)"
}

if onpath groff groff troff grotty; then
	help_check "groff" "$T/groff"
else
	echo "note: no groff, its path not tested"
fi
if onpath nroff nroff sh && command -v groff >/dev/null 2>&1; then
	help_check "nroff" "$T/nroff"
else
	echo "note: no nroff, its path not tested"
fi
onpath plain
help_check "plain" "$T/plain"
checks=$((checks + 1))
PATH=$T/plain fplab help help >plain.txt
grep -q '^       fplab-help - show the manual page' plain.txt ||
	fail "plain: NAME not rendered: $(head -n 5 plain.txt)"
grep -q 'man(1)' plain.txt || fail "plain: .BR not joined"

# A terminal: the page goes through $PAGER (script(1) gives a tty).
if onpath tty groff troff grotty sh cat && command -v script >/dev/null 2>&1; then
	checks=$((checks + 1))
	_script=$(command -v script)
	PATH=$T/tty MANPAGER= PAGER='cat; echo PAGER-RAN' \
		"$_script" -qec "fplab help round" /dev/null >tty.txt 2>&1 </dev/null
	grep -q 'PAGER-RAN' tty.txt || fail "tty: the page did not go through \$PAGER: $(head -c 300 tty.txt)"
fi

# -h: synopsis, then the modes and formats for commands that round
fplab round -h >h.txt || fail "round -h exits $?"
for w in '^rounding modes' '^  ne  1  nearest, ties to even' 'se  6  stochastic' '^formats (-f): fp64'; do
	checks=$((checks + 1))
	grep -q "$w" h.txt || fail "round -h lacks '$w'"
done
checks=$((checks + 1))
fplab info -h | grep -q 'rounding modes' && fail "info -h shows the rounding modes"

# getopt's own messages carry the prefix
expect_fail "round --bogus" 2 "^fplab: round: unrecognized option '--bogus'" fplab round --bogus
expect_fail "round -f (no argument)" 2 "^fplab: round: option requires an argument -- 'f'" fplab round -f
expect_fail "hist -x" 2 "^fplab: hist: invalid option -- 'x'" fplab hist -x
expect_fail "calc --tsv=1" 2 "^fplab: calc: option '--tsv' doesn't allow an argument" fplab calc add --tsv=1
expect_fail "formats --bogus" 2 "^fplab: formats: unrecognized option" fplab formats --bogus
expect_fail "info --bogus" 2 "^fplab: info: unrecognized option" fplab info --bogus
for c in round calc hist formats info; do
	checks=$((checks + 1))
	fplab $c --bogus 2>&1 >/dev/null </dev/null | grep -v '^fplab: \|^usage: \|^   or: \|^    \|^OP is' |
		grep -q . && fail "fplab $c --bogus: a message without the prefix"
done

# version hints
expect_fail "fplab version" 2 "^fplab: unknown command 'version'; did you mean 'fplab --version'\\?" fplab version
expect_fail "fplab -version" 2 "did you mean '--version'\\?" fplab -version
expect_fail "fplab frmats" 2 "did you mean 'formats'\\?" fplab frmats

# /dev/full: one message, the real errno, exit 1 (hist: tests/cli/
# hardening.sh).  Not yet output longer than stdio's buffer in round/calc
# (the error is noticed after errno was reused).
if [ -w /dev/full ]; then
	printf '1 2\n' >in.txt
	printf '1\n2\n3\n' | fplab round --out npy -o t.npy || fail "cannot write t.npy"
	for cmd in "fplab round -f fp16 in.txt" "fplab formats" "fplab formats e4m3fn" \
		"fplab calc add in.txt" "fplab info" "fplab -h" "fplab --version" "fplab round -h"; do
		checks=$((checks + 1))
		$cmd >/dev/full 2>full.err </dev/null
		rc=$?
		n=$(wc -l <full.err)
		if [ "$rc" != 1 ] || [ "$n" != 1 ] || ! grep -q 'No space left on device$' full.err; then
			fail "$cmd >/dev/full: exit $rc, $n lines: $(cat full.err)"
		fi
	done
fi
finish
