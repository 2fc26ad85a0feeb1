// libFuzzer target for the URDF loader: arbitrary bytes -> load_urdf_string.
//
// A plucker::ModelError is the expected outcome for almost every input; anything else
// (a crash, a sanitizer report, a leak, another exception type) is a bug. An
// "internal error" ModelError means the loader accepted a document it then could not
// build (a check missing from the pre-scan): also a bug, so it aborts here. Both root-joint modes and strict mode
// are exercised, selected by the low two bits of the first byte (seeds use
// the digits 0-3: bit 0 = RootJoint::FreeFlyer, bit 1 = strict).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "plucker/errors.hpp"
#include "plucker/io/urdf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  plucker::UrdfOptions options;
  options.root = (data[0] & 1) ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
  options.strict = (data[0] & 2) != 0;
  options.on_warning = [](const std::string&) {};
  const std::string xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const plucker::Model model = plucker::load_urdf_string(xml, options, "fuzz.urdf");
    // Touch the result: sizes must be consistent.
    if (model.nbodies() < 1 || model.nq() < model.nv()) std::abort();
  } catch (const plucker::ModelError& e) {
    // Prefix test: the rest of a message may quote names taken from the input.
    if (std::string(e.what()).rfind("fuzz.urdf: internal error", 0) == 0) {
      std::fprintf(stderr, "%s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    // Another plucker::Error (e.g. InvalidArgument from a joint factory) or an exception
    // from tinyxml2/the standard library: the loader must turn every failure into a
    // ModelError that names the file, so this is a loader bug.
    std::fprintf(stderr, "load_urdf_string threw something other than ModelError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
