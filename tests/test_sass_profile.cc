// SASS evidence (issue 19) read from nvdisasm listings of the Hopper template's default config
// (128x128x64 per warpgroup, 4 stages): assembled whole-program by ptxas, and by nvJitLink,
// which drops setmaxnreg; and of 64x128 (6 stages), whose epilogue overlaps the next tile's
// first k-step (ptxas, 2026-11-24). The ptxas log of the template before the scale-d fix shows the
// injected warpgroup waits.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/sass/bank_conflicts.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/performance_lints.h"
#include "core/sass/ptx_main_loop.h"
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

TEST(SassProfile, TheDefaultKernelsEpilogueIsTheRestOfItsTileLoop) {
  SassProfile p = profile_sass(fixture("sm90a_default_ptxas.sass"));
  ASSERT_TRUE(p.has_epilogue);
  // 128 f32 accumulators per thread become 64 bf16 pairs, one 4-byte shared store each, then
  // four TMA stores, each flushed (UTMASTG + UTMACMDFLUSH); no MMA (128x128 does not overlap),
  // no local memory. The producer's TMA loads and the out-of-line wait retries are not in it.
  EXPECT_EQ(p.epilogue.shared_store, 64);
  EXPECT_EQ(p.epilogue.tma, 8);
  EXPECT_EQ(p.epilogue.mma, 0);
  EXPECT_EQ(p.epilogue.local_memory, 0);
  EXPECT_GT(p.epilogue.sync, 0);  // the per-warpgroup named barriers around the staging
  EXPECT_EQ(p.whole.shared_store, p.epilogue.shared_store);
  EXPECT_LT(p.main_loop.instructions + p.epilogue.instructions, p.whole.instructions);
}

TEST(SassProfile, AnOverlappedEpilogueIsCountedOnce) {
  // 64x128 per warpgroup, 6 stages: two accumulators fit, so tile i-1's epilogue runs after
  // tile i's first k-step inside the tile loop, and the last tile's once more after the loop.
  SassProfile p = profile_sass(fixture("sm90a_64x128_overlapped_ptxas.sass"));
  ASSERT_TRUE(p.has_main_loop);
  ASSERT_TRUE(p.has_epilogue);
  EXPECT_EQ(p.main_loop.mma, 4);
  EXPECT_EQ(p.whole.shared_store, 64);     // the epilogue, twice
  EXPECT_EQ(p.epilogue.shared_store, 32);  // 64 f32 -> 32 bf16 pairs per thread
  EXPECT_EQ(p.epilogue.tma, 4);            // two 64x64 pieces, each stored and flushed
  EXPECT_EQ(p.epilogue.mma, 0);
}

TEST(SassProfile, TheEpilogueEndsAtTheFirstUnpredicatedExit) {
  // A tile loop (.L_x_0) around a k-loop (.L_x_1); a wait retry placed after the exit
  // branches back into the epilogue and must not stretch it.
  const char* looped = R"(
        .global         k
.L_x_0:
        /*0000*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
.L_x_1:
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;
        /*0020*/              @!P0 BRA `(.L_x_1) ;
        /*0030*/                   STS [R2], R3 ;
.L_x_2:
        /*0040*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R3 ;
        /*0050*/              @!P1 BRA `(.L_x_9) ;
        /*0060*/                   UTMASTG.2D [UR8], [UR4] ;
        /*0070*/               @P2 BRA `(.L_x_0) ;
        /*0080*/                   EXIT ;
.L_x_9:
        /*0090*/                   NOP ;
        /*00a0*/                   BRA `(.L_x_2) ;
)";
  SassProfile p = profile_sass(looped);
  ASSERT_TRUE(p.has_epilogue);
  EXPECT_EQ(p.epilogue.instructions, 6);  // STS .. the tile loop's branch, EXIT
  EXPECT_EQ(p.epilogue.shared_store, 1);
  EXPECT_EQ(p.epilogue.tma, 1);
  EXPECT_EQ(p.epilogue.sync, 1);
  // No loop around the k-loop: up to the first EXIT that every thread takes.
  const char* flat = R"(
        .global         k
