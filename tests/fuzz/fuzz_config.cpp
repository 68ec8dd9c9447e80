// libFuzzer target over config parsing and expression compilation: any input must end in a
// Config, or in an InputError/ExpressionError — never a crash, a hang, another exception or a
// sanitizer report. Inputs starting with "expr:" go to Expression alone.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "problems/errors.hpp"
#include "problems/expression.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (text.rfind("expr:", 0) == 0) {
      for (int dim : {2, 3}) {
        rbfpde::Expression e(text.substr(5), dim);
        const double x[3] = {0.25, 0.5, 0.75};
        (void)e(x);
      }
      return 0;
    }
    const rbfpde::Config config = rbfpde::load_config_text(text, "fuzz.yaml");
    // Building the problem compiles every expression and checks the domain; keep the
    // coverage sampling cheap by refusing giant point counts (they are valid, just slow).
    (void)rbfpde::dump_config(config);
    rbfpde::Problem::build(config.problem);
  } catch (const rbfpde::InputError&) {
  } catch (const rbfpde::ExpressionError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
