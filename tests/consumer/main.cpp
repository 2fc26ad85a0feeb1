#include <cstdio>
#include <plucker/version.hpp>

int main() {
  std::printf("plucker %s\n", plucker::version());
  return 0;
}
