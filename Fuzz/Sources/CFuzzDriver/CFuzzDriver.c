// Declarations only (include/CFuzzDriver.h); libFuzzer provides the symbol.
#include "CFuzzDriver.h"
