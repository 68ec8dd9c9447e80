// rbfpde command line (docs/outputs.md). Exit codes: 0 success, 2 bad input, 3 training diverged
// or an unsound result, 1 anything else. Every error is one line on stderr.
//
// `solve` initialises MPI (a plain run is a singleton of one rank and runs as a single process;
// under mpirun or srun each rank trains on its share of the points, docs/architecture.md).
// Errors of a run over several ranks: a bad input is the same on every rank, so rank 0 prints
// it and every rank exits with 2; any other failure on any rank prints "error: rank r of n: …"
// once and ends every rank (MPI_Abort) with 1, rather than leave the others in a collective.
#include <signal.h>
#include <unistd.h>

#include <csignal>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "kernels/comm.hpp"
#include "problems/errors.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/compare.hpp"
#include "solver/train/evaluate_model.hpp"
#include "solver/train/solve.hpp"

namespace {

struct CommonArgs {
  std::string config;
  std::vector<std::string> sets;
  std::string backend, precision;
  bool no_pictures = false;  // --no-pictures: output.pictures=false
};

// The config with the command line's overrides applied, and its problem built: everything a
// run needs is validated here, before anything is written.
struct Loaded {
  rbfpde::Config config;
  rbfpde::Problem problem;
};

// --backend and --precision are checked here so that an error names the flag, not a file.
void check_flag(const std::string& flag, const std::string& key, const std::string& value,
                const std::vector<std::string>& allowed) {
  if (value.empty()) return;
  std::string list;
  for (const auto& a : allowed) {
    if (a == value) return;
    list += (list.empty() ? "" : ", ") + a;
  }
  throw rbfpde::InputError(rbfpde::SourceLoc{flag}, key,
                           "expected one of " + list + ", found \"" + value + "\"");
}

Loaded load(const CommonArgs& args) {
  check_flag("--backend", "compute.backend", args.backend, {"auto", "cpu", "cuda"});
  check_flag("--precision", "compute.precision", args.precision, {"double", "float"});
  std::vector<std::string> overrides = args.sets;
  if (!args.backend.empty()) overrides.push_back("compute.backend=" + args.backend);
  if (!args.precision.empty()) overrides.push_back("compute.precision=" + args.precision);
  if (args.no_pictures) overrides.push_back("output.pictures=false");
  Loaded l;
  l.config = rbfpde::load_config(args.config, overrides);
  l.problem = rbfpde::Problem::build(l.config.problem);
  return l;
}

// SIGINT/SIGTERM ask training to stop after the current cycle and write everything; a second
// signal ends the process at once.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal != 0) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_stop_signal = sig;
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int run_solve(const CommonArgs& args, bool quiet, bool resume,
              const std::shared_ptr<rbfpde::Communicator>& comm) {
  Loaded l = load(args);
  rbfpde::SolveOptions opt;
  opt.comm = comm;
  const bool printer = comm->rank() == 0;
  opt.quiet = quiet;
  opt.out = printer ? &std::cout : nullptr;
  opt.progress = printer ? &std::cerr : nullptr;
  opt.progress_is_terminal = isatty(fileno(stderr));
  opt.resume = resume;
  opt.should_stop = [] { return g_stop_signal != 0; };
  install_stop_handlers();
  const rbfpde::SolveResult r = rbfpde::solve(l.config, l.problem, opt);
  if (!printer) return r.outcome.diverged || !r.unsound.empty() ? 3 : r.exit_code;
  if (r.outcome.diverged) {
    std::cerr << "error: training diverged: " << r.outcome.divergence << "; outputs in "
              << r.directory << "/ hold " << rbfpde::outputs_held(r) << "\n";
    return 3;
  }
  if (!r.unsound.empty()) {
    std::cerr << "error: the result is unsound: " << r.unsound << "; outputs in " << r.directory
              << "/ hold " << rbfpde::outputs_held(r) << "\n";
    return 3;
  }
  if (r.outcome.stop_reason == "interrupted") {
    std::cerr << "interrupted at cycle " << r.outcome.cycles << ": outputs and checkpoint written to "
              << r.directory << "/; continue with --resume\n";
    return 128 + int(g_stop_signal);
  }
  return r.exit_code;
}

int run_compare(const std::vector<std::string>& files, const CommonArgs& args, bool quiet) {
  check_flag("--backend", "compute.backend", args.backend, {"auto", "cpu", "cuda"});
  check_flag("--precision", "compute.precision", args.precision, {"double", "float"});
  std::vector<std::string> overrides = args.sets;
  if (!args.backend.empty()) overrides.push_back("compute.backend=" + args.backend);
  if (!args.precision.empty()) overrides.push_back("compute.precision=" + args.precision);
  if (args.no_pictures) overrides.push_back("output.pictures=false");
  rbfpde::SolveOptions opt;
  opt.quiet = quiet;
  opt.progress = &std::cerr;
  opt.progress_is_terminal = isatty(fileno(stderr));
  opt.should_stop = [] { return g_stop_signal != 0; };
  install_stop_handlers();
  const int code = rbfpde::run_compare(files, overrides, opt, std::cout);
  if (g_stop_signal != 0) return 128 + int(g_stop_signal);
  return code;
}

int run_check(const CommonArgs& args) {
  Loaded l = load(args);
  std::cout << "# " << l.config.file << ": valid; resolved configuration with defaults\n"
            << "# backend auto resolves to " << rbfpde::resolve_backend(l.config.compute.backend)
            << " here\n"
            << rbfpde::dump_config(l.config);
  return 0;
}

int run_eval(const rbfpde::EvalRequest& request, bool quiet) {
  const rbfpde::EvalSummary s = rbfpde::evaluate_model(request);
  if (!quiet) {
    std::cout << request.output_file << ": " << s.points << " points,";
    for (const std::string& name : s.arrays) std::cout << " " << name;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rbfpde: meshless Poisson solver with radial-basis-function networks"};
  app.set_version_flag("--version", std::string("rbfpde ") + RBFPDE_VERSION + "\n" +
                                        rbfpde::distributed_support());
  app.require_subcommand(1);

  CommonArgs solve_args, check_args;
  bool quiet = false, resume = false;
  auto* solve = app.add_subcommand("solve", "train the network on CONFIG and write the outputs");
  solve->add_option("config", solve_args.config, "problem file (YAML)")->required();
  // Their values are checked with the config, so a bad one gets the config's one-line error.
  solve->add_option("--backend", solve_args.backend, "auto | cpu | cuda (overrides compute.backend)");
  solve->add_option("--precision", solve_args.precision,
                    "double | float (overrides compute.precision)");
  solve->add_option("--set", solve_args.sets, "override a config value: key.path=value")
      ->allow_extra_args(false);
  solve->add_flag("--quiet,-q", quiet, "print nothing but errors");
  solve->add_flag("--no-pictures", solve_args.no_pictures,
                  "draw no pictures (output.pictures=false)");
  solve->add_flag("--resume", resume,
                  "continue from the checkpoint in the output directory (same config; "
                  "max_cycles, tolerance, time_limit may change)");

  auto* check = app.add_subcommand("check", "validate CONFIG and print it resolved with defaults");
  check->add_option("config", check_args.config, "problem file (YAML)")->required();
  check->add_option("--set", check_args.sets, "override a config value: key.path=value")
      ->allow_extra_args(false);

  CommonArgs compare_args;
  std::vector<std::string> compare_files;
  auto* compare = app.add_subcommand("compare", "run several configs (e.g. rbf and mlp) and print "
                                                "a side-by-side table; writes comparison_*.csv");
  compare->add_option("configs", compare_files, "problem files (YAML), two or more")->required();
  compare->add_option("--backend", compare_args.backend, "auto | cpu | cuda, for every config");
  compare->add_option("--precision", compare_args.precision, "double | float, for every config");
  compare->add_option("--set", compare_args.sets, "override a value in every config: key.path=value")
      ->allow_extra_args(false);
  compare->add_flag("--quiet,-q", quiet, "print the table only");
  compare->add_flag("--no-pictures", compare_args.no_pictures,
                    "draw no pictures (output.pictures=false)");

  rbfpde::EvalRequest eval_request;
  auto* eval = app.add_subcommand(
      "eval", "evaluate a trained MODEL (model.yaml) at given points or on a grid of its domain");
  eval->add_option("model", eval_request.model_file, "model file (model.yaml of a run)")
      ->required();
  eval->add_option("--points", eval_request.points_file,
                   "points to evaluate at: .csv (header x,y[,z]) or .vtu/.vtp");
  eval->add_option("--resolution", eval_request.resolution,
                   "grid points per axis over the model's domain (instead of --points)")
      ->allow_extra_args(true);
  eval->add_option("--output", eval_request.output_file, "output file: .vtu, .vtp or .csv")
      ->required();
  eval->add_flag("--gradient", eval_request.gradient, "add grad_u");
  eval->add_flag("--laplacian", eval_request.laplacian, "add laplacian_u");
  eval->add_flag("--quiet,-q", quiet, "print nothing but errors");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "error: " << e.what() << " (see rbfpde --help)\n";
    return 2;
  }

  if (*solve) {
    const std::shared_ptr<rbfpde::Communicator> comm = rbfpde::mpi_initialize(&argc, &argv);
    const bool distributed = comm->size() > 1;
    int code = 1;
    try {
      code = run_solve(solve_args, quiet, resume, comm);
    } catch (const rbfpde::InputError& e) {
      if (comm->rank() == 0) std::cerr << "error: " << e.what() << "\n";
      code = 2;
    } catch (const rbfpde::DivergenceError& e) {
      if (comm->rank() == 0) std::cerr << "error: training diverged: " << e.what() << "\n";
      code = 3;
    } catch (const std::exception& e) {
      if (!distributed) {
        std::cerr << "error: " << e.what() << "\n";
        code = 1;
      } else {
        comm->abort(e.what(), 1);
      }
    }
    rbfpde::mpi_finalize();
    return code;
  }
  try {
    if (*check) return run_check(check_args);
    if (*compare) return run_compare(compare_files, compare_args, quiet);
    if (*eval) return run_eval(eval_request, quiet);
  } catch (const rbfpde::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const rbfpde::DivergenceError& e) {
    std::cerr << "error: training diverged: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 1;
}
