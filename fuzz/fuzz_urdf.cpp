// libFuzzer target for the URDF loader: arbitrary bytes -> load_urdf_string.
//
// A plucker::ModelError is the expected outcome for almost every input; anything else
// (a crash, a sanitizer report, a leak, another exception type) is a bug. An
// "internal error" ModelError means the loader accepted a document it then could not
// build (a check missing from the pre-scan): also a bug, so it aborts here. Both root-joint
// modes and strict mode are exercised, selected by the low two bits of the first byte (seeds
// use the digits 0-3: bit 0 = RootJoint::FreeFlyer, bit 1 = strict).
//
// Differential check of the piecewise parse: the loader parses <robot>'s child elements one
// at a time (src/io/urdf.cpp), which must accept exactly the documents tinyxml2 accepts whole.
// So, for every input within urdf_limits and without a NUL byte: a loaded model means tinyxml2
// parses the document whole, and a "malformed XML" refusal means it does not; any other
// refusal means it does (malformed XML is reported before any other defect).
#include <tinyxml2.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plucker/errors.hpp"
#include "plucker/io/urdf.hpp"

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fuzz_urdf: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Whether tinyxml2 parses the document whole, as the loader's options do; its error if not.
bool parses_whole(const std::string& xml, std::string& error) {
  tinyxml2::XMLDocument doc(true, tinyxml2::PRESERVE_WHITESPACE);
  if (doc.Parse(xml.data(), xml.size()) == tinyxml2::XML_SUCCESS) return true;
  error = doc.ErrorStr() ? doc.ErrorStr() : doc.ErrorName();
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  plucker::UrdfOptions options;
  options.root = (data[0] & 1) ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
  options.strict = (data[0] & 2) != 0;
  options.on_warning = [](const std::string&) {};
  const std::string xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool loaded = false;
  std::string refusal;
  try {
    const plucker::Model model = plucker::load_urdf_string(xml, options, "fuzz.urdf");
    // Touch the result: sizes must be consistent.
    if (model.nbodies() < 1 || model.nq() < model.nv()) std::abort();
    loaded = true;
  } catch (const plucker::ModelError& e) {
    refusal = e.what();
    // Prefix test: the rest of a message may quote names taken from the input.
    if (refusal.rfind("fuzz.urdf: internal error", 0) == 0) die(refusal);
  } catch (const std::exception& e) {
    // Another plucker::Error (e.g. InvalidArgument from a joint factory) or an exception
    // from tinyxml2/the standard library: the loader must turn every failure into a
    // ModelError that names the file, so this is a loader bug.
    die(std::string("load_urdf_string threw something other than ModelError: ") + e.what());
  }

  // The differential check (skipped over the caps, where tinyxml2 could take minutes, and with
  // a NUL byte, where tinyxml2 would stop reading).
  // Every refusal for a cap cites docs/urdf.md's "Limits".
  if (refusal.find("(docs/urdf.md, \"Limits\")") != std::string::npos || std::memchr(xml.data(), '\0', xml.size()))
    return 0;
  std::string whole_error;
  const bool whole = parses_whole(xml, whole_error);
  const bool malformed = refusal.rfind("fuzz.urdf: malformed XML", 0) == 0;
  if (loaded && !whole) die("the loader accepted a document that tinyxml2 rejects whole: " + whole_error);
  if (malformed && whole) die("the loader reported malformed XML for a document tinyxml2 parses whole: " + refusal);
  if (!loaded && !malformed && !whole)
    die("tinyxml2 rejects the document whole (" + whole_error + ") but the loader reported: " + refusal);
  return 0;
}
