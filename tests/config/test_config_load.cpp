// Valid configs: the shipped ones load with the values they state, defaults fill the rest,
// --set overrides land where they say, and dump_config reads back to the same Config.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/config/config_test_util.hpp"

namespace rbfpde {
namespace {

using testing::expect_same_values;
using testing::kProblem;
using testing::load_error;
using testing::shipped_config;
using testing::write_tmp;

TEST(ShippedConfigs, SeedProblemHasTheDesignValues) {
  const Config c = load_config(shipped_config("poisson2d_seed.yaml"));
  EXPECT_EQ(c.file, shipped_config("poisson2d_seed.yaml"));
  EXPECT_EQ(c.name, "poisson2d_seed");
  EXPECT_EQ(c.problem.dim, 2);
  EXPECT_EQ(c.problem.domain.type, "rectangle");
  EXPECT_EQ(c.problem.domain.min, (std::vector<double>{0, 0}));
  EXPECT_EQ(c.problem.domain.max, (std::vector<double>{1, 1}));
  EXPECT_EQ(c.problem.domain.key, "problem.domain");
  EXPECT_EQ(c.problem.domain.loc.line, 4);  // the domain map starts at "type:" on line 4
  EXPECT_EQ(c.problem.f.text, "sin(pi*x)*sin(pi*y)");
  EXPECT_EQ(c.problem.f.key, "problem.equation.f");
  EXPECT_EQ(c.problem.f.loc.str(), shipped_config("poisson2d_seed.yaml") + ":9:8");
  ASSERT_EQ(c.problem.boundary.size(), 1u);
  EXPECT_EQ(c.problem.boundary[0].type, "dirichlet");
  EXPECT_EQ(c.problem.boundary[0].value.text, "0");
  EXPECT_EQ(c.problem.boundary[0].where.text, "1");
  EXPECT_EQ(c.problem.boundary[0].where.key, "problem.boundary[0].where");
  ASSERT_TRUE(c.problem.exact.has_value());
  EXPECT_EQ(c.problem.exact->text, "-sin(pi*x)*sin(pi*y)/(2*pi^2)");
  EXPECT_EQ(c.model.type, "rbf");
  EXPECT_EQ(c.model.neurons, 64);
  EXPECT_EQ(c.model.init_centres, "grid");
  EXPECT_EQ(c.model.init_width, 1.5);
  EXPECT_FALSE(c.model.init_width_auto);  // the seed config gives width: 1.5
  EXPECT_EQ(c.training.method, "gdcg");
  EXPECT_EQ(c.training.points_interior, 176);
  EXPECT_EQ(c.training.points_boundary, 48);
  EXPECT_EQ(c.training.resample_every, 1);
  EXPECT_EQ(c.training.penalty, 100);
  EXPECT_EQ(c.training.max_cycles, 2000);
  EXPECT_EQ(c.training.tolerance, 1e-10);
  EXPECT_EQ(c.training.cg_tolerance, 1e-14);
  EXPECT_EQ(c.training.lm_damping, 1e-2);
  EXPECT_EQ(c.training.adam_learning_rate, 1e-3);
  EXPECT_EQ(c.training.seed, 1u);
  EXPECT_EQ(c.compute.backend, "auto");
  EXPECT_EQ(c.compute.precision, "double");
  EXPECT_EQ(c.output.directory, "output/poisson2d_seed");
  EXPECT_EQ(c.output.resolution, (std::vector<int>{101, 101}));
  EXPECT_EQ(c.output.snapshot_every, 0);
  EXPECT_EQ(c.output.report_every, 10);
}

TEST(ShippedConfigs, LevenbergMarquardtSeed) {
  const Config c = load_config(shipped_config("poisson2d_seed_lm.yaml"));
  EXPECT_EQ(c.name, "poisson2d_seed_lm");
  EXPECT_EQ(c.training.method, "lm");
  EXPECT_EQ(c.training.max_cycles, 500);
  EXPECT_EQ(c.training.points_interior, 400);
  EXPECT_EQ(c.training.points_boundary, 100);
  EXPECT_EQ(c.training.resample_every, 1);
  EXPECT_EQ(c.problem.f.text, "sin(pi*x)*sin(pi*y)");
}

TEST(ShippedConfigs, LShapeIsAPolygon) {
  const Config c = load_config(shipped_config("lshape.yaml"));
  EXPECT_EQ(c.problem.dim, 2);
  EXPECT_EQ(c.problem.domain.type, "polygon");
  const std::vector<std::array<double, 2>> expected = {{0, 0},     {1, 0},   {1, 0.5},
                                                       {0.5, 0.5}, {0.5, 1}, {0, 1}};
  EXPECT_EQ(c.problem.domain.vertices, expected);
  // Only the problem is given: variable projection with the 2D defaults that scale.
  EXPECT_EQ(c.training.method, "varpro");
  EXPECT_EQ(c.model.neurons, 196);
  EXPECT_EQ(c.training.points_interior, 3920);
  EXPECT_EQ(c.training.points_boundary, 501);
  EXPECT_EQ(c.training.resample_every, 0);
  ASSERT_TRUE(c.problem.exact.has_value());
  EXPECT_EQ(c.problem.boundary[0].value.text, c.problem.exact->text);
}

TEST(ShippedConfigs, DiskAndCube) {
  const Config disk = load_config(shipped_config("disk.yaml"));
  EXPECT_EQ(disk.problem.dim, 2);
  EXPECT_EQ(disk.problem.domain.type, "disk");
  EXPECT_EQ(disk.problem.domain.centre, (std::vector<double>{0, 0}));
  EXPECT_EQ(disk.problem.domain.radius, 1.0);
  EXPECT_EQ(disk.problem.f.text, "2*y");
  EXPECT_EQ(disk.training.method, "varpro");
  EXPECT_EQ(disk.model.neurons, 196);

  const Config cube = load_config(shipped_config("cube3d.yaml"));
  EXPECT_EQ(cube.problem.dim, 3);
  EXPECT_EQ(cube.problem.domain.type, "box");
  EXPECT_EQ(cube.problem.domain.max, (std::vector<double>{1, 1, 1}));
  // Only the problem is given: the 3D variable projection defaults.
  EXPECT_EQ(cube.training.method, "varpro");
  EXPECT_EQ(cube.model.neurons, 343);
  EXPECT_EQ(cube.training.points_interior, 8575);  // 5 * 343 * (3 + 2)
  EXPECT_EQ(cube.training.points_boundary, 5028);  // ceil(12 * 8575^(2/3))
  EXPECT_EQ(cube.output.resolution, (std::vector<int>{41, 41, 41}));
}

TEST(Defaults, MinimalConfigGetsEveryDefault) {
  const std::string path = write_tmp("minimal_run.yaml", kProblem);
  const Config c = load_config(path);
  const ModelConfig model;
  const TrainingConfig training;
  EXPECT_EQ(c.name, "minimal_run");  // the file's stem
  EXPECT_EQ(c.problem.dim, 2);
  EXPECT_EQ(c.problem.equation, "poisson");
  EXPECT_FALSE(c.problem.exact.has_value());
  EXPECT_EQ(c.problem.boundary[0].where.text, "1");
  // A defaulted `where` is placed at its boundary entry, for Problem::build's messages.
  EXPECT_EQ(c.problem.boundary[0].where.loc.str(), path + ":5:7");
  EXPECT_EQ(c.problem.f.loc.str(), path + ":3:17");
  EXPECT_EQ(c.problem.domain.loc.str(), path + ":2:11");
  EXPECT_EQ(c.model.type, model.type);
  EXPECT_EQ(model.type, "rbf");
  EXPECT_EQ(c.model.neurons, 196);  // variable projection's 2D default
  EXPECT_EQ(c.model.init_centres, "grid");
  EXPECT_EQ(c.model.init_width, 1.5);
  EXPECT_TRUE(c.model.init_width_auto);  // variable projection's width search
  EXPECT_EQ(c.model.layers, (std::vector<int>{50, 50, 50, 50}));
  EXPECT_EQ(c.model.activation, "tanh");
  // An RBF network is trained by variable projection, with defaults that scale with it.
  EXPECT_EQ(c.training.method, "varpro");
  EXPECT_EQ(c.training.points_interior, 3920);  // 5 * 196 * (2 + 2)
  EXPECT_EQ(c.training.points_boundary, 501);   // ceil(8 * sqrt(3920)) = ceil(500.88)
  EXPECT_EQ(c.training.resample_every, 0);      // one fixed batch
  EXPECT_EQ(c.training.penalty, 100);
  EXPECT_EQ(c.training.max_cycles, 1000);
  EXPECT_EQ(c.training.tolerance, 0);
  EXPECT_EQ(c.training.patience, 150);
  EXPECT_EQ(c.training.restarts, 5);
  EXPECT_EQ(c.training.time_limit, 0);
  EXPECT_EQ(c.training.gd_steps, 1);
  EXPECT_EQ(c.training.gd_learning_rate, 1.0);
  EXPECT_EQ(c.training.cg_iterations, 50);
  EXPECT_EQ(c.training.cg_tolerance, 1e-14);
  EXPECT_EQ(c.training.lm_damping, 1e-2);
  EXPECT_EQ(c.training.adam_learning_rate, 1e-3);
  EXPECT_EQ(c.training.adam_decay, 1.0);
  EXPECT_EQ(c.training.seed, 1u);
  EXPECT_EQ(c.compute.backend, "auto");
  EXPECT_EQ(c.compute.precision, "double");
  EXPECT_EQ(c.output.directory, "output/minimal_run");
  EXPECT_EQ(c.output.resolution, (std::vector<int>{101, 101}));
  EXPECT_EQ(c.output.snapshot_every, 0);
  EXPECT_EQ(c.output.report_every, 10);
}

TEST(Defaults, OtherRbfMethodsKeepTheFixedDefaults) {
  const std::string path = write_tmp("minimal_gdcg.yaml", kProblem);
  const TrainingConfig training;
  for (const char* method : {"gdcg", "lm"}) {
    SCOPED_TRACE(method);
    const Config c = load_config(path, {std::string("training.method=") + method});
    EXPECT_EQ(c.training.method, method);
    EXPECT_EQ(c.model.neurons, 64);
    EXPECT_EQ(c.training.points_interior, 176);
    EXPECT_EQ(c.training.points_boundary, 48);
    EXPECT_EQ(c.training.points_interior, training.points_interior);
    EXPECT_EQ(c.training.points_boundary, training.points_boundary);
    EXPECT_EQ(c.training.resample_every, 1);
    EXPECT_EQ(c.training.max_cycles, 2000);
    EXPECT_EQ(c.training.tolerance, 1e-10);
    EXPECT_EQ(c.training.patience, 0);
    EXPECT_EQ(c.training.restarts, 0);
  }
  // resample_every 0 (one fixed batch) is allowed for any RBF method.
  EXPECT_EQ(load_config(path, {"training.method=gdcg", "training.points.resample_every=0"})
                .training.resample_every,
            0);
}

TEST(VarproDefaults, ProblemOnly2D) {
  const Config c = load_config(write_tmp("varpro2d.yaml", kProblem));
  EXPECT_EQ(c.training.method, "varpro");
  EXPECT_EQ(c.model.neurons, 196);
  EXPECT_EQ(c.training.points_interior, 3920);
  EXPECT_EQ(c.training.points_boundary, 501);
  EXPECT_EQ(c.training.resample_every, 0);
  EXPECT_EQ(c.training.max_cycles, 1000);
  EXPECT_EQ(c.training.tolerance, 0.0);
  EXPECT_EQ(c.training.patience, 150);
  EXPECT_EQ(c.training.restarts, 5);
  // Restarts may be turned off or raised; 0 is accepted for any method.
  EXPECT_EQ(load_config(write_tmp("varpro2d_r0.yaml", kProblem), {"training.restarts=0"})
                .training.restarts,
            0);
  EXPECT_EQ(load_config(write_tmp("varpro2d_r7.yaml", kProblem), {"training.restarts=7"})
                .training.restarts,
            7);
  EXPECT_EQ(load_config(write_tmp("lm_r0.yaml", kProblem),
                        {"training.method=lm", "training.restarts=0"})
                .training.restarts,
            0);
  // Stating the method changes nothing but the name (the file's stem).
  Config named = load_config(write_tmp(
      "varpro2d_named.yaml", std::string(kProblem) + "training: {method: varpro}\n"));
  EXPECT_EQ(named.name, "varpro2d_named");
  named.name = c.name;
  named.output.directory = c.output.directory;
  expect_same_values(c, named);
}

TEST(VarproDefaults, ProblemOnly3D) {
  const Config c = load_config(write_tmp("varpro3d.yaml",
                                         "problem:\n"
                                         "  domain: {type: box, min: [0, 0, 0], max: [1, 1, 1]}\n"
                                         "  equation: {f: 1}\n"
                                         "  boundary: [{type: dirichlet, value: 0}]\n"));
  EXPECT_EQ(c.problem.dim, 3);
  EXPECT_EQ(c.training.method, "varpro");
  EXPECT_EQ(c.model.neurons, 343);
  EXPECT_EQ(c.training.points_interior, 8575);  // 5 * 343 * (3 + 2)
  EXPECT_EQ(c.training.points_boundary,
            static_cast<int>(std::ceil(12.0 * std::pow(8575.0, 2.0 / 3.0))));
  EXPECT_EQ(c.training.points_boundary, 5028);
  EXPECT_EQ(c.training.resample_every, 0);
  EXPECT_EQ(c.training.max_cycles, 1000);
  EXPECT_EQ(c.training.tolerance, 0.0);
  EXPECT_EQ(c.training.patience, 150);
}

TEST(VarproDefaults, GivenKeysAreKeptAndTheRestScaleWithThem) {
  const std::string path = write_tmp("varpro_given.yaml", kProblem);
  const Config c = load_config(path, {"model.neurons=64"});
  EXPECT_EQ(c.model.neurons, 64);
  EXPECT_EQ(c.training.points_interior, 1280);  // 5 * 64 * 4
  EXPECT_EQ(c.training.points_boundary, 287);   // ceil(8 * sqrt(1280)) = ceil(286.22)
  const Config d = load_config(
      path, {"training.points.interior=500", "training.points.resample_every=3",
             "training.max_cycles=12", "training.tolerance=1e-9", "training.patience=0"});
  EXPECT_EQ(d.model.neurons, 196);
  EXPECT_EQ(d.training.points_interior, 500);
  EXPECT_EQ(d.training.points_boundary, 179);  // ceil(8 * sqrt(500)) = ceil(178.89)
  EXPECT_EQ(d.training.resample_every, 3);
  EXPECT_EQ(d.training.max_cycles, 12);
  EXPECT_EQ(d.training.tolerance, 1e-9);
  EXPECT_EQ(d.training.patience, 0);
  const Config e = load_config(path, {"training.points.boundary=7"});
  EXPECT_EQ(e.training.points_interior, 3920);
  EXPECT_EQ(e.training.points_boundary, 7);
}

TEST(VarproDefaults, ZeroResampleIsRefusedForTheMlpAtItsPosition) {
  const std::string path = write_tmp(
      "mlp_resample0.yaml",
      std::string(kProblem) + "model: {type: mlp}\ntraining:\n  points:\n    resample_every: 0\n");
  EXPECT_EQ(load_error(path), path +
                                  ":9:21: training.points.resample_every: expected a positive "
                                  "integer for method adam (0, one fixed batch, is for lm), "
                                  "found \"0\"");
  EXPECT_EQ(load_error(write_tmp("mlp_plain.yaml", std::string(kProblem) + "model: {type: mlp}\n"),
                       {"training.points.resample_every=0"}),
            "--set: training.points.resample_every: expected a positive integer for method adam (0, "
            "one fixed batch, is for lm), found \"0\"");
  const std::string negative =
      write_tmp("patience_negative.yaml", std::string(kProblem) + "training:\n  patience: -1\n");
  EXPECT_EQ(load_error(negative),
            negative + ":7:13: training.patience: expected a non-negative integer, found \"-1\"");
}

TEST(Defaults, ThreeDimensionalResolutionAndMlpMethod) {
  const Config c = load_config(write_tmp("ball.yaml",
                                         "problem:\n"
                                         "  domain: {type: ball, centre: [0, 0, 0], radius: 2}\n"
                                         "  equation: {f: 0}\n"
                                         "  boundary: [{type: dirichlet, value: 1.5}]\n"
                                         "model: {type: mlp}\n"));
  EXPECT_EQ(c.problem.dim, 3);
  EXPECT_EQ(c.problem.domain.radius, 2.0);
  EXPECT_EQ(c.problem.f.text, "0");  // a plain number is an expression's text
  EXPECT_EQ(c.problem.boundary[0].value.text, "1.5");
  EXPECT_EQ(c.output.resolution, (std::vector<int>{41, 41, 41}));
  EXPECT_EQ(c.training.method, "adam");  // an MLP's default trainer
  // No variable projection defaults for the MLP.
  EXPECT_EQ(c.training.points_interior, 176);
  EXPECT_EQ(c.training.resample_every, 1);
  EXPECT_EQ(c.training.patience, 0);
}

TEST(Defaults, LbfgsStageIsOffUnlessAsked) {
  const std::string path = write_tmp("lbfgs.yaml", std::string(kProblem) + "model: {type: mlp}\n");
  const Config off = load_config(path);
  EXPECT_EQ(off.training.lbfgs_iterations, 0);
  EXPECT_EQ(off.training.lbfgs_history, 10);
  const Config on = load_config(
      write_tmp("lbfgs_on.yaml", std::string(kProblem) +
                                     "model: {type: mlp}\n"
                                     "training:\n  lbfgs: {iterations: 300, history: 20}\n"));
  EXPECT_EQ(on.training.lbfgs_iterations, 300);
  EXPECT_EQ(on.training.lbfgs_history, 20);
  const Config set = load_config(path, {"training.lbfgs.iterations=7"});
  EXPECT_EQ(set.training.lbfgs_iterations, 7);
  EXPECT_EQ(set.training.lbfgs_history, 10);
  // The RBF trainers have no L-BFGS stage: 0 (the default, as dump writes it) is all they take.
  EXPECT_EQ(load_config(write_tmp("lbfgs_rbf.yaml", std::string(kProblem)),
                        {"training.lbfgs.iterations=0", "training.lbfgs.history=3"})
                .training.lbfgs_history,
            3);
  EXPECT_EQ(load_error(path, {"model.type=rbf", "training.lbfgs.iterations=5"}),
            "--set: training.lbfgs.iterations: expected 0 for model.type rbf (L-BFGS refines "
            "the MLP only), found \"5\"");
}

TEST(Defaults, NumbersInEveryNotation) {
  const Config c = load_config(write_tmp("numbers.yaml", std::string(kProblem) +
                                                             "training:\n"
                                                             "  penalty: 1.0e+3\n"
                                                             "  tolerance: 0\n"
                                                             "  time_limit: 2.5\n"
                                                             "  gd: {learning_rate: +0.25}\n"
                                                             "  cg: {tolerance: 1E-12}\n"
                                                             "  max_cycles: +70\n"
                                                             "  seed: 18446744073709551615\n"));
  EXPECT_EQ(c.training.penalty, 1000.0);
  EXPECT_EQ(c.training.tolerance, 0.0);
  EXPECT_EQ(c.training.time_limit, 2.5);
  EXPECT_EQ(c.training.gd_learning_rate, 0.25);
  EXPECT_EQ(c.training.cg_tolerance, 1e-12);
  EXPECT_EQ(c.training.max_cycles, 70);
  EXPECT_EQ(c.training.seed, 18446744073709551615ull);
}

TEST(Overrides, ReplaceExistingValues) {
  const Config c = load_config(
      shipped_config("poisson2d_seed.yaml"),
      {"training.penalty=10", "model.neurons=100", "training.method=lm", "compute.backend=cpu"});
  EXPECT_EQ(c.training.penalty, 10.0);
  EXPECT_EQ(c.model.neurons, 100);
  EXPECT_EQ(c.training.method, "lm");
  EXPECT_EQ(c.compute.backend, "cpu");
  EXPECT_EQ(c.training.points_interior, 176);  // untouched siblings stay
  EXPECT_EQ(c.training.cg_iterations, 50);
}

TEST(Overrides, CreateNestedMapsAndSetSequences) {
  const std::string path = write_tmp("nested.yaml", kProblem);
  const Config c =
      load_config(path, {"training.gd.steps=5", "output.resolution=[11, 12]", "problem.exact=x*y",
                         "problem.boundary[0].value=sin(x)", "problem.boundary.0.where=x > 0.5",
                         "name=renamed", "problem.domain.max=[2, 3]"});
  EXPECT_EQ(c.training.gd_steps, 5);
  EXPECT_EQ(c.training.gd_learning_rate, 1.0);
  EXPECT_EQ(c.output.resolution, (std::vector<int>{11, 12}));
  ASSERT_TRUE(c.problem.exact.has_value());
  EXPECT_EQ(c.problem.exact->text, "x*y");
  EXPECT_EQ(c.problem.boundary[0].value.text, "sin(x)");
  EXPECT_EQ(c.problem.boundary[0].where.text, "x > 0.5");
  EXPECT_EQ(c.name, "renamed");
  EXPECT_EQ(c.output.directory, "output/renamed");
  EXPECT_EQ(c.problem.domain.max, (std::vector<double>{2, 3}));
  // Expressions from --set are located at "--set" for Problem::build's messages; the rest of the
  // file keeps its positions.
  EXPECT_EQ(c.problem.exact->loc.str(), "--set");
  EXPECT_EQ(c.problem.boundary[0].value.loc.str(), "--set");
  EXPECT_EQ(c.problem.f.loc.str(), path + ":3:17");
}

TEST(Overrides, ErrorsAreReportedAtSet) {
  const std::string path = write_tmp("set_errors.yaml", kProblem);
  EXPECT_EQ(load_error(path, {"model.neurons=abc"}),
            "--set: model.neurons: expected a positive integer, found \"abc\"");
  EXPECT_EQ(load_error(path, {"model.neurons=64.5"}),
            "--set: model.neurons: expected a positive integer, found \"64.5\"");
  EXPECT_EQ(load_error(path, {"model.nuerons=5"}),
            "--set: model.nuerons: unknown key \"nuerons\" (did you mean \"neurons\"?)");
  EXPECT_EQ(load_error(path, {"training.gd.stpes=5"}),
            "--set: training.gd.stpes: unknown key \"stpes\" (did you mean \"steps\"?)");
  EXPECT_EQ(load_error(path, {"training=5"}), "--set: training: expected a map, found \"5\"");
  EXPECT_EQ(load_error(path, {"output.resolution={a: 1}"}),
            "--set: output.resolution: expected a sequence of 2 integers (points per axis), found "
            "a map");
  EXPECT_EQ(load_error(path, {"training.penalty"}),
            "--set: training.penalty: expected key.path=value, found \"training.penalty\"");
  EXPECT_EQ(load_error(path, {"=5"}), "--set: expected key.path=value, found \"=5\"");
  EXPECT_EQ(load_error(path, {"training..penalty=5"}),
            "--set: training..penalty: expected key.path=value, found \"training..penalty=5\"");
  EXPECT_EQ(load_error(path, {"problem.equation.f.x=1"}),
            "--set: problem.equation.f.x: cannot set a key inside problem.equation.f, which is "
            "\"1\"");
  EXPECT_EQ(load_error(path, {"problem.boundary[3].value=1"}),
            "--set: problem.boundary[3]: no such entry: problem.boundary is a sequence of 1");
  EXPECT_EQ(load_error(path, {"training.method=adam"}),
            "--set: training.method: expected varpro, lm or gdcg for model.type rbf, found "
            "\"adam\"");
  EXPECT_EQ(load_error(path, {"training.method=bfgs"}),
            "--set: training.method: expected one of varpro, gdcg, lm, adam, found \"bfgs\"");
  EXPECT_EQ(load_error(path, {"training.patience=-1"}),
            "--set: training.patience: expected a non-negative integer, found \"-1\"");
  EXPECT_EQ(load_error(path, {"model.layers=[1, 2"}),
            "--set: model.layers: cannot read \"[1, 2\" as a YAML value: end of sequence flow not "
            "found");
  // The later of two overrides of one key wins.
  EXPECT_EQ(load_config(path, {"model.neurons=3", "model.neurons=4"}).model.neurons, 4);
}

// dump_config writes every key; reading the dump back gives the same values, and dumping that
// gives the same text.
void expect_round_trip(const Config& config, const std::string& file) {
  const std::string text = dump_config(config);
  const std::string path = write_tmp(file, text);
  const Config back = load_config(path);
  expect_same_values(config, back);
  EXPECT_EQ(dump_config(back), text);
}

TEST(Dump, ShippedConfigsRoundTrip) {
  for (const char* file : {"poisson2d_seed.yaml", "poisson2d_seed_lm.yaml", "lshape.yaml",
                           "disk.yaml", "cube3d.yaml", "poisson2d.yaml", "peak.yaml",
                           "ball3d.yaml"}) {
    SCOPED_TRACE(file);
    expect_round_trip(load_config(shipped_config(file)), std::string("dump_") + file);
  }
}

TEST(Dump, MlpConfigWithLbfgsRoundTrips) {
  const Config shipped = load_config(shipped_config("poisson2d_seed_mlp.yaml"));
  expect_round_trip(shipped, "dump_poisson2d_seed_mlp.yaml");
  const Config c = load_config(shipped_config("poisson2d_seed_mlp.yaml"),
                               {"training.lbfgs.iterations=123", "training.lbfgs.history=4"});
  const std::string text = dump_config(c);
  EXPECT_NE(text.find("lbfgs:\n    iterations: 123\n    history: 4\n"), std::string::npos) << text;
  expect_round_trip(c, "dump_mlp_lbfgs.yaml");
}

TEST(Dump, AwkwardValuesRoundTrip) {
  const std::string path = write_tmp("awkward.yaml", kProblem);
  const Config c = load_config(
      path, {"name='null'", "model.type=mlp", "model.layers=[3, 7]", "model.activation=sigmoid",
             "training.adam.learning_rate=0.1", "training.adam.decay=0.3",
             "training.penalty=3.0000000000000004", "training.tolerance=1e-300",
             "training.seed=12345678901234567890", "problem.exact='-x: y'",
             "problem.boundary[0].value='#0'", "output.directory=out dir/\"q\"",
             "compute.precision=float", "training.max_cycles=9000000000"});
  EXPECT_EQ(c.name, "null");
  EXPECT_EQ(c.training.method, "adam");
  EXPECT_EQ(c.training.penalty, 3.0000000000000004);
  EXPECT_EQ(c.training.tolerance, 1e-300);
  EXPECT_EQ(c.training.max_cycles, 9000000000L);
  EXPECT_EQ(c.problem.exact->text, "-x: y");
  EXPECT_EQ(c.problem.boundary[0].value.text, "#0");
  EXPECT_EQ(c.output.directory, "out dir/\"q\"");
  expect_round_trip(c, "dump_awkward.yaml");

  const Config polygon = load_config(write_tmp(
      "triangle.yaml",
      "problem:\n"
      "  domain: {type: polygon, vertices: [[0, 0], [0.1, 0], [0, 0.30000000000000004]]}\n"
      "  equation: {f: \"1\"}\n"
      "  boundary:\n"
      "    - {type: dirichlet, value: \"0\", where: \"y < 1e-12\"}\n"
      "    - {type: dirichlet, value: \"1\"}\n"));
  ASSERT_EQ(polygon.problem.boundary.size(), 2u);
  EXPECT_EQ(polygon.problem.domain.vertices[2][1], 0.30000000000000004);
  expect_round_trip(polygon, "dump_triangle.yaml");
}

TEST(Dump, WritesEveryKey) {
  const std::string text = dump_config(load_config(shipped_config("poisson2d_seed_lm.yaml")));
  for (const char* key : {"name:",
                          "domain:",
                          "equation:",
                          "boundary:",
                          "where:",
                          "exact:",
                          "neurons:",
                          "init:",
                          "centres:",
                          "width:",
                          "layers:",
                          "activation:",
                          "method:",
                          "points:",
                          "interior:",
                          "resample_every:",
                          "penalty:",
                          "max_cycles:",
                          "tolerance:",
                          "time_limit:",
                          "patience:",
                          "gd:",
                          "steps:",
                          "learning_rate:",
                          "cg:",
                          "iterations:",
                          "lm:",
                          "damping:",
                          "adam:",
                          "decay:",
                          "seed:",
                          "compute:",
                          "backend:",
                          "precision:",
                          "output:",
                          "directory:",
                          "resolution:",
                          "snapshot_every:",
                          "report_every:"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key << " missing from\n" << text;
  }
  EXPECT_NE(text.find("tolerance: 1e-10"), std::string::npos) << text;
  EXPECT_NE(text.find("directory: \"output/poisson2d_seed_lm\""), std::string::npos) << text;
}

}  // namespace
}  // namespace rbfpde
