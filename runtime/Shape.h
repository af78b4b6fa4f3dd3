// runtime/Shape.h — the public header include/tsl/Shape.h (part of the embedding API).
#pragma once

#include "tsl/Shape.h"
