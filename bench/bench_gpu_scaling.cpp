// Data-parallel scaling of the CUDA RBF backend over ranks (docs/architecture.md, "Distributed
// runs"): one training cycle of a method at a size, run under mpirun with one rank per GPU.
// Prints one Markdown row:
//   step ms    — one whole cycle over the ranks, the time of the slowest rank (median of the
//                repeats): varpro vp_prepare + vp_try + lm_reject, lm lm_prepare + lm_try +
//                lm_reject, gdcg one gdcg_cycle (1 GD step, 50 CG iterations);
//   local ms   — the same cycle on this rank's share alone, with a backend that sums nothing
//                (the slowest rank): the compute a rank cannot share; step − local is what the
//                sums over the ranks and the redundant small solves cost;
//   sum ms     — the collectives of the method's size alone, on the device: the all-reduce of
//                JᵀJ (p × p) for lm, of the Gram matrix (m × m) for gdcg, and for varpro the
//                all-reduce of the Gram matrix of [B | z] ((p + 1)²) and the all-gather of each
//                rank's top block (m × (m + p + 1));
//   efficiency — against the 1-rank step given with --base-ms: t₁ / (R·t_R) for strong scaling
//                (a fixed union), t₁ / t_R for weak scaling (a fixed share per rank).
// The batch is the config's problem sampled as a run samples it over ranks: each rank draws its
// share from its own stream (rank_seed). Timings are wall clock between barriers around calls
// that return to the host with the device idle (each returns the loss), after a warm-up cycle.
// Usage (from the repository root):
//   mpirun -np R bench_gpu_scaling [--config configs/cube3d.yaml] [--neurons 512]
//     [--points 400000] [--weak] [--method varpro|lm|gdcg] [--repeats 5] [--base-ms T]
//   --points: interior points of the union (strong scaling) or of each rank (--weak); boundary
//   points are a fifth as many.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "kernels/cuda/common/device_comm.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"

namespace {

using namespace rbfpde;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string config = "configs/cube3d.yaml";
  std::string method = "varpro";
  int neurons = 512;
  long points = 400000;
  bool weak = false;
  int repeats = 5;
  double base_ms = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
      return argv[++i];
    };
    if (s == "--config")
      a.config = value();
    else if (s == "--method")
      a.method = value();
    else if (s == "--neurons")
      a.neurons = std::stoi(value());
    else if (s == "--points")
      a.points = std::stol(value());
    else if (s == "--weak")
      a.weak = true;
    else if (s == "--repeats")
      a.repeats = std::stoi(value());
    else if (s == "--base-ms")
      a.base_ms = std::stod(value());
    else
      throw std::invalid_argument("unknown argument " + s);
  }
  if (a.method != "varpro" && a.method != "lm" && a.method != "gdcg")
    throw std::invalid_argument("--method: varpro, lm or gdcg, found " + a.method);
  if (a.neurons < 1 || a.points < 1 || a.repeats < 1)
    throw std::invalid_argument("--neurons, --points and --repeats must be positive");
  return a;
}

// The slowest rank's value (a collective).
double max_over_ranks(Communicator& comm, double mine) {
  std::vector<double> all(std::size_t(comm.size()));
  comm.allgather(&mine, 1, all.data());
  return *std::max_element(all.begin(), all.end());
}

