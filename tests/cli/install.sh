#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh - `make install PREFIX=<tmp>` installs the libraries, headers,
# binary, formats and fplab.pc; a tiny program and the README's library
# example compile against the installed copy via pkg-config (shared and
# static) and run; `make
# uninstall` removes what was installed.  Skips (77) without pkg-config
# or a C compiler.  Uses the build in $BUILD (as `make check` sets it).
. "$(dirname "$0")/lib.inc"

command -v pkg-config >/dev/null 2>&1 || { echo "skip: pkg-config not installed"; exit 77; }
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "skip: no C compiler ($CC)"; exit 77; }

P=$T/prefix
MAKE=${MAKE:-make}
if ! $MAKE -s -C "$SRCDIR" ${BUILD:+BUILD="$BUILD"} install PREFIX="$P" >"$T/install.log" 2>&1; then
	echo "FAIL: make install PREFIX=$P"
	sed 's/^/  | /' "$T/install.log" | tail -n 20
	exit 1
fi

for f in bin/fplab lib/libfplab.a lib/libfplab.so lib/pkgconfig/fplab.pc \
	include/fplab/fplab.h include/fplab/format.h include/fplab/ops.h \
	share/fplab/formats/fp16.fmt share/fplab/formats/e4m3fn.fmt share/fplab/formats/e8m0.fmt; do
	checks=$((checks + 1))
	[ -e "$P/$f" ] || fail "not installed: $f"
done
n=$(ls "$SRCDIR"/formats/*.fmt | wc -l)
m=$(ls "$P"/share/fplab/formats/*.fmt | wc -l)
checks=$((checks + 1))
[ "$n" -eq "$m" ] || fail "installed $m format files of $n"
for man in "$SRCDIR"/man/*.[1357]; do
	[ -e "$man" ] || continue
	sec=${man##*.}
	checks=$((checks + 1))
	[ -e "$P/share/man/man$sec/$(basename "$man")" ] || fail "man page not installed: $(basename "$man")"
done

cat >"$T/prog.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <fplab/fplab.h>

int main(void)
{
	fpl_format f;
	fpl_state st;
	double y;

	if (fpl_format_lookup(&f, "fp16") != 0)
		return 2;
	fpl_state_init(&st, 1);
	y = fpl_round(&f, 1.00048828125, FPL_RND_NE, &st);	/* 1 + 2^-11: tie, even */
	printf("%s %a %u\n", strcmp(fpl_version(), FPL_VERSION_STRING) == 0 ? "ok" : "version?",
	       y, st.flags);
	return 0;
}
PROG

# A sanitizer build (make check SANITIZE=1) installs an instrumented
# library: the program needs the same -fsanitize flags to link.
san=
case $BUILD in /*) flags=$BUILD/.flags ;; *) flags=$SRCDIR/${BUILD:-build/rel}/.flags ;; esac
if [ -r "$flags" ]; then
	for w in $(cat "$flags"); do
		case $w in -fsanitize=*|-fno-sanitize-recover=*) san="$san $w" ;; esac
	done
fi

export PKG_CONFIG_PATH="$P/lib/pkgconfig"
cflags=$(pkg-config --cflags fplab) && libs=$(pkg-config --libs fplab) || {
	fail "pkg-config cannot read fplab.pc"; echo "1 of $checks checks failed"; exit 1; }
checks=$((checks + 1))
if $CC $san -o "$T/prog" "$T/prog.c" $cflags $libs >"$T/cc.log" 2>&1; then
	out=$(LD_LIBRARY_PATH="$P/lib" "$T/prog")
	[ "$out" = "ok 0x1p+0 1" ] || fail "shared: the program printed '$out', want 'ok 0x1p+0 1'"
else
	fail "cannot compile against the installed copy: $CC prog.c $cflags $libs"
	sed 's/^/  | /' "$T/cc.log" | head -n 20
fi
checks=$((checks + 1))
slibs=$(pkg-config --static --libs fplab | sed 's/-lfplab//')
if $CC $san -o "$T/prog_static" "$T/prog.c" $cflags "$P/lib/libfplab.a" $slibs >"$T/cc2.log" 2>&1; then
	out=$("$T/prog_static")
	[ "$out" = "ok 0x1p+0 1" ] || fail "static: the program printed '$out'"
else
	fail "cannot link the static library with pkg-config --static --libs: $slibs"
	sed 's/^/  | /' "$T/cc2.log" | head -n 20
fi

# The README's library example, taken from README.md itself so the two
# never drift, built as the README says: cc prog.c $(pkg-config ...).
checks=$((checks + 1))
awk '/^## The library in one minute/ { on = 1 } on && /^```c$/ { c = 1; next }
     c && /^```$/ { exit } c' "$SRCDIR/README.md" >"$T/readme.c"
if [ ! -s "$T/readme.c" ]; then
	fail "no \`\`\`c block under '## The library in one minute' in README.md"
elif $CC $san -o "$T/readme" "$T/readme.c" $cflags $libs >"$T/cc3.log" 2>&1; then
	out=$(LD_LIBRARY_PATH="$P/lib" "$T/readme")
	rc=$?
	want=$(printf '%s\n' 'x = 1 (inexact), y = 2.77556e-17' '0.1 -> 0.100098' \
		'0.333333 -> 0.333984' '65504 -> 65536')
	[ "$rc" = 0 ] && [ "$out" = "$want" ] ||
		fail "README example: exit $rc, printed '$out', want '$want'"
else
	fail "the README's library example does not compile: $CC readme.c $cflags $libs"
	sed 's/^/  | /' "$T/cc3.log" | head -n 20
fi

checks=$((checks + 1))
"$P/bin/fplab" -h >/dev/null 2>&1 || fail "installed fplab -h does not exit 0"

checks=$((checks + 1))
if $MAKE -s -C "$SRCDIR" ${BUILD:+BUILD="$BUILD"} uninstall PREFIX="$P" >"$T/un.log" 2>&1; then
	left=$(find "$P" -type f | head -n 5)
	[ -z "$left" ] || fail "left after make uninstall: $left"
else
	fail "make uninstall failed"
fi

if [ "$failures" -gt 0 ]; then
	echo "install.sh: $failures of $checks checks failed"
	exit 1
fi
echo "install.sh: $checks checks passed"
exit 0
