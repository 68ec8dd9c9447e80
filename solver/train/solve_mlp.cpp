#include "solver/train/solve_mlp.hpp"

#include <chrono>

#include "kernels/comm.hpp"
#include "problems/expression_check.hpp"
#include "solver/train/checkpoint.hpp"
#include "solver/train/mlp_model.hpp"
#include "solver/train/mlp_trainer.hpp"
#include "solver/train/supervisor.hpp"

namespace rbfpde {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
SolveResult solve_mlp_typed(const Config& config, const Problem& problem,
                            const SolveOptions& options, std::string backend_name) {
  if (!config.model.init_from.empty())
    throw InputError(config.model.init_from_loc, "model.init.from",
                     "starting from a model file is not available for the MLP");
  RunOutput output(config, problem, options);
  // The supervisor draws the validation set; it writes nothing until the first report.
  Supervisor<std::vector<T>> supervisor(config, problem, output);
  // f, the boundary values and exact must be finite where the run evaluates them.
  check_expressions_finite(config.problem, problem, supervisor.validation().points(),
                           output.grid().points);
  if (backend_name == "cuda" && !cuda_mlp_backend_built()) {
    output.note("note: this build has no CUDA MLP backend: training the MLP on the CPU");
    backend_name = "cpu";
  }
  if (backend_name == "cuda" && config.training.method == "lm") {
    output.note("note: the MLP's Jacobian (training.method lm) is computed by the CPU backend: "
                "training the MLP on the CPU");
    backend_name = "cpu";
  }
  const std::shared_ptr<Communicator> comm = options.comm ? options.comm : serial_communicator();
  SolveResult result;
  result.model = "mlp";
  result.backend = backend_name;
  result.precision = config.compute.precision;
  result.directory = config.output.directory;

  const MlpShape shape = mlp_shape(config.model, problem.domain());
  MlpOptions mopt = mlp_backend_options(shape, config.training.penalty);
  mopt.laplacian_dims = problem.space_dim();
  // Over ranks the CUDA backend takes this rank's GPU and NCCL's sums (make_device_communicator).
  mopt.comm = backend_name == "cuda" ? make_device_communicator(comm) : comm;
  std::unique_ptr<MlpBackend<T>> backend =
      backend_name == "cuda" ? make_cuda_mlp_backend<T>(mopt) : make_cpu_mlp_backend<T>(mopt);
  result.device = backend->device_name();
  result.ranks = comm->size();
  result.devices = allgather_strings(*comm, result.device);
  // The device sampler draws Poisson/Dirichlet batches only (it evaluates f and the boundary
  // values, not the operator's or the conditions' coefficients, nor a space-time domain): any
  // other problem is sampled on the host and handed over by set_batch. Over ranks every rank
  // samples its share on the host from its own stream (rank_seed).
  if (problem.poisson_dirichlet() && comm->size() == 1) {
    try {
      backend->set_problem(problem);
    } catch (const std::runtime_error& e) {
      // Drawing batches on the device is an optimisation: without it the host samples them.
      output.note(std::string("note: batches will be sampled on the host: ") + e.what());
    }
  }

  // A checkpoint is read before anything is written, so a bad one costs nothing.
  Checkpoint<MlpTrainerState<T>> resumed;
  if (options.resume) {
    resumed = resume_run<MlpTrainerState<T>>(config, output);
    supervisor.restore_monitor(resumed.monitor);
  }
  // The initial weights come from their own stream, so that the batches drawn from the
  // training seed are the same whatever the network's size (as for the RBF centres).
  Rng init_rng(config.training.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::vector<double> initial =
      options.resume ? std::vector<double>{} : initial_mlp_parameters(shape, init_rng);
  output.create_directory();

  auto model = Supervisor<std::vector<T>>::model_of(*backend);
  MlpTrainer<T> trainer(config, problem, *backend, comm);
  trainer.set_batch_check([&config, &problem](const CollocationBatch& batch) {
    check_batch_finite(config.problem, problem, batch);
  });
  const MlpReportFn<T> report = [&](long cycle, double seconds, const LossParts& loss,
                                    MlpBackend<T>&, bool final) {
    return supervisor.report(cycle, seconds, loss, model, final);
  };
  result.outcome = options.resume ? trainer.resume(resumed.state, report, options.should_stop)
                                  : trainer.train(initial, report, options.should_stop);

  // The best sound state seen goes back into the backend; the supervisor holds u and Δu of it.
  const auto t0 = Clock::now();
  // The checkpoint continues from the last cycle, whatever state the outputs hold.
  const MlpTrainerState<T> last_state = trainer.state();
  supervisor.finish(model, backend_name, result);
  const std::vector<T> params = backend->parameters();
  result.parameters = static_cast<long long>(params.size());
  output.write_history();
  if (output.writes())
    write_mlp_model_yaml(output.directory() / "model.yaml", shape, params, config, backend_name);
  output.write_solution(supervisor.u(), supervisor.residual());
  std::vector<T> e, b;
  result.outcome.loss = backend->residuals();
  backend->residual_vectors(e, b);
  Json counts = Json::object();
  Json layers = Json::array();
  for (int w : shape.hidden) layers.push(w);
  counts.set("layers", layers);
  counts.set("activation", shape.activation);
  finish_run(config, output, trainer.batch(), e, b, last_state, supervisor.monitor_state(), t0,
             counts, result);
  return result;
}

}  // namespace

SolveResult solve_mlp(const Config& config, const Problem& problem, const SolveOptions& options,
                      const std::string& backend) {
  if (config.compute.precision == "float")
    return solve_mlp_typed<float>(config, problem, options, backend);
  return solve_mlp_typed<double>(config, problem, options, backend);
}

}  // namespace rbfpde
