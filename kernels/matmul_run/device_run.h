// A matmul config's kernel made ready to run on whatever device the CUDA driver is (a GPU, or
// the virtual device), and what it is checked against: the one launch path the verifying and
// timing code share (harness/measure, the op face's prepare()).
// Contract: inputs are seeded uniform values in [-1, 1) (never zeros), the same for every
// config of a problem (seeded by its key); C is poisoned with NaN bits before the first
// launch, so an element the kernel misses never passes; the workspace a config's kernel takes
// is allocated zero-filled once; launch() may run any number of times. compare() checks the
// last launch's C against a float64 CPU reference by relative Frobenius error within the
// output dtype's threshold (the reference is computed on first use: O(m n k) on one core).
// Errors: core::CudaError from the driver (a fault loses the context, as on a GPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/built_kernel.h"
#include "core/cuda_context.h"
#include "core/tuning_config.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_template.h"

namespace mgpu::kernels {

// Seeded uniform [-1, 1) values in bf16 or f16 bits.
std::vector<std::uint16_t> seeded_input(std::size_t n, std::uint64_t seed, DType t);

// A and B of a problem (`seed` 1 is the inputs every config of the problem is measured with).
struct MatmulInputs {
  std::vector<std::uint16_t> a, b;
};
MatmulInputs matmul_inputs(const MatmulProblem& p, std::uint64_t seed = 1);

// C = A . B in float64 on the CPU, row-major M x N.
std::vector<double> matmul_reference(const MatmulProblem& p, const MatmulInputs& x);

// Element i of an output buffer of dtype t, as a double.
double read_out(const std::vector<std::uint8_t>& c, std::size_t i, DType t);

// ||got - want|| / ||want|| over every element, infinity when it is NaN (an unwritten, poisoned
// element never passes).
double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<float>& want);
double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<double>& want);

// Largest acceptable relative Frobenius error for an output dtype: bf16 keeps 8 mantissa bits,
// f16 11, f32 24; the kernel accumulates in f32, so the output's rounding dominates.
double verification_threshold(DType out);

// The SMs of the device the driver presents (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).
int device_sm_count();

class PreparedMatmul {
 public:
  // `ptx`/`cubin`: t.build(p, c) compiled (the cubin may be empty: the driver loads the PTX, as
  // the virtual device does). `sm_count`: the SMs the persistent grid is sized for (0: the
  // device's). `built`: t.build(p, c) when the caller has it (else it is built again).
  PreparedMatmul(const MatmulTemplate& t, const MatmulProblem& p, const core::TuningConfig& c, std::uint64_t seed,
                 const std::string& ptx, const std::string& cubin, int sm_count = 0,
                 const core::BuiltKernel* built = nullptr);
  ~PreparedMatmul();
  PreparedMatmul(const PreparedMatmul&) = delete;
  PreparedMatmul& operator=(const PreparedMatmul&) = delete;

  void launch();
  // Synchronizes; C's bytes after the last launch.
  std::vector<std::uint8_t> output_bytes();
  // Synchronizes; C's relative Frobenius error against the float64 reference.
  double relative_error_to_reference();
  // "C[i][j]" for a byte of output_bytes().
  std::string describe_byte(std::size_t at) const;
  // The device buffers of A, B and C (a reference computed on the device reads them).
  CUdeviceptr a() const;
  CUdeviceptr b() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace mgpu::kernels
