// No code: the target exists for its header and the encoders it links.
#include "CTestCompression.h"
