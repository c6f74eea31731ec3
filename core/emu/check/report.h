// What the virtual device found. Contract: every report names where it happened (CTA,
// warp, lane, pc, PTX line) and the object involved (address, barrier); `fatal` reports end
// the launch (a GPU would fault or hang), the others are hazards the run continues past.
// Each kind is raised by exactly one checker, and each checker has a faulty kernel in the
// tests that it must catch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mgpu::emu {

enum class ReportKind : std::uint8_t {
  Unsupported,        // an instruction or form the device does not implement
  OutOfBounds,        // global/shared/param access outside any allocation (illegal address)
  Misaligned,         // access not aligned to its size
  Deadlock,           // every live thread waits and nothing in flight can wake one
  StepLimit,          // no progress after the step budget (a spin on test_wait, an endless loop)
  NotConverged,       // a .sync.aligned instruction reached by part of a warp / warpgroup
  BarrierMisuse,      // mbarrier: uninitialized, tx-count below zero, arrivals beyond the count
  ProxyFence,         // generic-proxy write read by the async proxy without fence.proxy.async (shared or global memory)
  AsyncOverlap,       // shared memory written while an async operation still reads/writes it
  AccumulatorEarly,   // wgmma accumulator or A-fragment registers touched before wgmma.wait_group retired them
  Uninitialized,      // shared memory read before anything wrote it
  Race,               // two threads' conflicting accesses (shared or global memory) neither ordered nor morally strong
  ClusterExit,        // a CTA exited while a peer could still access its shared memory
  Trap,               // trap / brkpt / a failed assertion in the kernel
  RegisterFile,       // setmaxnreg beyond the register file
  TmaOutOfBounds,     // a TMA box entirely outside its tensor (a store writes nothing)
  TmemMisuse,         // tensor memory: bad column count, access/dealloc of columns not held, leak at exit
  TmemHazard,         // tensor memory read or written while an uncommitted tcgen05.mma writes it
  NamedBarrierMisuse, // bar.sync / barrier.cluster: bad id, thread counts that disagree, arrive twice
  ExitInFlight,       // a CTA exited while async operations still read or write its shared memory
  WgmmaFence,         // registers of a wgmma.mma_async touched by other instructions with no wgmma.fence between
  NonCoherentRead,    // ld.global.nc of global bytes written during the launch (outside the memory model, PTX ISA 8.1)
};

const char* report_kind_name(ReportKind k);
bool report_kind_fatal(ReportKind k);
// A note: legal behaviour worth knowing (a TMA box wholly outside its tensor writes nothing),
// not a finding that makes a kernel wrong.
bool report_kind_note(ReportKind k);

struct Where {
  int cta[3] = {-1, -1, -1};
  int warp = -1, lane = -1;
  int pc = -1, line = -1;
};

struct Report {
  ReportKind kind;
  Where where;
  std::string message;  // one paragraph: what, and the objects involved
  std::string format() const;
};

// The reports that are findings (not notes): what makes a run of a kernel fail.
std::size_t count_findings(const std::vector<Report>& reports);

// Thrown by handlers and engines for a fatal report.
struct Fault : std::runtime_error {
  Report report;
  explicit Fault(Report r) : std::runtime_error(r.format()), report(std::move(r)) {}
};

}  // namespace mgpu::emu
