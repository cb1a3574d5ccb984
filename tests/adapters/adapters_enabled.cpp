// pipelines.inc with the adapters on.
#define JITSCOPE_TEST_SUFFIX(name) name
#include "adapters/pipelines.inc"
