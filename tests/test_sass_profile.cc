// SASS evidence (issue 19) read from nvdisasm listings of the Hopper template's default config
// (128x128x64 per warpgroup, 4 stages): assembled whole-program by ptxas, and by nvJitLink,
// which drops setmaxnreg. The ptxas log of the template before the scale-d fix shows the
// injected warpgroup waits.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/sass/bank_conflicts.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/performance_lints.h"
#include "core/sass/sass_profile.h"
#include "tests/support/test_data.h"

namespace mgpu::core {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(::mgpu::testing::test_data_path("sass/" + name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SassProfile, TheDefaultKernelsMainLoopIsItsKLoop) {
  SassProfile p = profile_sass(fixture("sm90a_default_ptxas.sass"));
  EXPECT_EQ(p.function, "matmul");
  ASSERT_TRUE(p.has_main_loop);
  // One k-step per iteration: tile_k / 16 = 4 MMAs for each of a warpgroup's two 64-row blocks,
  // opened by one wgmma fence and closed by one wait; no TMA, no local memory in it.
  EXPECT_EQ(p.main_loop.mma, 8);
  EXPECT_EQ(p.main_loop.warpgroup_sync, 2);
  EXPECT_EQ(p.main_loop.tma, 0);
  EXPECT_EQ(p.main_loop.local_memory, 0);
  // The peeled first k-step and the next tile's are outside the main loop.
  EXPECT_EQ(p.whole.mma, 16);
  EXPECT_EQ(p.whole.local_memory, 0);
  EXPECT_GT(p.whole.tma, 0);   // the producer's loads, the epilogue's stores
  EXPECT_GT(p.whole.sync, 0);  // mbarriers, named barriers
  EXPECT_GT(p.main_loop.instructions, p.main_loop.mma);
}

TEST(SassProfile, SetmaxnregSurvivesPtxasAndNotNvJitLink) {
  EXPECT_EQ(profile_sass(fixture("sm90a_default_ptxas.sass")).whole.setmaxnreg, 2);  // producer down, consumers up
  SassProfile jl = profile_sass(fixture("sm90a_default_nvjitlink.sass"));
  EXPECT_EQ(jl.whole.setmaxnreg, 0);
  EXPECT_EQ(jl.main_loop.mma, 8);
}

TEST(SassProfile, AdvisoriesAreTheLogsCodesOnceEach) {
  EXPECT_EQ(assembler_advisories(fixture("sm90a_zeroed_accumulators_ptxas.log")),
            (std::vector<std::string>{"C7519", "C7517"}));
  EXPECT_EQ(assembler_advisories(fixture("sm90a_default_nvjitlink.log")), (std::vector<std::string>{"C7504"}));
  EXPECT_TRUE(assembler_advisories("ptxas info    : Used 168 registers, used 2 barriers\n").empty());
}

TEST(SassProfile, TheMainLoopIsTheInnermostLoopHoldingAnMma) {
  // An outer loop around a k-loop (MMAs), a later MMA-free loop, and a forward branch.
  const char* text = R"(
        .global         k
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
.L_x_1:
        /*0020*/                   WARPGROUP.ARRIVE ;
        /*0030*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*0040*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/              @!P0 BRA `(.L_x_1) ;
        /*0070*/                   STL [R1], R2 ;
        /*0080*/               @P1 BRA `(.L_x_0) ;
        /*0090*/               @P2 BRA `(.L_x_3) ;
.L_x_2:
        /*00a0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;
        /*00b0*/              @!P0 BRA `(.L_x_2) ;
.L_x_3:
        /*00c0*/                   EXIT ;
)";
  SassProfile p = profile_sass(text);
  ASSERT_TRUE(p.has_main_loop);
  EXPECT_EQ(p.main_loop.mma, 2);
  EXPECT_EQ(p.main_loop.warpgroup_sync, 2);
  EXPECT_EQ(p.main_loop.instructions, 5);
  EXPECT_EQ(p.whole.mma, 3);
  EXPECT_EQ(p.whole.local_memory, 1);
  EXPECT_EQ(p.whole.sync, 1);
  EXPECT_FALSE(profile_sass(".global k\n /*0000*/ EXIT ;\n").has_main_loop);
}

TEST(SassProfile, AFunctionIsPickedByName) {
  // `mgpu-tune sass --kernel NAME` on a cubin of several functions: only NAME's code counts.
  const char* text = R"(
        .global         first
        /*0000*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
        /*0010*/                   EXIT ;
        .global         second
        /*0000*/                   STL [R1], R2 ;
        /*0010*/                   EXIT ;
)";
  EXPECT_EQ(profile_sass(text).function, "first");
  EXPECT_EQ(profile_sass(text).whole.mma, 1);
  SassProfile second = profile_sass(text, "second");
  EXPECT_EQ(second.function, "second");
  EXPECT_EQ(second.whole.mma, 0);
  EXPECT_EQ(second.whole.local_memory, 1);
  EXPECT_EQ(second.whole.instructions, 2);
  EXPECT_EQ(profile_sass(text, "third").whole.instructions, 0);
}


// Performance lints: nothing on the clean kernel; on each defect, its lint and only its lint.
std::vector<std::string> codes(const KernelEvidence& k) {
  std::vector<std::string> out;
  for (const Lint& l : lints(k)) out.push_back(l.code);
  return out;
}

TEST(PerformanceLints, TheCleanKernelHasNone) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 0, true, {}};
  EXPECT_TRUE(lints(k).empty());
}

TEST(PerformanceLints, NvJitLinkDroppingSetmaxnregIsOne) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_nvjitlink.sass")),
                   assembler_advisories(fixture("sm90a_default_nvjitlink.log")), 0, true, {}};
  EXPECT_EQ(codes(k), (std::vector<std::string>{"setmaxnreg-dropped"}));
  EXPECT_NE(lints(k)[0].message.find("C7504"), std::string::npos) << lints(k)[0].message;
  k.ptx_has_setmaxnreg = false;  // a kernel that never asked for a split loses nothing
  EXPECT_TRUE(lints(k).empty());
}

TEST(PerformanceLints, InjectedWarpgroupWaitsAreSerialisedMmas) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")),
                   assembler_advisories(fixture("sm90a_zeroed_accumulators_ptxas.log")), 0, true, {}};
  EXPECT_EQ(codes(k), (std::vector<std::string>{"serialised-mma"}));
  k.advisories.clear();
  k.sass.main_loop.warpgroup_sync = 16;  // the nvJitLink 128x192 kernel's k-loop
  EXPECT_EQ(codes(k), (std::vector<std::string>{"serialised-mma"}));
}

TEST(PerformanceLints, SpillsAndLocalMemoryInTheMainLoop) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 96, true, {}};
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills"}));
  k.sass.main_loop.local_memory = 606;
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills", "local-memory-in-main-loop"}));
  EXPECT_NE(lints(k)[1].message.find("606"), std::string::npos);
}

// Bank conflicts come from a verification's stored message, in today's phrase and in the one
// records written before the ideal was kept use (taken as one wavefront per access).
TEST(BankConflicts, ReadBackFromAVerificationMessage) {
  SharedBankConflicts b{3584, 512, 4096, 512};
  std::string message = "verified; shared-memory bank conflicts: " + bank_conflict_text(b) +
                        ", worst PTX line 812 in $L__BB0_9: 3584 in 512 accesses";
  std::optional<SharedBankConflicts> got = parse_bank_conflicts(message);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->conflicts, 3584);
  EXPECT_EQ(got->ideal, 512);
  EXPECT_DOUBLE_EQ(got->ways(), 8.0);
  // 8-byte stores: two ideal wavefronts an access, so the same extra wavefronts are 4.5-way.
  got = parse_bank_conflicts("verified; shared-memory bank conflicts: 3584 extra wavefronts in 512 accesses "
                             "(4608 wavefronts, ideal 1024), worst PTX line 1 in x: 1 in 1 accesses");
  ASSERT_TRUE(got);
  EXPECT_DOUBLE_EQ(got->ways(), 4.5);
  got = parse_bank_conflicts("verified; shared-memory bank conflicts: 3584 extra wavefronts in 512 accesses "
                             "(worst: PTX line 812 in $L__BB0_9, 3584 in 512 accesses)");  // before 2026-12
  ASSERT_TRUE(got);
  EXPECT_DOUBLE_EQ(got->ways(), 8.0);
  EXPECT_FALSE(parse_bank_conflicts("verified"));
  EXPECT_FALSE(parse_bank_conflicts(""));
}

TEST(PerformanceLints, BankConflictsAreTheLastLintWithTheirCount) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 96, true, {}};
  k.bank_conflicts = SharedBankConflicts{3584, 512, 4096, 512};
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills", "bank-conflicts"}));
  EXPECT_NE(lints(k)[1].message.find("3584 extra wavefronts"), std::string::npos) << lints(k)[1].message;
  EXPECT_NE(lints(k)[1].message.find("8.0-way"), std::string::npos) << lints(k)[1].message;
  k.bank_conflicts = SharedBankConflicts{0, 512, 512, 512};  // counted, and clean
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills"}));
}

TEST(KernelEvidence, RoundTripsThroughJsonAndReadsOlderRecords) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_nvjitlink.sass")),
                   assembler_advisories(fixture("sm90a_default_nvjitlink.log")), 24, true, {}};
  KernelEvidence back = evidence_from_json(evidence_json(k));
  EXPECT_EQ(back.sass.function, k.sass.function);
  EXPECT_EQ(back.sass.has_main_loop, k.sass.has_main_loop);
  EXPECT_EQ(back.sass.main_loop.mma, k.sass.main_loop.mma);
  EXPECT_EQ(back.sass.main_loop.instructions, k.sass.main_loop.instructions);
  EXPECT_EQ(back.sass.whole.setmaxnreg, k.sass.whole.setmaxnreg);
  EXPECT_EQ(back.advisories, k.advisories);
  EXPECT_EQ(back.spill_store_bytes, 24);
  EXPECT_TRUE(back.ptx_has_setmaxnreg);
  EXPECT_EQ(codes(back), codes(k));
  // A record missing fields (an older writer) reads with their defaults.
  KernelEvidence old = evidence_from_json(R"({"function":"matmul","advisories":["C7504"]})");
  EXPECT_EQ(old.sass.function, "matmul");
  EXPECT_FALSE(old.sass.has_main_loop);
  EXPECT_EQ(old.spill_store_bytes, 0);
  EXPECT_THROW(evidence_from_json("{not json"), Error);
}

}  // namespace
}  // namespace mgpu::core