.L_x_1:
        /*0010*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;
        /*0020*/              @!P0 BRA `(.L_x_1) ;
        /*0030*/               @P1 EXIT ;
        /*0040*/                   STSM.16.M88.4 [R2], R4 ;
        /*0050*/                   EXIT ;
        /*0060*/                   STL [R1], R2 ;
)";
  SassProfile f = profile_sass(flat);
  ASSERT_TRUE(f.has_epilogue);
  EXPECT_EQ(f.epilogue.instructions, 3);
  EXPECT_EQ(f.epilogue.shared_store, 1);
  EXPECT_EQ(f.epilogue.local_memory, 0);
  EXPECT_FALSE(profile_sass(".global k\n /*0000*/ EXIT ;\n").has_epilogue);
}

TEST(SassProfile, RegisterBudgetsPerRoleAreTheSurvivingSetmaxnregs) {
  SassProfile p = profile_sass(fixture("sm90a_default_ptxas.sass"));
  ASSERT_EQ(p.register_budgets.size(), 2u);
  EXPECT_FALSE(p.register_budgets[0].raise);  // the TMA warpgroup gives registers back ...
  EXPECT_EQ(p.register_budgets[0].registers, 40);
  EXPECT_TRUE(p.register_budgets[1].raise);   // ... the MMA warpgroups take them
  EXPECT_EQ(p.register_budgets[1].registers, 232);
  EXPECT_TRUE(profile_sass(fixture("sm90a_default_nvjitlink.sass")).register_budgets.empty());
}

TEST(KernelEvidence, EpilogueAndBudgetsRoundTripAndOldRecordsStillRead) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {"C7504"}, 8, true, {}};
  KernelEvidence back = evidence_from_json(evidence_json(k));
  EXPECT_EQ(back.sass.has_epilogue, true);
  EXPECT_EQ(back.sass.epilogue.shared_store, 64);
  EXPECT_EQ(back.sass.epilogue.tma, k.sass.epilogue.tma);
  ASSERT_EQ(back.sass.register_budgets.size(), 2u);
  EXPECT_EQ(back.sass.register_budgets[1].registers, 232);
  EXPECT_TRUE(back.sass.register_budgets[1].raise);
  KernelEvidence old = evidence_from_json(R"({"function":"matmul","has_main_loop":true,"main_loop":{"mma":8}})");
  EXPECT_FALSE(old.sass.has_epilogue);
  EXPECT_TRUE(old.sass.register_budgets.empty());
  EXPECT_EQ(old.sass.main_loop.mma, 8);
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

TEST(SassProfile, AWaitRetryAfterTheExitBranchingBackIsNoLoop) {
  // The attention kernel's shape: the real loop (two MMAs, a try-wait that falls out of line on
  // failure), the kernel's EXIT, then the out-of-line retry branching back into the loop body.
  // The retry's span (.L_x_2 .. the last BRA) is shorter than the loop and holds an MMA, but
  // it crosses the EXIT: no loop.
  const char* text = R"(
        .global         k
.L_x_0:
        /*0000*/                   FMUL R5, R5, R6 ;
        /*0010*/                   FMUL R7, R7, R6 ;
        /*0020*/                   FMUL R8, R8, R6 ;
        /*0030*/                   FMUL R9, R9, R6 ;
        /*0040*/                   FMUL R10, R10, R6 ;
        /*0050*/                   FMUL R11, R11, R6 ;
        /*0060*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;
        /*0070*/              @!P0 BRA `(.L_x_9) ;
.L_x_2:
        /*0080*/                   WARPGROUP.ARRIVE ;
        /*0090*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*00a0*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;
        /*00b0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*00c0*/               @P1 BRA `(.L_x_0) ;
        /*00d0*/                   EXIT ;
.L_x_9:
        /*00e0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;
        /*00f0*/                   BRA `(.L_x_2) ;
)";
  SassProfile p = profile_sass(text);
  ASSERT_TRUE(p.has_main_loop);
  EXPECT_EQ(p.main_loop.mma, 2);
  EXPECT_EQ(p.main_loop.instructions, 13);  // the false span (.L_x_2 .. the retry's BRA) has 8
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
  k.ptx_main_loop_warpgroup_sync = 2;     // where its PTX's k-step has one fence and one wait
  EXPECT_EQ(codes(k), (std::vector<std::string>{"serialised-mma"}));
}

