// The MLP's checkpoint: a run stopped after any cycle, in the Adam stage, at its end or inside the
// L-BFGS stage, and resumed ends bit-identical to the run that was never stopped; the refusals
// (changed config, other precision, torn file, the other model's checkpoint); and the backend's
// Adam moments it rests on (the L-BFGS state is tested in test_lbfgs.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "mlp_test_util.hpp"
#include "tests/common/resume_runs.hpp"

namespace rbfpde {
namespace {

using namespace test_runs;

// configs/poisson2d_seed_mlp.yaml shrunk to milliseconds a cycle: a 2-8-8-1 network, 40 + 16
// points redrawn every 7 steps, reports every 10 cycles (so that stops fall between reports and
// between draws), a coarse grid.
std::vector<std::string> tiny(std::vector<std::string> extra) {
  std::vector<std::string> o = {"model.layers=[8, 8]",
                                "training.points.interior=40",
                                "training.points.boundary=16",
                                "training.points.resample_every=7",
                                "training.adam.learning_rate=1e-2",
                                "output.report_every=10",
                                "output.resolution=[11, 11]",
                                "training.lbfgs.iterations=0"};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

const char* const kConfig = "poisson2d_seed_mlp";

TEST(MlpCheckpoint, AdamResumesBitIdenticallyInDoubleAndFloat) {
  for (const char* precision : {"double", "float"}) {
    SCOPED_TRACE(precision);
    check_resume_matches(
        kConfig, std::string("mlp_adam_") + precision,
        tiny({"training.max_cycles=60", std::string("compute.precision=") + precision}), 23);
  }
}

// The L-BFGS stage: 30 Adam steps, then up to 40 iterations on one batch.
std::vector<std::string> with_lbfgs(const char* precision) {
  return tiny({"training.max_cycles=30", "training.lbfgs.iterations=40",
               std::string("compute.precision=") + precision});
}

TEST(MlpCheckpoint, ResumesAcrossTheAdamToLbfgsBoundary) {
  for (const char* precision : {"double", "float"}) {
    SCOPED_TRACE(precision);
    // Stopped in the Adam stage: the resumed run goes on into the L-BFGS stage.
    check_resume_matches(kConfig, std::string("mlp_cross_") + precision, with_lbfgs(precision), 12);
  }
  // Stopped right after the last Adam step, before the stage has drawn its batch.
  check_resume_matches(kConfig, "mlp_edge", with_lbfgs("double"), 29);
}

TEST(MlpCheckpoint, ResumesInsideTheLbfgsStage) {
  for (const char* precision : {"double", "float"}) {
    SCOPED_TRACE(precision);
    // 16 L-BFGS iterations in: the minimiser's pairs, batch and iterate come from the file.
    check_resume_matches(kConfig, std::string("mlp_inside_") + precision, with_lbfgs(precision),
                         45);
  }
}

TEST(MlpCheckpoint, AFinishedRunContinuesWithMoreLbfgsIterations) {
  const std::vector<std::string> more =
      tiny({"training.max_cycles=30", "training.lbfgs.iterations=40"});
  const RunFiles full = run(kConfig, "mlp_more_full", more);
  run(kConfig, "mlp_more_part", tiny({"training.max_cycles=30", "training.lbfgs.iterations=15"}));
  const RunFiles resumed = run(kConfig, "mlp_more_part", more, -1, true);
  EXPECT_EQ(resumed.result.outcome.cycles, full.result.outcome.cycles);
  EXPECT_EQ(read_text(full.dir + "/model.yaml"), read_text(resumed.dir + "/model.yaml"));
  // Inside the stage max_cycles (the Adam steps) can no longer change.
  try {
    run(kConfig, "mlp_more_part", tiny({"training.max_cycles=50", "training.lbfgs.iterations=40"}),
        -1, true);
    FAIL() << "a changed max_cycles must not resume inside the L-BFGS stage";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "training.max_cycles");
    EXPECT_NE(std::string(e.what()).find("after 30 Adam steps"), std::string::npos) << e.what();
  }
}

std::string expect_refused(const std::string& config, const std::string& tag,
                           const std::vector<std::string>& extra) {
  try {
    run(config, tag, extra, -1, true);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "resumed where it must not";
  return "";
}

TEST(MlpCheckpoint, RefusesAChangedConfigAnotherPrecisionAndATornFile) {
  const std::vector<std::string> base = tiny({"training.max_cycles=5"});
  const RunFiles r = run(kConfig, "mlp_refuse", base);
  std::vector<std::string> changed = base;
  changed.push_back("training.penalty=10");
  EXPECT_NE(expect_refused(kConfig, "mlp_refuse", changed)
                .find("the config differs from the run that wrote"),
            std::string::npos);
  changed = base;
  changed.push_back("model.layers=[8, 9]");
  EXPECT_NE(expect_refused(kConfig, "mlp_refuse", changed)
                .find("the config differs from the run that wrote"),
            std::string::npos);
  changed = base;
  changed.push_back("compute.precision=float");
  EXPECT_NE(expect_refused(kConfig, "mlp_refuse", changed).find("compute.precision"),
            std::string::npos);

  const std::string path = r.dir + "/checkpoint/state.bin";
  const std::string bytes = read_text(path);
  for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
    const std::string what = expect_refused(kConfig, "mlp_refuse", base);
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("truncated or corrupt"), std::string::npos) << what;
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_NO_THROW(run(kConfig, "mlp_refuse", base, -1, true));
}

TEST(MlpCheckpoint, RefusesTheOtherModelsCheckpoint) {
  // An RBF run and an MLP run write into one directory in turn; each refuses the other's file.
  const RunFiles rbf = run("poisson2d_seed_lm", "mixed", {"training.max_cycles=2"});
  const std::string path = rbf.dir + "/checkpoint/state.bin";
  std::string what = expect_refused(kConfig, "mixed", tiny({"training.max_cycles=5"}));
  EXPECT_NE(what.find(path + ": the checkpoint is of an RBF network"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;

  run(kConfig, "mixed", tiny({"training.max_cycles=5"}));
  what = expect_refused("poisson2d_seed_lm", "mixed", {"training.max_cycles=2"});
  EXPECT_NE(what.find(path + ": the checkpoint is of an MLP"), std::string::npos) << what;
}

TEST(MlpCheckpoint, AMissingCheckpointIsBadInputAndWritesNothing) {
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/checkpoint_mlp_none";
  std::filesystem::remove_all(dir);
  try {
    run(kConfig, "mlp_none", tiny({}), -1, true);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoint to resume from"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(MlpBackend, AdamMomentsRestoreTheOptimiser) {
  MlpShape shape;
  shape.hidden = {5, 4};
  const MlpOptions options = mlp_options(shape, 2.0);
  auto a = make_cpu_mlp_backend<double>(options);
  auto b = make_cpu_mlp_backend<double>(options);
  const CollocationBatch batch = random_batch(2, 20, 10, 1);
  a->set_batch(batch);
  b->set_batch(batch);
  a->set_parameters(random_mlp_parameters(shape, 3));
  for (long t = 1; t <= 3; ++t) {
    a->loss_and_gradient();
    a->adam_step(0.01, 0.9, 0.999, 1e-8, t);
  }
  std::vector<double> m, v;
  a->adam_moments(m, v);
  ASSERT_EQ(m.size(), shape.parameter_count());
  EXPECT_NE(m, std::vector<double>(m.size(), 0.0));
  // Parameters first: set_parameters zeroes the moments.
  b->set_parameters(a->parameters());
  b->set_adam_moments(m, v);
  for (auto* be : {a.get(), b.get()}) {
    be->loss_and_gradient();
    be->adam_step(0.01, 0.9, 0.999, 1e-8, 4);
  }
  EXPECT_EQ(a->parameters(), b->parameters());
  EXPECT_THROW(b->set_adam_moments(m, std::vector<double>(3)), std::invalid_argument);
}

}  // namespace
}  // namespace rbfpde
