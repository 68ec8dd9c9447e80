// CPU reference MLP backend: Eigen GEMMs over blocks of points, a column per point.
//
// Every layer works on one stacked matrix per block: for an interior block of nb points the
// columns are [h | ∂h/∂x_1 … ∂h/∂x_d | Δₛh] (nb each), for a boundary block [h], or
// [h | ∂h/∂x_1 … ∂h/∂x_d] when one of its points has β ≠ 0 (a flux in its condition), so that the
// forward pass is one GEMM P = W·X (+ b on the value columns) and the backward pass two,
// ∂I/∂W = P̄·Xᵀ and X̄ = Wᵀ·P̄, with fused elementwise loops between them.
//
// Rows (docs/mathematics.md, "The MLP"): e = a·Δₛu + b·∇u + c·u − f at interior points,
// r = α·u + β·∇u·n − p at boundary points. The output layer's adjoint is seeded per stream with
// the coefficient of that stream times the point's scaled residual: ē·(c, b_1 … b_d, a) and
// r̄·(α, β n_1 … β n_d). A Poisson/Dirichlet batch (CollocationBatch::poisson_dirichlet) seeds
// the Laplacian and value streams alone, as e = Δu − f and r = u − p, without the coefficients.
//
// Determinism: blocks have a fixed size (kBlockPoints), OpenMP hands whole blocks to threads
// (Eigen runs serially inside the parallel region), each block writes its own gradient, and the
// blocks' gradients and squared residuals are summed afterwards in block order: the numbers do
// not depend on the thread count.
//
// Napkin math per Adam step (P parameters, N interior and K boundary points, d dimensions): the
// forward GEMMs cost ≈ ((d + 2)·N + K)·P multiply-adds, the backward ones twice that; the seed
// MLP (4 × 50 tanh, P = 7851) on 176 + 48 points is ≈ 2.4e7 FLOPs forward, 7e7 in all.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include "kernels/comm.hpp"
#include "kernels/cpu/cpu_info.hpp"
#include "kernels/mlp_backend.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde {

namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;  // column = point
template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// Points per block: large enough that a block's GEMMs run at full speed, small enough that the
// seed problem's batch gives both cores work.
constexpr Eigen::Index kBlockPoints = 96;
// Below this many point-parameter products a pass runs on one thread.
constexpr double kParallelWork = 2e5;

// One block of points and everything its forward pass leaves for the backward pass.
template <class T>
struct Block {
  bool interior = true;
  int streams = 1;                    // 1 (value), d + 1 (value, ∇) or d + 2 (value, ∇, Δₛ)
  Eigen::Index start = 0, count = 0;  // into the batch's interior or boundary points
  std::vector<Matrix<T>> x;           // x[l]: input stack of layer l+1 (n_l × cols)
  std::vector<Matrix<T>> p;           // p[l]: pre-activation stack of layer l+1
  std::vector<Matrix<T>> d1, d2, d3;  // σ', σ'', σ''' of hidden layer l+1's values (n × count)
  Matrix<T> pbar, xbar;               // backward workspace
  Vector<T> grad;                     // this block's share of ∂I/∂θ
  double sum_squares = 0;             // Σe² or Σb² over the block
};

