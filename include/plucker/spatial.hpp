// The spatial vector algebra layer: include this for everything in spatial/.
#pragma once

#include "plucker/errors.hpp"
#include "plucker/spatial/acceleration.hpp"
#include "plucker/spatial/frames.hpp"
#include "plucker/spatial/inertia.hpp"
#include "plucker/spatial/lie.hpp"
#include "plucker/spatial/transform.hpp"
#include "plucker/spatial/types.hpp"
#include "plucker/spatial/vectors.hpp"
