// Point-cloud domains: reading CSV (and VTK XML when built with VTK), drawing the given points,
// the nearest-point inside test, and a readable error for each way a file can be wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems/domain.hpp"

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string tmp_file(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(RBFPDE_TEST_TMP);
  const std::string path = std::string(RBFPDE_TEST_TMP) + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

std::string shipped_cloud() { return std::string(RBFPDE_SOURCE_DIR) + "/configs/disk_cloud.csv"; }

// The message of the std::invalid_argument that reading `path` throws ("" and a failure if none).
std::string read_error(const std::string& path) {
  try {
    read_point_cloud(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

TEST(PointCloud, ReadsTheShippedDisk) {
  const PointCloudData data = read_point_cloud(shipped_cloud());
  EXPECT_EQ(data.dim, 2);
  EXPECT_EQ(data.boundary_begin, 4000u);
  ASSERT_EQ(data.points.size(), 2u * 4600);
  ASSERT_EQ(data.normals.size(), 2u * 600);
  for (std::size_t i = 0; i < 600; ++i) {
    const double* x = &data.points[2 * (4000 + i)];
    EXPECT_NEAR(std::hypot(x[0], x[1]), 1.0, 1e-14);
    EXPECT_NEAR(data.normals[2 * i], x[0], 1e-14);
    EXPECT_NEAR(data.normals[2 * i + 1], x[1], 1e-14);
  }
}

TEST(PointCloud, DiskCloudBehavesLikeTheDisk) {
  const auto cloud = make_point_cloud(read_point_cloud(shipped_cloud()));
  EXPECT_EQ(cloud->type(), "points");
  EXPECT_EQ(cloud->dim(), 2);
  double lo[2], hi[2];
  cloud->bounding_box(lo, hi);
  EXPECT_DOUBLE_EQ(lo[0], -1.0);
  EXPECT_DOUBLE_EQ(hi[0], 1.0);
  EXPECT_NEAR(lo[1], -1.0, 1e-4);  // the boundary points miss (0, ±1) by at most 1 − cos(π/600)
  // Inside test: the disk's, away from a thin band at the circle (the tangent planes of 600
  // points deviate from the circle by at most 1 − cos(π/600) ≈ 1.4e-5).
  Rng rng(2);
  int mismatches = 0, checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x[2] = {uniform(rng, -1.2, 1.2), uniform(rng, -1.2, 1.2)};
    const double r = std::hypot(x[0], x[1]);
    if (std::abs(r - 1) < 2e-5) continue;
    ++checked;
    mismatches += cloud->contains(x) != (r < 1);
    // The distance to the nearest boundary point's tangent plane: |1 − r| up to the same band.
    EXPECT_NEAR(cloud->distance_to_boundary(x), std::abs(1 - r), 2e-5 + 0.01 * std::abs(1 - r))
        << x[0] << ", " << x[1];
  }
  EXPECT_EQ(mismatches, 0) << checked;
  // Every given point is inside (the domain is closed; the disk is convex).
  const DomainGeometry g = cloud->geometry();
  for (std::size_t i = 0; i < g.points.size() / 2; ++i)
    EXPECT_TRUE(cloud->contains(&g.points[2 * i]));
  // Monte Carlo with 2¹⁶ draws in the box [−1, 1]²: 4 standard errors.
  const double p = kPi / 4;
  EXPECT_NEAR(cloud->measure(), kPi, 4 * 4 * std::sqrt(p * (1 - p) / 65536));
  EXPECT_EQ(g.type, "points");
  EXPECT_EQ(g.boundary_begin, 4000u);
  EXPECT_EQ(g.normals.size(), 1200u);
}

TEST(PointCloud, DrawsTheGivenPointsUniformly) {
  const PointCloudData data = read_point_cloud(shipped_cloud());
  const auto cloud = make_point_cloud(data);
  const std::size_t n = 60000;
  Rng rng(4);
  std::vector<double> in(2 * n);
  cloud->sample_interior(rng, n, in.data());
  std::map<std::pair<double, double>, std::size_t> index;
  for (std::size_t i = 0; i < data.boundary_begin; ++i)
    index[{data.points[2 * i], data.points[2 * i + 1]}] = i;
  std::vector<double> count(data.boundary_begin, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = index.find({in[2 * i], in[2 * i + 1]});
    ASSERT_NE(it, index.end()) << "draw " << i << " is not a given interior point";
    ++count[it->second];
  }
  // Chi-square over the 4000 points (3999 degrees of freedom): within 5 standard deviations.
  const double expected = double(n) / data.boundary_begin;
  double chi2 = 0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
  const double dof = double(data.boundary_begin - 1);
  EXPECT_LT(std::abs(chi2 - dof), 5 * std::sqrt(2 * dof)) << chi2;

  std::vector<double> bp(2 * 5000), bn(2 * 5000);
  cloud->sample_boundary(rng, 5000, bp.data(), bn.data());
  std::set<std::size_t> seen;
  for (std::size_t i = 0; i < 5000; ++i) {
    // Boundary points of the shipped cloud are their own normals.
    EXPECT_NEAR(bp[2 * i], bn[2 * i], 1e-14);
    EXPECT_NEAR(bp[2 * i + 1], bn[2 * i + 1], 1e-14);
    seen.insert(std::size_t(std::lround((std::atan2(bp[2 * i + 1], bp[2 * i]) + 2 * kPi) /
                                        (2 * kPi / 600))) %
                600);
  }
  EXPECT_GT(seen.size(), 590u);  // 5000 draws of 600 points miss about 600·e^(−8.3) ≈ 0.15
}

TEST(PointCloud, ThreeDimensionalCsvAndColumnsInAnyOrder) {
  std::string text = "# a cube's centre and two of its faces\nboundary, nz, z, x, y, nx, ny\n";
  text += "0,,0.5,0.5,0.5,,\n";
  text += "1,0,0.5,1,0.5,2,0\n";  // length 2: normalised? no, an error; see the next test
  EXPECT_NE(read_error(tmp_file("cube_bad.csv", text)).find("length 2"), std::string::npos);
  text = "boundary, nz, z, x, y, nx, ny\n0,,0.5,0.5,0.5,,\n";
  // Unit normals up to rounding are normalised.
  text += "1,0,0.5,1,0.5,1.0000001,0\n1,-1,0,0.5,0.5,0,0\n1,1,1,0.5,0.5,0,0\n";
  text += "1,0,0.5,0,0.5,-1,0\n1,0,0.5,0.5,0,0,-1\n1,0,0.5,0.5,1,0,1\n";
  const PointCloudData data = read_point_cloud(tmp_file("cube.csv", text));
  EXPECT_EQ(data.dim, 3);
  EXPECT_EQ(data.boundary_begin, 1u);
  ASSERT_EQ(data.normals.size(), 18u);
  EXPECT_DOUBLE_EQ(data.normals[0], 1.0);
  EXPECT_EQ(data.points[0], 0.5);
  EXPECT_EQ(data.points[3 + 0], 1.0);  // the first boundary row: x = 1
  const auto cube = make_point_cloud(data);
  const double centre[3] = {0.5, 0.5, 0.5}, near_face[3] = {0.9, 0.5, 0.5},
               outside[3] = {1.0, 0.5, 0.5 + 1e-3};
  EXPECT_TRUE(cube->contains(centre));
  EXPECT_TRUE(cube->contains(near_face));
  EXPECT_NEAR(cube->distance_to_boundary(near_face), 0.1, 1e-15);
  // A point past the top face (z = 1) by 0.5: outside the bounding box.
  const double above[3] = {0.5, 0.5, 1.5};
  EXPECT_FALSE(cube->contains(above));
  EXPECT_TRUE(cube->contains(outside));  // in the bounding box and on the plane x = 1
}

struct BadCloud {
  const char* name;
  const char* text;
  const char* expected;  // after "<path>:"
};

TEST(PointCloud, MalformedCsvNamesFileLineAndExpectation) {
  const BadCloud cases[] = {
      {"missing_column.csv", "x,y,boundary,nx\n0,0,0,\n",
       "1: expected a header x,y[,z],boundary,nx,ny[,nz] (2D), missing the column 'ny'"},
      {"unknown_column.csv", "x,y,boundary,nx,ny,colour\n",
       "1: expected a header x,y[,z],boundary,nx,ny[,nz], found the column 'colour'"},
      {"not_a_number.csv", "x,y,boundary,nx,ny\n0,0,0,,\n1,abc,1,1,0\n",
       "3: column 'y': expected a finite number, found 'abc'"},
      {"zero_normal.csv", "x,y,boundary,nx,ny\n0,0,0,,\n1,0,1,0,0\n",
       "3: expected an outward unit normal, found the zero vector"},
      {"long_normal.csv", "x,y,boundary,nx,ny\n0,0,0,,\n1,0,1,3,4\n",
       "3: expected an outward unit normal, found one of length 5"},
      {"flag.csv", "x,y,boundary,nx,ny\n0,0,2,,\n",
       "2: column 'boundary': expected 0 or 1, found '2'"},
      {"dimension.csv", "x,y,boundary,nx,ny\n\n0,0,0,,\n1,0,0.5,1,0,0,0\n",
       "4: expected 5 values (2D, as the header), found 7"},
      {"missing_normal.csv", "x,y,boundary,nx,ny\n0,0,0,,\n1,0,1,,0\n",
       "3: column 'nx': expected a finite number, found ''"},
      {"duplicate.csv", "x,y,x,boundary,nx,ny\n", "1: column 'x' appears twice"},
  };
  for (const BadCloud& c : cases) {
    const std::string path = tmp_file(c.name, c.text);
    EXPECT_EQ(read_error(path), path + ":" + c.expected);
  }
  const std::string no_boundary = tmp_file("no_boundary.csv", "x,y,boundary,nx,ny\n0,0,0,,\n");
  EXPECT_EQ(read_error(no_boundary),
            no_boundary + ": expected boundary points (boundary 1), found none");
  const std::string no_interior = tmp_file("no_interior.csv", "x,y,boundary,nx,ny\n1,0,1,1,0\n");
  EXPECT_EQ(read_error(no_interior),
            no_interior + ": expected interior points (boundary 0), found none");
  const std::string empty = tmp_file("empty.csv", "# nothing\n\n");
  EXPECT_EQ(read_error(empty),
            empty + ": expected a header x,y[,z],boundary,nx,ny[,nz], found an empty file");
  const std::string missing = std::string(RBFPDE_TEST_TMP) + "/no_such_cloud.csv";
  EXPECT_EQ(read_error(missing), missing + ": cannot read file: No such file or directory");
  EXPECT_EQ(read_error(RBFPDE_TEST_TMP "/cloud.txt"),
            RBFPDE_TEST_TMP "/cloud.txt: expected a .csv, .vtp or .vtu file");
}

// A square's centre region and its four edge midpoints, as VTK XML PolyData (ASCII).
std::string square_vtp(bool with_normals) {
  std::string s =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "<PolyData><Piece NumberOfPoints=\"6\" NumberOfVerts=\"0\" NumberOfLines=\"0\" "
      "NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n<PointData>\n"
      "<DataArray type=\"Float64\" Name=\"boundary\" format=\"ascii\">0 0 1 1 1 1</DataArray>\n";
  if (with_normals) {
    s += "<DataArray type=\"Float64\" Name=\"Normals\" NumberOfComponents=\"3\" format=\"ascii\">"
         "0 0 0  0 0 0  1 0 0  -1 0 0  0 1 0  0 -1 0</DataArray>\n";
  }
  s += "</PointData>\n<Points>\n"
       "<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">"
       "0.4 0.5 0  0.6 0.5 0  1 0.5 0  0 0.5 0  0.5 1 0  0.5 0 0</DataArray>\n"
       "</Points>\n</Piece></PolyData></VTKFile>\n";
  return s;
}

#ifdef RBFPDE_HAVE_VTK
TEST(PointCloud, ReadsVtkPolyData) {
  const PointCloudData data = read_point_cloud(tmp_file("square.vtp", square_vtp(true)));
  EXPECT_EQ(data.dim, 2);  // every z is 0
  EXPECT_EQ(data.boundary_begin, 2u);
  const std::vector<double> normals = {1, 0, -1, 0, 0, 1, 0, -1};
  EXPECT_EQ(data.normals, normals);
  EXPECT_EQ(data.points[4], 1.0);
  const std::string no_normals = tmp_file("square_no_normals.vtp", square_vtp(false));
  EXPECT_EQ(read_error(no_normals),
            no_normals + ": expected a point array \"Normals\", found none");
  const std::string garbage = tmp_file("garbage.vtp", "not xml at all\n");
  EXPECT_NE(read_error(garbage).find(garbage + ": expected a VTK XML PolyData"), std::string::npos);
}
#else
TEST(PointCloud, VtkNeedsAVtkBuild) {
  const std::string path = tmp_file("square.vtp", square_vtp(true));
  EXPECT_NE(read_error(path).find("this build has no VTK"), std::string::npos);
}
#endif

TEST(PointCloud, FactoryChecksItsData) {
  PointCloudData data;
  data.dim = 2;
  data.points = {0, 0, 1, 0};
  data.normals = {1, 0};
  data.boundary_begin = 1;
  EXPECT_THROW(make_point_cloud(data), std::invalid_argument);  // flat: every y is 0
  data.points = {0, 0, 1, 0, 0, 1};
  data.normals = {1, 0, 0, 1};
  EXPECT_NO_THROW(make_point_cloud(data));
  data.boundary_begin = 0;
  EXPECT_THROW(make_point_cloud(data), std::invalid_argument);
}

}  // namespace
}  // namespace rbfpde
