// Helpers shared by the config tests: temp files under RBFPDE_TEST_TMP, the shipped configs, and
// value equality of two Configs (locations differ between a file and its dump, values must not).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "solver/config/config.hpp"

namespace rbfpde::testing {

inline std::string tmp_dir() {
  std::filesystem::create_directories(RBFPDE_TEST_TMP);
  return RBFPDE_TEST_TMP;
}

// Writes `text` to RBFPDE_TEST_TMP/<name> and returns the path.
inline std::string write_tmp(const std::string& name, const std::string& text) {
  const std::string path = tmp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  EXPECT_TRUE(out) << "cannot write " << path;
  return path;
}

inline std::string shipped_config(const std::string& file) {
  return std::string(RBFPDE_SOURCE_DIR) + "/configs/" + file;
}

// The what() of the InputError that load_config throws, or "" (and a failure) when none.
inline std::string load_error(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    load_config(path, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << path;
  return "";
}

inline void expect_same_expr(const ExprSpec& a, const ExprSpec& b) {
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.key, b.key);
}

// Every value of the two configs, not the file names and positions they came from.
inline void expect_same_values(const Config& a, const Config& b) {
  EXPECT_EQ(a.name, b.name);
  const ProblemSpec& p = a.problem;
  const ProblemSpec& q = b.problem;
  EXPECT_EQ(p.dim, q.dim);
  EXPECT_EQ(p.domain.type, q.domain.type);
  EXPECT_EQ(p.domain.min, q.domain.min);
  EXPECT_EQ(p.domain.max, q.domain.max);
  EXPECT_EQ(p.domain.centre, q.domain.centre);
  EXPECT_EQ(p.domain.radius, q.domain.radius);
  EXPECT_EQ(p.domain.vertices, q.domain.vertices);
  EXPECT_EQ(p.domain.key, q.domain.key);
  EXPECT_EQ(p.equation, q.equation);
  expect_same_expr(p.f, q.f);
  for (auto member : {&ProblemSpec::a, &ProblemSpec::c, &ProblemSpec::k, &ProblemSpec::diffusivity,
                      &ProblemSpec::initial}) {
    ASSERT_EQ((p.*member).has_value(), (q.*member).has_value());
    if ((p.*member).has_value()) expect_same_expr(*(p.*member), *(q.*member));
  }
  ASSERT_EQ(p.b.size(), q.b.size());
  for (std::size_t i = 0; i < p.b.size(); ++i) expect_same_expr(p.b[i], q.b[i]);
  ASSERT_EQ(p.time.has_value(), q.time.has_value());
  if (p.time) {
    EXPECT_EQ(p.time->start, q.time->start);
    EXPECT_EQ(p.time->end, q.time->end);
  }
  ASSERT_EQ(p.boundary.size(), q.boundary.size());
  for (std::size_t i = 0; i < p.boundary.size(); ++i) {
    EXPECT_EQ(p.boundary[i].type, q.boundary[i].type);
    expect_same_expr(p.boundary[i].value, q.boundary[i].value);
    expect_same_expr(p.boundary[i].where, q.boundary[i].where);
    EXPECT_EQ(p.boundary[i].alpha.text, q.boundary[i].alpha.text);
    EXPECT_EQ(p.boundary[i].beta.text, q.boundary[i].beta.text);
  }
  ASSERT_EQ(p.exact.has_value(), q.exact.has_value());
  if (p.exact) expect_same_expr(*p.exact, *q.exact);

  EXPECT_EQ(a.model.type, b.model.type);
  EXPECT_EQ(a.model.neurons, b.model.neurons);
  EXPECT_EQ(a.model.init_centres, b.model.init_centres);
  EXPECT_EQ(a.model.init_width, b.model.init_width);
  EXPECT_EQ(a.model.init_width_auto, b.model.init_width_auto);
  EXPECT_EQ(a.model.layers, b.model.layers);
  EXPECT_EQ(a.model.activation, b.model.activation);

  const TrainingConfig& s = a.training;
  const TrainingConfig& t = b.training;
  EXPECT_EQ(s.method, t.method);
  EXPECT_EQ(s.points_interior, t.points_interior);
  EXPECT_EQ(s.points_boundary, t.points_boundary);
  EXPECT_EQ(s.resample_every, t.resample_every);
  EXPECT_EQ(s.penalty, t.penalty);
  EXPECT_EQ(s.max_cycles, t.max_cycles);
  EXPECT_EQ(s.tolerance, t.tolerance);
  EXPECT_EQ(s.time_limit, t.time_limit);
  EXPECT_EQ(s.patience, t.patience);
  EXPECT_EQ(s.restarts, t.restarts);
  EXPECT_EQ(s.gd_steps, t.gd_steps);
  EXPECT_EQ(s.gd_learning_rate, t.gd_learning_rate);
  EXPECT_EQ(s.cg_iterations, t.cg_iterations);
  EXPECT_EQ(s.cg_tolerance, t.cg_tolerance);
  EXPECT_EQ(s.lm_damping, t.lm_damping);
  EXPECT_EQ(s.lm_update, t.lm_update);
  EXPECT_EQ(s.trial_weights, t.trial_weights);
  EXPECT_EQ(s.adam_learning_rate, t.adam_learning_rate);
  EXPECT_EQ(s.adam_decay, t.adam_decay);
  EXPECT_EQ(s.lbfgs_iterations, t.lbfgs_iterations);
  EXPECT_EQ(s.lbfgs_history, t.lbfgs_history);
  EXPECT_EQ(s.seed, t.seed);

  EXPECT_EQ(a.compute.backend, b.compute.backend);
  EXPECT_EQ(a.compute.precision, b.compute.precision);
  EXPECT_EQ(a.output.directory, b.output.directory);
  EXPECT_EQ(a.output.resolution, b.output.resolution);
  EXPECT_EQ(a.output.snapshot_every, b.output.snapshot_every);
  EXPECT_EQ(a.output.report_every, b.output.report_every);
}

// The smallest valid problem section (lines 1-5 of every snippet that uses it).
inline const char* const kProblem =
    "problem:\n"
    "  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
    "  equation: {f: \"1\"}\n"
    "  boundary:\n"
    "    - {type: dirichlet, value: \"0\"}\n";

}  // namespace rbfpde::testing