// The PTX's own main loop (ptx_main_loop.h), as LLVM lays an attention kernel's KV loop out
// (sm_90a, ptxas 13.0): the loop is entered at its P.V half, placed before the header; its exit
// test sits in a block after the header's wgmmas; the loop-back path jumps backwards to a
// block that is no loop header. Each mbarrier wait is an inline-asm loop of its own scope, all
// named LAB_WAIT and DONE. A listing-span reading found a "loop" of half the body there.
constexpr const char* kKvLoopPtx = R"(
.visible .entry attention(.param .u64 p0)
{
	mov.u32 	%r1, 0;
	bra.uni 	$L__BB0_2;
$L__BB0_2:
	{
	.reg .pred P1;
	LAB_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [%rd1], %r2;
	@P1 bra.uni DONE;
	bra.uni LAB_WAIT;
	DONE:
	}
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r10, %r11}, %rd2, %rd3, p, 1, 1, 0, 1;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r10, %r11}, %rd2, %rd3, p, 1, 1, 0, 1;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	@%p37 bra 	$L__BB0_16;
	bra.uni 	$L__BB0_15;
$L__BB0_16:
	add.s32 	%r708, %r708, 1;
	setp.ne.b32 	%p40, %r13, %r708;
	@%p40 bra 	$L__BB0_12;
	bra.uni 	$L__BB0_17;
$L__BB0_12:
	{
	.reg .pred P1;
	LAB_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [%rd4], %r2;
	@P1 bra.uni DONE;
	bra.uni LAB_WAIT;
	DONE:
	}
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r20, %r21}, %rd5, %rd6, p, 1, 1, 0, 1;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	bra.uni 	$L__BB0_2;
$L__BB0_15:
	mbarrier.arrive.shared.b64 	%rd48, [%rd6];
	bra.uni 	$L__BB0_16;
$L__BB0_17:
	ret;
}
)";

TEST(PtxMainLoop, TheKvLoopIsTheNaturalLoopNotAListingSpan) {
  const PtxMainLoop loop = ptx_main_loop(kKvLoopPtx);
  ASSERT_TRUE(loop.found);
  EXPECT_EQ(loop.mma, 3);             // both halves: S = Q.K^T and O += P.V
  EXPECT_EQ(loop.warpgroup_sync, 4);  // a fence and a wait each
}

TEST(PtxMainLoop, NoLoopNoWgmmaLoopAndAWaitLoopAlone) {
  EXPECT_FALSE(ptx_main_loop("").found);
  // Straight-line wgmmas, and a loop (the inline-asm wait) that holds none.
  const std::string straight = R"(
{
	{
	LAB_WAIT:
	@P1 bra.uni DONE;
	bra.uni LAB_WAIT;
	DONE:
	}
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r1}, %rd1, %rd2, p, 1, 1, 0, 1;
	wgmma.wait_group.sync.aligned 0;
	ret;
}
)";
  EXPECT_FALSE(ptx_main_loop(straight).found);
}

TEST(PtxMainLoop, TheInnermostLoopHoldingAWgmmaIsTheMainLoop) {
  // A tile loop around a k-loop: the k-loop's one fence and one wait, not the tile loop's four.
  const std::string nested = R"(
{
$T:
	wgmma.fence.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
$K:
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r1}, %rd1, %rd2, p, 1, 1, 0, 1;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 1;
	@%p1 bra 	$K;
	wgmma.fence.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	@%p2 bra 	$T;
	ret;
}
)";
  const PtxMainLoop loop = ptx_main_loop(nested);
  ASSERT_TRUE(loop.found);
  EXPECT_EQ(loop.warpgroup_sync, 2);
  EXPECT_EQ(loop.mma, 1);
}

