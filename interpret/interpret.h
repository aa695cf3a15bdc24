// interpret/: reading attention maps, where a model looked scored against the truth.
//
//   alignment.h      alignment accuracy against source spans, heatmap matrices, invariants
//   localisation.h   where captioning attention lies against the objects' boxes
#pragma once

#include "interpret/alignment.h"
#include "interpret/localisation.h"
