#include "pulse_simdjson.h"
#include <simdjson.h>
extern "C" int pgjson_version(void) { return simdjson::SIMDJSON_VERSION_MAJOR; }
