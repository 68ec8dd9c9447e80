// The CUDA MLP backend (docs/mathematics.md has the streams and their adjoints): parameters,
// Adam moments, the batch and every activation stay on the device; the pass kernels are planned
// and launched through mlp_kernels.hpp (the tiled kernel in mlp_pass_kernel.cu, the
// point-stationary one in mlp_point_kernel.cu). One loss+gradient+Adam step is two kernels (the
// fused pass, then the fixed-order reduction with Adam); train_steps() captures a chunk of K steps
// as one CUDA graph (the per-step learning rates and bias corrections in a small device array, the
// early stop in a device flag), so that the host syncs once per chunk. Once set_problem has
// compiled the problem's sampler (device_sampler.hpp, shared with the RBF backend), batches are
// drawn on the device too, also inside a chunk's graph (a step that draws: the sampler's two
// launches, interior and boundary, before its pass), so that training with a fresh batch every step
// still syncs once per chunk and no batch crosses the bus.
//
// Ranks (MlpOptions::comm, docs/architecture.md "Distributed runs"): when the communicator is
// distributed() each rank holds its share of the batch, set by set_batch from the host (no
// device sampler: each rank samples its share from its own stream), the pass's scales use the
// union's counts N and K, and after every pass the two sums Σe², Σb² (MlpPassArgs::sums) and,
// with the backward pass, the gradient are summed over the ranks by gpu::allreduce_sum before
// the loss is formed on the host and before Adam or a read-back uses the gradient. Each step
// waits for its sums, so that path runs step by step, without CUDA graphs or the in-graph early
// stop; with a communicator that is not distributed (one process) the code is the single-GPU
// code.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "kernels/cuda/common/device_comm.hpp"
#include "kernels/cuda/common/device_sampler.hpp"
#include "kernels/cuda/common/graph_cache.hpp"
#include "kernels/cuda/common/module_entry.hpp"
#include "kernels/cuda/common/pinned.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/mlp_backend.hpp"

namespace rbfpde {
namespace {

using gpu::DeviceBuffer;
using gpu::PinnedBuffer;

// Problem::poisson_dirichlet() where Problem has it; a Problem without it has Poisson/Dirichlet
// rows only.
template <class P>
auto poisson_dirichlet_problem(const P& problem, int)
    -> decltype(bool(problem.poisson_dirichlet())) {
  return problem.poisson_dirichlet();
}
template <class P>
bool poisson_dirichlet_problem(const P&, long) {
  return true;
}

// Steps one graph holds at most; longer requests run as several graphs.
constexpr int kMaxGraphSteps = 1000;
// Graphs kept, the least recently used dropped beyond.
constexpr std::size_t kMaxCachedGraphs = 8;

template <class T>
class CudaMlpBackend final : public MlpBackend<T> {
 public:
  using typename MlpBackend<T>::AdamStepArgs;

