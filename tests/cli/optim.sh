#!/bin/sh
# SPDX-License-Identifier: MIT
# optim.sh - `fplab optim`: the issue's done-when command (updates vanish
# without a master copy, none with one), every option, a hand-checked
# case read from tensor files (.npz, .safetensors, text, a stack), the
# --every rows, JSON that parses, the same bits on 1 and 2 threads, Split
# SGD's master equal to fp32-master's, dynamic loss scaling skipping
# spiked steps, the SVG, and bad input: a clear message, a non-zero exit
# and no --svg file left behind.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# col FILE POLICY COLUMN: COLUMN of POLICY's last row in a TSV report
col() { tsv_last "$1" policy "$2" "$3"; }

# cols FILE POLICY COLUMN...: those columns of POLICY's last row, one line
cols() {
	_f=$1 _p=$2
	shift 2
	for _c in "$@"; do col "$_f" "$_p" "$_c"; done | paste -sd ' ' -
}

# --- the done-when command: on the default stream (10000 weights
# 2^-16..2^-4, gradients 2^-14..2^-5) lr*g is below half an ulp of many
# fp16 weights, so updates vanish without a master copy and never with one
fplab optim --steps 1000 --optim sgd --lr 1e-3 --policy none:fp16 --policy fp32-master:fp16 \
	--tsv >dw.tsv || fail "done-when command exits $?"
checks=$((checks + 1))
awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	{ v[$k["policy"]] = $k["vanished_frac"]; s[$k["policy"]] = $k["step"] }
	END { exit !(NR == 3 && v["none:fp16"] > 0 && v["fp32-master:fp16"] == "0" &&
		     s["none:fp16"] == 1000) }' dw.tsv ||
	fail "done-when: expected vanished_frac > 0 for none:fp16, 0 for fp32-master:fp16: $(cat dw.tsv)"
expect_out "columns" "policy optim step nonzero vanished vanished_frac stale_frac drift master_drift loss_scale skipped opt_overflow opt_underflow grad_underflow bytes_per_param weight_bytes master_bytes state_bytes split_rne_differs saturated flushed amax_saturated scale_clamped" \
	eval "head -n 1 dw.tsv | tr '\t' ' '"

# --- the default policies, text report: one row each after the last step
fplab optim --steps 20 --sizes 500 >def.txt || fail "defaults exit $?"
expect_out "default policies" "none:fp16 20
fp32-master:fp16 20
none:bf16 20
split:bf16 20" awk 'NR > 1 { print $1, $3 }' def.txt
expect_out "text NA is -" "- - - yes" awk 'NR > 1 { printf "%s%s", sep, ($19 == "-" ? "-" : ($19 > 0 ? "yes" : "no")); sep = " " } END { print "" }' def.txt
expect_out "no block columns without blocks" "- - - -" awk 'NR > 1 { printf "%s%s", sep, $NF; sep = " " } END { print "" }' def.txt

# memory per parameter (sgd without momentum: no state)
fplab optim --steps 1 --sizes 10 --policy none:bf16 --policy fp32-master:bf16 --policy split:bf16 \
	--policy kahan:bf16 --policy stochastic:bf16 --tsv >mem.tsv
expect_out "bytes per parameter" "2 6 4 4 2" eval "awk -F '\t' 'NR > 1 { printf \"%s%s\", s, \$15; s = \" \" } END { print \"\" }' mem.tsv"
fplab optim --steps 1 --sizes 10 --optim adam --policy none:bf16 --policy fp32-master:bf16 --tsv >mema.tsv
expect_out "adam state bytes" "4 8" eval "awk -F '\t' 'NR > 1 { printf \"%s%s\", s, \$18; s = \" \" } END { print \"\" }' mema.tsv"

# --- every option, once each, accepted
ok fplab optim --steps 3 --sizes 50 --optim sgd --lr 0.01 --momentum 0.9 --dampening 0 --nesterov \
	--weight-decay 1e-4 --policy none:fp16
ok fplab optim --steps 3 --sizes 50 --optim sgd --momentum 0.9 --dampening 0.1 --policy kahan:e5m2
ok fplab optim --steps 3 --sizes 50 --optim adagrad --lr-decay 0.01 --initial-accumulator 0.1 --eps 1e-10 \
	--policy fp32-master:fp16:tz
for a in adam adamw lamb; do
	ok fplab optim --steps 3 --sizes 50,20 --optim $a --betas 0.8,0.99 --eps 1e-6 --weight-decay 0.01 \
		--policy stochastic:bf16:sp --policy split:bf16
