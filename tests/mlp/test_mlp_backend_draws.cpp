// The MLP trainer with a backend that draws its own batches (as the CUDA backend does on the
// device, inside its graphs): which batch it asks for at which cycle, that chunks of steps run
// across draws, and that a run stopped anywhere resumes to the bits of the run never stopped.
// The backend here is the CPU one behind a wrapper that draws batch `index` for `seed` with the
// host sampler seeded from both, and hands the trainer chunks of steps like the CUDA backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mlp_test_util.hpp"
#include "solver/config/config.hpp"
#include "solver/train/mlp_trainer.hpp"

namespace rbfpde {
namespace {

class DrawingBackend final : public MlpBackend<double> {
 public:
  DrawingBackend(const MlpOptions& options, const Problem& problem, int steps_per_sync)
      : inner_(make_cpu_mlp_backend<double>(options)),
        problem_(problem),
        steps_per_sync_(steps_per_sync) {}

  // (batch number, Adam steps done when it was drawn) of every draw, in order.
  std::vector<std::pair<std::uint64_t, long>> draws;
  // The lengths of the chunks train_steps was given.
  std::vector<std::size_t> chunks;

  std::string name() const override { return "drawing-cpu"; }
  std::string device_name() const override { return inner_->device_name(); }
  void set_parameters(const std::vector<double>& flat) override { inner_->set_parameters(flat); }
  std::vector<double> parameters() const override { return inner_->parameters(); }
  void adam_moments(std::vector<double>& m, std::vector<double>& v) const override {
    inner_->adam_moments(m, v);
  }
  void set_adam_moments(const std::vector<double>& m, const std::vector<double>& v) override {
    inner_->set_adam_moments(m, v);
  }
  void set_batch(const CollocationBatch& batch) override {
    batch_ = batch;
    inner_->set_batch(batch);
  }
  bool draws_batches() const override { return true; }
  void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                  std::size_t n_boundary) override {
    draws.emplace_back(index, adam_steps_);
    Rng rng(seed * 1000003ULL + index);
    problem_.sample(rng, n_interior, n_boundary, batch_);
    inner_->set_batch(batch_);
  }
  CollocationBatch batch() const override { return batch_; }
  LossParts residuals() override { return inner_->residuals(); }
  LossParts loss_and_gradient() override { return inner_->loss_and_gradient(); }
  void gradient(std::vector<double>& g) const override { inner_->gradient(g); }
  void adam_step(double learning_rate, double beta1, double beta2, double epsilon,
                 long t) override {
    inner_->adam_step(learning_rate, beta1, beta2, epsilon, t);
    adam_steps_ = t;
  }
  void residual_vectors(std::vector<double>& e, std::vector<double>& b) const override {
    inner_->residual_vectors(e, b);
  }
  int steps_per_sync() const override { return steps_per_sync_; }
  void train_steps(const std::vector<AdamStepArgs>& steps, double beta1, double beta2,
                   double epsilon, double stop_below, std::vector<LossParts>& losses) override {
    chunks.push_back(steps.size());
    MlpBackend<double>::train_steps(steps, beta1, beta2, epsilon, stop_below, losses);
  }

 protected:
  void evaluate_streams(const std::vector<double>& points, std::vector<double>* u,
                        std::vector<double>* gradient, std::vector<double>* laplacian) override {
    std::vector<double> uu, lap;
    inner_->evaluate(points, uu, lap);
    if (u) *u = uu;
    if (laplacian) *laplacian = lap;
    if (gradient) inner_->evaluate_gradient(points, *gradient);
  }

 private:
  std::unique_ptr<MlpBackend<double>> inner_;
  const Problem& problem_;
  int steps_per_sync_;
  CollocationBatch batch_;
  long adam_steps_ = 0;
};

// The seed MLP config shrunk: a 2-8-8-1 network, 40 + 16 points redrawn every 3 steps, 10 Adam
// steps and 4 L-BFGS iterations, reports every 4 cycles.
Config tiny_config() {
  return load_config(
      std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml",
      {"model.layers=[8, 8]", "training.points.interior=40", "training.points.boundary=16",
       "training.points.resample_every=3", "training.max_cycles=10", "training.lbfgs.iterations=4",
       "training.adam.learning_rate=1e-2", "output.report_every=4"});
}

struct TinyRun {
  Config config = tiny_config();
  Problem problem = Problem::build(config.problem);
  MlpShape shape = mlp_shape(config.model, problem.domain());
  DrawingBackend backend{mlp_backend_options(shape, config.training.penalty), problem, 5};
  MlpTrainer<double> trainer{config, problem, backend};
  std::vector<long> reported;

