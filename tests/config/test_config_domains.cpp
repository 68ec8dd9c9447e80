// Composite and point-cloud domains in configs: they load (nested, with the cloud file found next
// to the config), dump and load back the same, and each mistake is one located line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "problems/problem.hpp"
#include "tests/config/config_test_util.hpp"

namespace rbfpde {
namespace {

using testing::load_error;
using testing::shipped_config;
using testing::tmp_dir;
using testing::write_tmp;

std::string with_domain(const std::string& domain) {
  return "problem:\n  domain: " + domain +
         "\n  equation: {f: \"1\"}\n  boundary:\n    - {type: dirichlet, value: \"0\"}\n";
}

const char* const kCloud =
    "x,y,boundary,nx,ny\n0.5,0.5,0,,\n0,0.5,1,-1,0\n1,0.5,1,1,0\n"
    "0.5,0,1,0,-1\n0.5,1,1,0,1\n";

void expect_same_domain(const DomainSpec& a, const DomainSpec& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.centre, b.centre);
  EXPECT_EQ(a.radius, b.radius);
  EXPECT_EQ(a.vertices, b.vertices);
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.key, b.key);
  ASSERT_EQ(a.domains.size(), b.domains.size());
  for (std::size_t i = 0; i < a.domains.size(); ++i) expect_same_domain(a.domains[i], b.domains[i]);
}

TEST(ConfigDomains, NestedCompositeLoadsAndRoundTrips) {
  const std::string path = write_tmp(
      "csg_nested.yaml",
      with_domain("\n    type: difference\n    domains:\n"
                  "      - {type: rectangle, min: [0, 0], max: [1, 1]}\n"
                  "      - type: union\n        domains:\n"
                  "          - {type: disk, centre: [0.3, 0.5], radius: 0.1}\n"
                  "          - {type: polygon, vertices: [[0.6, 0.4], [0.8, 0.4], [0.7, 0.6]]}"));
  const Config c = load_config(path);
  EXPECT_EQ(c.problem.dim, 2);
  const DomainSpec& d = c.problem.domain;
  EXPECT_EQ(d.type, "difference");
  ASSERT_EQ(d.domains.size(), 2u);
  EXPECT_EQ(d.domains[0].type, "rectangle");
  EXPECT_EQ(d.domains[1].type, "union");
  EXPECT_EQ(d.domains[1].key, "problem.domain.domains[1]");
  ASSERT_EQ(d.domains[1].domains.size(), 2u);
  EXPECT_EQ(d.domains[1].domains[0].radius, 0.1);
  EXPECT_EQ(d.domains[1].domains[1].vertices.size(), 3u);
  EXPECT_EQ(d.domains[1].domains[1].loc.line, 9);

  const std::string text = dump_config(c);
  const Config back = load_config(write_tmp("csg_nested_dump.yaml", text));
  expect_same_domain(c.problem.domain, back.problem.domain);
  EXPECT_EQ(dump_config(back), text);

  const Problem problem = Problem::build(c.problem);
  EXPECT_EQ(problem.domain().type(), "difference");
  const double hole[2] = {0.3, 0.5}, solid[2] = {0.1, 0.1};
  EXPECT_FALSE(problem.domain().contains(hole));
  EXPECT_TRUE(problem.domain().contains(solid));
}

TEST(ConfigDomains, ShippedCompositeConfigsLoadAndRoundTrip) {
  for (const char* file : {"square_holes_dirichlet.yaml", "box_ball.yaml", "disk_cloud.yaml"}) {
    SCOPED_TRACE(file);
    const Config c = load_config(shipped_config(file));
    const std::string text = dump_config(c);
    const Config back = load_config(write_tmp(std::string("dump_") + file, text));
    expect_same_domain(c.problem.domain, back.problem.domain);
    EXPECT_EQ(dump_config(back), text);
    EXPECT_NO_THROW(Problem::build(c.problem));
  }
  EXPECT_EQ(load_config(shipped_config("box_ball.yaml")).problem.dim, 3);
}

