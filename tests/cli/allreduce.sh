#!/bin/sh
# SPDX-License-Identifier: MIT
# allreduce.sh - `fplab allreduce` (issue 12, items 3 and 5): the
# done-when (ring worse than hier:16 on 256 nodes in e5m2, exact fp64 on
# integers, APS against none in e4m3fn), schedules on ones worked by hand,
# steps and bytes, sweeps, tensor inputs, -o, and bad input.  Expected
# values are derived by hand in the comments, never from fplab.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1

# col NAME LAYER FILE: column NAME of the rows of layer LAYER of a TSV
# report, one per line in row order
col() {
	awk -F '\t' -v c="$1" -v l="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$6 == l { print $k }' "$3"
}

# --- the header: the columns of the man page, in order
fplab allreduce --nodes 2 --layers 4:ones --tsv >h.tsv
expect_out "header" "$(printf 'algo\tgroup\tcomm\tacc\tscale\tlayer\tn\tnodes\tsteps\tbytes_per_node\tscale_log2\tmean_rel_error\tmax_rel_error\tinexact\tunderflow\toverflow\tsaturated\tflushed\tinvalid\tbecame_zero\tnan\tinf\tbits_per_value')" head -n 1 h.tsv
# defaults: ring, comm fp32 ne, acc = comm, scale none, group: no value
# (an empty TSV cell, "-" in text, null in JSON)
expect_out "defaults" "ring  fp32:ne fp32:ne none layer0" awk -F '\t' 'NR == 2 { print $1, $2, $3, $4, $5, $6 }' h.tsv

# --- the done-when: 256 nodes in e5m2, lognormal gradients (all positive,
# so the error is round-off, not cancellation).  A ring adds a node's value
# to a partial sum of up to 255 others, hier:16 to at most 15 (the paper's
# §4.2): the ring's average relative error is the larger.
fplab allreduce --nodes 256 --comm e5m2 --acc e5m2 --seed 1 --algo ring,hier --group 16 \
	--layers '2048:lognormal:-8,1' --tsv >d.tsv 2>d.err
expect_out "done-when: ring mean_rel_error > hier:16's" "yes" \
	awk -F '\t' '$6 == "total" { e[$1] = $12 } END { print (e["ring"] > e["hier"] ? "yes" : "no") }' d.tsv
# steps: ring 2(P-1) = 510; hier 15 in the groups + 2(16-1) among the
# leaders + 1 broadcast = 46
expect_out "done-when steps" "510
46" col steps total d.tsv

# --- integers in fp64: |sums| <= 256 * 1000 < 2^53, every addition exact
fplab allreduce --nodes 256 --comm fp64 --acc fp64 --algo sequential,ring,tree,hier --group 16 \
	--layers '300:ints:-1000,1000;7:ints:-3,3' --seed 3 --tsv >i.tsv
expect_out "fp64 ints: every schedule exact" "sequential 0 0 0
ring 0 0 0
tree 0 0 0
hier 0 0 0" awk -F '\t' '$6 == "total" { print $1, $12, $13, $14 }' i.tsv

# --- 32 nodes of ones in e4m3fn (4 significant bits): a running sum
# stops at 16, where 16 + 1 = 17 ties between 16 and 18 and goes to even
# 16, so sequential and ring (a sequential chain per chunk) give 16 of 32,
# error 1/2, after 16 inexact additions per element, 32 * 16 = 512; a tree
# adds equal powers of two, and hier:4 adds 4s (4 bits hold 4..32 in steps
# of 4): both exact.
fplab allreduce --nodes 32 --comm e4m3fn --algo sequential,ring,tree,hier --group 4 \
	--layers 32:ones --tsv >o.tsv
expect_out "ones in e4m3fn" "sequential 0.5 0.5 512
ring 0.5 0.5 512
tree 0 0 0
hier 0 0 0" awk -F '\t' '$6 == "layer0" { print $1, $12, $13, $14 }' o.tsv
fplab allreduce --nodes 32 --comm e4m3fn --algo ring --layers 32:ones -o r.txt >/dev/null
expect_out "-o text: 32 values of 16" "32 16" awk '{ n++; s[$1]++ } END { for (v in s) print n, v }' r.txt

