// runtime/Ref.h — the public header include/tsl/Ref.h (part of the embedding API).
#pragma once

#include "tsl/Ref.h"
