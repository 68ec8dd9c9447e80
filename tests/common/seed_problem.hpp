// The seed problem (configs/poisson2d_seed.yaml) as a ProblemSpec, for tests and benchmarks that
// need it without a config file: Ω = [0,1]², Δu = sin(πx)sin(πy), u = 0 on ∂Ω,
// exact u = −sin(πx)sin(πy)/(2π²).
#pragma once

#include "problems/problem.hpp"

namespace rbfpde::test_inputs {

inline ProblemSpec seed_problem_spec() {
  ProblemSpec spec;
  spec.dim = 2;
  spec.domain.type = "rectangle";
  spec.domain.min = {0, 0};
  spec.domain.max = {1, 1};
  spec.f = {"sin(pi*x)*sin(pi*y)", "problem.equation.f", {}};
  BoundarySpec bc;
  bc.value = {"0", "problem.boundary[0].value", {}};
  bc.where = {"1", "problem.boundary[0].where", {}};
  spec.boundary.push_back(bc);
  spec.exact = ExprSpec{"-sin(pi*x)*sin(pi*y)/(2*pi^2)", "problem.exact", {}};
  return spec;
}

}  // namespace rbfpde::test_inputs
