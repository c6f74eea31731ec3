#include "core/emu/check/report.h"

#include <sstream>

namespace mgpu::emu {

const char* report_kind_name(ReportKind k) {
  switch (k) {
    case ReportKind::Unsupported: return "unsupported";
    case ReportKind::OutOfBounds: return "out-of-bounds";
    case ReportKind::Misaligned: return "misaligned";
    case ReportKind::Deadlock: return "deadlock";
    case ReportKind::StepLimit: return "step-limit";
    case ReportKind::NotConverged: return "not-converged";
    case ReportKind::BarrierMisuse: return "mbarrier-misuse";
    case ReportKind::ProxyFence: return "missing-proxy-fence";
    case ReportKind::AsyncOverlap: return "async-overlap";
    case ReportKind::AccumulatorEarly: return "accumulator-before-wait";
    case ReportKind::Uninitialized: return "uninitialized-read";
    case ReportKind::Race: return "race";
    case ReportKind::ClusterExit: return "cluster-exit";
    case ReportKind::Trap: return "trap";
    case ReportKind::RegisterFile: return "register-file";
    case ReportKind::TmaOutOfBounds: return "tma-out-of-bounds";
    case ReportKind::TmemMisuse: return "tmem-misuse";
    case ReportKind::TmemHazard: return "tmem-hazard";
    case ReportKind::NamedBarrierMisuse: return "barrier-misuse";
    case ReportKind::ExitInFlight: return "exit-in-flight";
    case ReportKind::WgmmaFence: return "missing-wgmma-fence";
    case ReportKind::NonCoherentRead: return "non-coherent-read";
  }
  return "?";
}

bool report_kind_fatal(ReportKind k) {
  switch (k) {
    case ReportKind::Unsupported: case ReportKind::OutOfBounds: case ReportKind::Misaligned:
    case ReportKind::Deadlock: case ReportKind::StepLimit: case ReportKind::NotConverged:
    case ReportKind::Trap: case ReportKind::RegisterFile:
      return true;
    default:
      return false;
  }
}

bool report_kind_note(ReportKind k) { return k == ReportKind::TmaOutOfBounds; }

std::size_t count_findings(const std::vector<Report>& reports) {
  std::size_t n = 0;
  for (const Report& r : reports) n += !report_kind_note(r.kind);
  return n;
}

std::string Report::format() const {
  std::ostringstream o;
  o << report_kind_name(kind) << ": " << message;
  if (where.cta[0] >= 0)
    o << " [cta (" << where.cta[0] << "," << where.cta[1] << "," << where.cta[2] << ")";
  if (where.warp >= 0) o << " warp " << where.warp;
  if (where.lane >= 0) o << " lane " << where.lane;
  if (where.pc >= 0) o << " pc " << where.pc;
  if (where.line >= 0) o << " PTX line " << where.line;
  if (where.cta[0] >= 0) o << "]";
  return o.str();
}

}  // namespace mgpu::emu
