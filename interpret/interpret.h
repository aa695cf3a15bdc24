// interpret/: reading attention maps. Where a model looked, scored against the truth.
#pragma once

#include "interpret/localisation.h"