template <class T>
class CpuMlpBackend final : public MlpBackend<T> {
 public:
  explicit CpuMlpBackend(const MlpOptions& options)
      : dim_(options.dim),
        sizes_(mlp_layer_sizes(options.dim, options.layers)),
        activation_(parse_activation(options.activation)),
        penalty_(T(options.penalty)),
        lap_dims_(options.laplacian_dims > 0 ? options.laplacian_dims : options.dim),
        comm_(options.comm ? options.comm : serial_communicator()) {
    if (dim_ < 1) throw std::invalid_argument("the MLP backend needs a dimension ≥ 1");
    if (lap_dims_ > dim_)
      throw std::invalid_argument("the MLP's Laplacian cannot act on more coordinates (" +
                                  std::to_string(lap_dims_) + ") than it has (" +
                                  std::to_string(dim_) + ")");
    input_shift_ = Vector<T>::Zero(dim_);
    input_scale_ = Vector<T>::Ones(dim_);
    if (!options.input_min.empty() || !options.input_max.empty()) {
      if (int(options.input_min.size()) != dim_ || int(options.input_max.size()) != dim_)
        throw std::invalid_argument(
            "the MLP input map needs dim values in input_min and input_max");
      for (int j = 0; j < dim_; ++j) {
        const double len = options.input_max[j] - options.input_min[j];
        if (!(len > 0))
          throw std::invalid_argument("the MLP input map needs input_max > input_min");
        input_scale_[j] = T(2.0 / len);
        input_shift_[j] = T(-2.0 * options.input_min[j] / len - 1.0);
      }
    }
    for (int s : sizes_)
      if (s < 1) throw std::invalid_argument("MLP layer widths must be ≥ 1");
    std::size_t off = 0;
    for (std::size_t l = 1; l < sizes_.size(); ++l) {
      w_offset_.push_back(off);
      off += std::size_t(sizes_[l]) * sizes_[l - 1];
      b_offset_.push_back(off);
      off += sizes_[l];
    }
    theta_ = Vector<T>::Zero(Eigen::Index(off));
    grad_ = adam_m_ = adam_v_ = theta_;
  }

  std::string name() const override { return "cpu"; }
  std::string device_name() const override { return cpu_model_name(); }

  void set_parameters(const std::vector<T>& flat) override {
    if (Eigen::Index(flat.size()) != theta_.size())
      throw std::invalid_argument("expected " + std::to_string(theta_.size()) +
                                  " MLP parameters, got " + std::to_string(flat.size()));
    theta_ = Eigen::Map<const Vector<T>>(flat.data(), theta_.size());
    adam_m_.setZero();
    adam_v_.setZero();
    grad_.setZero();
  }

  std::vector<T> parameters() const override {
    return std::vector<T>(theta_.data(), theta_.data() + theta_.size());
  }

  void adam_moments(std::vector<T>& m, std::vector<T>& v) const override {
    m.assign(adam_m_.data(), adam_m_.data() + adam_m_.size());
    v.assign(adam_v_.data(), adam_v_.data() + adam_v_.size());
  }

  void set_adam_moments(const std::vector<T>& m, const std::vector<T>& v) override {
    if (Eigen::Index(m.size()) != theta_.size() || Eigen::Index(v.size()) != theta_.size())
      throw std::invalid_argument("expected " + std::to_string(theta_.size()) +
                                  " Adam moments of each kind, got " + std::to_string(m.size()) +
                                  " and " + std::to_string(v.size()));
    adam_m_ = Eigen::Map<const Vector<T>>(m.data(), theta_.size());
    adam_v_ = Eigen::Map<const Vector<T>>(v.data(), theta_.size());
  }

