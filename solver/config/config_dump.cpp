// dump_config: the resolved Config as YAML, every key present, in the order of configs/README.md.
// The output is itself a valid config: load_config reads it back to an equal Config, so a run's
// model.yaml / summary and `rbfpde check` show exactly what was run.
#include <yaml-cpp/yaml.h>

#include "solver/config/config.hpp"
#include "solver/config/yaml_fields.hpp"

namespace rbfpde {
namespace {

using config_detail::format_double;

// Numbers go through format_double (shortest text that reads back exactly) rather than the
// Emitter's fixed precision, which prints 1e-10 as 1.0000000000000000e-10.
YAML::Emitter& number(YAML::Emitter& out, double value) { return out << format_double(value); }

void emit_numbers(YAML::Emitter& out, const std::vector<double>& values) {
  out << YAML::Flow << YAML::BeginSeq;
  for (double value : values) number(out, value);
  out << YAML::EndSeq;
}

// Free text is always double-quoted: a name like "null" or an expression like "-x" must come
// back as the same string.
void emit_text(YAML::Emitter& out, const char* key, const std::string& text) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << text;
}

// A domain as a map; composites hold their parts under `domains`, in the same form.
void emit_domain_map(YAML::Emitter& out, const DomainSpec& domain) {
  out << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << domain.type;
  if (domain.type == "rectangle" || domain.type == "box") {
    out << YAML::Key << "min" << YAML::Value;
    emit_numbers(out, domain.min);
    out << YAML::Key << "max" << YAML::Value;
    emit_numbers(out, domain.max);
  } else if (domain.type == "disk" || domain.type == "ball") {
    out << YAML::Key << "centre" << YAML::Value;
    emit_numbers(out, domain.centre);
    out << YAML::Key << "radius" << YAML::Value;
    number(out, domain.radius);
  } else if (domain.type == "points") {
    // The path as resolved when the config was read (absolute), so that the dump reads the same
    // file from wherever it is written.
    emit_text(out, "file", domain.file);
  } else if (!domain.domains.empty()) {
    out << YAML::Key << "domains" << YAML::Value << YAML::BeginSeq;
    for (const DomainSpec& part : domain.domains) emit_domain_map(out, part);
    out << YAML::EndSeq;
  } else {
    out << YAML::Key << "vertices" << YAML::Value << YAML::BeginSeq;
    for (const auto& vertex : domain.vertices) emit_numbers(out, {vertex[0], vertex[1]});
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

void emit_domain(YAML::Emitter& out, const DomainSpec& domain) {
  out << YAML::Key << "domain" << YAML::Value;
  emit_domain_map(out, domain);
}

void emit_problem(YAML::Emitter& out, const ProblemSpec& problem) {
  out << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
  emit_domain(out, problem.domain);
  out << YAML::Key << "equation" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << problem.equation;
  if (problem.a) emit_text(out, "a", problem.a->text);
  if (!problem.b.empty()) {
    out << YAML::Key << "b" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const ExprSpec& b : problem.b) out << YAML::DoubleQuoted << b.text;
    out << YAML::EndSeq;
  }
  if (problem.c) emit_text(out, "c", problem.c->text);
  if (problem.k) emit_text(out, "k", problem.k->text);
  if (problem.diffusivity) emit_text(out, "diffusivity", problem.diffusivity->text);
  emit_text(out, "f", problem.f.text);
  out << YAML::EndMap;
  if (problem.time) {
    out << YAML::Key << "time" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "start" << YAML::Value;
    number(out, problem.time->start);
    out << YAML::Key << "end" << YAML::Value;
    number(out, problem.time->end);
    out << YAML::EndMap;
  }
  if (problem.initial) emit_text(out, "initial", problem.initial->text);
  out << YAML::Key << "boundary" << YAML::Value << YAML::BeginSeq;
  for (const BoundarySpec& entry : problem.boundary) {
    out << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value << entry.type;
    if (entry.type == "robin") {
      emit_text(out, "alpha", entry.alpha.text);
      emit_text(out, "beta", entry.beta.text);
    }
    emit_text(out, "value", entry.value.text);
    emit_text(out, "where", entry.where.text);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (problem.exact) emit_text(out, "exact", problem.exact->text);
  out << YAML::EndMap;
}

void emit_model(YAML::Emitter& out, const ModelConfig& model) {
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << model.type;
  out << YAML::Key << "neurons" << YAML::Value << model.neurons;
  out << YAML::Key << "init" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "centres" << YAML::Value << model.init_centres;
  out << YAML::Key << "width" << YAML::Value;
  if (model.init_width_auto)
    out << "auto";
  else
    number(out, model.init_width);
  if (!model.init_from.empty()) emit_text(out, "from", model.init_from);
  out << YAML::EndMap;
  out << YAML::Key << "layers" << YAML::Value << YAML::Flow << model.layers;
  out << YAML::Key << "activation" << YAML::Value << model.activation;
  out << YAML::EndMap;
}

void emit_training(YAML::Emitter& out, const TrainingConfig& training) {
  out << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "method" << YAML::Value << training.method;
  out << YAML::Key << "points" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "interior" << YAML::Value << training.points_interior;
  out << YAML::Key << "boundary" << YAML::Value << training.points_boundary;
  out << YAML::Key << "resample_every" << YAML::Value << training.resample_every;
  out << YAML::EndMap;
  out << YAML::Key << "penalty" << YAML::Value;
  number(out, training.penalty);
  out << YAML::Key << "max_cycles" << YAML::Value << training.max_cycles;
  out << YAML::Key << "tolerance" << YAML::Value;
  number(out, training.tolerance);
  out << YAML::Key << "time_limit" << YAML::Value;
  number(out, training.time_limit);
  out << YAML::Key << "patience" << YAML::Value << training.patience;
  out << YAML::Key << "restarts" << YAML::Value << training.restarts;
  out << YAML::Key << "gd" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "steps" << YAML::Value << training.gd_steps;
  out << YAML::Key << "learning_rate" << YAML::Value;
  number(out, training.gd_learning_rate);
  out << YAML::EndMap;
  out << YAML::Key << "cg" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "iterations" << YAML::Value << training.cg_iterations;
  out << YAML::Key << "tolerance" << YAML::Value;
  number(out, training.cg_tolerance);
  out << YAML::EndMap;
  out << YAML::Key << "lm" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "damping" << YAML::Value;
  number(out, training.lm_damping);
  out << YAML::Key << "update" << YAML::Value << training.lm_update;
  out << YAML::Key << "trial_weights" << YAML::Value << training.trial_weights;
  out << YAML::Key << "prepare_factor" << YAML::Value << training.prepare_factor;
  out << YAML::EndMap;
  out << YAML::Key << "adam" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "learning_rate" << YAML::Value;
  number(out, training.adam_learning_rate);
  out << YAML::Key << "decay" << YAML::Value;
  number(out, training.adam_decay);
  out << YAML::EndMap;
  out << YAML::Key << "lbfgs" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "iterations" << YAML::Value << training.lbfgs_iterations;
  out << YAML::Key << "history" << YAML::Value << training.lbfgs_history;
  out << YAML::EndMap;
  out << YAML::Key << "seed" << YAML::Value << training.seed;
  out << YAML::EndMap;
}

void emit_output(YAML::Emitter& out, const Config& config) {
  out << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "backend" << YAML::Value << config.compute.backend;
  out << YAML::Key << "precision" << YAML::Value << config.compute.precision;
  out << YAML::EndMap;
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  emit_text(out, "directory", config.output.directory);
  out << YAML::Key << "resolution" << YAML::Value << YAML::Flow << config.output.resolution;
  out << YAML::Key << "snapshot_every" << YAML::Value << config.output.snapshot_every;
  out << YAML::Key << "report_every" << YAML::Value << config.output.report_every;
  out << YAML::Key << "pictures" << YAML::Value << config.output.pictures;
  out << YAML::EndMap;
}

}  // namespace

std::string dump_config(const Config& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_text(out, "name", config.name);
  emit_problem(out, config.problem);
  emit_model(out, config.model);
  emit_training(out, config.training);
  emit_output(out, config);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace rbfpde
