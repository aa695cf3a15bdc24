// interpret/: reading attention maps, where a model looked scored against the truth.
//
//   alignment.h   alignment accuracy against source spans, heatmap matrices, invariants
#pragma once

#include "interpret/alignment.h"
