// Bad inputs through the real binary: each case is the tiny valid config with one mistake. Every
// one must end with exit code 2, nothing on stdout, exactly one line on stderr of the form
// "error: <file>:<line>:<col>: <key>: <message>" (or "--set: ..." for command-line values), and
// no trace on disk: the output directory is not created, and an existing one is left untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/cli/cli_test_util.hpp"

namespace rbfpde::cli_test {
namespace {

struct BadInput {
  std::string name;
  std::optional<std::string> yaml;  // nullopt: c.yaml does not exist
  std::vector<std::string> args;    // after "<command> c.yaml"
  std::string expected;             // the exact stderr line; empty: checked by `contains` only
  std::string key;                  // the key the message must name ("" for none)
  std::vector<std::string> contains = {};  // further words the message must hold
  std::string command = "solve";
  bool needs_no_cuda = false;       // only meaningful where no CUDA device is present
};

std::string tiny() { return kTinyConfig; }
std::string with(const std::string& from, const std::string& to) {
  return replace_once(kTinyConfig, from, to);
}
const char* const kRectangle = "    type: rectangle\n    min: [0, 0]\n    max: [1, 1]\n";
const char* const kBowTie = "    type: polygon\n    vertices: [[0, 0], [1, 1], [1, 0], [0, 1]]\n";
const char* const kBoundary = "  boundary:\n    - type: dirichlet\n      value: \"0\"\n";

std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> c;
  // --- keys: unknown, duplicate, missing
  c.push_back({"UnknownKeyDidYouMean", with("  neurons: 16", "  nuerons: 16"), {},
               "error: c.yaml:16:3: model.nuerons: unknown key \"nuerons\" (did you mean "
               "\"neurons\"?)",
               "model.nuerons"});
  c.push_back({"UnknownTopLevelKey", with("name: tiny", "nmae: tiny"), {},
               "error: c.yaml:1:1: nmae: unknown key \"nmae\" (did you mean \"name\"?)", "nmae"});
  c.push_back({"UnknownKeyFarFromAny", with("  neurons: 16", "  neurons: 16\n  zzzzzz: 1"), {},
               "error: c.yaml:17:3: model.zzzzzz: unknown key \"zzzzzz\"", "model.zzzzzz"});
  c.push_back({"KeyOfAnotherDomainType", with("    max: [1, 1]", "    max: [1, 1]\n    radius: 1"),
               {}, "error: c.yaml:7:5: problem.domain.radius: unknown key \"radius\"",
               "problem.domain.radius"});
  c.push_back({"DuplicateKey", with("  neurons: 16", "  neurons: 16\n  neurons: 17"), {},
               "error: c.yaml:17:3: model.neurons: duplicate key \"neurons\"", "model.neurons"});
  c.push_back({"MissingProblem", "name: tiny\nmodel:\n  neurons: 16\n", {},
               "error: c.yaml:1:1: missing required key \"problem\"", "", {"problem"}});
  c.push_back({"MissingDomain", with("  domain:\n" + std::string(kRectangle), ""), {},
               "error: c.yaml:3:3: problem: missing required key \"domain\"", "problem"});
  c.push_back({"MissingDomainType", with("    type: rectangle\n", ""), {},
               "error: c.yaml:4:5: problem.domain: missing required key \"type\"",
               "problem.domain"});
  c.push_back({"MissingF", with("    f: \"sin(pi*x)*sin(pi*y)\"\n", ""), {},
               "error: c.yaml:8:5: problem.equation: missing required key \"f\"",
               "problem.equation"});
  c.push_back({"MissingBoundary", with(kBoundary, ""), {},
               "error: c.yaml:3:3: problem: missing required key \"boundary\"", "problem"});
  c.push_back({"MissingBoundaryValue", with("      value: \"0\"\n", "      where: \"1\"\n"), {},
               "error: c.yaml:11:7: problem.boundary[0]: missing required key \"value\"",
               "problem.boundary[0]"});
  // --- wrong types and out-of-range values
  c.push_back({"NeuronsQuotedString", with("neurons: 16", "neurons: \"16\""), {},
               "error: c.yaml:16:12: model.neurons: expected a positive integer, found the "
               "string \"16\"",
               "model.neurons"});
  c.push_back({"NeuronsNotInteger", with("neurons: 16", "neurons: 16.5"), {},
               "error: c.yaml:16:12: model.neurons: expected a positive integer, found \"16.5\"",
               "model.neurons"});
  c.push_back({"NeuronsMap", with("neurons: 16", "neurons: {a: 1}"), {},
               "error: c.yaml:16:12: model.neurons: expected a positive integer, found a map",
               "model.neurons"});
  c.push_back({"NeuronsZero", with("neurons: 16", "neurons: 0"), {},
               "error: c.yaml:16:12: model.neurons: expected a positive integer, found \"0\"",
               "model.neurons"});
  c.push_back({"NeuronsNegative", with("neurons: 16", "neurons: -3"), {},
               "error: c.yaml:16:12: model.neurons: expected a positive integer, found \"-3\"",
               "model.neurons"});
  c.push_back(
      {"WidthZero",
       with("  neurons: 16", "  neurons: 16\n  init: { width: 0 }"),
       {},
       "error: c.yaml:17:18: model.init.width: expected a positive number or auto, found \"0\"",
       "model.init.width"});
  c.push_back({"WidthNegative",
               with("  neurons: 16", "  neurons: 16\n  init: { width: -1.5 }"),
               {},
               "error: c.yaml:17:18: model.init.width: expected a positive number or auto, found "
               "\"-1.5\"",
               "model.init.width"});
  c.push_back({"PointsAsSequence",
               with("points: { interior: 40, boundary: 16 }", "points: [40, 16]"), {},
               "error: c.yaml:19:11: training.points: expected a map, found a sequence",
               "training.points"});
  c.push_back({"InteriorPointsZero", with("interior: 40", "interior: 0"), {},
               "error: c.yaml:19:23: training.points.interior: expected a positive integer, "
               "found \"0\"",
               "training.points.interior"});
  c.push_back({"SeedTooLarge",
               with("  max_cycles: 3", "  max_cycles: 3\n  seed: 18446744073709551616"),
               {},
               "error: c.yaml:21:9: training.seed: expected a non-negative integer of at most "
               "18446744073709551615, found \"18446744073709551616\"",
               "training.seed"});
  c.push_back({"NameWithSlash", with("name: tiny", "name: \"a/b\""), {},
               "error: c.yaml:1:7: name: expected a name of letters, digits, '_', '-', '.', found "
               "\"a/b\"",
               "name"});
  // --- domains
  c.push_back({"EmptyRectangle", with("max: [1, 1]", "max: [1, 0]"), {},
               "error: c.yaml:6:14: problem.domain.max[1]: expected a value greater than min[1] = "
               "0, found \"0\"",
               "problem.domain.max[1]"});
  c.push_back({"InvertedRectangle", with("max: [1, 1]", "max: [-1, 1]"), {},
               "error: c.yaml:6:11: problem.domain.max[0]: expected a value greater than min[0] = "
               "0, found \"-1\"",
               "problem.domain.max[0]"});
  c.push_back({"RectangleWith3Coordinates", with("max: [1, 1]", "max: [1, 1, 1]"), {},
               "error: c.yaml:6:10: problem.domain.max: expected 2 numbers (a rectangle is 2D), "
               "found 3",
               "problem.domain.max"});
  c.push_back({"DiskRadiusZero",
               with(kRectangle, "    type: disk\n    centre: [0, 0]\n    radius: 0\n"), {},
               "error: c.yaml:6:13: problem.domain.radius: expected a positive number, found \"0\"",
               "problem.domain.radius"});
  c.push_back({"PolygonTwoVertices",
               with(kRectangle, "    type: polygon\n    vertices: [[0, 0], [1, 0]]\n"), {},
               "error: c.yaml:5:15: problem.domain.vertices: expected at least 3 vertices, found 2",
               "problem.domain.vertices"});
  c.push_back({"PolygonSelfIntersecting",
               with(kRectangle, kBowTie),
               {},
               "error: c.yaml:4:5: problem.domain: the polygon is self-intersecting: edge 0 (0, "
               "0)-(1, 1) meets edge 2 (1, 0)-(0, 1)",
               "problem.domain"});
  c.push_back({"PolygonVertexWith3Coordinates",
               with(kRectangle, "    type: polygon\n    vertices: [[0, 0], [1, 0, 2], [0, 1]]\n"),
               {},
               "error: c.yaml:5:24: problem.domain.vertices[1]: expected an [x, y] pair, found a "
               "sequence of 3",
               "problem.domain.vertices[1]"});
  c.push_back({"UnknownDomainType", with("type: rectangle", "type: triangle"), {},
               "error: c.yaml:4:11: problem.domain.type: expected one of rectangle, box, disk, "
               "ball, polygon, union, difference, intersection, points, found \"triangle\"",
               "problem.domain.type"});
  // --- composite and point-cloud domains
  c.push_back({"CompositeWithoutDomains", with(kRectangle, "    type: union\n"), {},
               "error: c.yaml:4:5: problem.domain: missing required key \"domains\"",
               "problem.domain"});
  c.push_back({"CompositeMixing2dAnd3d",
               with(kRectangle,
                    "    type: union\n    domains:\n      - {type: disk, centre: [0, 0], radius: "
                    "1}\n      - {type: ball, centre: [0, 0, 0], radius: 1}\n"),
               {},
               "",
               "problem.domain.domains[1].type",
               {"expected a 2D domain", "found a ball (3D)"}});
  c.push_back({"UnreadableCloudFile", with(kRectangle, "    type: points\n    file: missing.csv\n"),
               {}, "", "problem.domain.file", {"missing.csv: cannot read file"}});
  c.push_back({"EmptyIntersection",
               with(kRectangle,
                    "    type: intersection\n    domains:\n      - {type: disk, centre: [0, 0], "
                    "radius: 1}\n      - {type: disk, centre: [5, 0], radius: 1}\n"),
               {},
               "",
               "problem.domain",
               {"the intersection is empty"}});
  // --- expressions
  c.push_back({"ExpressionSyntaxError",
               with("f: \"sin(pi*x)*sin(pi*y)\"", "f: \"sin(pi*x)*(sin(pi*y)\""), {},
               "error: c.yaml:9:8: problem.equation.f: invalid expression "
               "\"sin(pi*x)*(sin(pi*y)\": "
               "syntax error: Missing parenthesis at position 21",
               "problem.equation.f"});
  c.push_back({"ExpressionZIn2D", with("f: \"sin(pi*x)*sin(pi*y)\"", "f: \"sin(pi*x)*z\""), {},
               "error: c.yaml:9:8: problem.equation.f: invalid expression \"sin(pi*x)*z\": unknown "
               "variable 'z' at position 10 (a 2D problem has variables x and y)",
               "problem.equation.f"});
  c.push_back({"ExpressionUnknownVariableQ",
               with("exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"", "exact: \"q*x\""), {},
               "error: c.yaml:13:10: problem.exact: invalid expression \"q*x\": unknown variable "
               "'q' at position 0 (a 2D problem has variables x and y)",
               "problem.exact"});
  c.push_back({"BoundaryValueUnknownVariable", with("value: \"0\"", "value: \"q\""), {},
               "error: c.yaml:12:14: problem.boundary[0].value: invalid expression \"q\": unknown "
               "variable 'q' at position 0 (a 2D problem has variables x and y)",
               "problem.boundary[0].value"});
  c.push_back({"EmptyExpression", with("f: \"sin(pi*x)*sin(pi*y)\"", "f: \"\""), {},
               "error: c.yaml:9:8: problem.equation.f: expected an expression, found \"\"",
               "problem.equation.f"});
  // --- boundary entries
  c.push_back({"WhereMatchesNoBoundaryPoint",
               with("      value: \"0\"\n", "      value: \"0\"\n      where: \"x > 5\"\n"), {},
               "error: c.yaml:13:14: problem.boundary[0].where: holds at no boundary point",
               "problem.boundary[0].where"});
  c.push_back({"BoundaryNotCovered",
               with("      value: \"0\"\n", "      value: \"0\"\n      where: \"x < 0.5\"\n"), {},
               "",  // the point named depends on the sampling
               "problem.boundary[0].where",
               {"no boundary entry applies at (", "add an entry without 'where'"}});
  c.push_back({"BoundaryEmptySequence", with(kBoundary, "  boundary: []\n"), {},
               "error: c.yaml:10:13: problem.boundary: expected at least one boundary condition, "
               "found an empty sequence",
               "problem.boundary"});
  c.push_back({"UnknownBoundaryType", with("- type: dirichlet", "- type: periodic"), {},
               "error: c.yaml:11:13: problem.boundary[0].type: expected one of dirichlet, "
               "neumann, robin, found \"periodic\"",
               "problem.boundary[0].type"});
  // Neumann everywhere and no reaction term: u is fixed only up to a constant.
  c.push_back({"OnlyNeumann", with("- type: dirichlet", "- type: neumann"), {},
               "error: c.yaml:11:5: problem.boundary: expected a dirichlet entry, a robin entry "
               "with alpha ≠ 0, or a reaction term c ≠ 0: with only Neumann conditions the "
               "solution is fixed only up to an added constant",
               "problem.boundary"});
  c.push_back({"RobinWithoutAlpha", with("- type: dirichlet", "- type: robin"), {},
               "error: c.yaml:11:7: problem.boundary[0]: missing required key \"alpha\"",
               "problem.boundary[0]"});
  // --- methods and models
  c.push_back({"UnknownMethod", with("method: gdcg", "method: newton"), {},
               "error: c.yaml:18:11: training.method: expected one of varpro, gdcg, lm, adam, "
               "found \"newton\"",
               "training.method"});
  c.push_back({"MethodDoesNotFitRbf", with("method: gdcg", "method: adam"), {},
               "error: c.yaml:18:11: training.method: expected varpro, lm or gdcg for model.type "
               "rbf, found \"adam\"",
               "training.method"});
  c.push_back({"MethodDoesNotFitMlp", with("type: rbf", "type: mlp"), {},
               "error: c.yaml:18:11: training.method: expected adam or lm for model.type mlp, "
               "found \"gdcg\"",
               "training.method"});
  // --- output
  // A file in the way of the output directory (c.yaml itself): found before any training.
  c.push_back({"DirectoryUnderAFile", with("  directory: out", "  directory: c.yaml/out"), {},
               "error: c.yaml:22:14: output.directory: cannot create the directory "
               "\"c.yaml/out\": \"c.yaml\" is not a directory",
               "output.directory"});
  c.push_back({"MlpDirectoryUnderAFile",
               replace_once(tiny_mlp_config(), "  directory: out", "  directory: c.yaml/out"),
               {},
               "error: c.yaml:22:14: output.directory: cannot create the directory "
               "\"c.yaml/out\": \"c.yaml\" is not a directory",
               "output.directory"});
  c.push_back({"SetDirectoryUnderAFile", tiny(), {"--set", "output.directory=c.yaml"},
               "error: --set: output.directory: cannot create the directory \"c.yaml\": "
               "\"c.yaml\" is not a directory",
               "output.directory"});
  c.push_back({"ResolutionWrongLength",
               with("  directory: out", "  directory: out\n  resolution: [21, 21, 21]"), {},
               "error: c.yaml:23:15: output.resolution: expected 2 integers (the domain is 2D), "
               "found 3",
               "output.resolution"});
  c.push_back({"ResolutionEntryTooSmall",
               with("  directory: out", "  directory: out\n  resolution: [21, 1]"), {},
               "error: c.yaml:23:20: output.resolution[1]: expected an integer of at least 2, "
               "found \"1\"",
               "output.resolution[1]"});
  c.push_back({"SnapshotEveryNegative",
               with("  directory: out", "  directory: out\n  snapshot_every: -1"), {},
               "error: c.yaml:23:19: output.snapshot_every: expected a non-negative integer, found "
               "\"-1\"",
               "output.snapshot_every"});
  c.push_back({"BackendInYamlUnknown", tiny() + "compute: { backend: gpu }\n", {},
               "error: c.yaml:23:21: compute.backend: expected one of auto, cpu, cuda, found "
               "\"gpu\"",
               "compute.backend"});
  // --- files and YAML syntax
  c.push_back({"NonexistentFile", std::nullopt, {},
               "error: c.yaml: cannot read file: No such file or directory", ""});
  c.push_back({"YamlUnclosedFlowSequence", with("  neurons: 16", "  neurons: [16"), {},
               "error: c.yaml:17:9: invalid YAML: end of sequence flow not found", ""});
  c.push_back({"YamlTabIndentation", with("  neurons: 16", "\tneurons: 16"), {},
               "error: c.yaml:16:1: invalid YAML: illegal tab when looking for indentation", ""});
  c.push_back({"EmptyFile", "", {},
               "error: c.yaml:1:1: expected a map of config keys (name, problem, model, ...), "
               "found an empty value",
               ""});
  // --- command line
  c.push_back({"SetWithoutEquals", tiny(), {"--set", "model.neurons"},
               "error: --set: model.neurons: expected key.path=value, found \"model.neurons\"",
               "model.neurons"});
  c.push_back({"SetWithoutKey", tiny(), {"--set", "=3"},
               "error: --set: expected key.path=value, found \"=3\"", ""});
  c.push_back({"SetWrongType", tiny(), {"--set", "model.neurons=abc"},
               "error: --set: model.neurons: expected a positive integer, found \"abc\"",
               "model.neurons"});
  c.push_back({"SetUnknownKey", tiny(), {"--set", "model.nuerons=3"},
               "error: --set: model.nuerons: unknown key \"nuerons\" (did you mean \"neurons\"?)",
               "model.nuerons"});
  c.push_back({"SetUnreadableValue", tiny(), {"--set", "model.neurons=[1"},
               "error: --set: model.neurons: cannot read \"[1\" as a YAML value: end of sequence "
               "flow not found",
               "model.neurons"});
  c.push_back({"SetNoSuchEntry", tiny(), {"--set", "problem.boundary[3].value=1"},
               "error: --set: problem.boundary[3]: no such entry: problem.boundary is a sequence "
               "of 1",
               "problem.boundary[3]"});
  c.push_back({"SetResolutionWrongLength", tiny(), {"--set", "output.resolution=[21]"},
               "error: --set: output.resolution: expected 2 integers (the domain is 2D), found 1",
               "output.resolution"});
  c.push_back({"SetIntoScalar", tiny(), {"--set", "model.neurons.x=3"},
               "error: --set: model.neurons.x: cannot set a key inside model.neurons, which is "
               "\"16\"",
               "model.neurons.x"});
  // Option values CLI11 rejects must still be one "error: ..." line that says what is allowed.
  c.push_back({"BadBackendOption", tiny(), {"--backend", "gpu"}, "", "--backend",
               {"gpu", "auto", "cpu", "cuda"}});
  c.push_back({"BadPrecisionOption", tiny(), {"--precision", "half"}, "", "--precision",
               {"half", "double", "float"}});
  // cuda asked for where there is none: bad input, reported where the request came from.
  c.push_back({"CudaInYamlWithoutDevice", tiny() + "compute: { backend: cuda }\n", {}, "",
               "compute.backend", {"cuda"}, "solve", true});
  c.push_back({"CudaOptionWithoutDevice", tiny(), {"--backend", "cuda"}, "", "compute.backend",
               {"cuda"}, "solve", true});
  // --- the same checks through `rbfpde check`
  c.push_back({"CheckUnknownKey", with("  neurons: 16", "  nuerons: 16"), {},
               "error: c.yaml:16:3: model.nuerons: unknown key \"nuerons\" (did you mean "
               "\"neurons\"?)",
               "model.nuerons", {}, "check"});
  c.push_back({"CheckSetWrongType", tiny(), {"--set", "training.penalty=lots"},
               "error: --set: training.penalty: expected a positive number, found \"lots\"",
               "training.penalty", {}, "check"});
  c.push_back({"CheckWhereMatchesNothing",
               with("      value: \"0\"\n", "      value: \"0\"\n      where: \"x > 5\"\n"), {},
               "error: c.yaml:13:14: problem.boundary[0].where: holds at no boundary point",
               "problem.boundary[0].where", {}, "check"});
  c.push_back({"CheckSelfIntersectingPolygon",
               with(kRectangle, kBowTie),
               {},
               "error: c.yaml:4:5: problem.domain: the polygon is self-intersecting: edge 0 (0, "
               "0)-(1, 1) meets edge 2 (1, 0)-(0, 1)",
               "problem.domain", {}, "check"});
  c.push_back({"CheckNonexistentFile", std::nullopt, {},
               "error: c.yaml: cannot read file: No such file or directory", "", {}, "check"});
  // `check` promises that a config it accepts can be run; `solve` refuses mlp, so must `check`.
  return c;
}

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

// The message part every case must have: "error: " + a location + ": " + (key ": ")? + message.
// The location is "c.yaml:<line>:<col>" (or bare "c.yaml" for a file that cannot be read), or
// the command-line origin of the value.
void check_message(const BadInput& c, const RunResult& r) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "stdout must stay empty on bad input";
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << "expected exactly one line on stderr, got:\n" << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  const std::string& line = lines[0];
  if (!c.expected.empty()) {
    EXPECT_EQ(line, c.expected);
  }
  const bool unreadable_file = c.name.find("NonexistentFile") != std::string::npos;
  const std::regex location(unreadable_file
                                ? "^error: c\\.yaml: .+"
                                : "^error: (c\\.yaml:[1-9][0-9]*:[1-9][0-9]*|--set|--backend|"
                                  "--precision): .+");
  EXPECT_TRUE(std::regex_match(line, location))
      << "no file:line:col (or command-line origin) in: " << line;
  if (!c.key.empty()) {
    EXPECT_NE(line.find(" " + c.key + ": "), std::string::npos)
        << "the message does not name the key " << c.key << ": " << line;
  }
  for (const std::string& word : c.contains) {
    EXPECT_NE(line.find(word), std::string::npos) << "missing \"" << word << "\" in: " << line;
  }
}

