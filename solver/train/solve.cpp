#include "solver/train/solve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "problems/expression_check.hpp"
#include "solver/train/checkpoint.hpp"
#include "solver/train/memory_check.hpp"
#include "solver/train/model_file.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/solve_mlp.hpp"
#include "solver/train/supervisor.hpp"

namespace rbfpde {

std::string resolve_backend(const std::string& requested) {
  if (requested == "auto") return cuda_device_available() ? "cuda" : "cpu";
  return requested;
}

namespace {

using Clock = std::chrono::steady_clock;

void output_note(const SolveOptions& options, const std::string& text) {
  if (options.progress && !options.quiet) *options.progress << text << "\n";
}

template <class T>
std::unique_ptr<RbfBackend<T>> make_backend(const std::string& which, const BackendOptions& opt) {
  if (which == "cuda") return make_cuda_backend<T>(opt);
  return make_cpu_backend<T>(opt);
}

// model.init.from: a model.yaml of the same dimension and neuron count.
RbfParameters<double> load_initial_model(const Config& config, int dim) {
  const ModelConfig& m = config.model;
  RbfParameters<double> p;
  try {
    p = read_model_yaml(m.init_from);
  } catch (const InputError& e) {
    throw InputError(m.init_from_loc, "model.init.from", e.what());
  }
  if (p.dim != dim)
    throw InputError(m.init_from_loc, "model.init.from",
                     "expected a " + std::to_string(dim) + "D model, found a " +
                         std::to_string(p.dim) + "D one in " + m.init_from);
  if (p.neurons() != m.neurons)
    throw InputError(m.init_from_loc, "model.init.from",
                     "expected " + std::to_string(m.neurons) + " neurons (model.neurons), found " +
                         std::to_string(p.neurons()) + " in " + m.init_from);
  return p;
}

template <class T>
SolveResult solve_rbf_typed(const Config& config, const Problem& problem,
                            const SolveOptions& options, const std::string& backend_name) {
  SolveResult result;
  result.model = "rbf";
  result.backend = backend_name;
  result.precision = config.compute.precision;
  result.directory = config.output.directory;

  const std::shared_ptr<Communicator> comm = options.comm ? options.comm : serial_communicator();
  BackendOptions bopt;
  // Over ranks the CUDA backend takes this rank's GPU and NCCL's sums (make_device_communicator).
  bopt.comm = backend_name == "cuda" ? make_device_communicator(comm) : comm;
  bopt.dim = problem.dim();
  bopt.penalty = config.training.penalty;
  bopt.min_width = minimum_width(problem.domain(), config.training);
  bopt.laplacian_dims = problem.space_dim();
  // A QR factorisation is latency-bound on a GPU and the preconditioned solve's BLAS-3 calls are
  // not; on the CPU the two cost about the same, and QR needs no fallback.
  const std::string& trial_weights = config.training.trial_weights;
  bopt.vp_preconditioned_trials =
      trial_weights == "preconditioned" || (trial_weights == "auto" && backend_name == "cuda");
  bopt.vp_factor_from_trial = config.training.prepare_factor == "trial";
  std::unique_ptr<RbfBackend<T>> backend = make_backend<T>(backend_name, bopt);
  result.device = backend->device_name();
  result.ranks = comm->size();
  result.devices = allgather_strings(*comm, result.device);
  // Batches are drawn on the device when the backend can (the CUDA backend's sampler writes the
  // operator's and the conditions' coefficients too); a space-time problem, or a backend without a
  // sampler, is sampled on the host and handed over by set_batch (variable projection draws one
  // batch, so that costs once). Over ranks every rank samples its share on the host from its own
  // stream (rank_seed), as the device sampler draws one stream for the whole batch.
  if (!problem.has_time() && comm->size() == 1) {
    try {
      backend->set_problem(problem);
    } catch (const std::runtime_error& e) {
      // Drawing batches on the device is an optimisation: without it the host samples them.
      output_note(options, std::string("note: batches will be sampled on the host: ") + e.what());
    }
  }

  RunOutput output(config, problem, options);
  // The supervisor draws the validation set; it writes nothing until the first report.
  Supervisor<RbfParameters<T>> supervisor(config, problem, output);
  // f, the boundary values and exact must be finite where the run evaluates them.
  check_expressions_finite(config.problem, problem, supervisor.validation().points(),
                           output.grid().points);
  // A starting model is read before anything is written, so a bad file costs nothing.
  RbfParameters<double> initial;
  if (!options.resume) {
    if (config.model.init_from.empty()) {
      Rng init_rng(config.training.seed ^ 0x9e3779b97f4a7c15ULL);
      initial = initial_rbf_parameters(problem.domain(), config.model, init_rng).params;
    } else {
      initial = load_initial_model(config, problem.dim());
    }
  }
  Checkpoint<TrainerState<T>> resumed;
  if (options.resume) {
    resumed = resume_run<TrainerState<T>>(config, output);
    supervisor.restore_monitor(resumed.monitor);
  }
  output.create_directory();

  auto model = Supervisor<RbfParameters<T>>::model_of(*backend);
  const double spacing = point_spacing(problem.domain(), config.training.points_interior);
  double box_lo[4], box_hi[4];
  problem.domain().bounding_box(box_lo, box_hi);
  const std::vector<double> lo(box_lo, box_lo + problem.dim()), hi(box_hi, box_hi + problem.dim());
  model.unsound = [spacing, lo, hi](const RbfParameters<T>& p, double max_abs_u) {
    return narrow_neurons(p, spacing, max_abs_u, lo, hi);
  };
  RbfTrainer<T> trainer(config, problem, *backend, comm);
  trainer.set_batch_check([&config, &problem](const CollocationBatch& batch) {
    check_batch_finite(config.problem, problem, batch);
  });
  trainer.set_restart_hooks(supervisor.restart_hooks());
  supervisor.set_regular_reports(
      [&config](long cycle) { return RbfTrainer<T>::regular_report(config.output, cycle); });
  const ReportFn<T> report = [&](long cycle, double seconds, const LossParts& loss,
                                 RbfBackend<T>&, bool final) {
    return supervisor.report(cycle, seconds, loss, model, final);
  };
  if (options.resume) {
    result.outcome = trainer.resume(resumed.state, report, options.should_stop);
  } else {
    result.outcome = trainer.train(initial, report, options.should_stop,
                                   config.model.init_from.empty());
  }

  // The best sound state seen goes back into the backend; the supervisor holds u and Δu of it.
  const auto t0 = Clock::now();
  // The checkpoint continues from the last cycle, whatever state the outputs hold.
  const TrainerState<T> last_state = trainer.state();
  supervisor.finish(model, backend_name, result);
  const RbfParameters<T> params = backend->parameters();
  result.parameters = static_cast<long long>(params.size());
  output.write_history();
  if (output.writes())
    write_model_yaml(output.directory() / "model.yaml", params, config, backend_name);
  output.write_solution(supervisor.u(), supervisor.residual());
  if (output.writes() && vtk_available()) {
    write_points_vtp(output.directory() / "centres.vtp", problem.dim(),
                     std::vector<double>(params.centres.begin(), params.centres.end()),
                     {{"width", 1, std::vector<double>(params.widths.begin(), params.widths.end())},
                      {"weight", 1,
                       std::vector<double>(params.weights.begin(), params.weights.end())}});
  }
  std::vector<T> e, b;
  result.outcome.loss = backend->residuals();
  backend->residual_vectors(e, b);
  Json counts = Json::object();
  counts.set("neurons", params.neurons());
  counts.set("restarts", last_state.restarts);
  // The iteration where the hybrid damping update switched to Nielsen's rule since the last
  // restart (0: it did not).
  if (config.training.lm_update == "hybrid")
    counts.set("damping_nielsen_since", static_cast<long long>(last_state.damping.nielsen_since));
  if (config.training.method == "varpro") {
    // How this process's trial steps solved their weights (training.lm.trial_weights), and how
    // many iterations took the accepted trial's factor (training.lm.prepare_factor).
    const auto trials = backend->vp_trial_counts();
    counts.set("trials_preconditioned", static_cast<long long>(trials.preconditioned));
    counts.set("trials_qr", static_cast<long long>(trials.qr));
    counts.set("prepares_from_trial", static_cast<long long>(trials.factored_from_trial));
  }
  finish_run(config, output, trainer.batch(), e, b, last_state, supervisor.monitor_state(), t0,
             counts, result);
  return result;
}

}  // namespace

SolveResult solve_rbf(const Config& config, const Problem& problem, const SolveOptions& options,
                      const std::string& backend) {
  if (config.compute.precision == "float")
    return solve_rbf_typed<float>(config, problem, options, backend);
  return solve_rbf_typed<double>(config, problem, options, backend);
}

SolveResult solve(const Config& config, const Problem& problem, const SolveOptions& options) {
  const std::string backend = resolve_backend(config.compute.backend);
  if (backend == "cuda" && !cuda_device_available())
    throw InputError(config.compute.backend_loc, "compute.backend",
                     "cuda was asked for, but " + cuda_unavailable_reason() +
                         " (use auto or cpu)");
  if (backend == "cpu") check_host_memory(config, problem.dim());
  check_output_directory(config);
  if (config.compute.backend == "auto" && backend == "cpu" && options.progress && !options.quiet)
    *options.progress << "note: running on the CPU: " << cuda_unavailable_reason() << "\n";
  if (config.model.type == "mlp") return solve_mlp(config, problem, options, backend);
  return solve_rbf(config, problem, options, backend);
}

}  // namespace rbfpde