# --- steps and bytes on 4 nodes of 8 values in e5m2 (1 byte per value):
# sequential: 3 adds into node 0, one broadcast step; node 0 sends 3 x 8.
# ring: 6 steps, each node sends 6 chunks of 2.  tree: 2 + 2 steps, node 0
# sends 8 to node 2 then 8 to node 1.  hier:2: 1 + 2 + 1 steps, a leader
# sends 2 chunks of 4 in the leaders' ring and 8 to its member.
fplab allreduce --nodes 4 --comm e5m2 --algo sequential,ring,tree,hier --group 2 \
	--layers 8:ones --tsv >b.tsv
expect_out "steps and bytes" "sequential 4 24
ring 6 12
tree 4 16
hier 4 16" awk -F '\t' '$6 == "layer0" { print $1, $9, $10 }' b.tsv
# APS on ones: the largest k with 4 * 2^k < 57344 (e5m2's max) is 13, and
# the exponent all-reduce costs 1 more byte
fplab allreduce --nodes 4 --comm e5m2 --scale aps --layers 8:ones --tsv >a.tsv
expect_out "aps shift and byte" "13 13" awk -F '\t' '$6 == "layer0" { print $11, $10 }' a.tsv

# --- APS against none in e4m3fn on 8 nodes.  Small gradients, sigma
# 1e-5: every value is below 2^-10, half the smallest subnormal 2^-9, so
# without scaling all 8000 casts underflow to 0 and all 1000 sums become
# zero (error 1); APS shifts them up by about 2^20 and keeps them.
fplab allreduce --nodes 8 --comm e4m3fn --seed 1 --scale none,aps \
	--layers '1000:normal:0,1e-5' --tsv >s.tsv
expect_out "small: none underflows everything" "8000 1000 1" \
	awk -F '\t' '$5 == "none" && $6 == "layer0" { print $15, $20, $12 }' s.tsv
expect_out "small: aps became_zero lower, no overflow" "yes 0" \
	awk -F '\t' '$6 == "layer0" { z[$5] = $20; o[$5] = $16 } END { print (z["aps"] < z["none"] ? "yes" : "no"), o["aps"] }' s.tsv
# Large gradients, sigma 100: values beyond e4m3fn's 448 overflow (to NaN:
# e4m3fn has no infinity) without scaling; APS shifts down and never does
fplab allreduce --nodes 8 --comm e4m3fn --seed 1 --scale none,aps \
	--layers '1000:normal:0,100' --tsv >l.tsv
expect_out "large: none overflows, aps does not" "none yes
aps 0 0" awk -F '\t' '$6 == "layer0" { print $5, ($5 == "none" ? ($16 > 0 && $21 > 0 ? "yes" : "no") : $16 " " $21) }' l.tsv
# an all-zero layer under APS: shift 0, no NaN
fplab allreduce --nodes 8 --comm e4m3fn --scale aps --layers '10:uniform:0,0' --tsv >z.tsv
expect_out "aps on zeros" "0 0 0" awk -F '\t' '$6 == "layer0" { print $11, $21, $12 }' z.tsv

# --- fp32 layers: the last layer of e4m3fn gradients kept in fp32 sends
# 4 bytes a value (ring on 8 nodes, 800 values: 14 chunks of 100 = 5600)
# and is not scaled
fplab allreduce --nodes 8 --comm e4m3fn --scale aps --layers '2x800:normal:0,1e-3' \
	--fp32-layers last --tsv >f.tsv
expect_out "fp32 layer bytes and scale" "layer0 1401
layer1 5600 0" awk -F '\t' '$6 == "layer0" { print $6, $10 } $6 == "layer1" { print $6, $10, $11 }' f.tsv
# and its row is labelled with what it was reduced in, not the row's e4m3fn
expect_out "fp32 layer labelled fp32" "layer0 e4m3fn:ne e4m3fn:ne aps
layer1 fp32:ne fp32:ne none
total e4m3fn:ne e4m3fn:ne aps" awk -F '\t' 'NR > 1 { print $6, $3, $4, $5 }' f.tsv