std::vector<std::string> command_line(const BadInput& c) {
  std::vector<std::string> args = {c.command, "c.yaml"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  return args;
}

TEST_P(BadInputTest, FailsWithOneLineAndWritesNothing) {
  const BadInput& c = GetParam();
  if (c.needs_no_cuda && cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  TempDir dir;
  if (c.yaml) write_text(dir / "c.yaml", *c.yaml);
  const auto before = tree(dir.path());

  const RunResult r = run_rbfpde(command_line(c), dir.path());
  check_message(c, r);
  EXPECT_FALSE(fs::exists(dir / "out")) << "the output directory was created";
  EXPECT_EQ(tree(dir.path()), before) << "the run left files behind";
}

TEST_P(BadInputTest, LeavesAnExistingOutputDirectoryUntouched) {
  const BadInput& c = GetParam();
  if (c.needs_no_cuda && cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  TempDir dir;
  if (c.yaml) write_text(dir / "c.yaml", *c.yaml);
  fs::create_directories(dir / "out");
  const std::string sentinel("sentinel \0 bytes\r\n\xff", 19);
  write_text(dir / "out/sentinel.bin", sentinel);
  const auto before = tree(dir.path());

  const RunResult r = run_rbfpde(command_line(c), dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_text(dir / "out/sentinel.bin"), sentinel);
  std::vector<std::string> in_out;
  for (const auto& e : fs::directory_iterator(dir / "out")) in_out.push_back(e.path().filename());
  EXPECT_EQ(in_out, std::vector<std::string>{"sentinel.bin"});
  EXPECT_EQ(tree(dir.path()), before);
}

// An output directory the user may not write into: refused before training, one line, nothing
// written. Root may write anywhere, so the case runs only for other users.
TEST(BadInputOutputDirectory, NoWritePermissionIsRefusedBeforeTraining) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: every directory is writable";
  TempDir dir;
  write_text(dir / "c.yaml", replace_once(kTinyConfig, "  directory: out", "  directory: ro/out"));
  fs::create_directories(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu"}, dir.path());
  fs::permissions(dir / "ro", fs::perms::owner_all);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "error: c.yaml:22:14: output.directory: cannot create the directory \"ro/out\": "
            "\"ro\": Permission denied\n");
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTest, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                           return info.param.name;
                         });

TEST(BadInputTable, HasAtLeastThirtyDistinctCases) {
  const std::vector<BadInput> cases = bad_inputs();
  EXPECT_GE(cases.size(), 30u);
  std::vector<std::string> names;
  for (const BadInput& c : cases) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace rbfpde::cli_test
