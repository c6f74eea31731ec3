// Register-level math that fused kernels (attention's online softmax) do between MMAs, each
// emitted as the one PTX instruction named, so the virtual device runs exactly what ptxas
// assembles. Contract: values are f32 unless named otherwise; quad_* reduce over the four
// lanes that hold one row of a wgmma accumulator (lanes 4r..4r+3, PTX ISA "Matrix Fragments
// for wgmma.mma_async.m64nNk16": a row's columns are spread over a quad); pack_16x2 rounds to
// nearest even and puts `hi` in the upper half (PTX ISA cvt: "input a ... upper half").
#pragma once

#include "core/ir/emitter.h"
#include "core/ir/tile_types.h"

namespace mgpu::core::ir {

// ex2.approx.ftz.f32 (PTX ISA "Floating Point Instructions: ex2"): 2^x, -inf -> +0.
mlir::Value ex2_approx(Emitter& e, mlir::Value x);
// lg2.approx.ftz.f32 (PTX ISA "Floating Point Instructions: lg2"): log2(x), +0 -> -inf.
mlir::Value lg2_approx(Emitter& e, mlir::Value x);
// shfl.sync.bfly.b32 over the full warp: the value of lane (lane ^ lane_mask).
mlir::Value shfl_xor(Emitter& e, mlir::Value v, int lane_mask);
// max.f32 / add.f32 of a lane's value with its quad's (butterfly over lane masks 1 and 2).
mlir::Value quad_max(Emitter& e, mlir::Value v);
mlir::Value quad_sum(Emitter& e, mlir::Value v);
// cvt.rn.{bf16x2,f16x2}.f32 d, hi, lo: two f32 as one i32 of 16-bit halves, `lo` in bits 0-15.
mlir::Value pack_16x2(Emitter& e, mlir::Value lo, mlir::Value hi, MmaInput type);

mlir::Value fmax(Emitter& e, mlir::Value a, mlir::Value b);  // max.f32: maxNum, so a NaN operand gives the other
mlir::Value fadd(Emitter& e, mlir::Value a, mlir::Value b);
mlir::Value fsub(Emitter& e, mlir::Value a, mlir::Value b);
mlir::Value fmul(Emitter& e, mlir::Value a, mlir::Value b);
mlir::Value ffma(Emitter& e, mlir::Value a, mlir::Value b, mlir::Value c);  // fma.rn.f32: a * b + c, one rounding
mlir::Value fdiv(Emitter& e, mlir::Value a, mlir::Value b);
mlir::Value f32(Emitter& e, double v);

}  // namespace mgpu::core::ir
