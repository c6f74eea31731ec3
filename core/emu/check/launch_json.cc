#include "core/emu/check/launch_json.h"

#include <cstdio>
#include <sstream>

namespace mgpu::emu {

namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += c;
    }
  }
  return o;
}

void tally_json(std::ostringstream& o, const BankTally& t) {
  o << "\"accesses\":" << t.accesses << ",\"wavefronts\":" << t.wavefronts << ",\"ideal\":" << t.ideal
    << ",\"conflicts\":" << t.conflicts();
}

void banks_json(std::ostringstream& o, const BankReport& b) {
  o << "{";
  tally_json(o, b.total);
  o << ",\"lines\":[";
  for (std::size_t i = 0; i < b.lines.size(); ++i) {
    o << (i ? "," : "") << "{\"line\":" << b.lines[i].line << ",\"region\":\"" << escape(b.lines[i].region) << "\",";
    tally_json(o, b.lines[i].tally);
    o << "}";
  }
  o << "],\"regions\":[";
  for (std::size_t i = 0; i < b.regions.size(); ++i) {
    o << (i ? "," : "") << "{\"label\":\"" << escape(b.regions[i].label) << "\",";
    tally_json(o, b.regions[i].tally);
    o << "}";
  }
  o << "]}";
}

}  // namespace

std::string launch_json(const LaunchResult& r) {
  std::ostringstream o;
  o << "{\"ok\":" << (r.ok ? "true" : "false") << ",\"instructions\":" << r.instructions << ",\"thread_instructions\":" << r.thread_instructions << ",\"printf\":\""
    << escape(r.printf_output) << "\",\"reports\":[";
  for (std::size_t i = 0; i < r.reports.size(); ++i) {
    const Report& p = r.reports[i];
    o << (i ? "," : "") << "{\"kind\":\"" << report_kind_name(p.kind) << "\",\"fatal\":" << (report_kind_fatal(p.kind) ? "true" : "false")
      << ",\"note\":" << (report_kind_note(p.kind) ? "true" : "false")
      << ",\"cta\":[" << p.where.cta[0] << "," << p.where.cta[1] << "," << p.where.cta[2] << "],\"warp\":" << p.where.warp
      << ",\"lane\":" << p.where.lane << ",\"pc\":" << p.where.pc << ",\"line\":" << p.where.line << ",\"message\":\""
      << escape(p.message) << "\"}";
  }
  o << "],\"bank_conflicts\":";
  banks_json(o, r.banks);
  o << "}";
  return o.str();
}

}  // namespace mgpu::emu
