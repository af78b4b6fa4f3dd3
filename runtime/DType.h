// runtime/DType.h — the public header include/tsl/DType.h (part of the embedding API).
#pragma once

#include "tsl/DType.h"