  void set_batch(const CollocationBatch& batch) override {
    if (batch.dim != dim_) throw std::invalid_argument("batch of the wrong dimension");
    const Eigen::Index n_int = Eigen::Index(batch.n_interior());
    const Eigen::Index n_bnd = Eigen::Index(batch.n_boundary());
    check_batch_sizes(batch, dim_);
    if (batch.laplacian_dims() != lap_dims_)
      throw std::invalid_argument("the batch's Laplacian acts on " +
                                  std::to_string(batch.laplacian_dims()) +
                                  " coordinates, the MLP backend's on " +
                                  std::to_string(lap_dims_) + " (MlpOptions::laplacian_dims)");
    xi_ = network_input(Eigen::Map<const Matrix<double>>(batch.interior.data(), dim_, n_int));
    xb_ = network_input(Eigen::Map<const Matrix<double>>(batch.boundary.data(), dim_, n_bnd));
    f_ = Eigen::Map<const Vector<double>>(batch.f.data(), n_int).template cast<T>();
    p_ = Eigen::Map<const Vector<double>>(batch.p.data(), n_bnd).template cast<T>();
    // The coefficients, their defaults filled in (a = 1, b = 0, c = 0, α = 1, β = 0).
    general_ = !batch.poisson_dirichlet();
    auto coefficient = [](const std::vector<double>& v, Eigen::Index n, double fill) {
      Vector<T> out = Vector<T>::Constant(n, T(fill));
      for (Eigen::Index i = 0; i < Eigen::Index(v.size()); ++i) out[i] = T(v[std::size_t(i)]);
      return out;
    };
    coef_a_ = coefficient(batch.a, n_int, 1);
    coef_c_ = coefficient(batch.c, n_int, 0);
    coef_alpha_ = coefficient(batch.alpha, n_bnd, 1);
    coef_beta_ = coefficient(batch.beta, n_bnd, 0);
    coef_b_ =
        batch.b.empty()
            ? Matrix<T>::Zero(dim_, n_int)
            : Matrix<T>(
                  Eigen::Map<const Matrix<double>>(batch.b.data(), dim_, n_int).template cast<T>());
    // β·n, the boundary rows' coefficients of ∇u (zero where β is, normals or not).
    beta_n_ = Matrix<T>::Zero(dim_, n_bnd);
    for (Eigen::Index i = 0; i < n_bnd; ++i) {
      if (coef_beta_[i] == T(0)) continue;
      for (int j = 0; j < dim_; ++j)
        beta_n_(j, i) = coef_beta_[i] * T(batch.normals[std::size_t(i * dim_ + j)]);
    }
    e_.resize(n_int);
    b_.resize(n_bnd);
    n_int_ = n_int;
    n_bnd_ = n_bnd;
    if (comm_->size() > 1) std::tie(n_int_, n_bnd_) = union_counts(*comm_, n_int, n_bnd);
    // Same batch sizes → same blocks, whose storage is then reused.
    std::vector<Block<T>> blocks;
    blocks.reserve(blocks_.size());
    std::size_t reuse = 0;
    auto add = [&](bool interior, Eigen::Index n) {
      for (Eigen::Index s = 0; s < n; s += kBlockPoints) {
        Block<T> blk = reuse < blocks_.size() ? std::move(blocks_[reuse]) : Block<T>();
        ++reuse;
        blk.interior = interior;
        blk.start = s;
        blk.count = std::min(kBlockPoints, n - s);
        blk.streams = interior ? dim_ + 2 : boundary_streams(s, blk.count);
        blocks.push_back(std::move(blk));
      }
    };
    add(true, n_int);
    add(false, n_bnd);
    blocks_ = std::move(blocks);
  }

  LossParts residuals() override { return run(false); }
  LossParts loss_and_gradient() override { return run(true); }

  void gradient(std::vector<T>& g) const override {
    g.assign(grad_.data(), grad_.data() + grad_.size());
  }

  void adam_step(T learning_rate, T beta1, T beta2, T epsilon, long t) override {
    // Bias corrections in double: β^t underflows gracefully and 1 − β^t keeps its digits.
    const T c1 = T(1.0 / (1.0 - std::pow(double(beta1), double(t))));
    const T c2 = T(1.0 / (1.0 - std::pow(double(beta2), double(t))));
    for (Eigen::Index k = 0; k < theta_.size(); ++k) {
      const T g = grad_[k];
      adam_m_[k] = beta1 * adam_m_[k] + (T(1) - beta1) * g;
      adam_v_[k] = beta2 * adam_v_[k] + (T(1) - beta2) * g * g;
      theta_[k] -= learning_rate * (adam_m_[k] * c1) / (std::sqrt(adam_v_[k] * c2) + epsilon);
    }
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
    e.assign(e_.data(), e_.data() + e_.size());
    b.assign(b_.data(), b_.data() + b_.size());
  }

 private:
  int layers() const { return int(sizes_.size()) - 1; }  // weight layers, output included

  // The streams a boundary block of `count` points from `start` carries: the value, and ∇ when
  // one of its points has β ≠ 0.
  int boundary_streams(Eigen::Index start, Eigen::Index count) const {
    for (Eigen::Index i = start; i < start + count; ++i)
      if (coef_beta_[i] != T(0)) return dim_ + 1;
    return 1;
  }

  Eigen::Map<const RowMatrix<T>> weights(int l) const {  // l = 1 … layers()
    return Eigen::Map<const RowMatrix<T>>(theta_.data() + w_offset_[l - 1], sizes_[l],
                                          sizes_[l - 1]);
  }
  Eigen::Map<const Vector<T>> bias(int l) const {
    return Eigen::Map<const Vector<T>>(theta_.data() + b_offset_[l - 1], sizes_[l]);
  }

