// CPU reference MLP backend: Eigen GEMMs over blocks of points, a column per point.
//
// Every layer works on one stacked matrix per block: for an interior block of nb points the
// columns are [h | ∂h/∂x_1 … ∂h/∂x_d | Δh] (nb each), for a boundary block only [h], so that the
// forward pass is one GEMM P = W·X (+ b on the value columns) and the backward pass two,
// ∂I/∂W = P̄·Xᵀ and X̄ = Wᵀ·P̄, with fused elementwise loops between them.
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
        comm_(options.comm ? options.comm : serial_communicator()) {
    if (dim_ < 1) throw std::invalid_argument("the MLP backend needs a dimension ≥ 1");
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
    xi_ = network_input(Eigen::Map<const Matrix<double>>(batch.interior.data(), dim_, n_int));
    xb_ = network_input(Eigen::Map<const Matrix<double>>(batch.boundary.data(), dim_, n_bnd));
    f_ = Eigen::Map<const Vector<double>>(batch.f.data(), n_int).template cast<T>();
    p_ = Eigen::Map<const Vector<double>>(batch.p.data(), n_bnd).template cast<T>();
    e_.resize(n_int);
    b_.resize(n_bnd);
    n_int_ = n_int;
    n_bnd_ = n_bnd;
    if (comm_->size() > 1) {
      double counts[2] = {double(n_int), double(n_bnd)};
      comm_->allreduce_sum(counts, 2);
      n_int_ = Eigen::Index(counts[0]);
      n_bnd_ = Eigen::Index(counts[1]);
    }
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
  // pre-activation stack (1 × cols): u, ∂u/∂x_j, Δu for interior blocks, u for boundary ones.
  const Matrix<T>& forward(Block<T>& blk, const Matrix<T>& x) const {
    const int L = layers();
    const int d = dim_;
    const Eigen::Index nb = blk.count;
    const Eigen::Index cols = blk.interior ? (d + 2) * nb : nb;
    blk.x.resize(L);
    blk.p.resize(L);
    blk.d1.resize(L - 1);
    blk.d2.resize(L - 1);
    blk.d3.resize(L - 1);

    // Input stack: x', ∂x'/∂x_j = scale_j e_j, Δx' = 0.
    Matrix<T>& x0 = blk.x[0];
    x0.setZero(d, cols);
    x0.leftCols(nb) = x;
    if (blk.interior)
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
      if (!blk.interior) {
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
          T s = T(0);
          for (int j = 0; j < d; ++j) {
            const T a = p(r, (1 + j) * nb + i);
            xn(r, (1 + j) * nb + i) = stream_slope(t, a);
            s += a * a;
          }
          xn(r, (d + 1) * nb + i) = stream_laplacian(t, s, p(r, (d + 1) * nb + i));
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
    const Eigen::Index nb = blk.count;
    blk.grad.resize(theta_.size());
    for (int l = L; l >= 1; --l) {
      Eigen::Map<RowMatrix<T>> gw(blk.grad.data() + w_offset_[l - 1], sizes_[l], sizes_[l - 1]);
      Eigen::Map<Vector<T>> gb(blk.grad.data() + b_offset_[l - 1], sizes_[l]);
      gw.noalias() = blk.pbar * blk.x[l - 1].transpose();
      gb = blk.pbar.leftCols(nb).rowwise().sum();
      if (l == 1) break;
      blk.xbar.noalias() = weights(l).transpose() * blk.pbar;
      // Through hidden layer l−1's activation: x̄ (adjoint of its output stack) → p̄ (adjoint
      // of its pre-activation stack; mlp_math.hpp's adjoint_*).
      const int h = l - 1;
      const Eigen::Index n = sizes_[h];
      const Matrix<T>& p = blk.p[h - 1];
      const Matrix<T>& d1 = blk.d1[h - 1];
      blk.pbar.resize(n, blk.xbar.cols());
      if (!blk.interior) {
        blk.pbar = blk.xbar.cwiseProduct(d1);
        continue;
      }
      const Matrix<T>& d2 = blk.d2[h - 1];
      const Matrix<T>& d3 = blk.d3[h - 1];
      for (Eigen::Index i = 0; i < nb; ++i) {
        for (Eigen::Index r = 0; r < n; ++r) {
          const ActivationTerms<T> t{T(0), d1(r, i), d2(r, i), d3(r, i)};
          const T lbar = blk.xbar(r, (d + 1) * nb + i);
          T s = T(0), dot = T(0);
          for (int j = 0; j < d; ++j) {
            const Eigen::Index col = (1 + j) * nb + i;
            const T a = p(r, col);
            const T gbar = blk.xbar(r, col);
            s += a * a;
            dot += gbar * a;
            blk.pbar(r, col) = adjoint_slope(t, gbar, lbar, a);
          }
          blk.pbar(r, i) = adjoint_value(t, blk.xbar(r, i), dot, lbar, s, p(r, (d + 1) * nb + i));
          blk.pbar(r, (d + 1) * nb + i) = adjoint_laplacian(t, lbar);
        }
      }
    }
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
        if (blk.interior) {
          const T e = out(0, (dim_ + 1) * nb + i) - f_[q];
          e_[q] = e;
          blk.sum_squares += double(e) * double(e);
          if (with_gradient) blk.pbar(0, (dim_ + 1) * nb + i) = e * inv_n;
        } else {
          const T b = out(0, i) - p_[q];
          b_[q] = b;
          blk.sum_squares += double(b) * double(b);
          if (with_gradient) blk.pbar(0, i) = b * lam_k;
        }
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
    const T si = T(1) / std::sqrt(T(std::max<Eigen::Index>(n_int, 1)));
    const T sb = std::sqrt(penalty_ / T(std::max<Eigen::Index>(n_bnd, 1)));
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
        const Matrix<T>& pts = blk.interior ? xi_ : xb_;
        const Matrix<T>& out = forward(blk, pts.middleCols(blk.start, 1));
        blk.pbar.setZero(1, out.cols());
        if (blk.interior) {
          r[q] = double(si * (out(0, dim_ + 1) - f_[q]));
          blk.pbar(0, dim_ + 1) = si;
        } else {
          r[q] = double(sb * (out(0, 0) - p_[blk.start]));
          blk.pbar(0, 0) = sb;
        }
        backward(blk);
        for (Eigen::Index k = 0; k < np; ++k) jac[std::size_t(q * np + k)] = double(blk.grad[k]);
      }
    }
  }

  int dim_;
  std::vector<int> sizes_;
  Activation activation_;
  T penalty_;
  std::shared_ptr<Communicator> comm_;
  Eigen::Index n_int_ = 0, n_bnd_ = 0;  // the union's interior and boundary counts
  Vector<T> input_shift_, input_scale_;           // x' = scale ⊙ x + shift
  std::vector<std::size_t> w_offset_, b_offset_;  // per weight layer 1 … L
  Vector<T> theta_, grad_, adam_m_, adam_v_;
  Matrix<T> xi_, xb_;  // mapped points x', dim × N and dim × K
  Vector<T> f_, p_, e_, b_;
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
