// pipelines.inc with the adapters compiled out: JITSCOPE_DISABLE before the
// first jitscope include (tests/adapters/CMakeLists.txt sets no define: here).
#define JITSCOPE_DISABLE
#define JITSCOPE_TEST_SUFFIX(name) name##_disabled
#include "adapters/pipelines.inc"