  // Forward passes over `points` in blocks; fills whichever outputs are asked for.
  void evaluate_streams(const std::vector<double>& points, std::vector<double>* u,
                        std::vector<double>* gradient, std::vector<double>* laplacian) override {
    const int d = dim_;
    const Eigen::Index n = Eigen::Index(points.size()) / d;
    if (u) u->resize(n);
    if (gradient) gradient->resize(n * d);
    if (laplacian) laplacian->resize(n);
    const Eigen::Index n_blocks = (n + kBlockPoints - 1) / kBlockPoints;
    const bool parallel = double(n) * double(theta_.size()) > kParallelWork;
    // A block's workspace per iteration: the whole grid's stacks would not fit in cache.
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (Eigen::Index k = 0; k < n_blocks; ++k) {
      Block<T> blk;
      blk.interior = true;
      blk.streams = d + 2;
      blk.start = k * kBlockPoints;
      blk.count = std::min(kBlockPoints, n - blk.start);
      const Eigen::Index nb = blk.count;
      const Matrix<T> x =
          network_input(Eigen::Map<const Matrix<double>>(points.data() + blk.start * d, d, nb));
      const Matrix<T>& out = forward(blk, x);
      for (Eigen::Index i = 0; i < nb; ++i) {
        const Eigen::Index q = blk.start + i;
        if (u) (*u)[q] = double(out(0, i));
        if (gradient)
          for (int j = 0; j < d; ++j) (*gradient)[q * d + j] = double(out(0, (1 + j) * nb + i));
        if (laplacian) (*laplacian)[q] = double(out(0, (d + 1) * nb + i));
      }
    }
  }

  // x' = scale ⊙ x + shift, column by column.
  Matrix<T> network_input(const Eigen::Ref<const Matrix<double>>& x) const {
    Matrix<T> out = x.template cast<T>();
    out = (input_scale_.asDiagonal() * out).colwise() + input_shift_;
    return out;
  }

  // Forward pass over one block from its mapped points x' (dim × count); returns the output layer's
  // pre-activation stack (1 × cols): u, then ∂u/∂x_j (streams > 1), then Δₛu (streams = d + 2).
  const Matrix<T>& forward(Block<T>& blk, const Matrix<T>& x) const {
    const int L = layers();
    const int d = dim_;
    const int ls = lap_dims_;
    const Eigen::Index nb = blk.count;
    const bool slopes = blk.streams > 1, laplacian = blk.streams == d + 2;
    const Eigen::Index cols = blk.streams * nb;
    blk.x.resize(L);
    blk.p.resize(L);
    blk.d1.resize(L - 1);
    blk.d2.resize(L - 1);
    blk.d3.resize(L - 1);

    // Input stack: x', ∂x'/∂x_j = scale_j e_j, Δₛx' = 0.
    Matrix<T>& x0 = blk.x[0];
    x0.setZero(d, cols);
    x0.leftCols(nb) = x;
    if (slopes)
      for (int j = 0; j < d; ++j) x0.row(j).segment((1 + j) * nb, nb).setConstant(input_scale_[j]);

    for (int l = 1; l <= L; ++l) {
      Matrix<T>& p = blk.p[l - 1];
      p.noalias() = weights(l) * blk.x[l - 1];
      p.leftCols(nb).colwise() += bias(l);
      if (l == L) break;  // linear output layer
      const Eigen::Index n = sizes_[l];
      Matrix<T>& xn = blk.x[l];
      xn.resize(n, cols);
      Matrix<T>& d1 = blk.d1[l - 1];
      d1.resize(n, nb);
      if (!slopes) {
        for (Eigen::Index i = 0; i < nb; ++i)
          for (Eigen::Index r = 0; r < n; ++r)
            activation_value_slope(activation_, p(r, i), xn(r, i), d1(r, i));
        continue;
      }
      Matrix<T>& d2 = blk.d2[l - 1];
      Matrix<T>& d3 = blk.d3[l - 1];
      d2.resize(n, nb);
      d3.resize(n, nb);
      for (Eigen::Index i = 0; i < nb; ++i) {
        for (Eigen::Index r = 0; r < n; ++r) {
          const ActivationTerms<T> t = activation_terms(activation_, p(r, i));
          xn(r, i) = t.s;
          d1(r, i) = t.d1;
          d2(r, i) = t.d2;
          d3(r, i) = t.d3;
          // S = Σ_{j < ls} A_j²: the Laplacian's coordinates only.
          T s = T(0);
          for (int j = 0; j < ls; ++j) {
            const T a = p(r, (1 + j) * nb + i);
            xn(r, (1 + j) * nb + i) = stream_slope(t, a);
            s += a * a;
          }
          for (int j = ls; j < d; ++j)
            xn(r, (1 + j) * nb + i) = stream_slope(t, p(r, (1 + j) * nb + i));
          if (laplacian) xn(r, (d + 1) * nb + i) = stream_laplacian(t, s, p(r, (d + 1) * nb + i));
        }
      }
    }
    return blk.p[L - 1];
  }

