/* SPDX-License-Identifier: MIT */
/*
 * fplab/fplab.h - umbrella header for libfplab, a low-precision
 * floating-point emulator: formats, correctly rounded scalar and array
 * operations in nine rounding modes, encodings, kernels and tensor I/O.
 * See fplab(3).
 */
#ifndef FPLAB_FPLAB_H
#define FPLAB_FPLAB_H

#include <fplab/export.h>
#include <fplab/error.h>
#include <fplab/version.h>
#include <fplab/format.h>
#include <fplab/block.h>
#include <fplab/state.h>
#include <fplab/ops.h>
#include <fplab/array.h>
#include <fplab/codec.h>
#include <fplab/kernels.h>
#include <fplab/native.h>
#include <fplab/number.h>
#include <fplab/tensor.h>
#include <fplab/hist.h>
#include <fplab/hist_block.h>
#include <fplab/exact.h>
#include <fplab/accum.h>
#include <fplab/accum_error.h>
#include <fplab/reduce.h>
#include <fplab/allreduce.h>
#include <fplab/optim.h>
#include <fplab/dataset.h>
#include <fplab/train.h>

#endif
