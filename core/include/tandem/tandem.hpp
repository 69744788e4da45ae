#pragma once
// The umbrella header of tandem: devices, frames, filters, graphs and the co-executing pipeline.
#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/frame.hpp"
#include "tandem/graph.hpp"
#include "tandem/params.hpp"
#include "tandem/pipeline.hpp"
#include "tandem/process.hpp"
#include "tandem/program_cache.hpp"
#include "tandem/split_policy.hpp"
#include "tandem/user_filter.hpp"
#include "tandem/version.hpp"
