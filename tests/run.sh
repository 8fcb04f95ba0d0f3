#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/run.sh - run fplab's test programs and shell tests.
#
#   BUILD=build/rel FPLAB=/abs/path/fplab sh tests/run.sh tformat tarith8 ...
#
# Runs each C test program $BUILD/tests/NAME given as an argument, two at a
# time (FPLAB_TEST_JOBS), then every tests/cli/*.sh (with FPLAB in the environment).  A
# program exits 0 (pass), 77 (skipped) or anything else (fail).  Prints a
# line per test as it starts ("start NAME") and one as it ends, then
# exactly one summary line "N passed, N failed" (with
# ", N skipped (names)" when some were skipped); exits 1 on any failure.
# A failing test's output is kept in $BUILD/tests/NAME.log and shown; a
# passing test's lines "NAME: skip ..." (parts it could not run here) are
# shown under its PASS line.
# POSIX sh.

BUILD=${BUILD:-build/rel}
export BUILD FPLAB
JOBS=${FPLAB_TEST_JOBS:-2}
logdir=$BUILD/tests/logs
mkdir -p "$logdir" || exit 1

passed=0
failed=0
skipped=0
skipnames=
failnames=

# record NAME STATUS SECONDS
record() {
	case $2 in
	0) passed=$((passed + 1)); printf 'PASS  %-28s %4ss\n' "$1" "$3"
	   # parts a passing test skipped (a CPU feature missing) stay visible
	   grep -E '^[^ ]+: skip ' "$logdir/$1.log" 2>/dev/null | sed 's/^/      /' ;;
	77) skipped=$((skipped + 1)); skipnames="$skipnames $1"
	    printf 'SKIP  %-28s %4ss  (%s)\n' "$1" "$3" \
		"$(grep -i 'skip' "$logdir/$1.log" 2>/dev/null | tail -n 1 | cut -c1-80)" ;;
	*) failed=$((failed + 1)); failnames="$failnames $1"
	   printf 'FAIL  %-28s %4ss  (exit %s)\n' "$1" "$3" "$2"
	   sed -n '1,40p' "$logdir/$1.log" | sed 's/^/    | /' ;;
	esac
}

# start NAME COMMAND...: run in the background, status into $logdir/NAME.rc
start() {
	name=$1
	shift
	(
		t0=$(date +%s)
		"$@" >"$logdir/$name.log" 2>&1
		rc=$?
		t1=$(date +%s)
		echo "$rc $((t1 - t0))" >"$logdir/$name.rc.tmp"
		mv "$logdir/$name.rc.tmp" "$logdir/$name.rc"
	) &
}

finish() {
	read -r rc secs <"$logdir/$1.rc"
	record "$1" "$rc" "$secs"
}

# The C programs, JOBS at a time: a new one starts as soon as one ends
# (polled once a second; POSIX sh has no "wait for any child").  Shell
# variables are global: reap() uses its own loop variable.
running=
nrun=0
reap() {
	still=
	nrun=0
	for _r in $running; do
		if [ -e "$logdir/$_r.rc" ]; then
			finish "$_r"
		else
			still="$still $_r"
			nrun=$((nrun + 1))
		fi
	done
	running=$still
}
for t in "$@"; do
	case $t in
	*/*) # the shell tests below always run; $logdir has no subdirectories
	     echo "tests/run.sh: '$t': name C test programs only (tests/cli/*.sh always run)" >&2
	     exit 2 ;;
	esac
done
for t in "$@"; do
	while [ "$nrun" -ge "$JOBS" ]; do
		sleep 1
		reap
	done
	rm -f "$logdir/$t.rc"
	printf 'start %s\n' "$t"
	if [ -x "$BUILD/tests/$t" ]; then
		start "$t" "$BUILD/tests/$t"
	else
		echo "no such test program: $BUILD/tests/$t" >"$logdir/$t.log"
		echo "127 0" >"$logdir/$t.rc"
	fi
	running="$running $t"
	nrun=$((nrun + 1))
done
while [ -n "$running" ]; do
	sleep 1
	reap
done
wait

# The shell tests, one at a time.
for s in tests/cli/*.sh; do
	[ -e "$s" ] || continue
	name=cli/$(basename "$s" .sh)
	lname=cli-$(basename "$s" .sh)
	printf 'start %s\n' "$name"
	t0=$(date +%s)
	sh "$s" >"$logdir/$lname.log" 2>&1
	rc=$?
	t1=$(date +%s)
	case $rc in
	0) passed=$((passed + 1)); printf 'PASS  %-28s %4ss\n' "$name" $((t1 - t0)) ;;
	77) skipped=$((skipped + 1)); skipnames="$skipnames $name"
	    printf 'SKIP  %-28s %4ss\n' "$name" $((t1 - t0)) ;;
	*) failed=$((failed + 1)); failnames="$failnames $name"
	   printf 'FAIL  %-28s %4ss  (exit %s)\n' "$name" $((t1 - t0)) "$rc"
	   sed -n '1,40p' "$logdir/$lname.log" | sed 's/^/    | /' ;;
	esac
done

if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped:$skipnames"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
