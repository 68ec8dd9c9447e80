#include <gtest/gtest.h>

#include <limits>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

namespace rbfpde {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(HistoryCsv, HeaderOnlyWhenEmpty) {
  EXPECT_EQ(HistoryCsv().str(),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error,val_rms_interior,"
            "val_rms_boundary\n");
}

TEST(HistoryCsv, ExactTextWithEmptyCellsForNaN) {
  HistoryCsv h;
  h.add({0, 0.0, 1.0 / 3.0, 0.5, 2e-12, 0.125, 1234567.891234, 0.75, 3e-12});
  h.add({1, 0.0123456789012, 1e-20, -2.5, 0.1, kNaN, kNaN, 1.0 / 7.0, 2.5e-7});
  h.add({2000, 12.5, kNaN, 3, 4, 5e300, 6, kNaN, kNaN});
  ASSERT_EQ(h.rows().size(), 3u);
  EXPECT_EQ(h.rows()[1].val_rms_interior, 1.0 / 7.0);
  EXPECT_EQ(h.rows()[1].val_rms_boundary, 2.5e-7);
  EXPECT_EQ(h.str(),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error,val_rms_interior,"
            "val_rms_boundary\n"
            "0,0,0.3333333333,0.5,2e-12,0.125,1234567.891,0.75,3e-12\n"
            "1,0.0123456789,1e-20,-2.5,0.1,,,0.1428571429,2.5e-07\n"
            "2000,12.5,,3,4,5e+300,6,,\n");
}

TEST(HistoryCsv, FlushWritesTheWholeFileAtomically) {
  const auto dir = test::fresh_dir("history");
  HistoryCsv h;
  h.add({1, 0.5, 0.25, 0.125, 0.0625, kNaN, kNaN, 0.5, 0.25});
  h.flush(dir / "history.csv");
  h.add({2, 1.0, 0.2, 0.1, 0.05, kNaN, kNaN, 0.4, 0.125});
  h.flush(dir / "history.csv");
  EXPECT_EQ(test::read_text(dir / "history.csv"),
            "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error,val_rms_interior,"
            "val_rms_boundary\n"
            "1,0.5,0.25,0.125,0.0625,,,0.5,0.25\n"
            "2,1,0.2,0.1,0.05,,,0.4,0.125\n");
  EXPECT_EQ(test::directory_listing(dir), std::vector<std::string>{"history.csv"});
}

TEST(HistoryCsv, ValidationColumnsAreTheLastTwoAndTakeTheirFields) {
  HistoryCsv h;
  h.add({7, 2.0, 1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3});
  const std::string text = h.str();
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header.substr(header.rfind(',', header.rfind(',') - 1) + 1),
            "val_rms_interior,val_rms_boundary");
  EXPECT_EQ(text.substr(text.find('\n') + 1), "7,2,0.001,0.002,0.003,0.004,0.005,0.006,0.007\n");
}

}  // namespace
}  // namespace rbfpde
