// mgpu-bench: the nightly suite as a Google Benchmark executable. One benchmark per entry of
// the suite (a results database's current best configs, a JSON export, or a kernel pack's
// entries run through the pack's own C ABI: harness/nightly/pack_suite.h), each measured
// through the harness -- in a crash-contained worker, strict stopping rule, verified against
// cuBLASLt -- with the kernel's median time as Google Benchmark's manual time. Google
// Benchmark's own flags (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...)
// work as usual. Each measurement is also recorded as a trial of one "bench" run in the
// database, so `mgpu-tune regress` can compare tonight with a baseline; the run is begun by
// its first measurement, so a night that measured nothing records no run.
// Google Benchmark's flags it would crash on, take silently or end with its usage and exit 0
// (--benchmark_repetitions outside 1..10000, a --benchmark_min_time that is no positive finite
// number, a --benchmark_format/--benchmark_out_format other than console, json or csv, a
// --benchmark_time_unit other than ns, us, ms or s, an empty value; from the command line or
// its BENCHMARK_* environment variables) are bad input, and so is any warm-up
// (--benchmark_min_warmup_time other than 0: each iteration is a whole measurement that warms
// its kernel up; Google Benchmark's warm-up only repeated them, each recorded). A
// --benchmark_out that is the database (or its -wal/-shm/-journal), an export the suite is read
// from (the --configs file or a file of the --configs folder), or a new .json file in the
// --configs folder is refused before anything is written. A --configs that is no regular file
// (a FIFO, a device) is refused by name. The time unit is microseconds unless
// --benchmark_time_unit gives another.
// Exit codes (harness/exit_codes.h): 0 every benchmark measured and verified (or predicted,
// with --device model, labelled so); 1 some failed (fault, wrong result, ...: Google
// Benchmark's output marks them), or --benchmark_out could not be written (full disk,
// /dev/full); 2 bad input (a --benchmark_filter matching nothing included); 3 nothing
// measured -- no GPU for the suite, or a database holding only predictions -- and nothing is
// reported as passing.
#pragma once

namespace mgpu::harness {

// The whole program; mgpu-tune runs it too when invoked under the name mgpu-bench (the device
// bundle ships mgpu-bench as a link to mgpu-tune instead of a second 50 MB binary).
int mgpu_bench_main(int argc, char** argv);

}  // namespace mgpu::harness
