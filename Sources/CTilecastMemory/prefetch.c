// SPDX-License-Identifier: Apache-2.0
//
// The module's one function is `static inline`, in its header; this file only gives the target a
// source, as SwiftPM requires.

#include "CTilecastMemory.h"