  CudaMlpBackend(const MlpOptions& options, const gpu::MlpTuning& tuning)
      : penalty_(T(options.penalty)),
        tuning_(tuning),
        consts_host_(3 * kMaxGraphSteps),
        losses_host_(3 * kMaxGraphSteps),
        halt_host_(2),
        draw_index_host_(kMaxGraphSteps),
        comm_(options.comm ? options.comm : serial_communicator()),
        dist_(comm_->distributed()) {
    net_ = gpu::make_mlp_net_view<T>(options);
    grad_host_ = PinnedBuffer<T>(std::size_t(net_.n_params));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const std::size_t np = std::size_t(net_.n_params);
    theta_.resize(np);
    grad_.resize(np);
    m_.resize(np);
    v_.resize(np);
    consts_.resize(3 * kMaxGraphSteps);
    losses_.resize(3 * kMaxGraphSteps);
    halt_.resize(2);
    counter_.resize(1);
    draw_index_.resize(kMaxGraphSteps);
    if (dist_) {
      loss_sums_.resize(2);
      loss_sums_host_ = PinnedBuffer<double>(2);
    }
    CUDA_CHECK(cudaMemsetAsync(theta_.data(), 0, theta_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, counter_.bytes(), stream_));
    zero_optimiser();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~CudaMlpBackend() override {
    graphs_.clear();
    if (stream_ && cudaStreamDestroy(stream_) != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaStreamDestroy failed\n");
  }

  std::string name() const override { return "cuda"; }
  std::string device_name() const override {
    int dev = 0;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    return prop.name;
  }

  void set_parameters(const std::vector<T>& flat) override {
    upload_parameters(flat);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Upload, pass, reduction and both read-backs (into pinned memory) queued on the stream, then
  // one synchronisation (over ranks ranked_pass synchronises before the gradient's read-back).
  LossParts loss_and_gradient_at(const std::vector<T>& flat, std::vector<T>& g) override {
    upload_parameters(flat);
    const LossParts ranked = dist_ ? ranked_pass(true) : LossParts{};
    const bool passed = !dist_ && queue_pass(true);
    if (passed)
      CUDA_CHECK(cudaMemcpyAsync(losses_host_.data(), losses_.data(), 3 * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(grad_host_.data(), grad_.data(), grad_.bytes(),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    g.assign(grad_host_.data(), grad_host_.data() + theta_.size());
    return passed ? LossParts{losses_host_[0], losses_host_[1], losses_host_[2]} : ranked;
  }

  std::vector<T> parameters() const override { return download(theta_); }

  void adam_moments(std::vector<T>& m, std::vector<T>& v) const override {
    m = download(m_);
    v = download(v_);
  }

  void set_adam_moments(const std::vector<T>& m, const std::vector<T>& v) override {
    if (m.size() != m_.size() || v.size() != v_.size())
      throw std::invalid_argument("expected " + std::to_string(m_.size()) +
                                  " Adam moments of each kind, got " + std::to_string(m.size()) +
                                  " and " + std::to_string(v.size()));
    CUDA_CHECK(cudaMemcpyAsync(m_.data(), m.data(), m_.bytes(), cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(v_.data(), v.data(), v_.bytes(), cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void set_batch(const CollocationBatch& batch) override {
    if (batch.dim != net_.dim) throw std::invalid_argument("batch of the wrong dimension");
    check_batch(batch);
    pass_tuning(!batch.poisson_dirichlet());  // throws, before any change, what cannot run
    const bool was_general = general_;
    const void* coef_before[] = {coef_a_.data(), coef_b_.data(), coef_c_.data(), coef_alpha_.data(),
                                 coef_beta_.data()};
    general_ = !batch.poisson_dirichlet();
    resize_batch(batch.n_interior(), batch.n_boundary());
    if (dist_) std::tie(n_int_all_, n_bnd_all_) = union_counts(*comm_, n_int_, n_bnd_);
    upload(batch.interior, x_int_);
    upload(batch.f, f_);
    upload(batch.boundary, x_bnd_);
    upload(batch.p, p_);
    std::vector<double> normals = batch.normals;
    normals.resize(batch.boundary.size());  // a batch built without normals: zeros
    upload(normals, normals_);
    if (general_) {
      // Every coefficient per point, the defaults filled in (a = 1, b = 0, c = 0, α = 1, β = 0).
      auto filled = [](const std::vector<double>& v, std::size_t n, double fill) {
        return v.empty() ? std::vector<double>(n, fill) : v;
      };
      const std::size_t n = batch.n_interior(), k = batch.n_boundary();
      upload(filled(batch.a, n, 1), coef_a_);
      upload(filled(batch.b, n * std::size_t(net_.dim), 0), coef_b_);
      upload(filled(batch.c, n, 0), coef_c_);
      upload(filled(batch.alpha, k, 1), coef_alpha_);
      upload(filled(batch.beta, k, 0), coef_beta_);
    }
    const void* coef_after[] = {coef_a_.data(), coef_b_.data(), coef_c_.data(), coef_alpha_.data(),
                                coef_beta_.data()};
    // The graphs hold the pass's arguments: the rows' kind and the coefficients' addresses.
    if (was_general != general_ || std::memcmp(coef_before, coef_after, sizeof(coef_before)) != 0)
      graphs_.clear();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    host_batch_ = batch;
    device_drawn_ = false;
  }

  // Never on the distributed path: set_problem refuses it.
  bool draws_batches() const override { return sampler_ != nullptr; }

  // The device sampler draws points, f, p and normals, no coefficients: it serves problems of
  // Poisson/Dirichlet rows only, and refuses the others (the trainer then samples on the host).
  // Over ranks it is refused too: it draws one stream for the whole batch, while each rank
  // samples its share from its own stream.
  void set_problem(const Problem& problem) override {
    if (problem.dim() != net_.dim) throw std::invalid_argument("problem of the wrong dimension");
    if (dist_)
      throw std::runtime_error(
          "over ranks the CUDA MLP backend takes each rank's share of every batch from the host");
    sampler_.reset();
    graphs_.clear();
    if (net_.lap_dims != net_.dim || !poisson_dirichlet_problem(problem, 0))
      throw std::runtime_error(
          "the CUDA MLP backend draws batches of Poisson/Dirichlet problems only; this problem's "
          "batches are drawn on the host");
    sampler_ = std::make_unique<gpu::DeviceSampler>(problem, sizeof(T) == sizeof(double));
  }

  void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                  std::size_t n_boundary) override {
    gpu::sampler_for(sampler_, "draw_batch").set_batch_index(stream_, index);
    if (general_) graphs_.clear();
    general_ = false;  // a drawn batch has Poisson/Dirichlet rows (set_problem)
    resize_batch(n_interior, n_boundary);
    enqueue_draw(sampler_->batch_index(), seed, nullptr, 0);
    device_drawn_ = true;
  }

  // A batch drawn on the device is copied back; one set from the host is returned as given.
  CollocationBatch batch() const override {
    if (!device_drawn_) return host_batch_;
    CollocationBatch out;
    out.dim = net_.dim;
    download_to(x_int_, out.interior);
    download_to(f_, out.f);
    download_to(x_bnd_, out.boundary);
    download_to(p_, out.p);
    download_to(normals_, out.normals);
    return out;
  }

  LossParts residuals() override {
    if (dist_) return ranked_pass(false);
    return queue_pass(false) ? read_loss() : LossParts{};
  }

  LossParts loss_and_gradient() override {
    if (dist_) return ranked_pass(true);
    if (queue_pass(true)) return read_loss();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return LossParts{};
  }

  void gradient(std::vector<T>& g) const override { g = download(grad_); }

  void adam_step(T learning_rate, T beta1, T beta2, T epsilon, long t) override {
    const T c1 = T(1.0 / (1.0 - std::pow(double(beta1), double(t))));
    const T c2 = T(1.0 / (1.0 - std::pow(double(beta2), double(t))));
    gpu::launch_mlp_adam(stream_, net_.n_params, grad_.data(), theta_.data(), m_.data(), v_.data(),
                         learning_rate, beta1, beta2, epsilon, c1, c2);
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
    e = download(e_);
    b = download(b_);
  }

  // Over ranks every step waits for its sums: step by step.
  int steps_per_sync() const override { return dist_ ? 1 : kMaxGraphSteps; }

  // As the default, one graph per chunk of at most kMaxGraphSteps steps; the early stop is the
  // device flag halt_ (mlp_kernels.hpp), read back with the losses. Over ranks the default
  // itself: loss_and_gradient() and adam_step() a step.
  void train_steps(const std::vector<AdamStepArgs>& steps, T beta1, T beta2, T epsilon,
                   double stop_below, std::vector<LossParts>& losses) override {
    if (dist_ || n_int_ + n_bnd_ == 0) {
      MlpBackend<T>::train_steps(steps, beta1, beta2, epsilon, stop_below, losses);
      return;
    }
    for (std::size_t first = 0; first < steps.size(); first += kMaxGraphSteps) {
      const int k = int(std::min<std::size_t>(kMaxGraphSteps, steps.size() - first));
      // Which steps draw (part of the graph's shape), with one seed for the chunk.
      std::vector<bool> draws(std::size_t(k), false);
      std::uint64_t seed = 0;
      int first_draw = -1;
      for (int i = 0; i < k; ++i) {
        const AdamStepArgs& s = steps[first + std::size_t(i)];
        consts_host_[3 * i] = s.learning_rate;
        consts_host_[3 * i + 1] = T(1.0 / (1.0 - std::pow(double(beta1), double(s.t))));
        consts_host_[3 * i + 2] = T(1.0 / (1.0 - std::pow(double(beta2), double(s.t))));
        draw_index_host_[std::size_t(i)] = s.batch_index;
        if (!s.draw) continue;
        gpu::sampler_for(sampler_, "train_steps");
        if (general_)
          throw std::logic_error(
              "a step draws a Poisson/Dirichlet batch while the current one has general rows");
        if (s.n_interior != std::size_t(n_int_) || s.n_boundary != std::size_t(n_bnd_))
          throw std::logic_error("a step draws a batch of another size than the current one");
        if (first_draw >= 0 && s.seed != seed)
          throw std::logic_error("the steps of one train_steps call draw with different seeds");
        if (first_draw < 0) first_draw = i;
        seed = s.seed;
        draws[std::size_t(i)] = true;
      }
      halt_host_[0] = INT_MAX;
      halt_host_[1] = 0;
      CUDA_CHECK(cudaMemcpyAsync(consts_.data(), consts_host_.data(), 3 * k * sizeof(T),
                                 cudaMemcpyHostToDevice, stream_));
      CUDA_CHECK(cudaMemcpyAsync(halt_.data(), halt_host_.data(), 2 * sizeof(int),
                                 cudaMemcpyHostToDevice, stream_));
      if (first_draw >= 0)
        CUDA_CHECK(cudaMemcpyAsync(draw_index_.data(), draw_index_host_.data(),
                                   std::size_t(k) * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                                   stream_));
      CUDA_CHECK(
          cudaGraphLaunch(graph_for(draws, seed, beta1, beta2, epsilon, stop_below), stream_));
      CUDA_CHECK(cudaMemcpyAsync(losses_host_.data(), losses_.data(), 3 * k * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaMemcpyAsync(halt_host_.data(), halt_.data(), 2 * sizeof(int),
                                 cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      const int done = halt_host_[0] == INT_MAX ? k : halt_host_[0] + 1;
      if (first_draw >= 0 && first_draw < done) device_drawn_ = true;
      for (int i = 0; i < done; ++i)
        losses.push_back(
            LossParts{losses_host_[3 * i], losses_host_[3 * i + 1], losses_host_[3 * i + 2]});
      if (done < k || halt_host_[0] != INT_MAX) return;
    }
  }

 private:
  // What a chunk's graph bakes in besides the buffers and the tiling (which clear the cache when
  // they change): the steps that draw (their count: the chunk's length), the draws' seed, Adam's
  // constants and the early stop.
  struct GraphKey {
    std::vector<bool> draws;
    std::uint64_t seed = 0;
    T beta1 = 0, beta2 = 0, epsilon = 0;
    double stop_below = 0;
    bool operator==(const GraphKey& o) const {
      return draws == o.draws && seed == o.seed && beta1 == o.beta1 && beta2 == o.beta2 &&
             epsilon == o.epsilon && stop_below == o.stop_below;
    }
  };

  // Sizes the batch's buffers (and the residuals, partials and scratch that follow from it) for
  // n_interior + n_boundary points and plans the tiling; the graphs hold the buffers' addresses
  // and the tiling, so they are recaptured when either changed. Nothing to do for the sizes
  // already planned (a trainer redraws batches of one size).
  void resize_batch(std::size_t n_interior, std::size_t n_boundary) {
    gpu::DeviceSampler::check_rows(n_interior, n_boundary);
    if (planned_ && n_interior == std::size_t(n_int_) && n_boundary == std::size_t(n_bnd_) &&
        planned_general_ == general_)
      return;
    planned_ = true;
    planned_general_ = general_;
    const std::size_t d = std::size_t(net_.dim);
    n_int_ = int(n_interior);
    n_bnd_ = int(n_boundary);
    const void* before[] = {x_int_.data(),    f_.data(),       x_bnd_.data(),
                            p_.data(),        e_.data(),       b_.data(),
                            partials_.data(), scratch_.data(), normals_.data()};
    x_int_.resize(n_interior * d);
    f_.resize(n_interior);
    x_bnd_.resize(n_boundary * d);
    p_.resize(n_boundary);
    normals_.resize(n_boundary * d);
    e_.resize(n_interior);
    b_.resize(n_boundary);
    const gpu::MlpTiling old = tiling_;
    tiling_ = gpu::plan_mlp_tiling(net_, n_int_, n_bnd_, true, pass_tuning(general_));
    partials_.resize(std::size_t(tiling_.grid) * std::size_t(net_.n_params));
    scratch_.resize(std::max<std::size_t>(1, tiling_.scratch_elements));
    const void* after[] = {x_int_.data(),    f_.data(),       x_bnd_.data(),
                           p_.data(),        e_.data(),       b_.data(),
                           partials_.data(), scratch_.data(), normals_.data()};
    if (std::memcmp(before, after, sizeof(before)) != 0 || old.grid != tiling_.grid ||
        old.points != tiling_.points || old.tiles_interior != tiling_.tiles_interior ||
        old.tiles_boundary != tiling_.tiles_boundary || old.variant != tiling_.variant ||
        old.overlap != tiling_.overlap || old.overlap_reduce != tiling_.overlap_reduce)
      graphs_.clear();
  }

  // The planner's overrides for general rows (or Poisson/Dirichlet ones): general rows run on the
  // tiled kernel (the point kernel has the Poisson/Dirichlet rows alone, mlp_plan.hpp).
  gpu::MlpTuning pass_tuning(bool general) const {
    gpu::MlpTuning t = tuning_;
    if (!general) return t;
    if (t.kernel == gpu::MlpTuning::Kernel::kPoint)
      throw std::invalid_argument(
          "the point-stationary MLP pass takes Poisson/Dirichlet rows only; this batch has "
          "general rows");
    t.kernel = gpu::MlpTuning::Kernel::kTiled;
    return t;
  }

  // Every vector of the batch has the size its point counts give it (a coefficient vector may
  // also be empty: its default), and the Laplacian acts on the backend's coordinates.
  void check_batch(const CollocationBatch& batch) const {
    check_batch_sizes(batch, net_.dim);
    if (batch.laplacian_dims() != net_.lap_dims)
      throw std::invalid_argument("the batch's Laplacian acts on " +
                                  std::to_string(batch.laplacian_dims()) +
                                  " coordinates, the MLP backend's on " +
                                  std::to_string(net_.lap_dims) + " (MlpOptions::laplacian_dims)");
  }

  // The sampler's two launches, interior then boundary (the same points as one launch over
  // both: device_sampler.hpp), reading the batch number at `index` (device); with `halt`, they
  // draw nothing once the chunk has stopped before `step`.
  void enqueue_draw(const std::uint64_t* index, std::uint64_t seed, const int* halt, int step) {
    sampler_->launch(stream_, index, seed, n_int_, 0, x_int_.data(), f_.data(), nullptr, halt,
                     step);
    sampler_->launch(stream_, index, seed, 0, n_bnd_, x_bnd_.data(), p_.data(), normals_.data(),
                     halt, step);
  }

  // θ from the host (pageable: the copy is staged before the call returns) and the Adam moments
  // zeroed, queued on the stream.
  void upload_parameters(const std::vector<T>& flat) {
    if (flat.size() != theta_.size())
      throw std::invalid_argument("expected " + std::to_string(theta_.size()) +
                                  " MLP parameters, got " + std::to_string(flat.size()));
    CUDA_CHECK(cudaMemcpyAsync(theta_.data(), flat.data(), theta_.bytes(), cudaMemcpyHostToDevice,
                               stream_));
    zero_optimiser();
  }

  void zero_optimiser() {
    CUDA_CHECK(cudaMemsetAsync(grad_.data(), 0, grad_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(m_.data(), 0, m_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(v_.data(), 0, v_.bytes(), stream_));
  }

  template <class U>
  std::vector<U> download(const DeviceBuffer<U>& buf) const {
    std::vector<U> out(buf.size());
    if (!out.empty())
      CUDA_CHECK(
          cudaMemcpyAsync(out.data(), buf.data(), buf.bytes(), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }
  void download_to(const DeviceBuffer<T>& src, std::vector<double>& dst) const {
    const std::vector<T> host = download(src);
    dst.assign(host.begin(), host.end());
  }

  // Converts to T and copies; synchronous with respect to the host vector's lifetime.
  void upload(const std::vector<double>& src, DeviceBuffer<T>& dst) {
    std::vector<T> tmp(src.begin(), src.end());
    dst.resize(tmp.size());
    if (!tmp.empty()) {
      CUDA_CHECK(
          cudaMemcpyAsync(dst.data(), tmp.data(), dst.bytes(), cudaMemcpyHostToDevice, stream_));
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
  }

  gpu::MlpPassArgs<T> pass_args(bool gradient, int step, int* halt, double stop_below) {
    gpu::MlpPassArgs<T> a;
    a.theta = theta_.data();
    a.x_int = x_int_.data();
    a.f = f_.data();
    a.n_int = n_int_;
    a.x_bnd = x_bnd_.data();
    a.p = p_.data();
    a.n_bnd = n_bnd_;
    a.inv_n = T(1) / T(std::max(interior_rows(), 1));
    a.lam_k = penalty_ / T(std::max(boundary_rows(), 1));
    a.penalty = double(penalty_);
    if (general_) {
      a.general = true;
      a.coef_a = coef_a_.data();
      a.coef_b = coef_b_.data();
      a.coef_c = coef_c_.data();
      a.coef_alpha = coef_alpha_.data();
      a.coef_beta = coef_beta_.data();
      a.normals = normals_.data();
    }
    a.e = e_.data();
    a.b = b_.data();
    a.partials = gradient ? partials_.data() : nullptr;
    a.scratch = scratch_.data();
    a.losses = losses_.data();
    if (dist_) a.sums = loss_sums_.data();
    a.counter = counter_.data();
    a.halt = halt;
    a.step = step;
    a.stop_below = stop_below;
    return a;
  }

  // The interior and boundary counts N and K of the scales: the union's over ranks.
  int interior_rows() const { return dist_ ? n_int_all_ : n_int_; }
  int boundary_rows() const { return dist_ ? n_bnd_all_ : n_bnd_; }

  // The distributed path's pass on this rank's share (with the backward pass and the reduction
  // into grad_ when `gradient`), then Σe², Σb² and the gradient summed over the ranks (a rank
  // without points adds zeros), and the union's loss parts from those sums, as the pass's last
  // block forms them. Complete on return.
  LossParts ranked_pass(bool gradient) {
    if (!queue_pass(gradient))
      CUDA_CHECK(cudaMemsetAsync(loss_sums_.data(), 0, loss_sums_.bytes(), stream_));
    gpu::allreduce_sum(*comm_, loss_sums_.data(), 2, stream_);
    if (gradient) gpu::allreduce_sum(*comm_, grad_.data(), grad_.size(), stream_);
    CUDA_CHECK(cudaMemcpyAsync(loss_sums_host_.data(), loss_sums_.data(), 2 * sizeof(double),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double se = loss_sums_host_[0], sb = loss_sums_host_[1];
    const double nn = double(std::max(n_int_all_, 1)), kk = double(std::max(n_bnd_all_, 1));
    return LossParts{0.5 * se / nn + 0.5 * double(penalty_) * sb / kk, std::sqrt(se / nn),
                     std::sqrt(sb / kk)};
  }

  // The pass on the current batch (with the reduction into grad_ when `gradient`) queued on the
  // stream; false for an empty batch, which zeroes grad_ (when `gradient`) instead.
  bool queue_pass(bool gradient) {
    if (n_int_ + n_bnd_ == 0) {
      if (gradient) CUDA_CHECK(cudaMemsetAsync(grad_.data(), 0, grad_.bytes(), stream_));
      return false;
    }
    gpu::launch_mlp_pass(stream_, net_, tiling_, pass_args(gradient, 0, nullptr, 0));
    if (gradient)
      gpu::launch_mlp_reduce(stream_, partials_.data(), tiling_.grid, net_.n_params, grad_.data(),
                             gpu::MlpAdamArgs<T>{}, nullptr, 0, tiling_.overlap_reduce);
    return true;
  }

  LossParts read_loss() {
    CUDA_CHECK(cudaMemcpyAsync(losses_host_.data(), losses_.data(), 3 * sizeof(double),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return LossParts{losses_host_[0], losses_host_[1], losses_host_[2]};
  }

  // The graph of a chunk of draws.size() steps, step i drawing first when draws[i].
  cudaGraphExec_t graph_for(const std::vector<bool>& draws, std::uint64_t seed, T beta1, T beta2,
                            T epsilon, double stop_below) {
    GraphKey key{draws, seed, beta1, beta2, epsilon, stop_below};
    return graphs_.get_or_capture(key, stream_, cudaStreamCaptureModeThreadLocal, [&] {
      gpu::MlpAdamArgs<T> adam;
      adam.enabled = true;
      adam.theta = theta_.data();
      adam.m = m_.data();
      adam.v = v_.data();
      adam.beta1 = beta1;
      adam.beta2 = beta2;
      adam.epsilon = epsilon;
      adam.step_consts = consts_.data();
      for (int i = 0; i < int(draws.size()); ++i) {
        if (draws[std::size_t(i)]) enqueue_draw(draw_index_.data() + i, seed, halt_.data(), i);
        gpu::launch_mlp_pass(stream_, net_, tiling_, pass_args(true, i, halt_.data(), stop_below));
        gpu::launch_mlp_reduce(stream_, partials_.data(), tiling_.grid, net_.n_params, grad_.data(),
                               adam, halt_.data(), i, tiling_.overlap_reduce);
      }
    });
  }

  void evaluate_streams(const std::vector<double>& points, std::vector<double>* u,
                        std::vector<double>* gradient, std::vector<double>* laplacian) override {
    const int d = net_.dim;
    const int n = int(points.size()) / d;
    upload(points, eval_x_);
    eval_u_.resize(std::size_t(n));
    eval_grad_.resize(std::size_t(n) * d);
    eval_lap_.resize(std::size_t(n));
    if (n > 0) {
      const gpu::MlpTiling tiling = gpu::plan_mlp_tiling(net_, n, 0, false, tuning_);
      gpu::MlpPassArgs<T> a;
      a.theta = theta_.data();
      a.x_int = eval_x_.data();
      a.n_int = n;
      a.out_u = eval_u_.data();
      a.out_grad = eval_grad_.data();
      a.out_lap = eval_lap_.data();
      gpu::launch_mlp_pass(stream_, net_, tiling, a);
    }
    if (u) download_to(eval_u_, *u);
    if (gradient) download_to(eval_grad_, *gradient);
    if (laplacian) download_to(eval_lap_, *laplacian);
  }

  gpu::MlpNetView<T> net_;
  T penalty_;
  gpu::MlpTuning tuning_;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer<T> theta_, grad_, m_, v_;
  DeviceBuffer<T> x_int_, f_, x_bnd_, p_, normals_, e_, b_, partials_, scratch_;
  // The general rows' coefficients (set_batch, when general_), defaults filled in.
  DeviceBuffer<T> coef_a_, coef_b_, coef_c_, coef_alpha_, coef_beta_;
  bool general_ = false;  // the current batch has general rows (not poisson_dirichlet())
  DeviceBuffer<T> consts_;
  DeviceBuffer<double> losses_;
  DeviceBuffer<int> halt_;
  DeviceBuffer<unsigned> counter_;
  DeviceBuffer<T> eval_x_, eval_u_, eval_grad_, eval_lap_;
  PinnedBuffer<T> consts_host_;
  PinnedBuffer<double> losses_host_;
  PinnedBuffer<T> grad_host_;  // loss_and_gradient_at's read-back
  PinnedBuffer<int> halt_host_;
  PinnedBuffer<std::uint64_t> draw_index_host_;  // the chunk's batch numbers, a step each
  DeviceBuffer<std::uint64_t> draw_index_;       // the graphs' batch numbers, a step each
  std::shared_ptr<Communicator> comm_;
  bool dist_ = false;  // comm_->distributed(): the distributed path (the header comment)
  int n_int_all_ = 0, n_bnd_all_ = 0;  // the union's counts N and K (with dist_)
  DeviceBuffer<double> loss_sums_;     // Σe², Σb² of the pass, then of the union (with dist_)
  PinnedBuffer<double> loss_sums_host_;
  std::unique_ptr<gpu::DeviceSampler> sampler_;  // set by set_problem
  CollocationBatch host_batch_;                  // the batch set_batch was given
  bool device_drawn_ = false;                    // the current batch was drawn on the device
  int n_int_ = 0, n_bnd_ = 0;
  bool planned_ = false;          // tiling_ and the batch buffers are sized for n_int_ + n_bnd_
  bool planned_general_ = false;  // … and tiling_ planned for general rows or not (pass_tuning)
  gpu::MlpTiling tiling_;
  // Chunk shapes repeat with the reports and the draws, but a resample_every prime to
  // report_every could otherwise make one graph per chunk forever: at most kMaxCachedGraphs.
  gpu::GraphCache<GraphKey> graphs_{kMaxCachedGraphs};
};

}  // namespace

template <class T>
std::unique_ptr<MlpBackend<T>> gpu::make_cuda_mlp_backend(const MlpOptions& options,
                                                          const MlpTuning& tuning) {
  if (!gpu::device_available())
    throw std::runtime_error("the CUDA MLP backend was requested but no CUDA device is present");
  return std::make_unique<CudaMlpBackend<T>>(options, tuning);
}

#define RBFPDE_MLP_BACKEND_INSTANTIATE(T)                                                       \
  template std::unique_ptr<MlpBackend<T>> gpu::make_cuda_mlp_backend<T>(const MlpOptions&,      \
                                                                        const gpu::MlpTuning&);
RBFPDE_MLP_BACKEND_INSTANTIATE(float)
RBFPDE_MLP_BACKEND_INSTANTIATE(double)
#undef RBFPDE_MLP_BACKEND_INSTANTIATE

}  // namespace rbfpde
