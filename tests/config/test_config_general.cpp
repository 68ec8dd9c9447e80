// The equation, boundary, time and initial keys beyond Poisson/Dirichlet: what they read into,
// that the resolved config reads back the same, and the exact one-line errors of bad input.
#include <gtest/gtest.h>

#include <string>

#include "tests/config/config_test_util.hpp"

namespace rbfpde {
namespace {

using testing::expect_same_values;
using testing::load_error;
using testing::write_tmp;

const char* const kGeneral =
    "problem:\n"
    "  domain: {type: rectangle, min: [0, 0], max: [2, 1]}\n"
    "  equation:\n"
    "    type: linear\n"
    "    a: \"1 + x\"\n"
    "    b: [\"y\", \"0\"]\n"
    "    c: \"-2\"\n"
    "    f: \"x*y\"\n"
    "  boundary:\n"
    "    - {type: neumann, value: \"1\", where: \"x > 2 - 1e-9\"}\n"
    "    - {type: robin, alpha: \"2\", value: \"y\", where: \"y < 1e-9\"}\n"
    "    - {type: dirichlet, value: \"0\"}\n";

TEST(ConfigGeneral, ReadsLinearEquationAndMixedConditions) {
  const std::string path = write_tmp("general.yaml", kGeneral);
  const Config c = load_config(path);
  EXPECT_EQ(c.problem.equation, "linear");
  EXPECT_EQ(c.problem.dim, 2);
  ASSERT_TRUE(c.problem.a && c.problem.c);
  EXPECT_EQ(c.problem.a->text, "1 + x");
  EXPECT_EQ(c.problem.a->key, "problem.equation.a");
  ASSERT_EQ(c.problem.b.size(), 2u);
  EXPECT_EQ(c.problem.b[0].text, "y");
  EXPECT_EQ(c.problem.b[1].key, "problem.equation.b[1]");
  EXPECT_EQ(c.problem.c->text, "-2");
  ASSERT_EQ(c.problem.boundary.size(), 3u);
  EXPECT_EQ(c.problem.boundary[0].type, "neumann");
  EXPECT_EQ(c.problem.boundary[1].type, "robin");
  EXPECT_EQ(c.problem.boundary[1].alpha.text, "2");
  EXPECT_EQ(c.problem.boundary[1].beta.text, "1");  // β defaults to 1
  EXPECT_TRUE(c.problem.boundary[0].alpha.text.empty());
  // The defaults for variable projection follow the dimension: those of a 2D Poisson problem.
  const Config plain = load_config(write_tmp("general_plain.yaml", testing::kProblem));
  EXPECT_EQ(c.model.neurons, plain.model.neurons);
  EXPECT_EQ(c.training.points_interior, plain.training.points_interior);
  const Problem p = Problem::build(c.problem);
  EXPECT_FALSE(p.poisson_dirichlet());
  // The resolved config reads back to the same values.
  const Config again = load_config_text(dump_config(c), "dump.yaml");
  expect_same_values(c, again);
}

TEST(ConfigGeneral, ReadsHeatWithTimeAsASpaceTimeProblem) {
  const std::string path = write_tmp("heat.yaml",
                                     "problem:\n"
                                     "  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
                                     "  time: {start: 0, end: 0.5}\n"
                                     "  equation: {type: heat, diffusivity: \"0.1\", f: \"0\"}\n"
                                     "  initial: \"sin(pi*x)*sin(pi*y)\"\n"
                                     "  boundary:\n"
                                     "    - {type: dirichlet, value: \"0\"}\n"
                                     "  exact: \"exp(-0.2*pi^2*t)*sin(pi*x)*sin(pi*y)\"\n");
  const Config c = load_config(path);
  EXPECT_EQ(c.problem.dim, 3);
  EXPECT_EQ(c.problem.space_dim(), 2);
  ASSERT_TRUE(c.problem.time && c.problem.initial && c.problem.diffusivity);
  EXPECT_EQ(c.problem.time->end, 0.5);
  // Space-time is 3D for the model's and training's defaults (those of a box); the grid is the
  // square's 41² at 21 times, the box's a 41³ lattice.
  const Config box = load_config(write_tmp("heat_box.yaml",
                                           "problem:\n"
                                           "  domain: {type: box, min: [0, 0, 0], max: [1, 1, 1]}\n"
                                           "  equation: {f: \"1\"}\n"
                                           "  boundary:\n"
                                           "    - {type: dirichlet, value: \"0\"}\n"));
  EXPECT_EQ(c.model.neurons, box.model.neurons);
  EXPECT_EQ(c.training.points_interior, box.training.points_interior);
  EXPECT_EQ(c.training.points_boundary, box.training.points_boundary);
  EXPECT_NE(c.model.neurons,
            load_config(write_tmp("heat_plain.yaml", testing::kProblem)).model.neurons);
  EXPECT_EQ(c.output.resolution, (std::vector<int>{41, 41, 21}));
  EXPECT_EQ(box.output.resolution, (std::vector<int>{41, 41, 41}));
  const Problem p = Problem::build(c.problem);
  EXPECT_TRUE(p.has_time());
  const Config again = load_config_text(dump_config(c), "dump.yaml");
  expect_same_values(c, again);
}

TEST(ConfigGeneral, HelmholtzReadsK) {
  const std::string path =
      write_tmp("helmholtz.yaml",
                "problem:\n"
                "  domain: {type: disk, centre: [0, 0], radius: 1}\n"
                "  equation: {type: helmholtz, k: \"4\", f: \"0\"}\n"
                "  boundary:\n"
                "    - {type: robin, alpha: \"1\", beta: \"0.5\", value: \"1\"}\n");
  const Config c = load_config(path);
  ASSERT_TRUE(c.problem.k);
  EXPECT_EQ(c.problem.k->text, "4");
  EXPECT_EQ(c.problem.boundary[0].beta.text, "0.5");
  const Config again = load_config_text(dump_config(c), "dump.yaml");
  expect_same_values(c, again);
}

struct Bad {
  const char* name;
  std::string yaml;
  const char* expected;  // what() after "<path>:"
};

std::string problem(const std::string& equation, const std::string& boundary,
                    const std::string& extra = "") {
  return "problem:\n"
         "  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
         "  equation: " +
         equation +
         "\n"
         "  boundary:\n"
         "    - " +
         boundary + "\n" + extra;
}

class BadGeneralConfig : public ::testing::TestWithParam<Bad> {};

TEST_P(BadGeneralConfig, FailsWithExactMessage) {
  const Bad& bad = GetParam();
  const std::string path = write_tmp(std::string("bad_general_") + bad.name + ".yaml", bad.yaml);
  EXPECT_EQ(load_error(path), path + ":" + bad.expected);
}

const char* const kDirichlet = "{type: dirichlet, value: \"0\"}";

const Bad kBad[] = {
    {"robin_without_alpha", problem("{f: \"1\"}", "{type: robin, beta: \"1\", value: \"0\"}"),
     "5:7: problem.boundary[0]: missing required key \"alpha\""},
    {"neumann_without_value", problem("{f: \"1\"}", "{type: neumann, where: \"x < 0.5\"}"),
     "5:7: problem.boundary[0]: missing required key \"value\""},
    {"robin_without_value", problem("{f: \"1\"}", "{type: robin, alpha: \"1\"}"),
     "5:7: problem.boundary[0]: missing required key \"value\""},
    {"alpha_on_dirichlet", problem("{f: \"1\"}", "{type: dirichlet, alpha: \"1\", value: \"0\"}"),
     "5:25: problem.boundary[0].alpha: unknown key \"alpha\""},
    {"unknown_boundary_type", problem("{f: \"1\"}", "{type: nuemann, value: \"0\"}"),
     "5:14: problem.boundary[0].type: expected one of dirichlet, neumann, robin, found "
     "\"nuemann\""},
    {"unknown_equation_type", problem("{type: wave, f: \"1\"}", kDirichlet),
     "3:20: problem.equation.type: expected one of poisson, helmholtz, heat, linear, found "
     "\"wave\""},
    {"heat_without_time", problem("{type: heat, diffusivity: \"1\", f: \"1\"}", kDirichlet),
     "3:20: problem.equation.type: expected problem.time ({start, end}) for the heat equation, "
     "found no time"},
    {"b_wrong_count", problem("{type: linear, b: [\"1\"], f: \"1\"}", kDirichlet),
     "3:31: problem.equation.b: expected 2 expressions (one per coordinate), found 1"},
    {"b_wrong_count_with_time",
     problem("{type: linear, b: [\"1\", \"0\"], f: \"1\"}", kDirichlet,
             "  time: {start: 0, end: 1}\n  initial: \"0\"\n"),
     "3:31: problem.equation.b: expected 3 expressions (one per coordinate, t last), found 2"},
    {"k_on_poisson", problem("{type: poisson, k: \"1\", f: \"1\"}", kDirichlet),
     "3:29: problem.equation.k: unknown key \"k\" (did you mean \"f\"?)"},
    {"helmholtz_without_k", problem("{type: helmholtz, f: \"1\"}", kDirichlet),
     "3:13: problem.equation: missing required key \"k\""},
    {"time_start_not_before_end",
     problem("{f: \"1\"}", kDirichlet, "  time: {start: 1, end: 1}\n  initial: \"0\"\n"),
     "6:25: problem.time.end: expected a value greater than start = 1, found \"1\""},
    {"time_without_initial", problem("{f: \"1\"}", kDirichlet, "  time: {start: 0, end: 1}\n"),
     "6:9: problem.time: expected problem.initial (u at t = start) with problem.time"},
    {"initial_without_time", problem("{f: \"1\"}", kDirichlet, "  initial: \"0\"\n"),
     "6:12: problem.initial: expected no initial condition without problem.time"},
    {"time_not_a_map", problem("{f: \"1\"}", kDirichlet, "  time: 3\n  initial: \"0\"\n"),
     "6:9: problem.time: expected a map, found \"3\""},
};

INSTANTIATE_TEST_SUITE_P(Errors, BadGeneralConfig, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<Bad>& info) { return info.param.name; });

// Refused when the Problem is built (the CLI builds it before writing anything).
TEST(ConfigGeneral, OnlyNeumannIsRefusedNamingTheBoundary) {
  const std::string path =
      write_tmp("only_neumann.yaml", problem("{f: \"0\"}", "{type: neumann, value: \"0\"}"));
  const Config c = load_config(path);
  try {
    Problem::build(c.problem);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":5:5: problem.boundary: expected a dirichlet entry, a robin entry with "
                  "alpha ≠ 0, or a reaction term c ≠ 0: with only Neumann conditions the "
                  "solution is fixed only up to an added constant");
  }
}

}  // namespace
}  // namespace rbfpde