  // Backward pass over one block: from P̄ of the output layer (set in blk.pbar) down to the
  // first layer, writing ∂I/∂θ of this block's points into blk.grad.
  void backward(Block<T>& blk) const {
    const int L = layers();
    const int d = dim_;
    const int ls = lap_dims_;
    const Eigen::Index nb = blk.count;
    const bool slopes = blk.streams > 1, laplacian = blk.streams == d + 2;
    blk.grad.resize(theta_.size());
    for (int l = L; l >= 1; --l) {
      Eigen::Map<RowMatrix<T>> gw(blk.grad.data() + w_offset_[l - 1], sizes_[l], sizes_[l - 1]);
      Eigen::Map<Vector<T>> gb(blk.grad.data() + b_offset_[l - 1], sizes_[l]);
      gw.noalias() = blk.pbar * blk.x[l - 1].transpose();
      gb = blk.pbar.leftCols(nb).rowwise().sum();
      if (l == 1) break;
      blk.xbar.noalias() = weights(l).transpose() * blk.pbar;
      // Through hidden layer l−1's activation: x̄ (adjoint of its output stack) → p̄ (adjoint
      // of its pre-activation stack; mlp_math.hpp's adjoint_*). The coordinates past the
      // Laplacian's (j ≥ ls) reach Δₛ through nothing: their Ā_j has no l̄ term.
      const int h = l - 1;
      const Eigen::Index n = sizes_[h];
      const Matrix<T>& p = blk.p[h - 1];
      const Matrix<T>& d1 = blk.d1[h - 1];
      blk.pbar.resize(n, blk.xbar.cols());
      if (!slopes) {
        blk.pbar = blk.xbar.cwiseProduct(d1);
        continue;
      }
      const Matrix<T>& d2 = blk.d2[h - 1];
      const Matrix<T>& d3 = blk.d3[h - 1];
      for (Eigen::Index i = 0; i < nb; ++i) {
        for (Eigen::Index r = 0; r < n; ++r) {
          const ActivationTerms<T> t{T(0), d1(r, i), d2(r, i), d3(r, i)};
          const T lbar = laplacian ? blk.xbar(r, (d + 1) * nb + i) : T(0);
          T s = T(0), dot = T(0);
          for (int j = 0; j < ls; ++j) {
            const Eigen::Index col = (1 + j) * nb + i;
            const T a = p(r, col);
            const T gbar = blk.xbar(r, col);
            s += a * a;
            dot += gbar * a;
            blk.pbar(r, col) = adjoint_slope(t, gbar, lbar, a);
          }
          for (int j = ls; j < d; ++j) {
            const Eigen::Index col = (1 + j) * nb + i;
            const T a = p(r, col);
            const T gbar = blk.xbar(r, col);
            dot += gbar * a;
            blk.pbar(r, col) = adjoint_slope(t, gbar, T(0), a);
          }
          if (laplacian) {
            blk.pbar(r, i) = adjoint_value(t, blk.xbar(r, i), dot, lbar, s, p(r, (d + 1) * nb + i));
            blk.pbar(r, (d + 1) * nb + i) = adjoint_laplacian(t, lbar);
          } else {
            blk.pbar(r, i) = adjoint_value(t, blk.xbar(r, i), dot, T(0), T(0), T(0));
          }
        }
      }
    }
  }

