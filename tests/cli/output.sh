#!/bin/sh
# SPDX-License-Identifier: MIT
# output.sh - output files that are safe to trust: -o leaves no temporary
# after SIGHUP, SIGINT or SIGTERM (and fplab dies of the signal), keeps a
# replaced file's mode, writes through a symbolic link, names a read-only
# directory; a report lost on stdout or stderr is an error (exit 1).
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1
TP=$(pwd -P)	# $T with its symbolic links resolved, as messages give it

# ntmp FILE: how many FILE.tmp-* temporaries are left in the directory.
ntmp() { ls -a | grep -c "^$1\.tmp-"; }

# mode FILE: the permission string of FILE ("-rw-------").
mode() { ls -ln "$1" | cut -c1-10; }

# $dflt COMMAND...: exec COMMAND (same process) with the default action
# for HUP, INT and TERM (a background job of a script ignores SIGINT).
if env --default-signal=INT true 2>/dev/null; then
	dflt="env --default-signal=HUP,INT,TERM"
elif command -v perl >/dev/null 2>&1; then
	echo '$SIG{$_} = "DEFAULT" for qw(HUP INT TERM); exec @ARGV or die "$!\n";' >dflt.pl
	dflt="perl $T/dflt.pl"
else
	dflt=
fi

# interrupt SIG STATUS: `round -o out.txt` reading a FIFO that never ends
# gets SIG once its temporary exists: it must exit STATUS (128+SIG),
# leave no temporary and keep the old out.txt.
interrupt() {
	checks=$((checks + 1))
	rm -f in.fifo
	mkfifo in.fifo || { fail "$1: mkfifo"; return; }
	echo old >out.txt
	sleep 60 >in.fifo &
	_w=$!
	$dflt fplab round -f fp16 -o out.txt in.fifo 2>"$T/stderr" &
	_p=$!
	_i=0
	while [ "$(ntmp out.txt)" = 0 ] && [ $_i -lt 400 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	[ "$(ntmp out.txt)" = 0 ] && fail "$1: no temporary appeared in 20 s"
	kill -s "$1" "$_p"
	{ wait "$_p"; } 2>/dev/null
	_rc=$?
	kill "$_w" 2>/dev/null
	wait "$_w" 2>/dev/null
	[ "$_rc" = "$2" ] || fail "$1: exit status $_rc, expected $2"
	[ "$(ntmp out.txt)" = 0 ] || fail "$1: temporary left: $(ls -a | grep '^out\.txt\.tmp-')"
	[ "$(cat out.txt)" = old ] || fail "$1: out.txt changed: $(cat out.txt)"
	rm -f out.txt.tmp-*
}
interrupt TERM 143
interrupt HUP 129
if [ -z "$dflt" ]; then
	echo "skip: the SIGINT case needs 'env --default-signal' or perl" >&2
else
	interrupt INT 130
fi

# a replaced file keeps its mode; a new one gets 0666 less the umask
echo old >m600.txt
chmod 600 m600.txt
printf '1\n' | fplab round -o m600.txt
checks=$((checks + 1))
[ "$(mode m600.txt)" = -rw------- ] || fail "mode 600 not kept: $(mode m600.txt)"
expect_out "mode 600: new content" 1 cat m600.txt
echo old >m640.txt
chmod 640 m640.txt
fplab round --out npy -o m640.txt m600.txt
checks=$((checks + 1))
[ "$(mode m640.txt)" = -rw-r----- ] || fail "mode 640 not kept (npy): $(mode m640.txt)"
npy_f32 one.npy 0x3f800000 0x40000000
echo old >m604.svg
chmod 604 m604.svg
fplab hist --svg m604.svg one.npy >/dev/null
checks=$((checks + 1))
[ "$(mode m604.svg)" = -rw----r-- ] || fail "mode 604 not kept (hist --svg): $(mode m604.svg)"
(umask 027 && printf '1\n' | fplab round -o new.txt)
checks=$((checks + 1))
[ "$(mode new.txt)" = -rw-r----- ] || fail "new file with umask 027: $(mode new.txt)"

# a symbolic link stays a link: the file it names gets the content, and
# the temporary is made beside that file (relative links, chains, another
# directory, dangling links)
echo old >target.txt
ln -s target.txt link.txt
ln -s link.txt chain.txt
mkdir d
ln -s ../target.txt d/up.txt
ln -s d/fresh.txt dangling.txt
printf '1\n' | fplab round -o link.txt
checks=$((checks + 1))
[ -L link.txt ] || fail "symlink replaced by a file"
expect_out "through a symlink" 1 cat target.txt
printf '2\n' | fplab round -o chain.txt
checks=$((checks + 1))
[ -L chain.txt ] && [ -L link.txt ] || fail "symlink chain replaced by a file"
expect_out "through a chain of symlinks" 2 cat target.txt
printf '3\n' | fplab round -o d/up.txt
checks=$((checks + 1))
[ -L d/up.txt ] || fail "relative symlink in a subdirectory replaced by a file"
expect_out "through ../ symlink" 3 cat target.txt
printf '4\n' | fplab round -o dangling.txt
checks=$((checks + 1))
[ -L dangling.txt ] || fail "dangling symlink replaced by a file"
expect_out "through a dangling symlink" 4 cat d/fresh.txt
checks=$((checks + 1))
[ "$(ls -a . d | grep -c '\.tmp-')" = 0 ] || fail "temporary left after symlink writes"

# a read-only directory is named in the message (root ignores permissions:
# as root, the case runs as nobody through setpriv, or is skipped)
asuser=
if [ "$(id -u)" = 0 ]; then
	asuser="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod 711 "$T"
	# probed as the cases run it: through sh and PATH (a checkout under
	# /root, mode 700, is out of nobody's reach)
	$asuser sh -c 'fplab --version' >/dev/null 2>&1 || asuser=skip
fi
if [ "$asuser" = skip ]; then
	echo "note: read-only directory case skipped: root, and nobody cannot run fplab (setpriv missing, or fplab under a directory nobody cannot enter)" >&2
else
	mkdir ro
	chmod 555 ro
	expect_fail "read-only directory" 1 \
		"^fplab: round: cannot create a temporary file in '$TP/ro' for 'out.txt': Permission denied$" \
		$asuser sh -c "cd ro && printf '1\n' | fplab round -o out.txt"
	expect_fail "read-only directory, path with a directory" 1 \
		"^fplab: round: cannot create a temporary file in '$TP/ro' for 'ro/x.npy': Permission denied$" \
		$asuser sh -c "printf '1\n' | fplab round --out npy -o ro/x.npy"
	chmod 755 ro
fi

# the npy spool honours TMPDIR and names it when it fails
expect_fail "npy spool in TMPDIR" 1 "cannot create a temporary file in '$T/none'" \
	sh -c "printf '1\n' | TMPDIR='$T/none' fplab round --out npy"

# a report lost on stdout: exit 1, one message with the real errno
if [ -w /dev/full ]; then
	awk 'BEGIN { for (i = 0; i < 3000; i++) print i }' >many.txt
	fplab round -f fp64 --out f64 many.txt >many.f64
	for c in "round -f fp16 m600.txt" "round --in f64 --out f64 many.f64" \
		 "round --in f64 --out npy many.f64" "round --out npy many.txt"; do
		expect_fail "$c >/dev/full" 1 "^fplab: round: write error on stdout: No space left on device$" \
			sh -c "fplab $c >/dev/full"
		checks=$((checks + 1))
		[ "$(wc -l <"$T/stderr")" -eq 1 ] || fail "$c >/dev/full: not one message:" \
			"$(cat "$T/stderr")"
	done
	# a warning lost on stderr: exit 1 (nothing can say why)
	{ npy_header '<f4' '0, 3'; } >empty.npy
	checks=$((checks + 1))
	fplab hist --tsv empty.npy 2>&1 >/dev/null | grep -q warning ||
		fail "hist of an empty tensor prints no warning"
	checks=$((checks + 1))
	fplab hist --tsv empty.npy >/dev/null 2>/dev/full
	_rc=$?
	[ "$_rc" = 1 ] || fail "warning to stderr on /dev/full: exit status $_rc, expected 1"
else
	echo "note: /dev/full cases skipped: no writable /dev/full" >&2
fi

finish