// Median over `repeats` of the slowest rank's wall time of `work`, in ms, after one warm-up.
double time_ms(Communicator& comm, int repeats, const std::function<void()>& work) {
  work();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    comm.barrier();
    const auto t0 = Clock::now();
    work();
    const double mine = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    times.push_back(max_over_ranks(comm, mine));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::function<void()> cycle(RbfBackend<double>& be, const std::string& method) {
  if (method == "varpro")
    return [&be] {
      be.vp_prepare();
      be.vp_try(1e-3);
      be.lm_reject();
    };
  if (method == "lm")
    return [&be] {
      be.lm_prepare();
      be.lm_try(1e-3);
      be.lm_reject();
    };
  return [&be] {
    RbfBackend<double>::GdcgCycle c;
    c.gd_steps = 1;
    c.learning_rate = 1e-4;
    c.cg_iterations = 50;
    be.gdcg_cycle(c);
  };
}

int run(int argc, char** argv) {
  const std::shared_ptr<Communicator> world = mpi_initialize(&argc, &argv);
  const Args args = parse(argc, argv);
  const int ranks = world->size(), rank = world->rank();
  if (!cuda_device_available()) throw std::runtime_error("no CUDA device");
  // Selects this rank's GPU and, over several ranks, makes the NCCL communicator.
  const std::shared_ptr<Communicator> comm = make_device_communicator(world);

  const Config config = load_config(args.config, {"model.neurons=" + std::to_string(args.neurons)});
  const Problem problem = Problem::build(config.problem);
  const int dim = problem.dim();
  const std::size_t n_union = std::size_t(args.weak ? args.points * ranks : args.points);
  const std::size_t k_union = n_union / 5;
  CollocationBatch mine;
  {
    Rng rng(rank_seed(config.training.seed, rank));
    problem.sample(rng, share_of(n_union, rank, ranks).count, share_of(k_union, rank, ranks).count,
                   mine);
  }
  Rng init_rng(config.training.seed);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, init_rng);
  const int m = init.params.neurons();
  const int p = args.method == "lm" ? m * (dim + 2) : args.method == "varpro" ? m * (dim + 1) : m;

  BackendOptions options;
  options.dim = dim;
  options.penalty = config.training.penalty;
  options.min_width = minimum_width(problem.domain(), config.training);
  options.laplacian_dims = problem.space_dim();

  // The cycle's median time on a backend that sums over `sums` (null: sums nothing), from the
  // initial network on this rank's share.
  const auto time_cycle = [&](std::shared_ptr<Communicator> sums) {
    options.comm = std::move(sums);
    std::unique_ptr<RbfBackend<double>> be = make_cuda_backend<double>(options);
    be->set_parameters(init.params);
    be->set_batch(mine);
    if (args.method == "varpro") be->solve_weights_qr();
    return time_ms(*world, args.repeats, cycle(*be, args.method));
  };
  double local_ms = 0, sum_ms = 0;
  const double step_ms = time_cycle(comm);
  if (ranks > 1) {
    local_ms = time_cycle(nullptr);
    // The collectives of the method's size on the device, as the backend runs them: varpro
    // all-reduces the Gram matrix of [B | z] ((p + 1)² values) and all-gathers each rank's top
    // block (m × (m + p + 1)); lm all-reduces JᵀJ (p²); gdcg the Gram matrix (m²).
    const std::size_t sum_n = args.method == "varpro" ? std::size_t(p + 1) * std::size_t(p + 1)
                              : args.method == "lm"   ? std::size_t(p) * std::size_t(p)
                                                      : std::size_t(m) * std::size_t(m);
    const std::size_t gather_n =
        args.method == "varpro" ? std::size_t(m) * std::size_t(m + p + 1) : 0;
    gpu::DeviceBuffer<double> sums(sum_n), mine_top(std::max<std::size_t>(gather_n, 1)),
        all_top(std::max<std::size_t>(gather_n * std::size_t(ranks), 1));
    if (cudaMemset(sums.data(), 0, sums.bytes()) != cudaSuccess ||
        cudaMemset(mine_top.data(), 0, mine_top.bytes()) != cudaSuccess)
      throw std::runtime_error("cudaMemset of the collective buffers failed");
    sum_ms = time_ms(*world, args.repeats, [&] {
      gpu::allreduce_sum(*comm, sums.data(), sum_n, nullptr);
      if (gather_n > 0) gpu::allgather(*comm, mine_top.data(), gather_n, all_top.data(), nullptr);
    });
  } else {
    local_ms = step_ms;
  }

  if (rank == 0) {
    double efficiency = 0;
    if (args.base_ms > 0)
      efficiency = args.weak ? args.base_ms / step_ms : args.base_ms / (ranks * step_ms);
    char eff[32] = "—";
    if (efficiency > 0) std::snprintf(eff, sizeof eff, "%.0f %%", 100 * efficiency);
    std::printf("| %s | %s | %d | %d | %d | %zu | %zu | %.2f | %.2f | %.2f | %s | %s |\n",
                args.weak ? "weak" : "strong", args.method.c_str(), ranks, m, p, n_union + k_union,
                (n_union + k_union) / std::size_t(ranks), step_ms, local_ms, sum_ms,
                comm->name().c_str(), eff);
    std::fflush(stdout);
  }
  world->barrier();
  mpi_finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_scaling: %s\n", e.what());
    world_communicator()->abort(std::string("bench_gpu_scaling: ") + e.what(), 1);
  }
}
