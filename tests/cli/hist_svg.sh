#!/bin/sh
# SPDX-License-Identifier: MIT
# hist_svg.sh - `fplab hist --svg`: a well-formed, self-contained XML
# document with one panel per tensor plus the total, each with axes, the
# format's range shaded and the counts labelled (checked with xmllint from
# Debian's libxml2-utils; skipped when it is missing).
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1
if ! command -v xmllint >/dev/null 2>&1; then
	echo "skip: xmllint not found (apt-get install libxml2-utils)"
	exit 77
fi
S=$SRCDIR/experiments/data/sample-grads.npz

fplab hist -f e4m3fn --svg grads.svg "$S" >/dev/null 2>err || fail "hist --svg: $(cat err)"
checks=$((checks + 1))
xmllint --noout grads.svg 2>err || fail "not well-formed XML: $(head -3 err)"
xp() { xmllint --xpath "$1" grads.svg 2>/dev/null; }
checks=$((checks + 1))
[ "$(xp 'name(/*)')" = svg ] || fail "root element is not svg"
checks=$((checks + 1))
[ "$(xp 'count(//*[local-name()="g"][@class="panel"])')" = 9 ] ||
	fail "expected 9 panels (8 tensors + total), got $(xp 'count(//*[local-name()="g"][@class="panel"])')"
for t in conv1.weight.grad conv2.weight.grad conv3.weight.grad fc1.weight.grad fc1.bias.grad \
	fc2.weight.grad fc2.bias.grad head.weight.grad '(total)'; do
	checks=$((checks + 1))
	[ "$(xp "count(//*[local-name()='g'][@data-tensor='$t'])")" = 1 ] || fail "no panel for $t"
done
checks=$((checks + 1))
[ "$(xp 'count(//*[@class="range-normal"])')" = 9 ] || fail "range not shaded in every panel"
checks=$((checks + 1))
[ "$(xp 'count(//*[local-name()="g"][@class="axes"])')" = 9 ] || fail "axes missing"
checks=$((checks + 1))
[ "$(xp 'count(//*[@class="count"])')" -gt 0 ] || fail "no count labels"
checks=$((checks + 1))
grep -q 'href\|<script\|<image' grads.svg && fail "SVG refers to external resources"
# the SVG replaces an existing file atomically and stdout still gets the report
echo old >grads.svg
fplab hist -f fp16 --tsv --svg grads.svg "$S" >tsv || fail "second run"
checks=$((checks + 1))
[ "$(head -c 5 grads.svg)" = "<?xml" ] && [ "$(wc -l <tsv)" = 10 ] || fail "rewrite"
# a name that needs escaping
printf '1 2\n' >'a&b<c>.txt'
fplab hist --svg esc.svg 'a&b<c>.txt' >/dev/null || fail "escaped name"
checks=$((checks + 1))
xmllint --noout esc.svg 2>/dev/null || fail "name not escaped"
finish