namespace rbfpde {
namespace {

// u, ∇u and Δₛu of an expression by central differences.
void fd_values(const Expression& u, const std::vector<double>& points, int dim, int space_dim,
               std::vector<double>& uv, std::vector<double>& grad, std::vector<double>& lap) {
  const double h = 1e-4;
  const std::size_t n = points.size() / std::size_t(dim);
  uv.resize(n), grad.resize(n * dim), lap.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &points[i * dim];
    uv[i] = u(x);
    lap[i] = 0;
    for (int k = 0; k < dim; ++k) {
      double plus[4], minus[4];
      for (int j = 0; j < dim; ++j) plus[j] = minus[j] = x[j];
      plus[k] += h;
      minus[k] -= h;
      const double up = u(plus), um = u(minus);
      grad[i * dim + k] = (up - um) / (2 * h);
      if (k < space_dim) lap[i] += (up - 2 * uv[i] + um) / (h * h);
    }
  }
}

// The shipped configs beyond Poisson/Dirichlet state their problems correctly: the exact
// solution satisfies every interior and boundary row (derivatives by differences, h = 1e-4).
TEST(ShippedGeneralConfigs, ExactSolutionsSatisfyEveryRow) {
  for (const char* file :
       {"helmholtz_robin.yaml", "mixed_neumann.yaml", "linear_variable.yaml", "heat2d.yaml"}) {
    SCOPED_TRACE(file);
    const Config config = load_config(testing::shipped_config(file));
    const Problem problem = Problem::build(config.problem);
    EXPECT_FALSE(problem.poisson_dirichlet());
    ASSERT_TRUE(problem.has_exact());
    Rng rng(13);
    CollocationBatch batch;
    problem.sample(rng, 200, 400, batch);
    const int dim = problem.dim();
    std::vector<double> ui, gi, li, ub, gb, lb, e, r;
    fd_values(problem.exact(), batch.interior, dim, problem.space_dim(), ui, gi, li);
    fd_values(problem.exact(), batch.boundary, dim, problem.space_dim(), ub, gb, lb);
    batch_residuals(batch, ui, gi, li, ub, gb, e, r);
    double f_scale = 1;
    for (double f : batch.f) f_scale = std::max(f_scale, std::abs(f));
    for (double v : e) EXPECT_NEAR(v, 0, 1e-5 * f_scale);
    for (double v : r) EXPECT_NEAR(v, 0, 1e-7);
  }
}

}  // namespace
}  // namespace rbfpde