done
ok fplab optim --steps 3 --sizes 50 --loss-scale 1024 --policy 'none:fp16,grad=fp16,grad-rnd=tz,unscale=fp32,unscale-rnd=na,state=bf16,state-rnd=sp,arith=fp32,arith-rnd=ne'
ok fplab optim --steps 3 --sizes 50 --loss-scale dynamic:1024:2:0.5:2 --policy 'fp32-master:fp16,master=fp32,scale=aps' --policy 'fp32-master:e4m3fn'
ok fplab optim --steps 3 --sizes 50 --loss-scale aps --policy 'none:e3m4' --policy 'none:e8m5:tz,scale=none'
ok fplab optim --steps 3 --sizes 50 --loss-scale none --policy 'kahan:fp16,scale=dynamic'
ok fplab optim --steps 3 --sizes 5,6 --weights 'uniform:-1,1;normal:0,1' --grads 'loguniform:-30,-5' \
	--spikes 0.5:1e6 --seed 7 --sr-bits 8 --threads 2 --every 2 --svg ok.svg --ndjson
ok fplab optim -h

# --- a hand-checked case from files: weights (1, 1024) and the gradient
# (1, 1) at every step, sgd lr 0.25.  fp16 around 1024: ulp 0.5 below,
# 1 above; 1024 - 0.25 = 1023.75 is the midpoint of 1023.5 and 1024 and
# ties to 1024 (even), so none:fp16 loses that update every time, while
# 1 - 0.25 is exact: 2 steps, 4 updates, 2 vanished.  fp32-master keeps
# 1023.75 (stored 1024: stale), then 1023.5 (stored): 1 stale of 4.
# Drift of none: w = (0.5, 1024) against (0.5, 1023.5): 0.5 / ||(0.5, 1023.5)||.
printf '1 1024\n' >w.txt
printf '1 1\n' >g.txt
fplab round -f fp64 -o w.npz w.txt || fail "cannot write w.npz"
fplab round -f fp64 -o g.npz g.txt || fail "cannot write g.npz"
fplab round -f fp64 -o g.safetensors g.txt || fail "cannot write g.safetensors"
fplab optim --init w.npz -g g.npz -g g.npz --lr 0.25 --policy none:fp16 --policy fp32-master:fp16 \
	--policy none:fp64 --tsv >hc.tsv || fail "file run exits $?"
expect_out "hand-checked none:fp16" "2 4 2 0.5 0" cols hc.tsv none:fp16 step nonzero vanished vanished_frac stale_frac
expect_out "hand-checked fp32-master:fp16" "0 0.25 0" cols hc.tsv fp32-master:fp16 vanished stale_frac master_drift
expect_out "hand-checked drift" "$(awk 'BEGIN { printf "%.12g\n", 0.5 / sqrt(0.25 + 1023.5 * 1023.5) }')" \
	awk "BEGIN { printf \"%.12g\\n\", $(col hc.tsv none:fp16 drift) }"
expect_out "fp64 policy equals the reference" "0 0 0" cols hc.tsv none:fp64 vanished drift master_drift
# the same run from .safetensors, from text, and cycling one file over 2 steps
for src in "-g g.safetensors -g g.safetensors" "-g g.txt -g g.txt" "-g g.npz --steps 2"; do
	# shellcheck disable=SC2086
	fplab optim --init w.txt $src --lr 0.25 --policy none:fp16 --policy fp32-master:fp16 \
		--policy none:fp64 --tsv >hc2.tsv || fail "$src exits $?"
	checks=$((checks + 1))
	cmp -s hc.tsv hc2.tsv || fail "$src: a different report: $(cat hc2.tsv)"
done
# steps default to the number of files
fplab optim --init w.npz -g g.npz -g g.npz -g g.npz --lr 0.25 --policy none:fp16 --tsv >hc3.tsv
expect_out "steps = files" "3" col hc3.tsv none:fp16 step
# a stack: one tensor (steps, n); needs numpy to write
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c '
import numpy as np
np.savez("st.npz", a=np.ones((2, 2)))
np.save("bad.npy", np.ones(3))'
	fplab optim --init w.npz --grad-stack st.npz --lr 0.25 --policy none:fp16 --policy fp32-master:fp16 \
		--policy none:fp64 --tsv >hc4.tsv || fail "--grad-stack exits $?"
	checks=$((checks + 1))
	cmp -s hc.tsv hc4.tsv || fail "--grad-stack: a different report: $(cat hc4.tsv)"
	expect_fail "stack without a step axis" 1 "has no leading step axis" \
		fplab optim --init w.npz --grad-stack bad.npy
