// Adam against a hand-computed update, float against double, determinism, the model file.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>

#include "mlp_test_util.hpp"
#include "solver/output/output.hpp"
#include "solver/train/mlp_model.hpp"

namespace rbfpde {
namespace {

MlpShape small_shape(int dim = 2) {
  MlpShape shape;
  shape.dim = dim;
  shape.hidden = {5, 4};
  return shape;
}

TEST(MlpBackend, AdamStepsMatchAHandComputedUpdate) {
  const MlpShape shape = small_shape();
  auto backend = make_cpu_mlp_backend<double>(mlp_options(shape, 2.0));
  std::vector<double> theta = random_mlp_parameters(shape, 9);
  backend->set_parameters(theta);
  backend->set_batch(random_batch(2, 20, 10, 1));
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> m(theta.size(), 0.0), v(theta.size(), 0.0), g;
  for (long t = 1; t <= 3; ++t) {
    backend->loss_and_gradient();
    backend->gradient(g);
    backend->adam_step(lr, b1, b2, eps, t);
    for (std::size_t k = 0; k < theta.size(); ++k) {
      m[k] = b1 * m[k] + (1 - b1) * g[k];
      v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k];
      const double mh = m[k] / (1 - std::pow(b1, t)), vh = v[k] / (1 - std::pow(b2, t));
      theta[k] -= lr * mh / (std::sqrt(vh) + eps);
    }
    const std::vector<double> got = backend->parameters();
    for (std::size_t k = 0; k < theta.size(); ++k)
      ASSERT_NEAR(got[k], theta[k], 1e-14 * std::max(1.0, std::abs(theta[k])))
          << "step " << t << " parameter " << k;
  }
  // The first step moves every parameter with a non-zero gradient by ≈ lr (Adam's signature).
  const std::vector<double> start = random_mlp_parameters(shape, 9);
  backend->set_parameters(start);
  backend->loss_and_gradient();
  backend->gradient(g);
  backend->adam_step(lr, b1, b2, eps, 1);
  const std::vector<double> moved = backend->parameters();
  for (std::size_t k = 0; k < start.size(); ++k)
    if (std::abs(g[k]) > 1e-6) {
      EXPECT_NEAR(std::abs(moved[k] - start[k]), lr, 1e-6);
    }
}

TEST(MlpBackend, SetParametersRestartsTheMoments) {
  const MlpShape shape = small_shape();
  auto a = make_cpu_mlp_backend<double>(mlp_options(shape, 2.0));
  auto b = make_cpu_mlp_backend<double>(mlp_options(shape, 2.0));
  const std::vector<double> theta = random_mlp_parameters(shape, 2);
  const CollocationBatch batch = random_batch(2, 20, 10, 1);
  a->set_batch(batch);
  b->set_batch(batch);
  a->set_parameters(theta);
  for (long t = 1; t <= 3; ++t) {
    a->loss_and_gradient();
    a->adam_step(0.01, 0.9, 0.999, 1e-8, t);
  }
  a->set_parameters(theta);
  b->set_parameters(theta);
  for (auto* be : {a.get(), b.get()}) {
    be->loss_and_gradient();
    be->adam_step(0.01, 0.9, 0.999, 1e-8, 1);
  }
  EXPECT_EQ(a->parameters(), b->parameters());
}

TEST(MlpBackend, FloatAgreesWithDouble) {
  for (int dim : {2, 3}) {
    MlpShape shape;
    shape.dim = dim;
    shape.hidden = {20, 20};
    const std::vector<double> theta = random_mlp_parameters(shape, 3);
    const CollocationBatch batch = random_batch(dim, 130, 40, 6);
    auto d = make_cpu_mlp_backend<double>(mlp_options(shape, 10.0));
    auto f = make_cpu_mlp_backend<float>(mlp_options(shape, 10.0));
    d->set_parameters(theta);
    f->set_parameters(convert_mlp_parameters<float>(theta));
    d->set_batch(batch);
    f->set_batch(batch);
    const LossParts ld = d->loss_and_gradient(), lf = f->loss_and_gradient();
    EXPECT_NEAR(lf.loss, ld.loss, 1e-5 * ld.loss) << dim << "D";
    std::vector<double> gd;
    std::vector<float> gf;
    d->gradient(gd);
    f->gradient(gf);
    double gmax = 0, diff = 0;
    for (std::size_t k = 0; k < gd.size(); ++k) {
      gmax = std::max(gmax, std::abs(gd[k]));
      diff = std::max(diff, std::abs(gd[k] - double(gf[k])));
    }
    EXPECT_LT(diff, 1e-4 * gmax) << dim << "D";
    std::vector<double> ud, lapd, uf, lapf;
    d->evaluate(batch.interior, ud, lapd);
    f->evaluate(batch.interior, uf, lapf);
    for (std::size_t i = 0; i < ud.size(); ++i) {
      EXPECT_NEAR(uf[i], ud[i], 1e-5 * std::max(1.0, std::abs(ud[i])));
      EXPECT_NEAR(lapf[i], lapd[i], 1e-4 * std::max(1.0, std::abs(lapd[i])));
    }
  }
}

TEST(MlpBackend, ThreadCountDoesNotChangeTheNumbers) {
  // A batch large enough to run on several threads, split into blocks summed in a fixed order.
  MlpShape shape;
  shape.hidden = {50, 50};
  const std::vector<double> theta = random_mlp_parameters(shape, 8);
  const CollocationBatch batch = random_batch(2, 1000, 300, 2);
  std::vector<std::vector<double>> grads;
  std::vector<double> losses;
  const int max_threads = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    auto backend = make_cpu_mlp_backend<double>(mlp_options(shape, 10.0));
    backend->set_parameters(theta);
    backend->set_batch(batch);
    losses.push_back(backend->loss_and_gradient().loss);
    grads.emplace_back();
    backend->gradient(grads.back());
  }
  omp_set_num_threads(max_threads);
  for (std::size_t i = 1; i < grads.size(); ++i) {
    EXPECT_EQ(losses[i], losses[0]);
    EXPECT_EQ(grads[i], grads[0]);
  }
}