# --- sweeps: one row group (layers + total) per combination, algo
# outermost, then group, comm, acc, scale
fplab allreduce --nodes 4 --algo ring,hier --group 2,4 --comm e5m2,fp16 --scale none,aps \
	--layers '4:ones;4:ones' --tsv >w.tsv
# ring: 1 group x 2 comm x 2 scale = 4; hier: 2 x 2 x 2 = 8; 12 x 3 rows
expect_out "sweep rows" "37" eval 'wc -l <w.tsv | tr -d " "'
expect_out "sweep order" "ring  e5m2:ne none
ring  e5m2:ne aps
ring  fp16:ne none
ring  fp16:ne aps
hier 2 e5m2:ne none
hier 2 e5m2:ne aps
hier 2 fp16:ne none
hier 2 fp16:ne aps
hier 4 e5m2:ne none
hier 4 e5m2:ne aps
hier 4 fp16:ne none
hier 4 fp16:ne aps" awk -F '\t' '$6 == "total" { print $1, $2, $3, $5 }' w.tsv
# -r is the mode of every spec without one; an --acc list sweeps too
expect_out "-r and acc list" "e5m2:tz fp32:tz
e5m2:tz fp16:ne" eval "fplab allreduce --nodes 2 --layers 4:ones --comm e5m2 --acc fp32,fp16:ne -r tz --tsv | awk -F '\t' '\$6 == \"total\" { print \$3, \$4 }'"
fplab allreduce --nodes 4 --algo ring,tree --layers '4:ones;4:ones' --ndjson >w.nd
expect_out "ndjson rows" "6" eval 'wc -l <w.nd | tr -d " "'
if "$PYTHON" -c 'import json' 2>/dev/null; then
	fplab allreduce --nodes 4 --algo ring,tree --layers '4:ones;4:ones' --json >w.json
	expect_out "json rows" "6 total 8" "$PYTHON" -c '
import json
d = json.load(open("w.json"))
print(len(d), d[2]["layer"], d[2]["n"])'
fi
# a row of a sweep equals the same combination alone (stochastic too)
fplab allreduce --nodes 8 --comm e5m2:sp --seed 5 --algo tree --layers 100:normal:0,1 --tsv >x1.tsv
fplab allreduce --nodes 8 --comm e5m2:sp --seed 5 --algo ring,tree --layers 100:normal:0,1 --tsv >x2.tsv
expect_out "sweep row = alone" "$(col mean_rel_error total x1.tsv)" eval "col mean_rel_error total x2.tsv | tail -n 1"

# --- tensor inputs: one .npz per node, and one stacked file
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c '
import numpy as np
for i in range(3):
    np.savez("n%d.npz" % i, w=np.arange(6.).reshape(2, 3) * (i + 1), b=np.array([0.5, 0.25]) * (i + 1))
np.savez("st.npz", w=np.stack([np.arange(6.).reshape(2, 3) * (i + 1) for i in range(3)]),
         b=np.stack([np.array([0.5, 0.25]) * (i + 1) for i in range(3)]))'
	# the sums are 1 + 2 + 3 = 6 times node 0's values
	fplab allreduce --inputs n0.npz,n1.npz,n2.npz --comm fp64 -o o1.npz --tsv >t1.tsv
	fplab allreduce --stacked st.npz --comm fp64 -o o2.npz --tsv >t2.tsv
	expect_out "inputs: layers in file order" "w 6 3
b 2 3
total 8 3" awk -F '\t' 'NR > 1 { print $6, $7, $8 }' t1.tsv
	for o in o1 o2; do
		expect_out "-o $o.npz" "['w', 'b'] (2, 3) [0.0, 6.0, 12.0, 18.0, 24.0, 30.0] [3.0, 1.5]" "$PYTHON" -c '