TEST(ConfigDomains, CloudFileIsRelativeToTheConfig) {
  const std::string dir = tmp_dir() + "/cloud_dir";
  std::filesystem::create_directories(dir);
  write_tmp("cloud_dir/square.csv", kCloud);
  const std::string path =
      write_tmp("cloud_dir/cloud.yaml", with_domain("{type: points, file: square.csv}"));
  const Config c = load_config(path);
  EXPECT_EQ(c.problem.dim, 2);
  EXPECT_EQ(c.problem.domain.type, "points");
  EXPECT_TRUE(std::filesystem::path(c.problem.domain.file).is_absolute());
  EXPECT_EQ(std::filesystem::path(c.problem.domain.file).filename(), "square.csv");
  ASSERT_TRUE(c.problem.domain.cloud);
  EXPECT_EQ(c.problem.domain.cloud->boundary_begin, 1u);
  // The dump names the file absolutely, so it loads from anywhere.
  const Config back = load_config(write_tmp("cloud_dump.yaml", dump_config(c)));
  EXPECT_EQ(back.problem.domain.file, c.problem.domain.file);
  const Problem problem = Problem::build(c.problem);
  EXPECT_EQ(problem.domain().type(), "points");
}

struct BadDomain {
  const char* name;
  std::string domain;    // written on line 2 after "  domain: "
  std::string expected;  // what() after "<path>:"
};

TEST(ConfigDomains, EachMistakeIsOneLocatedLine) {
  write_tmp("bad_cloud.csv", "x,y,boundary,nx,ny\n0.5,0.5,0,,\n0,0.5,1,0,0\n");
  const std::string dir = std::filesystem::absolute(tmp_dir()).lexically_normal().string();
  const BadDomain cases[] = {
      {"csg_no_domains", "{type: union}", "2:11: problem.domain: missing required key \"domains\""},
      {"csg_one_domain", "{type: intersection, domains: [{type: disk, centre: [0, 0], radius: 1}]}",
       "2:41: problem.domain.domains: expected a sequence of at least 2 domains, found 1"},
      {"csg_mixed_dims",
       "{type: union, domains: [{type: disk, centre: [0, 0], radius: 1}, "
       "{type: ball, centre: [0, 0, 0], radius: 1}]}",
       "2:83: problem.domain.domains[1].type: expected a 2D domain (as "
       "problem.domain.domains[0]), found a ball (3D)"},
      {"csg_points_inside",
       "{type: union, domains: [{type: points, file: a.csv}, {type: disk, centre: [0, 0], "
       "radius: 1}]}",
       "2:42: problem.domain.domains[0].type: expected one of rectangle, box, disk, ball, "
       "polygon, union, difference, intersection, found \"points\""},
      {"csg_bad_key", "{type: difference, domain: []}",
       "2:30: problem.domain.domain: unknown key \"domain\" (did you mean \"domains\"?)"},
      {"cloud_missing", "{type: points, file: no_such.csv}",
       "2:32: problem.domain.file: " + dir +
           "/no_such.csv: cannot read file: No such file or directory"},
      {"cloud_malformed", "{type: points, file: bad_cloud.csv}",
       "2:32: problem.domain.file: " + dir +
           "/bad_cloud.csv:3: expected an outward unit normal, found the zero vector"},
      {"cloud_no_file", "{type: points}", "2:11: problem.domain: missing required key \"file\""},
  };
  for (const BadDomain& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path =
        write_tmp(std::string("bad_") + c.name + ".yaml", with_domain(c.domain));
    EXPECT_EQ(load_error(path), path + ":" + c.expected);
  }
}

// What only the built domain can tell: an empty composite is an input error at the domain.
TEST(ConfigDomains, EmptyCompositeIsAnInputError) {
  const std::string path = write_tmp(
      "csg_empty.yaml",
      with_domain("{type: intersection, domains: [{type: disk, centre: [0, 0], radius: 1}, "
                  "{type: disk, centre: [5, 0], radius: 1}]}"));
  const Config c = load_config(path);
  try {
    Problem::build(c.problem);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":2:11: problem.domain: the intersection is empty: the bounding boxes of its "
                  "domains do not overlap");
  }
}

}  // namespace
}  // namespace rbfpde