TEST(MlpModel, GlorotInitialisationIsSeededAndScaled) {
  MlpShape shape;
  shape.hidden = {50, 30};
  Rng a(7), b(7), c(8);
  const std::vector<double> pa = initial_mlp_parameters(shape, a);
  const std::vector<double> pb = initial_mlp_parameters(shape, b);
  const std::vector<double> pc = initial_mlp_parameters(shape, c);
  ASSERT_EQ(pa.size(), shape.parameter_count());
  EXPECT_EQ(pa.size(), std::size_t(50 * 3 + 30 * 51 + 31));
  EXPECT_EQ(pa, pb);
  EXPECT_NE(pa, pc);
  // Layer 2 (30 × 50): weights within ±sqrt(6/80), their spread filling it, biases zero.
  const double limit = std::sqrt(6.0 / 80.0);
  double wmax = 0;
  for (std::size_t k = 150; k < 150 + 1500; ++k) wmax = std::max(wmax, std::abs(pa[k]));
  EXPECT_LE(wmax, limit);
  EXPECT_GT(wmax, 0.95 * limit);
  for (std::size_t k = 1650; k < 1680; ++k) EXPECT_EQ(pa[k], 0.0);
}

TEST(MlpModel, ModelFileRoundTrips) {
  MlpShape shape;
  shape.dim = 3;
  shape.hidden = {4, 3};
  shape.activation = "sin";
  shape.input_min = {0, -1, 2};
  shape.input_max = {1, 1, 5};
  const std::vector<double> theta = random_mlp_parameters(shape, 5);
  Config config;
  config.name = "roundtrip";
  config.training.method = "adam";
  const std::filesystem::path dir = std::string(RBFPDE_TEST_TMP) + "/model_file";
  std::filesystem::create_directories(dir);
  write_mlp_model_yaml(dir / "model.yaml", shape, theta, config, "cpu");
  const MlpModel back = read_mlp_model_yaml(dir / "model.yaml");
  EXPECT_EQ(back.shape.dim, 3);
  EXPECT_EQ(back.shape.hidden, shape.hidden);
  EXPECT_EQ(back.shape.activation, "sin");
  EXPECT_EQ(back.shape.input_min, shape.input_min);
  EXPECT_EQ(back.shape.input_max, shape.input_max);
  EXPECT_EQ(back.parameters, theta);  // 17 digits: exact
  // An RBF model file is refused with the key named.
  write_file_atomic(dir / "rbf.yaml", "format: rbfpde-model-1\ntype: rbf\n");
  try {
    read_mlp_model_yaml(dir / "rbf.yaml");
    FAIL() << "an RBF model was read as an MLP";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "type");
  }
}

}  // namespace
}  // namespace rbfpde
