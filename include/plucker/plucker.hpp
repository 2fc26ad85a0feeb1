// Everything in one include.
#pragma once

#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/batch.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/data.hpp"
#include "plucker/algorithms/derivatives.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"
#include "plucker/algorithms/kinematics.hpp"
#include "plucker/algorithms/operational_space.hpp"
#include "plucker/algorithms/rnea.hpp"
#include "plucker/constraints/constrained_dynamics.hpp"
#include "plucker/constraints/loop_constraints.hpp"
#include "plucker/errors.hpp"
#include "plucker/io/model_text.hpp"
#include "plucker/model/loop_joint.hpp"
#include "plucker/model/model.hpp"
#include "plucker/spatial.hpp"