import numpy as np
d = np.load("'$o'.npz")
print(list(d.keys()), d["w"].shape, d["w"].ravel().tolist(), d["b"].tolist())'
	done
	expect_fail "stacked with other --nodes" 2 "tensor 'w' stacks 3 nodes, not 4" \
		fplab allreduce --stacked st.npz --nodes 4
	expect_fail "--inputs with other --nodes" 2 "--nodes 4 but --inputs names 3 files" \
		fplab allreduce --inputs n0.npz,n1.npz,n2.npz --nodes 4
	expect_fail "--fp32-layers unknown name" 2 "unknown layer 'bb'; did you mean 'b'\\?" \
		fplab allreduce --inputs n0.npz,n1.npz,n2.npz --fp32-layers bb
fi

# --- bad input: clear messages, exit 2
expect_fail "G not dividing P" 2 "--group 3 does not divide --nodes 8" \
	fplab allreduce --nodes 8 --algo hier --group 3 --layers 4:ones
expect_fail "hier without G" 2 "hier needs --group" fplab allreduce --nodes 8 --algo hier --layers 4:ones
expect_fail "G without hier" 2 "--group applies to --algo hier" \
	fplab allreduce --nodes 8 --group 2 --layers 4:ones
expect_fail "unknown algo" 2 "unknown algorithm 'rnig'; did you mean 'ring'\\?" \
	fplab allreduce --nodes 8 --algo rnig --layers 4:ones
expect_fail "unknown scaling" 2 "unknown scaling 'apss'; did you mean 'aps'\\?" \
	fplab allreduce --nodes 8 --scale apss --layers 4:ones
expect_fail "bad loss scale" 2 "expected loss:S with S > 0" \
	fplab allreduce --nodes 8 --scale loss:-1 --layers 4:ones
expect_fail "unknown comm format" 2 "--comm 'e5m2x': unknown format" \
	fplab allreduce --nodes 8 --comm e5m2x --layers 4:ones
expect_fail "layer without a distribution" 2 "layer 2 '10' is not SIZE:GEN" \
	fplab allreduce --nodes 8 --layers '4:ones;10'
expect_fail "bad layer size" 2 "layer 1: '0' is not a size" fplab allreduce --nodes 8 --layers 0:ones
expect_fail "bad distribution" 2 "unknown generator 'nromal'; did you mean 'normal'\\?" \
	fplab allreduce --nodes 8 --layers 10:nromal:0,1
expect_fail "bad distribution parameters" 2 "layer 1 has a bad distribution 'normal:0'" \
	fplab allreduce --nodes 8 --layers 10:normal:0
expect_fail "no nodes" 2 "--layers needs --nodes P" fplab allreduce --layers 4:ones
# the issue's done-when command, without a source: the default layer
# (9408 lognormal(-8, 1) values per node); the ring adds each node's
# gradient to sums up to 255 times larger, hier:16 to at most 15 times
# larger, so the ring's average relative error is the larger
fplab allreduce --nodes 256 --comm e5m2 --acc e5m2 --seed 1 --algo ring,hier --group 16 --tsv >dflt.tsv
checks=$((checks + 1))
awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["layer"] == "total" { e[$c["algo"]] = $c["mean_rel_error"]; n = $c["n"] }
	END { exit !(n == 9408 && e["ring"] > e["hier"]) }' dflt.tsv ||
	fail "default layer: ring must lose more than hier:16: $(cat dflt.tsv)"
expect_fail "two sources" 2 "three sources: give one" fplab allreduce --nodes 4 --layers 4:ones --stacked x.npz
expect_fail "-o with a sweep" 2 "a sweep of 2 configurations" \
	fplab allreduce --nodes 4 --algo ring,tree --layers 4:ones -o x.npz
expect_fail "-r list" 2 "-r takes one mode" fplab allreduce --nodes 4 --layers 4:ones -r ne,sp
expect_fail "a rounding option it does not take" 2 "unrecognized option" \
	fplab allreduce --nodes 4 --layers 4:ones --flip 1

