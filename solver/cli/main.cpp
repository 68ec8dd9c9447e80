// rbfpde command line (DESIGN.md §4). Exit codes: 0 success, 2 bad input, 3 training diverged,
// 1 anything else. Every error is one line on stderr.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "problems/errors.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/solve.hpp"

namespace {

struct CommonArgs {
  std::string config;
  std::vector<std::string> sets;
  std::string backend, precision;
};

// The config with the command line's overrides applied, and its problem built: everything a
// run needs is validated here, before anything is written.
struct Loaded {
  rbfpde::Config config;
  rbfpde::Problem problem;
};

Loaded load(const CommonArgs& args) {
  std::vector<std::string> overrides = args.sets;
  if (!args.backend.empty()) overrides.push_back("compute.backend=" + args.backend);
  if (!args.precision.empty()) overrides.push_back("compute.precision=" + args.precision);
  Loaded l;
  l.config = rbfpde::load_config(args.config, overrides);
  l.problem = rbfpde::Problem::build(l.config.problem);
  return l;
}

int run_solve(const CommonArgs& args, bool quiet) {
  Loaded l = load(args);
  if (l.config.model.type != "rbf")
    throw rbfpde::InputError(rbfpde::SourceLoc{l.config.file, 0, 0}, "model.type",
                             "model type '" + l.config.model.type +
                                 "' is not available in this version (expected rbf)");
  rbfpde::SolveOptions opt;
  opt.quiet = quiet;
  opt.out = &std::cout;
  opt.progress = &std::cerr;
  opt.progress_is_terminal = isatty(fileno(stderr));
  return rbfpde::solve(l.config, l.problem, opt).exit_code;
}

int run_check(const CommonArgs& args) {
  Loaded l = load(args);
  std::cout << "# " << l.config.file << ": valid; resolved configuration with defaults\n"
            << "# backend auto resolves to " << rbfpde::resolve_backend(l.config.compute.backend)
            << " here\n"
            << rbfpde::dump_config(l.config);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rbfpde: meshless Poisson solver with radial-basis-function networks"};
  app.set_version_flag("--version", std::string("rbfpde ") + RBFPDE_VERSION);
  app.require_subcommand(1);

  CommonArgs solve_args, check_args;
  bool quiet = false;
  auto* solve = app.add_subcommand("solve", "train the network on CONFIG and write the outputs");
  solve->add_option("config", solve_args.config, "problem file (YAML)")->required();
  solve->add_option("--backend", solve_args.backend, "auto | cpu | cuda (overrides compute.backend)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  solve->add_option("--precision", solve_args.precision, "double | float (overrides compute.precision)")
      ->check(CLI::IsMember({"double", "float"}));
  solve->add_option("--set", solve_args.sets, "override a config value: key.path=value")
      ->allow_extra_args(false);
  solve->add_flag("--quiet,-q", quiet, "print nothing but errors");

  auto* check = app.add_subcommand("check", "validate CONFIG and print it resolved with defaults");
  check->add_option("config", check_args.config, "problem file (YAML)")->required();
  check->add_option("--set", check_args.sets, "override a config value: key.path=value")
      ->allow_extra_args(false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*solve) return run_solve(solve_args, quiet);
    if (*check) return run_check(check_args);
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
