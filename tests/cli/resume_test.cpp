// `--resume` refusals through the binary, for both models: exit code 2, one line on stderr that
// names the checkpoint file, and nothing written.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "cli_test_util.hpp"

namespace rbfpde {
namespace {

using namespace rbfpde::cli_test;

void expect_one_line_refusal(const RunResult& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("error: out/checkpoint/state.bin: " + text), std::string::npos) << r.err;
}

TEST(CliResume, WithoutACheckpointIsBadInputForEitherModel) {
  for (const std::string& config : {std::string(kTinyConfig), tiny_mlp_config()}) {
    TempDir tmp;
    write_text(tmp / "c.yaml", config);
    const RunResult r = run_rbfpde({"solve", "c.yaml", "--resume", "--quiet"}, tmp.path());
    expect_one_line_refusal(r, "no checkpoint to resume from");
    EXPECT_FALSE(fs::exists(tmp / "out"));
  }
}

TEST(CliResume, EachModelRefusesTheOthersCheckpoint) {
  const std::string rbf = kTinyConfig, mlp = tiny_mlp_config();
  for (const auto& [writer, reader, what] :
       {std::tuple{rbf, mlp, "the checkpoint is of an RBF network"},
        std::tuple{mlp, rbf, "the checkpoint is of an MLP"}}) {
    TempDir tmp;
    write_text(tmp / "c.yaml", writer);
    ASSERT_EQ(run_rbfpde({"solve", "c.yaml", "--quiet"}, tmp.path()).exit_code, 0);
    const auto before = tree(tmp / "out");
    write_text(tmp / "c.yaml", reader);
    const RunResult r = run_rbfpde({"solve", "c.yaml", "--resume", "--quiet"}, tmp.path());
    expect_one_line_refusal(r, what);
    EXPECT_EQ(tree(tmp / "out"), before) << "the refused run touched the output directory";
  }
}

}  // namespace
}  // namespace rbfpde
