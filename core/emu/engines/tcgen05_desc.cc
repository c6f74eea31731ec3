#include "core/emu/engines/tcgen05_desc.h"

namespace mgpu::emu {

std::string decode_tcgen05_smem_descriptor(std::uint64_t d, MatrixDescriptor& m) {
  m.start = static_cast<std::uint32_t>(d & 0x3FFF) << 4;
  m.leading = static_cast<std::uint32_t>((d >> 16) & 0x3FFF) << 4;
  m.stride = static_cast<std::uint32_t>((d >> 32) & 0x3FFF) << 4;
  m.base_offset = static_cast<std::uint32_t>((d >> 49) & 0x7);
  if (((d >> 46) & 0x7) != 1)
    return "bits 46-48 of the shared memory descriptor are " + std::to_string((d >> 46) & 0x7) +
           ", not the fixed value 0b001 of sm_100 descriptors (a Hopper wgmma descriptor?)";
  if ((d >> 52) & 1) return "the leading-dimension byte-address mode (bit 52) is sm_103a only";
  switch ((d >> 61) & 0x7) {
    case 0: m.swizzle = Swizzle::None; break;
    case 2: m.swizzle = Swizzle::B128; break;
    case 4: m.swizzle = Swizzle::B64; break;
    case 6: m.swizzle = Swizzle::B32; break;
    case 1: return "swizzle mode 1 (128-byte with 32-byte atoms) is not modelled";
    default: return "swizzle mode " + std::to_string((d >> 61) & 0x7) + " is invalid (PTX ISA: values 3, 5 and 7)";
  }
  return "";
}

std::string decode_tcgen05_instr_descriptor_f16(std::uint32_t d, Tcgen05InstrDesc& o) {
  if (d & 0x4) return "a sparse MMA (instruction descriptor bit 2) is not modelled";
  if (d & 0x8) return "the saturate bit (3) must be 0 for .kind::f16";
  auto ab = [](std::uint32_t v, Ty& t) { t = v == 0 ? Ty::F16 : v == 1 ? Ty::BF16 : Ty::None; };
  const std::uint32_t dt = (d >> 4) & 0x3;
  o.d_type = dt == 1 ? Ty::F32 : dt == 0 ? Ty::F16 : Ty::None;
  ab((d >> 7) & 0x7, o.a_type);
  ab((d >> 10) & 0x7, o.b_type);
  if (o.d_type == Ty::None) return "dtype " + std::to_string(dt) + " is not F16 (0) or F32 (1) for .kind::f16";
  if (o.a_type == Ty::None || o.b_type == Ty::None) return "atype/btype must be F16 (0) or BF16 (1) for .kind::f16";
  if (o.a_type != o.b_type) return "atype and btype differ";
  o.negate_a = (d >> 13) & 1;
  o.negate_b = (d >> 14) & 1;
  o.transpose_a = (d >> 15) & 1;
  o.transpose_b = (d >> 16) & 1;
  o.n = static_cast<int>((d >> 17) & 0x3F) << 3;
  o.m = static_cast<int>((d >> 24) & 0x1F) << 4;
  if ((d >> 30) & 0x3) return "a maximum shift (bits 30-31) is for .ws only";
  if ((d >> 6) & 1 || (d >> 23) & 1 || (d >> 29) & 1) return "reserved bits 6/23/29 are not 0";
  return "";
}

}  // namespace mgpu::emu
