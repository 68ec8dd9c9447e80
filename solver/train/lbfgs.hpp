// L-BFGS (Nocedal & Wright, Alg. 7.4/7.5) as a generic minimiser over std::vector<double>, so
// that its maths can be tested on known functions apart from any network. The MLP trainer drives
// it one iteration at a time (docs/mathematics.md: "L-BFGS optional"), after Adam, on one fixed batch:
// L-BFGS needs a smooth deterministic objective, which a batch redrawn every step is not.
//
// One iteration: the two-loop recursion over the last `history` pairs (s, y) with the initial
// Hessian H0 = γI, γ = sᵀy / yᵀy of the newest pair, gives the direction d; a backtracking
// Armijo search tries the steps 1, 1/2, 1/4, ... (at most max_halvings halvings) until
// f(x + αd) ≤ f(x) + c1 α gᵀd. A pair whose curvature sᵀy ≤ 1e-12 |s| |y| is not stored (it
// would make the inverse-Hessian approximation indefinite). When the search finds no decrease
// along the L-BFGS direction, the history is dropped and the search is retried along −g with a
// unit-length first step; when that fails too, the iteration reports Status::stalled.
//
// Its whole state between iterations is an LbfgsState, so that a checkpoint can carry it and a
// resumed minimiser takes the same steps as one that never stopped.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace rbfpde {

// f(x, g): the objective at x; fills g (resized by the callee or pre-sized) with ∇f(x). A
// non-finite return marks x as outside the usable region: the line search steps back from it.
using LbfgsObjective = std::function<double(const std::vector<double>& x, std::vector<double>& g)>;

struct LbfgsOptions {
  int history = 10;               // pairs (s, y) kept
  double c1 = 1e-4;               // Armijo's sufficient-decrease constant
  int max_halvings = 20;          // backtracking halvings before a search gives up
  double curvature_skip = 1e-12;  // a pair with sᵀy ≤ this × |s| |y| is skipped
};

// What one iteration hands to the next: the iterate, f and ∇f there, the curvature pairs, and the
// counters.
struct LbfgsState {
  std::vector<double> x, g;
  double f = 0;
  std::deque<std::vector<double>> s, y;  // oldest first
  std::deque<double> rho;                // 1 / sᵀy per pair
  long evaluations = 0;
  long resets = 0;
};

class Lbfgs {
 public:
  enum class Status {
    ok,          // a step was taken; the last evaluation of f was at the new x()
    stalled,     // no decrease found, not even along −g; x() is unchanged
    non_finite,  // f or ∇f at the starting point is not finite; nothing can be done
  };

  // Evaluates f at x0 (one call).
  Lbfgs(LbfgsObjective f, std::vector<double> x0, const LbfgsOptions& options = {});
  // Continues from a state saved by state(), without evaluating f.
  Lbfgs(LbfgsObjective f, LbfgsState state, const LbfgsOptions& options = {});

  // One iteration (one or more evaluations of f). After a status other than ok the last
  // evaluation may have been at a rejected trial point, not at x().
  Status iterate();

  const std::vector<double>& x() const { return st_.x; }
  double loss() const { return st_.f; }
  const std::vector<double>& gradient() const { return st_.g; }
  double gradient_norm() const;  // Euclidean
  long evaluations() const { return st_.evaluations; }
  std::size_t pairs() const { return st_.s.size(); }
  // Times the history was dropped because the L-BFGS direction gave no decrease.
  long resets() const { return st_.resets; }
  // The state after the last iteration (what a checkpoint stores).
  const LbfgsState& state() const { return st_; }

 private:
  double evaluate(const std::vector<double>& x, std::vector<double>& g);
  void direction(std::vector<double>& d) const;  // −H∇f by the two-loop recursion
  // Backtracking Armijo search along d from x with first step alpha; on success moves x, f, g
  // and stores the pair.
  bool search(const std::vector<double>& d, double alpha);

  LbfgsObjective objective_;
  LbfgsOptions options_;
  LbfgsState st_;
  // Scratch for trial points, kept to avoid reallocating 10⁴-long vectors every evaluation.
  std::vector<double> trial_x_, trial_g_;
  std::vector<double> pair_s_, pair_y_;  // the next (s, y) pair, formed before it is kept
};

struct LbfgsResult {
  std::vector<double> x;
  double loss = 0;
  double gradient_norm = 0;
  long iterations = 0;
  long evaluations = 0;
  std::string stop;  // gradient | max_iterations | stalled | non_finite
};

// Iterates until |∇f| ≤ gradient_tolerance, max_iterations iterations, or a stall.
LbfgsResult lbfgs_minimize(const LbfgsObjective& f, std::vector<double> x0, long max_iterations,
                           double gradient_tolerance, const LbfgsOptions& options = {});

}  // namespace rbfpde
