#include <plucker/version.hpp>

#include <cstdio>

int main() {
  std::printf("plucker %s\n", plucker::version());
  return 0;
}