// serialised-mma measures the assembler against the PTX: an attention KV step's four fences
// and waits are what its PTX asks for (softmax needs S before P.V issues), no lint; the same
// four where the PTX asked for two were added by the assembler, a lint. Without the PTX's count
// (older evidence, `sass` without --ptx) the loop is not judged: a false alarm on every healthy
// attention kernel was the alternative (round 12).
TEST(PerformanceLints, SerialisedMmaIsWhatTheAssemblerAddedToThePtxsMainLoop) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 0, true, {}};
  k.sass.main_loop.warpgroup_sync = 4;
  k.ptx_main_loop_warpgroup_sync = 4;
  EXPECT_TRUE(lints(k).empty());
  k.ptx_main_loop_warpgroup_sync = 2;
  EXPECT_EQ(codes(k), (std::vector<std::string>{"serialised-mma"}));
  EXPECT_NE(lints(k)[0].message.find("4 warpgroup arrive/wait in the main loop where its PTX has 2"), std::string::npos)
      << lints(k)[0].message;
  k.ptx_main_loop_warpgroup_sync.reset();
  EXPECT_TRUE(lints(k).empty());
  k.advisories = {"C7519"};  // the assembler's own word still counts without the PTX
  EXPECT_EQ(codes(k), (std::vector<std::string>{"serialised-mma"}));
  EXPECT_NE(lints(k)[0].message.find("(its PTX was not read), and the assembler says it injected some"), std::string::npos)
      << lints(k)[0].message;
  k.advisories.clear();
  k.ptx_main_loop_warpgroup_sync = 4;  // stored and read back
  EXPECT_EQ(evidence_from_json(evidence_json(k)).ptx_main_loop_warpgroup_sync, 4);
  k.ptx_main_loop_warpgroup_sync.reset();
  EXPECT_FALSE(evidence_from_json(evidence_json(k)).ptx_main_loop_warpgroup_sync.has_value());
}

TEST(PerformanceLints, SpillsAndLocalMemoryInTheMainLoop) {
  KernelEvidence k{profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 96, true, {}};
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills"}));
  k.sass.main_loop.local_memory = 606;
  EXPECT_EQ(codes(k), (std::vector<std::string>{"spills", "local-memory-in-main-loop"}));
  EXPECT_NE(lints(k)[1].message.find("606"), std::string::npos);
}

// The 2-CTA cluster kernel before and after the consumers' remote arrive became relaxed
// (sm_90a, 128x128x64, cluster along M; ptxas 13.0): .release.cluster put MEMBAR.ALL.CTA +
// MEMBAR.ALL.GPU before each of the two remote arrives, one of them inside the k-loop;
// .relaxed.cluster puts none.
// Both kernels keep the one GPU-wide MEMBAR of fence.mbarrier_init before the loop, and one at
// the final cluster barrier.
TEST(PerformanceLints, AGpuWideMembarInTheMainLoopIsOne) {
  KernelEvidence slow{profile_sass(fixture("sm90a_clusterM_release_arrive_ptxas.sass")), {}, 0, true, {}};
  EXPECT_EQ(slow.sass.main_loop.wide_membar, 1);
  EXPECT_EQ(slow.sass.whole.wide_membar, 4);
  EXPECT_EQ(codes(slow), (std::vector<std::string>{"membar-in-main-loop"}));
  EXPECT_NE(lints(slow)[0].message.find("1 GPU-wide memory barrier (MEMBAR)"), std::string::npos) << lints(slow)[0].message;
  EXPECT_EQ(evidence_from_json(evidence_json(slow)).sass.main_loop.wide_membar, 1);  // stored and read back
  KernelEvidence fixed{profile_sass(fixture("sm90a_clusterM_relaxed_arrive_ptxas.sass")), {}, 0, true, {}};
  EXPECT_EQ(fixed.sass.main_loop.wide_membar, 0);
  EXPECT_EQ(fixed.sass.whole.wide_membar, 2);
  EXPECT_EQ(fixed.sass.main_loop.mma, slow.sass.main_loop.mma);
  EXPECT_TRUE(lints(fixed).empty());
  // A CTA-scope MEMBAR alone is no such barrier.
  EXPECT_EQ(profile_sass(fixture("sm90a_default_ptxas.sass")).main_loop.wide_membar, 0);
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