  // The residual of the block's point i (index q in the batch) from the output stack `out`:
  // e = a·Δₛu + b·∇u + c·u − f or r = α·u + β·∇u·n − p (Δu − f and u − p when Poisson/Dirichlet).
  T point_residual(const Block<T>& blk, const Matrix<T>& out, Eigen::Index i,
                   Eigen::Index q) const {
    const int d = dim_;
    const Eigen::Index nb = blk.count;
    if (blk.interior) {
      if (!general_) return out(0, (d + 1) * nb + i) - f_[q];
      T e = coef_a_[q] * out(0, (d + 1) * nb + i);
      for (int j = 0; j < d; ++j) e += coef_b_(j, q) * out(0, (1 + j) * nb + i);
      return e + coef_c_[q] * out(0, i) - f_[q];
    }
    if (!general_) return out(0, i) - p_[q];
    T r = coef_alpha_[q] * out(0, i);
    if (blk.streams > 1)
      for (int j = 0; j < d; ++j) r += beta_n_(j, q) * out(0, (1 + j) * nb + i);
    return r - p_[q];
  }

  // The output layer's adjoint (blk.pbar, zeroed before) at the block's point i for a residual
  // adjoint s: s times the residual's coefficient of each stream.
  void seed_point(Block<T>& blk, Eigen::Index i, Eigen::Index q, T s) const {
    const int d = dim_;
    const Eigen::Index nb = blk.count;
    if (blk.interior) {
      if (!general_) {
        blk.pbar(0, (d + 1) * nb + i) = s;
        return;
      }
      blk.pbar(0, (d + 1) * nb + i) = coef_a_[q] * s;
      for (int j = 0; j < d; ++j) blk.pbar(0, (1 + j) * nb + i) = coef_b_(j, q) * s;
      blk.pbar(0, i) = coef_c_[q] * s;
      return;
    }
    if (!general_) {
      blk.pbar(0, i) = s;
      return;
    }
    blk.pbar(0, i) = coef_alpha_[q] * s;
    if (blk.streams > 1)
      for (int j = 0; j < d; ++j) blk.pbar(0, (1 + j) * nb + i) = beta_n_(j, q) * s;
  }

  LossParts run(bool with_gradient) {
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    // The union's counts: with several ranks, the sums below are all-reduced before use.
    const T inv_n = T(1) / T(std::max<Eigen::Index>(n_int_, 1));
    const T lam_k = penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1));
    const bool parallel = double(n_int + n_bnd) * double(theta_.size()) > kParallelWork;
    const Eigen::Index n_blocks = Eigen::Index(blocks_.size());
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (Eigen::Index k = 0; k < n_blocks; ++k) {
      Block<T>& blk = blocks_[k];
      const Eigen::Index nb = blk.count;
      const Matrix<T>& pts = blk.interior ? xi_ : xb_;
      const Matrix<T>& out = forward(blk, pts.middleCols(blk.start, nb));
      blk.sum_squares = 0;
      if (with_gradient) blk.pbar.setZero(1, out.cols());
      for (Eigen::Index i = 0; i < nb; ++i) {
        const Eigen::Index q = blk.start + i;
        const T res = point_residual(blk, out, i, q);
        (blk.interior ? e_ : b_)[q] = res;
        blk.sum_squares += double(res) * double(res);
        if (with_gradient) seed_point(blk, i, q, res * (blk.interior ? inv_n : lam_k));
      }
      if (with_gradient) backward(blk);
    }
    double se = 0, sb = 0;
    if (with_gradient) grad_.setZero();
    for (const Block<T>& blk : blocks_) {
      (blk.interior ? se : sb) += blk.sum_squares;
      if (with_gradient) grad_ += blk.grad;
    }
    if (comm_->size() > 1) {
      double sums[2] = {se, sb};
      comm_->allreduce_sum(sums, 2);
      se = sums[0];
      sb = sums[1];
      if (with_gradient) comm_->allreduce_sum(grad_.data(), std::size_t(grad_.size()));
    }
    const double n = double(std::max<Eigen::Index>(n_int_, 1));
    const double kk = double(std::max<Eigen::Index>(n_bnd_, 1));
    LossParts parts;
    parts.loss = 0.5 * se / n + 0.5 * double(penalty_) * sb / kk;
    parts.rms_interior = std::sqrt(se / n);
    parts.rms_boundary = std::sqrt(sb / kk);
    return parts;
  }

  // One row of J per point: a one-point block's forward pass and its backward pass seeded with
  // the point's scale instead of its residual (so the "gradient" it writes is ∂R_q/∂θ).
  void jacobian(std::vector<double>& jac, std::vector<double>& r) override {
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size(), n = n_int + n_bnd;
    const Eigen::Index np = theta_.size();
    // The union's counts (this rank's own with one rank).
    const T si = T(1) / std::sqrt(T(std::max<Eigen::Index>(n_int_, 1)));
    const T sb = std::sqrt(penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1)));
    jac.assign(std::size_t(n * np), 0.0);
    r.assign(std::size_t(n), 0.0);
    const bool parallel = double(n) * double(np) > kParallelWork;
