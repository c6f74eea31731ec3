// The two descriptors of tcgen05.mma, decoded from their bits.
//  - Shared memory descriptor (PTX ISA 9.7.16.4.1, Table 40): start address, leading- and
//    stride-dimension byte offsets (all >> 4), bits 46-48 the fixed value 0b001 (the "version"
//    CUTLASS's cute/arch/mma_sm100_desc.hpp calls version_ = 1), base offset in 49-51, the
//    leading-dimension mode in 52 (byte address mode is sm_103a only), swizzle in 61-63:
//    0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid). The same
//    Swizzle/LBO/SBO meaning as wgmma's descriptor (CUTLASS LayoutType SWIZZLE_NONE=0,
//    SWIZZLE_128B_BASE32B=1, SWIZZLE_128B=2, SWIZZLE_64B=4, SWIZZLE_32B=6; Mosaic GPU's
//    tcgen05 descriptors encode the same codes), so operand addresses reuse smem_layout.h.
//  - Instruction descriptor for .kind::f16 (9.7.16.4.2, Table 42): dtype in 4-5 (F16 0, F32 1),
//    atype 7-9 / btype 10-12 (F16 0, BF16 1), negate A/B in 13/14, transpose A/B in 15/16,
//    N >> 3 in 17-22, M >> 4 in 24-28, sparsity in 0-2, max shift (.ws only) in 30-31.
// Contract: decoders return "" or the reason a descriptor is invalid or outside what the
// virtual device models.
#pragma once

#include <cstdint>
#include <string>

#include "core/emu/engines/smem_layout.h"
#include "core/emu/exec/scalar.h"

namespace mgpu::emu {

std::string decode_tcgen05_smem_descriptor(std::uint64_t d, MatrixDescriptor& out);

struct Tcgen05InstrDesc {
  int m = 0, n = 0;
  Ty d_type = Ty::None, a_type = Ty::None, b_type = Ty::None;
  bool negate_a = false, negate_b = false;
  bool transpose_a = false, transpose_b = false;  // MN-major operand in shared memory
};

// .kind::f16 only: f16/bf16 inputs, f32 (or f16) accumulator.
std::string decode_tcgen05_instr_descriptor_f16(std::uint32_t d, Tcgen05InstrDesc& out);

}  // namespace mgpu::emu
