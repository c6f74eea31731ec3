#include "harness/cmd_worker.h"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/cuda_kernel.h"
#include "core/error.h"
#include "core/ir/kernel_module.h"
#include "core/mlir_context.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "harness/measure/measure_trial.h"

namespace mgpu::harness {
namespace {

// Launches a kernel that stores through a wild pointer: the crash-containment test on a GPU.
Measurement run_out_of_bounds_kernel() {
  Measurement m;
  m.source = "cuda";
  try {
    auto ctx = core::make_mlir_context();
    core::ir::KernelModule km(*ctx, "oob");
    mlir::OpBuilder probe(ctx.get());
    mlir::Type ptr = core::ir::Emitter{probe, probe.getUnknownLoc()}.global_ptr_type();
    core::ir::KernelBody kb = km.add_kernel("oob", {ptr}, 32);
    core::ir::Emitter& e = kb.e;
    mlir::Value wild = mlir::LLVM::GEPOp::create(e.b, e.loc, ptr, e.b.getI8Type(), kb.args[0],
                                                 llvm::ArrayRef<mlir::LLVM::GEPArg>{e.c64(std::int64_t{1} << 46)});
    mlir::LLVM::StoreOp::create(e.b, e.loc, e.c32(7), wild);
    const core::ArchSpec& arch = core::parse_arch("sm_90a");
    std::string cubin = core::compile_module(km.to_text(), arch).units.at(0).cubin.image;
    core::CudaContext& cuda = core::CudaContext::primary();
    core::LoadedModule mod(cubin);
    core::DeviceBuffer buf(256);
    CUdeviceptr p = buf.ptr();
    void* args[] = {&p};
    core::launch(mod.function("oob"), core::LaunchSpec{.grid = {1, 1, 1}, .block = {32, 1, 1}}, args);
    cuda.synchronize();
    m.status = TrialStatus::Ok;  // not expected: the store should have faulted
    m.message = "the out-of-bounds store did not fault";
  } catch (const core::CudaError& e) {
    m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
    m.message = e.what();
  } catch (const core::Error& e) {
    m.status = TrialStatus::LaunchError;
    m.message = e.what();
  }
  return m;
}

void serve() {
  for (std::string line; std::getline(std::cin, line);) {
    Measurement m;
    TrialRequest req;
    try {
      req = nlohmann::json::parse(line).get<TrialRequest>();
      if (req.debug_fault == "crash") raise(SIGSEGV);
      if (req.debug_fault == "hang")
        for (;;) pause();
      if (req.debug_fault == "exit") _exit(3);
      if (req.debug_fault == "oob") {  // a kernel that writes where it must not
        m = run_out_of_bounds_kernel();
        std::cout << nlohmann::json(m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
        continue;
      }
      m = measure_trial(req);
    } catch (const std::bad_alloc&) {  // this machine's limit, not the config's failure: a later run retries
      m = Measurement{};
      m.status = TrialStatus::EnvError;
      m.source = req.measurer;
      m.message = "the worker ran out of memory (the problem's buffers do not fit this machine)";
    } catch (const std::exception& e) {  // a malformed request is answered, not fatal
      m = Measurement{};
      m.status = TrialStatus::InvalidConfig;
      m.source = req.measurer;  // empty when the request did not parse: the parent knows what it asked
      m.message = e.what();
    }
    std::cout << nlohmann::json(m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "Measure trials read from stdin (used by the tuner)");
  cmd->group("");  // hidden
  cmd->callback(serve);
}

}  // namespace mgpu::harness
