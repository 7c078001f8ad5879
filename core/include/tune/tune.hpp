// Umbrella header: the whole public API of libtune, every header a user needs.
//
// Not included here: the per-backend extras (tune/cuda.hpp, tune/hip.hpp, tune/vulkan.hpp:
// compiling without a device, diagnostics, native handles), which a program includes for the
// backends it asks for; the backend kit (tune/backend/*.hpp) for backend authors; the bundled
// kernels (tune/kernels/bundled.hpp); the simulated device (tune/testing/*.hpp).
#pragma once
#include "tune/across.hpp"
#include "tune/args.hpp"
#include "tune/autotuner.hpp"
#include "tune/benchmark.hpp"
#include "tune/bundle.hpp"
#include "tune/config.hpp"
#include "tune/config_space.hpp"
#include "tune/definitions.hpp"
#include "tune/device.hpp"
#include "tune/device_info.hpp"
#include "tune/effort.hpp"
#include "tune/environment.hpp"
#include "tune/fallback.hpp"
#include "tune/kernel.hpp"
#include "tune/key.hpp"
#include "tune/log.hpp"
#include "tune/record.hpp"
#include "tune/registry.hpp"
#include "tune/sample_stats.hpp"
#include "tune/search.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"
#include "tune/version.hpp"