fi

# --- --every: rows at 3, 6, 9 and the last step 10, per policy
fplab optim --steps 10 --every 3 --sizes 20 --policy none:fp16 --policy split:bf16 --tsv >ev.tsv
expect_out "--every rows" "3 3 6 6 9 9 10 10" eval "awk -F '\t' 'NR > 1 { printf \"%s%s\", s, \$3; s = \" \" } END { print \"\" }' ev.tsv"

# --- JSON parses; NDJSON one object per row; the NA cell is null there
fplab optim --steps 4 --every 2 --sizes 30 --json >o.json
fplab optim --steps 4 --every 2 --sizes 30 --ndjson >o.nd
if command -v jq >/dev/null 2>&1; then
	expect_out "json rows" "8" jq length o.json
	expect_out "ndjson rows" "8" eval "jq -s length o.nd"
	expect_out "json split cell" "number null" eval "jq -r '[.[] | select(.step == 4)] | (.[3].split_rne_differs | type), (.[0].split_rne_differs | type)' o.json | paste -sd ' ' -"
else
	checks=$((checks + 1))
	python3 -m json.tool o.json >/dev/null || fail "invalid JSON"
fi
checks=$((checks + 1))
[ "$(wc -l <o.nd | tr -d ' ')" = 8 ] || fail "ndjson: $(wc -l <o.nd) lines"

# --- the same output on 1 and 2 threads (stochastic rounding, two tensors)
for t in 1 2; do
	fplab optim --steps 30 --sizes 300,200 --threads $t --every 10 --optim adam \
		--policy stochastic:bf16:sp --policy split:bf16 --policy fp32-master:fp16 \
		--loss-scale dynamic:65536:2:0.5:5 --tsv >th$t.tsv || fail "--threads $t exits $?"
done
checks=$((checks + 1))
cmp -s th1.tsv th2.tsv || fail "--threads 1 and 2 differ"
# a policy's rows do not depend on the other policies
fplab optim --steps 30 --sizes 300,200 --threads 2 --every 10 --optim adam \
	--policy split:bf16 --loss-scale dynamic:65536:2:0.5:5 --tsv >alone.tsv
expect_out "a policy alone" "$(grep '^split' th1.tsv)" grep '^split' alone.tsv

# --- Split SGD: the master is fp32-master's bit for bit (sgd, momentum);
# the stored weights differ from the master's nearest-even rounding
fplab optim --steps 200 --sizes 2000 --lr 1e-2 --momentum 0.9 --policy split:bf16 \
	--policy fp32-master:bf16 --tsv >sp.tsv
expect_out "split master = fp32-master" "$(col sp.tsv fp32-master:bf16 master_drift)" \
	col sp.tsv split:bf16 master_drift
checks=$((checks + 1))
awk -F '\t' 'NR > 1 && $1 == "split:bf16" { exit !($19 > 0 && $19 < 1) } NR > 1 && $1 != "split:bf16" { exit $19 != "" }' sp.tsv ||
	fail "split_rne_differs: $(cat sp.tsv)"

# --- dynamic loss scaling: spikes of 2^20 overflow fp16's gradients at
# scale 2^16, the step is skipped and the scale halves
fplab optim --steps 40 --sizes 100 --grads loguniform:-20,-10 --spikes 0.2:1048576 \
	--loss-scale dynamic:65536:2:0.5:1000 --policy fp32-master:fp16 --every 1 --tsv >dyn.tsv
checks=$((checks + 1))
awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	NR > 2 && $k["loss_scale"] != want { bad = 1 }
	{ sk = $k["skipped"] > prev; n += sk; want = sk ? $k["loss_scale"] / 2 : $k["loss_scale"]; prev = $k["skipped"] }
	END { exit !(n > 0 && !bad) }' dyn.tsv || fail "dynamic scaling history: $(cut -f3,10,11 dyn.tsv | tr '\n' ' ')"

