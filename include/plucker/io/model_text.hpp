// A Model as text and back: the complete description (topology, joints with their parameters,
// joint frames, inertias, names, limits, frames, mimic relations, loop joints, gravity), every
// number written exactly (hexadecimal floating point), so that the model read back is the same
// model to the last bit. For pickling (Python), sending a model to another process or machine,
// and caching a parsed URDF.
#pragma once

#include <string>
#include <string_view>

#include "plucker/model/model.hpp"

namespace plucker {

/// The text of `model` (format "plucker-model 1", line-oriented; names length-prefixed).
std::string model_to_text(const Model& model);

/// The model of a text from model_to_text. Throws ModelError naming the line and what was
/// expected for a malformed text, and the errors of Model's builders for an invalid model.
Model model_from_text(std::string_view text);

}  // namespace plucker
