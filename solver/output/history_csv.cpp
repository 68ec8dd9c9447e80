// history.csv: one row per report; error columns are empty when there is no exact solution.
#include <cmath>
#include <cstdio>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

void append_cell(std::string& out, double v) {
  out += ',';
  if (std::isnan(v)) return;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  out += buf;
}

}  // namespace

std::string HistoryCsv::str() const {
  std::string out =
      "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error,val_rms_interior,"
      "val_rms_boundary\n";
  for (const Row& r : rows_) {
    out += std::to_string(r.cycle);
    for (double v : {r.seconds, r.loss, r.rms_interior, r.rms_boundary, r.rel_l2_error, r.max_error,
                     r.val_rms_interior, r.val_rms_boundary})
      append_cell(out, v);
    out += '\n';
  }
  return out;
}

}  // namespace rbfpde