# --- the SVG: well-formed, two panels, a line per policy in each
fplab optim --steps 50 --sizes 200 --svg p.svg >/dev/null || fail "--svg exits $?"
if command -v xmllint >/dev/null 2>&1; then
	checks=$((checks + 1))
	xmllint --noout p.svg 2>err || fail "SVG not well-formed: $(head -3 err)"
	expect_out "svg panels" "2" xmllint --xpath 'count(//*[local-name()="g"][@class="panel"])' p.svg
	expect_out "svg series" "8" xmllint --xpath 'count(//*[local-name()="g"][@class="series"])' p.svg
fi
checks=$((checks + 1))
grep -q 'href\|<script\|<image' p.svg && fail "SVG refers to external resources"

# --- block formats (fplab-optim(1), "block formats") in the storage slots.
# By hand: sgd lr 1 from w = 0 on one step, the gradient quantized as
# mxfp4 (e2m1 elements, e8m0 scale 2^(floor(log2 amax) - 2), blocks of 32
# along the last axis), the rest binary64, so w = -q(g) and the drift is
# ||q(g) - g|| / ||g||.  As a (2, 2) tensor each row is a block: row 0
# (1, 0.1): X = 2^-2, 0.1 / X = 0.4 -> 0.5, 0.125; row 1 (0.1, 0.11): X =
# 2^-6, 6.4 -> 6 and 7.04 -> 6 (beyond 6 + 1/2 ulp: saturated, the
# block's amax too), 0.09375 each.  As 4 values from text, one block:
# X = 2^-2, 0.4 and 0.44 -> 0.5, all three 0.125.
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c '
import numpy as np
np.savez("bw.npz", w=np.zeros((2, 2)))
np.savez("bg.npz", w=np.array([[1, 0.1], [0.1, 0.11]]))'
	fplab optim --init bw.npz -g bg.npz --lr 1 --policy 'none:fp64,grad=mxfp4' --tsv >b2.tsv ||
		fail "block grad run exits $?"
	expect_out "block grad, rows of 2: drift" "$(awk 'BEGIN { printf "%.12g\n", sqrt(0.025^2 + 0.00625^2 + 0.01625^2) / sqrt(1.0321) }')" \
		awk "BEGIN { printf \"%.12g\\n\", $(col b2.tsv none:fp64,grad=mxfp4 drift) }"
	expect_out "block grad, rows of 2: events" "1 0 1 0" cols b2.tsv none:fp64,grad=mxfp4 \
		saturated flushed amax_saturated scale_clamped
fi
printf '0 0 0 0\n' >bw.txt
printf '1 0.1 0.1 0.11\n' >bg.txt
fplab optim --init bw.txt -g bg.txt --lr 1 --policy 'none:fp64,grad=mxfp4' --tsv >b1.tsv
expect_out "block grad, one row: drift" "$(awk 'BEGIN { printf "%.12g\n", sqrt(2 * 0.025^2 + 0.015^2) / sqrt(1.0321) }')" \
	awk "BEGIN { printf \"%.12g\\n\", $(col b1.tsv none:fp64,grad=mxfp4 drift) }"
expect_out "block grad, one row: events" "0 0 0 0" cols b1.tsv none:fp64,grad=mxfp4 \
	saturated flushed amax_saturated scale_clamped
# an exact block (binary32 elements, e8m0 scales by rceil: x / 2^k is
# exact and never saturates) in the state or the master changes nothing
X=block:fp32:e8m0:32:rceil
fplab optim --steps 20 --sizes 300,70 --optim adam --policy fp32-master:bf16 \
	--policy "fp32-master:bf16,state=$X" --policy "fp32-master:bf16,master=$X" --tsv >bx.tsv
for p in "fp32-master:bf16,state=$X" "fp32-master:bf16,master=$X"; do
	expect_out "exact block: $p" "$(cols bx.tsv fp32-master:bf16 vanished drift master_drift)" \
		cols bx.tsv "$p" vanished drift master_drift
done
# ... and as the weight of none, with adamw's decoupled decay w - (lr wd) w
fplab optim --steps 20 --sizes 300,70 --optim adamw --weight-decay 0.1 --lr 0.01 --weights uniform:-1,1 \
	--policy none:fp32 --policy "none:$X" --tsv >bxw.tsv
expect_out "exact block weight, adamw" "$(cols bxw.tsv none:fp32 vanished drift)" cols bxw.tsv "none:$X" vanished drift
# mxfp8 state (two tensors of 8.25 bits per value with adam): bytes and
# a changed result
fplab optim --steps 20 --sizes 300,70 --optim adam --policy fp32-master:bf16 \
	--policy 'fp32-master:bf16,state=mxfp8' --policy fp32-master:mxfp4 --policy none:mxfp8 --tsv >bm.tsv
