#include <gtest/gtest.h>

#include <string>

#include "plucker/version.hpp"

TEST(Smoke, Version) { EXPECT_EQ(std::string(plucker::version()), "0.1.0"); }
