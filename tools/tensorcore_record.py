#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tensorcore_record.py - the recorded bits of tests/data/h100 from a probe run.

    python3 tools/tensorcore_record.py PROBEDIR tests/data/h100

PROBEDIR holds tensorcore_probe.py's KIND.npz files.  For each kind this
writes KIND.npz (deflated; float32 arrays, which hold every input and
output value exactly) with, per probe set S:
  S_a, S_b     the inputs (m x K, K x n), values of the kind's formats;
  S_c          the GPU's output C[:, :32] of the main method run in a
               4096 x 4096 embedding (no split-K), float32 bits as returned;
  S_d          the diagonal C[i, i], i < min(m, n) (the targeted probes);
and, where the GPU gave them:
  S_small      C[:, :32] of the m x n problem itself (K = 100 only: the
               4096 x 4096 embedding runs another kernel there);
  S_lo         C[:, :32] of torch.matmul in bf16/fp16 (random sets);
  S_fast       C[:, :32] with use_fast_accum=True (fp8, K >= 256).
tests/th100.c checks fplab's h100-* profiles against every one of them.
"""
import sys

import numpy as np

MAIN = {'bf16': 'mm', 'fp16': 'mm', 'e4m3': 'scaled', 'e4m3e5m2': 'scaled'}


def main(src, dst):
    for kind, meth in MAIN.items():
        d = np.load('%s/%s.npz' % (src, kind))
        out = {}
        names = sorted({k[:-2] for k in d.files if k.endswith('_a')})
        for s in names:
            A, B = d[s + '_a'], d[s + '_b']
            C = d['%s_%s_pad' % (s, meth)]
            out[s + '_a'] = A.astype(np.float32)
            out[s + '_b'] = B.astype(np.float32)
            out[s + '_c'] = np.ascontiguousarray(C[:, :32])
            n = min(C.shape)
            out[s + '_d'] = np.ascontiguousarray(C[np.arange(n), np.arange(n)])
            if s == 'random100':
                out[s + '_small'] = np.ascontiguousarray(d['%s_%s' % (s, meth)][:, :32])
            if meth == 'mm' and s.startswith('random'):
                out[s + '_lo'] = np.ascontiguousarray(d['%s_lowout_pad' % s][:, :32])
            if meth == 'scaled' and A.shape[1] >= 256:
                out[s + '_fast'] = np.ascontiguousarray(d['%s_scaledfast_pad' % s][:, :32])
        np.savez_compressed('%s/%s.npz' % (dst, kind), **out)
        print(kind, len(out), 'arrays')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