expect_out "block bytes per parameter" "2 4 2.0625 8.0625" cols bm.tsv 'fp32-master:bf16,state=mxfp8' \
	weight_bytes master_bytes state_bytes bytes_per_param
expect_out "block weight bytes" "0.53125 1.03125" eval "echo \$(col bm.tsv fp32-master:mxfp4 weight_bytes) \$(col bm.tsv none:mxfp8 weight_bytes)"
checks=$((checks + 1))
[ "$(col bm.tsv 'fp32-master:bf16,state=mxfp8' drift)" != "$(col bm.tsv fp32-master:bf16 drift)" ] ||
	fail "state=mxfp8 changes nothing"
# stochastic elements: the same rows on 1 and 2 threads
for t in 1 2; do
	fplab optim --steps 10 --sizes 300,64 --optim adam --threads $t --every 5 \
		--policy 'stochastic:mxfp4:sp,state=mxfp8:sp,grad=nvfp4:sp' \
		--policy 'fp32-master:bf16,master=mxfp8,state=mxfp6-e2m3:rceil:sp' --tsv >bt$t.tsv ||
		fail "block threads $t exits $?"
done
checks=$((checks + 1))
cmp -s bt1.tsv bt2.tsv || fail "block slots in sp: --threads 1 and 2 differ"
# --- bad input: message, exit status, no SVG written
bad() {
	_w=$1 _s=$2 _p=$3
	shift 3
	rm -f bad.svg
	expect_fail "$_w" "$_s" "$_p" "$@" --svg bad.svg
	checks=$((checks + 1))
	[ -e bad.svg ] && fail "$_w: left bad.svg"
	ls bad.svg.tmp* >/dev/null 2>&1 && fail "$_w: left a temporary"
}
# refused: the arithmetic slots (one scalar operation's result has no block
# scale), kahan and split with a block weight, a block master for split or
# in a mode, a block grad with APS, a bad block spec
bad "block arith" 2 "arith 'mxfp8' is a block-scaled format: an arithmetic slot rounds the result of each scalar operation" \
	fplab optim --policy 'fp32-master:bf16,arith=mxfp8'
bad "block unscale" 2 "unscale 'nvfp4' is a block-scaled format" fplab optim --policy 'none:bf16,unscale=nvfp4'
bad "block weight, kahan" 2 "kahan keeps a compensation computed in the weight's format; a block weight takes none" \
	fplab optim --policy kahan:mxfp8
