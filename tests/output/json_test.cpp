#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

TEST(Json, Scalars) {
  EXPECT_EQ(Json().dump(), "null");
  EXPECT_EQ(Json(true).dump(), "true");
  EXPECT_EQ(Json(false).dump(), "false");
  EXPECT_EQ(Json(42).dump(), "42");
  EXPECT_EQ(Json(-7LL).dump(), "-7");
  EXPECT_EQ(Json(std::numeric_limits<long long>::min()).dump(), "-9223372036854775808");
  EXPECT_EQ(Json(18446744073709551615ULL).dump(), "18446744073709551615");
  EXPECT_EQ(Json(1.5).dump(), "1.5");
  EXPECT_EQ(Json(0.1).dump(), "0.1");
  EXPECT_EQ(Json(-2.0).dump(), "-2");
  EXPECT_EQ(Json(1e-300).dump(), "1e-300");
  EXPECT_EQ(Json(6.02214076e23).dump(), "6.02214076e+23");
  EXPECT_EQ(Json("text").dump(), "\"text\"");
  EXPECT_EQ(Json(std::string("text")).dump(), "\"text\"");
}

TEST(Json, NonFiniteNumbersBecomeNull) {
  EXPECT_EQ(Json(std::numeric_limits<double>::quiet_NaN()).dump(), "null");
  EXPECT_EQ(Json(std::numeric_limits<double>::infinity()).dump(), "null");
  EXPECT_EQ(Json(-std::numeric_limits<double>::infinity()).dump(), "null");
}

TEST(Json, NumbersRoundTrip) {
  for (double v : {1.0 / 3.0, M_PI, 2.0 / 3.0 * 1e-17, 123456789.123456789, 5e-324,
                   std::numeric_limits<double>::max(), -0.1 + 0.2 - 0.1}) {
    const std::string s = Json(v).dump();
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
}

TEST(Json, StringEscaping) {
  EXPECT_EQ(Json("a\"b\\c/d").dump(), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(Json("tab\tnl\ncr\r\x01\x1f").dump(), "\"tab\\u0009nl\\u000acr\\u000d\\u0001\\u001f\"");
  EXPECT_EQ(Json("h\xc3\xa9llo \xe2\x88\x86u").dump(),
            "\"h\xc3\xa9llo \xe2\x88\x86u\"");  // UTF-8 as is
  EXPECT_EQ(Json(std::string("nul\0x", 5)).dump(), "\"nul\\u0000x\"");
  Json o = Json::object();
  o.set("key \"q\"\n", 1);
  EXPECT_EQ(o.dump(0), "{\"key \\\"q\\\"\\u000a\":1}");
}

Json sample() {
  Json errors = Json::object();
  errors.set("rel_l2", 1.25e-3).set("max", std::numeric_limits<double>::quiet_NaN());
  Json phases = Json::array();
  phases.push(Json::object().set("name", "train").set("seconds", 2.5)).push(Json::array()).push(3);
  Json root = Json::object();
  root.set("name", "poisson2d").set("zeta", true).set("alpha", Json()).set("errors", errors);
  root.set("phases", phases).set("empty", Json::object()).set("count", 10201);
  return root;
}

TEST(Json, PrettyNestingKeepsInsertionOrder) {
  EXPECT_EQ(sample().dump(),
            "{\n"
            "  \"name\": \"poisson2d\",\n"
            "  \"zeta\": true,\n"
            "  \"alpha\": null,\n"
            "  \"errors\": {\n"
            "    \"rel_l2\": 0.00125,\n"
            "    \"max\": null\n"
            "  },\n"
            "  \"phases\": [\n"
            "    {\n"
            "      \"name\": \"train\",\n"
            "      \"seconds\": 2.5\n"
            "    },\n"
            "    [],\n"
            "    3\n"
            "  ],\n"
            "  \"empty\": {},\n"
            "  \"count\": 10201\n"
            "}");
}

TEST(Json, IndentWidthAndCompact) {
  EXPECT_EQ(sample().dump(0),
            "{\"name\":\"poisson2d\",\"zeta\":true,\"alpha\":null,\"errors\":{\"rel_l2\":0.00125,"
            "\"max\":null},\"phases\":[{\"name\":\"train\",\"seconds\":2.5},[],3],\"empty\":{},"
            "\"count\":10201}");
  Json o = Json::object();
  o.set("a", Json::array().push(1).push(2));
  EXPECT_EQ(o.dump(4), "{\n    \"a\": [\n        1,\n        2\n    ]\n}");
}

TEST(Json, SetReplacesAnExistingKeyInPlace) {
  Json o = Json::object();
  o.set("a", 1).set("b", 2).set("a", "one");
  EXPECT_EQ(o.dump(0), "{\"a\":\"one\",\"b\":2}");
}

TEST(Json, WrongKindThrows) {
  Json a = Json::array();
  EXPECT_THROW(a.set("k", 1), std::logic_error);
  Json o = Json::object();
  EXPECT_THROW(o.push(1), std::logic_error);
  Json n(3);
  EXPECT_THROW(n.push(1), std::logic_error);
}

}  // namespace
}  // namespace rbfpde