# --- no value (issue 23): the group of a schedule without groups is "-"
# in text, an empty TSV cell (above), null in JSON
expect_out "group: no value in text" "-" eval "fplab allreduce --nodes 2 --layers 4:ones | awk 'NR == 2 { print \$2 }'"
expect_out "group: null in JSON" '"group": null' eval "fplab allreduce --nodes 2 --layers 4:ones --ndjson | head -n 1 | grep -o '\"group\": null'"

# --- a result that is not finite where the exact sum is: relative error
# +inf in mean and max (issue 23), still counted in nan / inf.  Two nodes
# of (60000, 1): 60000 rounds to e5m2's 57344 (below the midpoint 61440
# to 65536), and 57344 + 57344 = 114688 overflows to inf; e4m3fn (max
# 448, no infinity) overflows 60000 to NaN.  1 + 1 = 2 is exact.
printf '60000\n1\n' >big0.txt
cp big0.txt big1.txt
fplab allreduce --inputs big0.txt,big1.txt --comm e5m2,e4m3fn --tsv >big.tsv
expect_out "inf and NaN results: error +inf" "e5m2:ne layer0 inf inf 0 1
e5m2:ne total inf inf 0 1
e4m3fn:ne layer0 inf inf 1 0
e4m3fn:ne total inf inf 1 0" awk -F '\t' 'NR > 1 { print $3, $6, $12, $13, $21, $22 }' big.tsv

# --- --inputs (issue 23): per-node files of different names (layer k
# is tensor k of each file), more than 64 files, and the sizes of
# mismatched layers named as they are
seq 1 10 | fplab round -f fp64 -o grad_rank0.npy
seq 1 10 | fplab round -f fp64 -o grad_rank1.npy
fplab allreduce --inputs grad_rank0.npy,grad_rank1.npy --comm fp64 -o gr.txt --tsv >gr.tsv
expect_out "per-node .npy names: layer named after node 0's" "grad_rank0 10 2 0" \
	awk -F '\t' 'NR == 2 { print $6, $7, $8, $13 }' gr.tsv
expect_out "per-node .npy names: the sums" "2 20" eval "echo \$(sed -n '1p;10p' gr.txt)"
seq 1 9 | fplab round -f fp64 -o grad_rank2.npy
expect_fail "layer sizes differ" 1 "layer 'grad_rank0' has 9 values in 'grad_rank2.npy' but 10 in 'grad_rank0.npy'" \
	fplab allreduce --inputs grad_rank0.npy,grad_rank2.npy
# 70 nodes, node i holding (i, 1): sums 0 + 1 + ... + 69 = 2415 and 70
files=
i=0
while [ $i -lt 70 ]; do
	printf '%d\n1\n' $i >m$i.txt
	files=$files${files:+,}m$i.txt
	i=$((i + 1))
done
fplab allreduce --inputs "$files" --comm fp64 -o m.txt --tsv >m.tsv
expect_out "70 input files" "70 2415 70" eval "echo \$(awk -F '\t' 'NR == 2 { print \$8 }' m.tsv) \$(cat m.txt)"
checks=$((checks + 1))
[ -e x.npz ] && fail "a failed run left x.npz"

# --- progress (issue 23): a run of more than a second draws a bar of the
# layers done (8 layers x 1 configuration) on a terminal's stderr, and
# writes nothing to stderr in a pipe
LONG="--nodes 64 --layers 8x20000:normal:0,1 --comm e5m2 --threads 1 --tsv"
# shellcheck disable=SC2086
fplab allreduce $LONG >long.tsv 2>long.err
checks=$((checks + 1))
[ -s long.err ] && fail "stderr in a pipe is not empty: $(od -c long.err | head -n 3)"
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	# FPLAB_PROGRESS_DELAY=0: the bar at once, however fast this machine is
	script -qec "FPLAB_PROGRESS_DELAY=0 $FPLAB allreduce $LONG >/dev/null" /dev/null >pty.out 2>&1
	checks=$((checks + 1))
	grep -q 'fplab allreduce: \[[# ]*\] [0-9]/8 ' pty.out ||
		fail "no progress bar on a terminal: $(od -c pty.out | head -n 3)"
else
	echo "allreduce.sh: skip the progress bar check: no script(1) here"
fi
finish