bad "block weight, split" 2 "split keeps the weight as the top bits of a binary32 master" fplab optim --policy split:mxfp8
bad "block master, split" 2 "a block master needs fp32-master" fplab optim --policy 'split:bf16,master=mxfp8'
bad "block master in sp" 2 "the master is rounded in ne" fplab optim --policy 'fp32-master:bf16,master=mxfp8:sp'
bad "block grad with APS" 2 "the gradients are a block format \\(mxfp8\\)" fplab optim --policy 'none:mxfp8,scale=aps'
bad "bad block spec" 2 "block format 'mxfp4:0'" fplab optim --policy 'fp32-master:bf16,state=mxfp4:0'
bad "lr not a number" 2 "^fplab: optim: --lr 'abc' is not a number" fplab optim --lr abc
bad "negative lr" 2 "--lr '-1' must be a finite number >= 0" fplab optim --lr -1
bad "beta2 out of range" 2 "--betas: beta2 must be in \\[0, 1\\)" fplab optim --optim adam --betas 0.9,1
bad "betas not a pair" 2 "--betas '0.9' is not B1,B2" fplab optim --optim adam --betas 0.9
bad "momentum for adam" 2 "--momentum applies to --optim sgd, not adam" fplab optim --optim adam --momentum 0.9
bad "nesterov without momentum" 2 "--nesterov needs --momentum > 0 and --dampening 0" fplab optim --nesterov
bad "unknown optimizer" 2 "unknown optimizer 'sdg'; did you mean 'sgd'\\?" fplab optim --optim sdg
bad "unknown strategy" 2 "unknown strategy 'fp32master'; did you mean 'fp32-master'\\?" fplab optim --policy fp32master:fp16
bad "unknown format" 2 "unknown format 'fp17'; did you mean 'fp16'\\?" fplab optim --policy none:fp17
bad "policy without format" 2 "expected STRATEGY:FORMAT" fplab optim --policy none
bad "split in fp16" 2 "split needs a weight format that is the top bits of binary32" fplab optim --policy split:fp16
bad "stochastic in ne" 2 "stochastic rounds the weight in sp or se, not ne" fplab optim --policy stochastic:bf16:ne
bad "unknown policy key" 2 "unknown policy key 'grads'; did you mean 'grad'\\?" fplab optim --policy 'none:fp16,grads=fp32'
bad "bad key mode" 2 "arith-rnd 'xx' is not a rounding mode" fplab optim --policy 'none:fp16,arith-rnd=xx'
bad "master for none" 2 "master= applies to fp32-master and split" fplab optim --policy 'none:fp16,master=fp32'
bad "unknown scaling" 2 "unknown loss scaling 'dynamik'; did you mean 'dynamic'\\?" fplab optim --loss-scale dynamik
bad "negative scale" 2 "a constant scale must be finite and > 0" fplab optim --loss-scale -3
bad "bad backoff" 2 "BACKOFF '2' must be in \\(0, 1\\)" fplab optim --loss-scale dynamic:1024:2:2
bad "steps 0" 2 "--steps '0' is not a count" fplab optim --steps 0
bad "bad --every" 2 "--every 'x' is not a count" fplab optim --every x
bad "size 0" 2 "--sizes '10,0': '0' is not a tensor size" fplab optim --sizes 10,0
# an empty piece is refused, as by every comma list of fplab
bad "trailing comma" 2 "^fplab: optim: --sizes '10,': an empty size" fplab optim --sizes 10,
bad "leading comma" 2 "^fplab: optim: --sizes ',10': an empty size" fplab optim --sizes ,10
bad "double comma" 2 "^fplab: optim: --sizes '10,,2': an empty size" fplab optim --sizes 10,,2
bad "bad generator" 2 "--weights 'nromal:0,1': unknown generator 'nromal'; did you mean 'normal'\\?" fplab optim --weights nromal:0,1
bad "generator count" 2 "--grads 'ones;ones;ones': 3 distributions for 2 tensors" fplab optim --sizes 3,4 --grads 'ones;ones;ones'
bad "bad spikes" 2 "--spikes '2:10': P must be a probability" fplab optim --spikes 2:10
bad "two weight sources" 2 "--sizes and --init both give the tensor sizes" fplab optim --init w.npz --sizes 3
bad "two gradient sources" 2 "--grads generates gradients; -g and --grad-stack read them" fplab optim -g g.npz --grads ones
bad "extra argument" 2 "unexpected argument 'x'" fplab optim x
bad "unknown option" 2 "unrecognized option '--momentun'" fplab optim --momentun 0.9
bad "missing gradient file" 1 "nope.npz" fplab optim -g nope.npz
printf '1 2 3\n' >g3.txt
bad "gradient size mismatch" 1 "-g 'g3.txt' \\(step 1\\): tensor 1 'g3.txt' has 3 values, but the weights of tensor 1 'arr_0' are 2" \
	fplab optim --init w.npz -g g3.txt
bad "gradient tensor count" 1 "holds 1 tensors, but the weights are 2 tensors" \
	fplab optim --sizes 2,3 -g g.npz
bad "stack from text" 1 "--grad-stack 'g.txt': not an .npy, .npz or .safetensors file" fplab optim --grad-stack g.txt
# initial weights must be finite: the first NaN or infinity is named by
# its file, tensor and index (0-based; the value's position 1-based in text)
printf '1 nan 3\n' >wnan.txt
printf '1 2 -inf\n' >winf.txt
bad "NaN initial weight" 1 "^fplab: optim: --init 'wnan.txt': value 2 \\(index 1\\) is nan: the initial weights must be finite" \
	fplab optim --init wnan.txt
bad "infinite initial weight" 1 "^fplab: optim: --init 'winf.txt': value 3 \\(index 2\\) is -inf" fplab optim --init winf.txt
fplab round -f fp64 -o wnan.npz wnan.txt || fail "cannot write wnan.npz"
bad "NaN initial weight in .npz" 1 "^fplab: optim: --init 'wnan.npz': tensor 'arr_0', index 1, is nan" \
	fplab optim --init wnan.npz
# a failed run keeps an existing SVG as it was
echo old >keep.svg
expect_fail "failed run keeps the old SVG" 2 "is not a number" fplab optim --lr x --svg keep.svg
expect_out "old SVG kept" "old" cat keep.svg
finish