#pragma omp parallel if (parallel)
    {
      Block<T> blk;
      blk.count = 1;
#pragma omp for schedule(static)
      for (Eigen::Index q = 0; q < n; ++q) {
        blk.interior = q < n_int;
        blk.start = blk.interior ? q : q - n_int;
        blk.streams = blk.interior ? dim_ + 2 : boundary_streams(blk.start, 1);
        const Matrix<T>& pts = blk.interior ? xi_ : xb_;
        const Matrix<T>& out = forward(blk, pts.middleCols(blk.start, 1));
        blk.pbar.setZero(1, out.cols());
        const T scale = blk.interior ? si : sb;
        r[q] = double(scale * point_residual(blk, out, 0, blk.start));
        seed_point(blk, 0, blk.start, scale);
        backward(blk);
        for (Eigen::Index k = 0; k < np; ++k) jac[std::size_t(q * np + k)] = double(blk.grad[k]);
      }
    }
  }

  // JᵀJ = Σ_ranks J_rᵀJ_r and JᵀR = Σ_ranks J_rᵀR_r: the union's system, whatever the shares.
  void normal_equations(std::vector<double>& jtj, std::vector<double>& jtr) override {
    using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::vector<double> jac, r;
    jacobian(jac, r);
    const Eigen::Index np = theta_.size(), n = Eigen::Index(r.size());
    const Eigen::Map<const Mat> J(jac.data(), n, np);
    jtj.assign(std::size_t(np * np), 0.0);
    jtr.assign(std::size_t(np), 0.0);
    Eigen::Map<Mat> a(jtj.data(), np, np);
    a.template selfadjointView<Eigen::Lower>().rankUpdate(J.transpose());
    Eigen::Map<Eigen::VectorXd>(jtr.data(), np) =
        J.transpose() * Eigen::Map<const Eigen::VectorXd>(r.data(), n);
    if (comm_->size() > 1) {
      comm_->allreduce_sum(jtj.data(), jtj.size());
      comm_->allreduce_sum(jtr.data(), jtr.size());
    }
  }

  int dim_;
  std::vector<int> sizes_;
  Activation activation_;
  T penalty_;
  int lap_dims_;                                  // Δₛ: the first lap_dims_ coordinates
  std::shared_ptr<Communicator> comm_;
  Eigen::Index n_int_ = 0, n_bnd_ = 0;  // the union's interior and boundary counts
  Vector<T> input_shift_, input_scale_;           // x' = scale ⊙ x + shift
  std::vector<std::size_t> w_offset_, b_offset_;  // per weight layer 1 … L
  Vector<T> theta_, grad_, adam_m_, adam_v_;
  Matrix<T> xi_, xb_;  // mapped points x', dim × N and dim × K
  Vector<T> f_, p_, e_, b_;
  // The batch's rows: general_ unless CollocationBatch::poisson_dirichlet(); the coefficients
  // with their defaults filled in (N or K values; b and β·n: dim × N and dim × K).
  bool general_ = false;
  Vector<T> coef_a_, coef_c_, coef_alpha_, coef_beta_;
  Matrix<T> coef_b_, beta_n_;
  std::vector<Block<T>> blocks_;
};

}  // namespace

template <class T>
std::unique_ptr<MlpBackend<T>> make_cpu_mlp_backend(const MlpOptions& options) {
  return std::make_unique<CpuMlpBackend<T>>(options);
}

template std::unique_ptr<MlpBackend<double>> make_cpu_mlp_backend<double>(const MlpOptions&);
template std::unique_ptr<MlpBackend<float>> make_cpu_mlp_backend<float>(const MlpOptions&);

}  // namespace rbfpde
