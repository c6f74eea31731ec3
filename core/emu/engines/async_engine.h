// Performing asynchronous operations (TMA loads and stores, wgmma) at the moment the scheduler
// chooses, and retiring them when the kernel waits for them. Contract: perform() does the
// operation's memory effects and signals (complete_tx), checking the hazards of that moment;
// an op is performed at most once; retire_* remove what a wait has retired.
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
// The async proxy is about to write [lo, hi) of `cta` (a TMA load issued or landing): nothing
// else in flight may still read or write those bytes; reported as AsyncOverlap.
// The async proxy reads byte `a` of `cta`: reports it unwritten, or written by the generic proxy
// with no fence.proxy.async after the write; false when it reported.
bool check_async_read(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t a, const char* reader);
void check_async_write(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t lo, std::uint32_t hi);

}  // namespace mgpu::emu
