// Bad configs: each snippet must fail with exactly the one line a user would see,
// "file:line:column: key: expected ..., found ...", pointing at the offending node.
#include <gtest/gtest.h>

#include <string>

#include "tests/config/config_test_util.hpp"

namespace rbfpde {
namespace {

using testing::kProblem;
using testing::load_error;
using testing::tmp_dir;
using testing::write_tmp;

struct BadConfig {
  const char* name;
  std::string yaml;
  const char* expected;  // what() after "<path>:"
};

std::string with_problem(const std::string& tail) { return kProblem + tail; }

// A problem section with one line replaced; lines 1-5 as in kProblem.
std::string problem_with(const std::string& domain, const std::string& equation,
                         const std::string& boundary) {
  return "problem:\n  domain: " + domain + "\n  equation: " + equation + "\n  boundary:\n    - " +
         boundary + "\n";
}

const char* const kRect = "{type: rectangle, min: [0, 0], max: [1, 1]}";
const char* const kEquation = "{f: \"1\"}";
const char* const kDirichlet = "{type: dirichlet, value: \"0\"}";

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, FailsWithExactMessage) {
  const BadConfig& bad = GetParam();
  const std::string path = write_tmp(std::string("bad_") + bad.name + ".yaml", bad.yaml);
  EXPECT_EQ(load_error(path), path + ":" + bad.expected);
}

const BadConfig kBadConfigs[] = {
    {"unknown_key_suggestion", with_problem("model:\n  nuerons: 64\n"),
     "7:3: model.nuerons: unknown key \"nuerons\" (did you mean \"neurons\"?)"},
    {"unknown_key_no_suggestion", with_problem("training:\n  banana: 1\n"),
     "7:3: training.banana: unknown key \"banana\""},
    {"unknown_top_level_key", "nmae: x\n" + std::string(kProblem),
     "1:1: nmae: unknown key \"nmae\" (did you mean \"name\"?)"},
    {"unknown_nested_key", with_problem("training:\n  points: {interior: 10, bondary: 5}\n"),
     "7:26: training.points.bondary: unknown key \"bondary\" (did you mean \"boundary\"?)"},
    {"unknown_domain_key_for_type",
     problem_with("{type: disk, center: [0, 0], radius: 1}", kEquation, kDirichlet),
     "2:24: problem.domain.center: unknown key \"center\" (did you mean \"centre\"?)"},
    {"duplicate_key", with_problem("model:\n  neurons: 1\n  neurons: 2\n"),
     "8:3: model.neurons: duplicate key \"neurons\""},
    {"string_for_number", with_problem("training:\n  penalty: lots\n"),
     "7:12: training.penalty: expected a positive number, found \"lots\""},
    {"quoted_number", with_problem("model:\n  neurons: \"64\"\n"),
     "7:12: model.neurons: expected a positive integer, found the string \"64\""},
    {"map_for_sequence", with_problem("model:\n  type: mlp\n  layers: {a: 1}\n"),
     "8:11: model.layers: expected a sequence of layer widths, found a map"},
    {"sequence_for_expression", problem_with(kRect, "{f: [1, 2]}", kDirichlet),
     "3:17: problem.equation.f: expected an expression, found a sequence"},
    {"scalar_for_section", with_problem("compute: fast\n"),
     "6:10: compute: expected a map, found \"fast\""},
    {"empty_value", with_problem("training:\n  penalty:\n"),
     "7:3: training.penalty: expected a positive number, found an empty value"},
    {"missing_f", problem_with(kRect, "{type: poisson}", kDirichlet),
     "3:13: problem.equation: missing required key \"f\""},
    {"missing_problem", "name: x\n", "1:1: missing required key \"problem\""},
    {"missing_boundary_value", problem_with(kRect, kEquation, "{type: dirichlet}"),
     "5:7: problem.boundary[0]: missing required key \"value\""},
    {"missing_domain_type", problem_with("{min: [0, 0], max: [1, 1]}", kEquation, kDirichlet),
     "2:11: problem.domain: missing required key \"type\""},
    {"empty_boundary",
     "problem:\n  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n  equation: {f: 1}\n"
     "  boundary: []\n",
     "4:13: problem.boundary: expected at least one boundary condition, found an empty sequence"},
    {"boundary_not_sequence",
     "problem:\n  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n  equation: {f: 1}\n"
     "  boundary: {type: dirichlet, value: 0}\n",
     "4:13: problem.boundary: expected a sequence of boundary conditions, found a map"},
    {"negative_integer", with_problem("model:\n  neurons: -5\n"),
     "7:12: model.neurons: expected a positive integer, found \"-5\""},
    {"zero_points", with_problem("training:\n  points: {interior: 0}\n"),
     "7:22: training.points.interior: expected a positive integer, found \"0\""},
    {"integer_overflow", with_problem("model:\n  neurons: 99999999999\n"),
     "7:12: model.neurons: expected a positive integer of at most 2147483647, found "
     "\"99999999999\""},
    {"double_for_integer", with_problem("training:\n  max_cycles: 64.5\n"),
     "7:15: training.max_cycles: expected a positive integer, found \"64.5\""},
    {"exponent_for_integer", with_problem("training:\n  cg: {iterations: 1e3}\n"),
     "7:20: training.cg.iterations: expected a positive integer, found \"1e3\""},
    {"zero_width", with_problem("model:\n  init: {width: 0}\n"),
     "7:17: model.init.width: expected a positive number or auto, found \"0\""},
    {"negative_tolerance", with_problem("training:\n  tolerance: -1e-3\n"),
     "7:14: training.tolerance: expected a non-negative number, found \"-1e-3\""},
    {"infinite_penalty", with_problem("training:\n  penalty: .inf\n"),
     "7:12: training.penalty: expected a positive number, found \".inf\""},
    {"decay_above_one", with_problem("training:\n  adam: {decay: 1.5}\n"),
     "7:17: training.adam.decay: expected a number in (0, 1], found \"1.5\""},
    {"negative_lbfgs_iterations",
     with_problem("model:\n  type: mlp\ntraining:\n  lbfgs: {iterations: -1}\n"),
     "9:23: training.lbfgs.iterations: expected a non-negative integer, found \"-1\""},
    {"zero_lbfgs_history", with_problem("model:\n  type: mlp\ntraining:\n  lbfgs: {history: 0}\n"),
     "9:20: training.lbfgs.history: expected a positive integer, found \"0\""},
    {"lbfgs_for_rbf", with_problem("training:\n  lbfgs: {iterations: 300}\n"),
     "7:23: training.lbfgs.iterations: expected 0 for model.type rbf (L-BFGS refines the MLP "
     "only), found \"300\""},
    {"lbfgs_unknown_key", with_problem("model:\n  type: mlp\ntraining:\n  lbfgs: {iteration: 5}\n"),
     "9:11: training.lbfgs.iteration: unknown key \"iteration\" (did you mean \"iterations\"?)"},
    {"negative_seed", with_problem("training:\n  seed: -1\n"),
     "7:9: training.seed: expected a non-negative integer, found \"-1\""},
    {"resolution_too_small", with_problem("output:\n  resolution: [10, 1]\n"),
     "7:20: output.resolution[1]: expected an integer of at least 2, found \"1\""},
    {"resolution_wrong_length", with_problem("output:\n  resolution: [10, 10, 10]\n"),
     "7:15: output.resolution: expected 2 integers (the domain is 2D), found 3"},
    {"bad_enum", with_problem("model:\n  type: rbg\n"),
     "7:9: model.type: expected one of rbf, mlp, found \"rbg\""},
    {"bad_activation", with_problem("model:\n  type: mlp\n  activation: relu\n"),
     "8:15: model.activation: expected one of tanh, sin, sigmoid, found \"relu\""},
    {"bad_boundary_type", problem_with(kRect, kEquation, "{type: periodic, value: \"0\"}"),
     "5:14: problem.boundary[0].type: expected one of dirichlet, neumann, robin, found "
     "\"periodic\""},
    {"bad_domain_type", problem_with("{type: square}", kEquation, kDirichlet),
     "2:18: problem.domain.type: expected one of rectangle, box, disk, ball, polygon, union, "
     "difference, intersection, points, found \"square\""},
    {"rectangle_with_3d_min",
     problem_with("{type: rectangle, min: [0, 0, 0], max: [1, 1]}", kEquation, kDirichlet),
     "2:34: problem.domain.min: expected 2 numbers (a rectangle is 2D), found 3"},
    {"box_with_2d_max",
     problem_with("{type: box, min: [0, 0, 0], max: [1, 1]}", kEquation, kDirichlet),
     "2:44: problem.domain.max: expected 3 numbers (a box is 3D), found 2"},
    {"ball_with_2d_centre",
     problem_with("{type: ball, centre: [0, 0], radius: 1}", kEquation, kDirichlet),
     "2:32: problem.domain.centre: expected 3 numbers (a ball is 3D), found 2"},
    {"max_below_min",
     problem_with("{type: rectangle, min: [0, 0], max: [1, -2]}", kEquation, kDirichlet),
     "2:51: problem.domain.max[1]: expected a value greater than min[1] = 0, found \"-2\""},
    {"negative_radius",
     problem_with("{type: disk, centre: [0, 0], radius: -1}", kEquation, kDirichlet),
     "2:48: problem.domain.radius: expected a positive number, found \"-1\""},
    {"polygon_too_few_vertices",
     problem_with("{type: polygon, vertices: [[0, 0], [1, 0]]}", kEquation, kDirichlet),
     "2:37: problem.domain.vertices: expected at least 3 vertices, found 2"},
    {"polygon_vertex_not_pair",
     problem_with("{type: polygon, vertices: [[0, 0], [1, 0, 2], [0, 1]]}", kEquation, kDirichlet),
     "2:46: problem.domain.vertices[1]: expected an [x, y] pair, found a sequence of 3"},
    {"method_model_mismatch", with_problem("model:\n  type: mlp\ntraining:\n  method: gdcg\n"),
     "9:11: training.method: expected adam or lm for model.type mlp, found \"gdcg\""},
    {"adam_for_rbf", with_problem("training:\n  method: adam\n"),
     "7:11: training.method: expected varpro, lm or gdcg for model.type rbf, found \"adam\""},
    {"unknown_method", with_problem("training:\n  method: newton\n"),
     "7:11: training.method: expected one of varpro, gdcg, lm, adam, found \"newton\""},
    // 0 keeps one fixed batch, which Adam does not take.
    {"zero_resample_for_mlp",
     with_problem("model:\n  type: mlp\ntraining:\n  points: {resample_every: 0}\n"),
     "9:28: training.points.resample_every: expected a positive integer for method adam (0, one "
     "fixed batch, is for lm), found \"0\""},
    {"negative_resample", with_problem("training:\n  points: {resample_every: -1}\n"),
     "7:28: training.points.resample_every: expected a non-negative integer, found \"-1\""},
    {"negative_patience", with_problem("training:\n  patience: -1\n"),
     "7:13: training.patience: expected a non-negative integer, found \"-1\""},
    {"fractional_patience", with_problem("training:\n  patience: 2.5\n"),
     "7:13: training.patience: expected a non-negative integer, found \"2.5\""},
    {"negative_restarts", with_problem("training:\n  restarts: -1\n"),
     "7:13: training.restarts: expected a non-negative integer, found \"-1\""},
    {"fractional_restarts", with_problem("training:\n  restarts: 1.5\n"),
     "7:13: training.restarts: expected a non-negative integer, found \"1.5\""},
    {"bad_lm_update", with_problem("training:\n  lm: {update: trust}\n"),
     "7:16: training.lm.update: expected one of marquardt, bracket, nielsen, hybrid, found "
     "\"trust\""},
    {"bad_trial_weights", with_problem("training:\n  lm: {trial_weights: cholesky}\n"),
     "7:23: training.lm.trial_weights: expected one of auto, preconditioned, qr, found "
     "\"cholesky\""},
    {"bad_prepare_factor", with_problem("training:\n  lm: {prepare_factor: lookahead}\n"),
     "7:24: training.lm.prepare_factor: expected one of qr, trial, found \"lookahead\""},
    {"restarts_for_gdcg", with_problem("training:\n  method: gdcg\n  restarts: 2\n"),
     "8:13: training.restarts: expected 0 for method gdcg (restarts relocate the neurons of varpro "
     "only), found 2"},
    {"bad_name", "name: my run\n" + std::string(kProblem),
     "1:7: name: expected a name of letters, digits, '_', '-', '.', found \"my run\""},
    {"root_not_map", "- 1\n- 2\n",
     "1:1: expected a map of config keys (name, problem, model, ...), found a sequence"},
    {"empty_file", "# nothing here\n",
     "1:1: expected a map of config keys (name, problem, model, ...), found an empty value"},
    {"yaml_syntax_unclosed_flow", "problem:\n  domain: {type: rectangle, min: [0, 0\n",
     "3:1: invalid YAML: end of sequence flow not found"},
    {"yaml_syntax_bad_indent", "name: a\n  model: b\n", "2:8: invalid YAML: illegal map value"},
};

INSTANTIATE_TEST_SUITE_P(Table, BadConfigTest, ::testing::ValuesIn(kBadConfigs),
                         [](const ::testing::TestParamInfo<BadConfig>& info) {
                           return std::string(info.param.name);
                         });

TEST(BadConfigFiles, TableIsLargeEnough) {
  EXPECT_GE(sizeof kBadConfigs / sizeof kBadConfigs[0], 20u);
}

TEST(BadConfigFiles, MissingFile) {
  const std::string path = tmp_dir() + "/no_such_config.yaml";
  EXPECT_EQ(load_error(path), path + ": cannot read file: No such file or directory");
}

TEST(BadConfigFiles, DirectoryIsNotAFile) {
  const std::string path = tmp_dir();
  EXPECT_EQ(load_error(path), path + ": cannot read file: Is a directory");
}

TEST(BadConfigFiles, ErrorCarriesItsParts) {
  const std::string path = write_tmp("parts.yaml", with_problem("model:\n  neurons: 0\n"));
  try {
    load_config(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, 7);
    EXPECT_EQ(e.loc().column, 12);
    EXPECT_EQ(e.key(), "model.neurons");
    EXPECT_EQ(e.message(), "expected a positive integer, found \"0\"");
  }
}

}  // namespace
}  // namespace rbfpde
