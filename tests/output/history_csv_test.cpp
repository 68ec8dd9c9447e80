#include <gtest/gtest.h>

#include <limits>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

namespace rbfpde {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(HistoryCsv, HeaderOnlyWhenEmpty) {
  EXPECT_EQ(HistoryCsv().str(),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error\n");
}

TEST(HistoryCsv, ExactTextWithEmptyCellsForNaN) {
  HistoryCsv h;
  h.add({0, 0.0, 1.0 / 3.0, 0.5, 2e-12, 0.125, 1234567.891234});
  h.add({1, 0.0123456789012, 1e-20, -2.5, 0.1, kNaN, kNaN});
  h.add({2000, 12.5, kNaN, 3, 4, 5e300, 6});
  ASSERT_EQ(h.rows().size(), 3u);
  EXPECT_EQ(h.str(),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error\n"
            "0,0,0.3333333333,0.5,2e-12,0.125,1234567.891\n"
            "1,0.0123456789,1e-20,-2.5,0.1,,\n"
            "2000,12.5,,3,4,5e+300,6\n");
}

TEST(HistoryCsv, FlushWritesTheWholeFileAtomically) {
  const auto dir = test::fresh_dir("history");
  HistoryCsv h;
  h.add({1, 0.5, 0.25, 0.125, 0.0625, kNaN, kNaN});
  h.flush(dir / "history.csv");
  h.add({2, 1.0, 0.2, 0.1, 0.05, kNaN, kNaN});
  h.flush(dir / "history.csv");
  EXPECT_EQ(test::read_text(dir / "history.csv"),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error\n"
            "1,0.5,0.25,0.125,0.0625,,\n"
            "2,1,0.2,0.1,0.05,,\n");
  EXPECT_EQ(test::directory_listing(dir), std::vector<std::string>{"history.csv"});
}

}  // namespace
}  // namespace rbfpde
