// Performing asynchronous operations (TMA loads and stores, wgmma) at the moment the scheduler
// chooses, and retiring them when the kernel waits for them. Contract: perform() does the
// operation's memory effects and signals (complete_tx), checking the hazards of that moment
// (with race detection, a TMA load's read and a TMA store's writes of global memory too, as the
// async proxy's accesses: check/memory_model.h); an op is performed at most once; retire_*
// remove what a wait has retired.
#pragma once

#include "core/emu/exec/state.h"

namespace mgpu::emu {

bool performable(const AsyncOp& op);
void perform(Cluster& c, AsyncOp& op);
void perform_tma_load(Cluster& c, TmaLoadOp& op);
void perform_tma_store(Cluster& c, TmaStoreOp& op);
void perform_wgmma(Cluster& c, WgmmaOp& op);
void perform_tcgen05_mma(Cluster& c, Tcgen05MmaOp& op);
void perform_tcgen05_commit(Cluster& c, Tcgen05CommitOp& op);
void forget(Cluster& c, const AsyncOp* op);  // drop from the in-flight list
// Every thread of `cta` has exited, so its shared memory is gone (PTX ISA 9.7.9.25, 9.7.9.26):
// reports, as ExitInFlight, TMA stores from it that no cp.async.bulk.wait_group(.read) retired
// (whether or not this schedule already performed them), TMA loads into it that have not
// landed, and mbarriers left with a tx-count other than zero (bytes announced that never
// landed, or landed unannounced).
void check_cta_exit(Cluster& c, Cta& cta);
// The async proxy is about to write [lo, hi) of `cta` (a TMA load issued or landing): nothing
// else in flight may still read or write those bytes; reported as AsyncOverlap.
// The async proxy reads byte `a` of `cta`: reports it unwritten, or written by the generic proxy
// with no fence.proxy.async after the write; false when it reported.
// `fenced`: each thread's latest fence.proxy.async (Cta::proxy_fenced) when the operation was
// issued; `issuer_fence`: the latest of the issuing thread(s).
bool check_async_read(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t a, const char* reader,
                      const std::vector<std::uint32_t>& fenced, std::uint32_t issuer_fence);
// At the issue of a TMA store: the box's in-tensor elements in shared memory are written and
// fenced for the async proxy (check_async_read).
void check_tma_store_issue(Cluster& c, const TmaStoreOp& op, std::uint32_t issuer_fence);
void check_async_write(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t lo, std::uint32_t hi);

}  // namespace mgpu::emu
