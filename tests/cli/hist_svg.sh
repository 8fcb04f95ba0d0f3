#!/bin/sh
# SPDX-License-Identifier: MIT
# hist_svg.sh - `fplab hist --svg`: a well-formed, self-contained XML
# document with one panel per tensor plus the total, each with axes, the
# format's range shaded and the counts labelled (checked with xmllint from
# Debian's libxml2-utils; skipped when it is missing); then pictures that
# read well: over many inputs, no label overlaps another label or a bar
# (svg_layout.py below, measuring text as the renderer does), the count
# ticks are integers, the legend is there, and every SVG renders with
# rsvg-convert (Debian's librsvg2-bin) where it is installed.
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

# ------------------------------------------------------------ pictures that read well
# Text boxes are estimated conservatively: 0.65 x font size per ASCII
# character (DejaVu Sans's digits are 0.64 em, most letters less), 1 em
# per other character, from 0.8 size above the baseline to 0.25 below;
# tspans (the superscript exponents) add their width and shift by dy;
# text-anchor and the translate(..) rotate(-90) transforms are applied.
# Within each panel (and the page heading) no two text boxes overlap, no
# text box overlaps a bar, every text lies within the picture's width;
# count ticks are integers (1, 10, 1k, 2M...); a legend names the colours.
cat >svg_layout.py <<'PY'
import re, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
def width(s, size):
    return sum((0.65 if ord(ch) < 128 else 1.0) * size for ch in s)
def text_box(t, inh):
    size = float(t.get('font-size', inh))
    parts = [(t.text or '', size, 0.0)]
    for sp in t.findall(NS + 'tspan'):
        parts.append((sp.text or '', float(sp.get('font-size', size)), float(sp.get('dy', '0'))))
        parts.append((sp.tail or '', size, float(sp.get('dy', '0'))))
    w = sum(width(s, z) for s, z, _ in parts)
    y0 = min(dy - 0.8 * z for s, z, dy in parts if s)
    y1 = max(dy + 0.25 * z for s, z, dy in parts if s)
    anchor = t.get('text-anchor', 'start')
    x0 = {'start': 0, 'middle': -w / 2, 'end': -w}[anchor]
    x1 = x0 + w
    tr = t.get('transform')
    if tr:
        m = re.fullmatch(r'translate\(([-\d.]+),([-\d.]+)\) rotate\(-90\)', tr)
        if not m:
            raise SystemExit('unexpected transform %r' % tr)
        a, b = float(m.group(1)), float(m.group(2))
        # rotate(-90): (x', y') -> (y', -x')
        return (a + y0, b - x1, a + y1, b - x0)
    x, y = float(t.get('x', 0)), float(t.get('y', 0))
    return (x + x0, y + y0, x + x1, y + y1)
def overlap(p, q):
    return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]
def label(t):
    return ''.join(t.itertext())
bad = 0
def fail(f, msg):
    global bad
    bad += 1
    print('%s: %s' % (f, msg))
for f in sys.argv[1:]:
    root = ET.parse(f).getroot()
    pw = float(root.get('width'))
    groups = [('heading', [t for t in root.findall(NS + 'text')], [])]
    for g in root.iter(NS + 'g'):
        if g.get('class') != 'panel':
            continue
        texts = list(g.iter(NS + 'text'))
        bars = [r for r in g.iter(NS + 'rect') if r.get('class') == 'bar']
        groups.append((g.get('data-tensor'), texts, bars))
        if not any(t.get('class') == 'legend' for t in texts):
            fail(f, '%s: no legend' % g.get('data-tensor'))
        names = ' '.join(label(t) for t in texts if t.get('class') == 'legend')
        for want in ('normal', 'subnormal', 'overflow', 'became zero'):
            if want not in names:
                fail(f, '%s: legend without %r' % (g.get('data-tensor'), want))
        for t in texts:
            if t.get('class') == 'tick' and t.find(NS + 'tspan') is None:
                if not re.fullmatch(r'\d+[kMGTPE]?', label(t)):
                    fail(f, '%s: count tick %r is not an integer' % (g.get('data-tensor'), label(t)))
    for name, texts, bars in groups:
        boxes = [(label(t), text_box(t, 16)) for t in texts if label(t).strip()]
        rects = [tuple(float(r.get(k)) for k in ('x', 'y', 'width', 'height')) for r in bars]
        rects = [(x, y, x + w, y + h) for x, y, w, h in rects]
        for i, (s, b) in enumerate(boxes):
            if b[0] < 0 or b[2] > pw:
                fail(f, '%s: %r runs past the edge: %s' % (name, s, b))
            for s2, b2 in boxes[i + 1:]:
                if overlap(b, b2):
                    fail(f, '%s: %r overlaps %r' % (name, s, s2))
            for r in rects:
                if overlap(b, r):
                    fail(f, '%s: %r overlaps a bar at x=%.1f' % (name, s, r[0]))
sys.exit(1 if bad else 0)
PY
# inputs: the sample dumps and small text files at the corners
printf '3.5\n' >one.txt
printf 'nan nan nan\n' >nan.txt
: >empty.txt
printf '1e30 -1e30 1e-30 1e-12 3e-9 448 500 1e4 1 0.5 2e-3 1e-6 0 inf\n' >edges.txt
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%.9g\n", exp((i % 97 - 60) * 0.7) * (1 + i % 7) }' >spread.txt
awk 'BEGIN { for (i = 0; i < 5; i++) print 1000 + i }' >flat.txt
long=$(printf 'x%.0s' $(seq 1 150))
printf '1 2 3\n' >"$long.txt"
svgs=
render() {	# render NAME ARGS...: hist --svg into NAME.svg
	name=$1
	shift
	checks=$((checks + 1))
	fplab hist --svg "$name.svg" "$@" >/dev/null 2>err || { fail "hist --svg $*: $(cat err)"; return; }
	xmllint --noout "$name.svg" 2>err || fail "$name.svg: not well-formed: $(head -3 err)"
	svgs="$svgs $name.svg"
}
for f in e4m3fn fp16 bf16 e2m1 e5m2 fp32; do
	render "npz-$f" -f "$f" "$S"
	render "st-$f" -f "$f" "$SRCDIR/experiments/data/sample-grads.safetensors"
	render "edges-$f" -f "$f" edges.txt spread.txt one.txt nan.txt empty.txt flat.txt
done
render aps -f e4m3fn --aps "$S"
render mx -f e2m1 --mx 32 "$S"
render mx8 -f e4m3fn --mx 32 spread.txt
render one -f fp16 one.txt
render nan -f e4m3fn nan.txt
render empty -f bf16 empty.txt
render long -f fp16 "$long.txt"
checks=$((checks + 1))
# shellcheck disable=SC2086
python3 svg_layout.py $svgs >layout.out 2>&1 || fail "labels overlap: $(head -20 layout.out)"
checks=$((checks + 1))
[ "$(xmllint --xpath 'count(//*[@class="title"][contains(., "...")])' long.svg)" = 1 ] ||
	fail "a name too wide for the panel is not shortened"
checks=$((checks + 1))
grep -q 'count (log)' npz-e4m3fn.svg || fail "the total (counts 1..2530) is not on a log axis"
# shellcheck disable=SC2086
render_svgs $svgs
finish
