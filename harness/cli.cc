#include "harness/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "harness/campaign/cmd_campaign.h"
#include "harness/cmd_bench.h"
#include "harness/report/cmd_report.h"
#include "harness/cmd_compile.h"
#include "harness/cmd_devices.h"
#include "harness/verify/cmd_verify.h"
#include "harness/cmd_emulate.h"
#include "harness/cmd_import.h"
#include "harness/cmd_matmul.h"
#include "harness/cmd_results.h"
#include "harness/cmd_sass.h"
#include "harness/cmd_space.h"
#include "harness/cmd_worker.h"
#include "harness/exit_codes.h"
#include "harness/option_checks.h"
#include "harness/version.h"

namespace mgpu::harness {

namespace {

// Output that could not be written (a full disk behind '>', a closed stdout) is a failure of
// the work, not a success that printed nothing.
int with_output_written(int code) {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return code;
  std::cerr << "mgpu-tune: error: cannot write the output to stdout (" << std::strerror(errno ? errno : EIO) << ")\n";
  return code == core::kExitOk ? core::kExitFailure : code;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{
      "mgpu-tune: benchmark and autotune Pallas:MGPU-style GPU kernels (Hopper sm_90a, "
      "Blackwell sm_100a).\nKernel templates compile through the MLIR-based MGPU backend to "
      "cubins; configs are measured on the GPU, verified, and recorded in SQLite.",
      "mgpu-tune"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.footer(kExitCodesHelp);  // every subcommand (added below) inherits it; ours gets the examples too
  const std::string examples(
      "Examples:\n"
      "  mgpu-tune devices                        GPUs this machine can measure on\n"
      "  mgpu-tune space matmul --arch sm_90a --m 8192 --n 8192 --k 8192\n"
      "  mgpu-tune compile matmul --arch sm_90a --all\n"
      "  mgpu-tune compile --mlir k.mlir --arch sm_100a --emit ptx\n"
      "  mgpu-tune sass k.cubin --ptxas-log k.log   registers, spills, main-loop SASS of any cubin\n"
      "  mgpu-tune best --db mgpu-tune.db\n"
      "  mgpu-tune export --db mgpu-tune.db --format cpp -o tuned_configs.h\n"
      "  mgpu-tune matmul --arch sm_90a --m 8192 --n 8192 --k 8192 --dtype bf16\n"
      "  mgpu-tune matmul --arch sm_100 --m 4096 --n 8192 --k 4096 --dtype f16\n"
      "  mgpu-tune matmul --arch sm_90a --m 512 --n 512 --k 512 --device emulate --trials 20   (verify on the virtual device)\n"
      "  mgpu-tune report --db mgpu-tune.db -o report/   (then open report/index.html)\n"
      "Nightly: mgpu-bench --db mgpu-tune.db (Google Benchmark), scripts/nightly.sh mgpu-tune.db\n"
      "Run 'mgpu-tune COMMAND --help' for a command's options.\n" +
      std::string(kExitCodesHelp));

  add_devices_command(app);
  add_compile_command(app);
  add_space_command(app);
  add_results_commands(app);
  add_import_command(app);
  add_bench_command(app);
  add_report_command(app);
  add_campaign_command(app);
  add_worker_command(app);
  add_matmul_command(app);
  add_emulate_command(app);
  add_verify_command(app);
  add_sass_command(app);
  check_every_option(app);  // after every command is added: an empty or out-of-range value is refused alike
  app.footer(examples);

  try {
    app.parse(argc, argv);  // subcommand callbacks run the work
    return with_output_written(core::kExitOk);
  } catch (const CLI::Success& e) {
    return with_output_written(app.exit(e));  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::cerr << "mgpu-tune: error: " << e.what() << "\nRun with --help for usage.\n";
    return core::kExitBadInput;
  } catch (const core::Error& e) {
    std::cerr << "mgpu-tune: error: " << e.what() << "\n";
    return core::exit_code_for(e.kind());
  } catch (const ExitWith& e) {
    return with_output_written(e.code);
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refuses (too long, a loop of symlinks, a file where a folder must be):
    // the user's to fix, unless the disk itself failed.
    const int err = e.code().value();
    std::cerr << "mgpu-tune: error: cannot use " << (e.path1().empty() ? std::string("a path") : e.path1().string()) << ": "
              << e.code().message() << "\n";
    return err == ENOSPC || err == EIO || err == EDQUOT ? core::kExitFailure : core::kExitBadInput;
  } catch (const std::bad_alloc&) {
    // What a command commits, it commits as it goes: leaving here keeps those rows whole.
    std::cerr << "mgpu-tune: error: out of memory\n";
    return core::kExitFailure;
  } catch (const std::exception& e) {
    // Every failure a user can meet should be a core::Error naming it; one that is not is our
    // bug, said as such rather than as an abort.
    std::cerr << "mgpu-tune: internal error (please report it): " << e.what() << "\n";
    return core::kExitFailure;
  }
}

}  // namespace mgpu::harness