  MlpReportFn<double> report() {
    return [this](long cycle, double, const LossParts&, MlpBackend<double>&, bool) {
      reported.push_back(cycle);
      return true;
    };
  }
  std::vector<double> initial() const {
    Rng rng(config.training.seed);
    return initial_mlp_parameters(shape, rng);
  }
};

TEST(MlpBackendDraws, BatchesAreNumberedByCycleAndDrawnInsideTheChunks) {
  TinyRun r;
  const TrainOutcome out = r.trainer.train(r.initial(), r.report());
  EXPECT_EQ(out.stop_reason, "max_cycles");
  EXPECT_EQ(out.cycles, 14);
  // Batch 0 first, then before Adam steps 4, 7, 10 (cycles 3, 6, 9), then the L-BFGS stage's.
  const std::vector<std::pair<std::uint64_t, long>> expected = {
      {0, 0}, {1, 3}, {2, 6}, {3, 9}, {4, 10}};
  EXPECT_EQ(r.backend.draws, expected);
  // Chunks end at reports (cycles 4, 8) and at the Adam stage's end, not at draws.
  EXPECT_EQ(r.backend.chunks, (std::vector<std::size_t>{4, 4, 2}));
  // The trainer's batch is the backend's current one (the L-BFGS stage's).
  const CollocationBatch b = r.trainer.batch();
  EXPECT_EQ(b.interior, r.backend.batch().interior);
  EXPECT_EQ(r.trainer.state().batch.p, r.backend.batch().p);
  EXPECT_EQ(MlpTrainer<double>::adam_batch_index(9, 3), 3u);
  EXPECT_EQ(MlpTrainer<double>::lbfgs_batch_index(10, 3), 4u);
  EXPECT_EQ(MlpTrainer<double>::lbfgs_batch_index(9, 3), 3u);
  EXPECT_EQ(MlpTrainer<double>::lbfgs_batch_index(0, 3), 1u);
}

// Stopped after each of the polls of the whole run (every chunk in the Adam stage, every
// iteration in the L-BFGS stage) and resumed on a fresh backend from the state alone: the same
// batches, parameters and loss bit for bit as the run never stopped.
TEST(MlpBackendDraws, ResumedRunsDrawTheSameBatchesAndEndTheSame) {
  TinyRun full;
  const TrainOutcome whole = full.trainer.train(full.initial(), full.report());
  const std::vector<double> params = full.backend.parameters();
  for (int polls = 0; polls <= 5; ++polls) {
    SCOPED_TRACE(polls);
    TinyRun part;
    int seen = 0;
    const TrainOutcome cut =
        part.trainer.train(part.initial(), part.report(), [&] { return ++seen > polls; });
    ASSERT_EQ(cut.stop_reason, "interrupted");
    const MlpTrainerState<double> state = part.trainer.state();
    TinyRun resumed;
    const TrainOutcome rest = resumed.trainer.resume(state, resumed.report());
    EXPECT_EQ(rest.stop_reason, whole.stop_reason);
    EXPECT_EQ(rest.cycles, whole.cycles);
    EXPECT_EQ(rest.loss.loss, whole.loss.loss);
    EXPECT_EQ(resumed.backend.parameters(), params);
    // The resumed run drew the batches the whole run drew last, by number.
    std::vector<std::uint64_t> all, again;
    for (const auto& d : full.backend.draws) all.push_back(d.first);
    for (const auto& d : resumed.backend.draws) again.push_back(d.first);
    ASSERT_LE(again.size(), all.size());
    EXPECT_TRUE(std::equal(again.begin(), again.end(), all.end() - long(again.size())));
  }
}

}  // namespace
}  // namespace rbfpde
