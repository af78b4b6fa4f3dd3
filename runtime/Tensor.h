// runtime/Tensor.h — the public header include/tsl/Tensor.h (part of the embedding API).
#pragma once

#include "tsl/Tensor.h"
