#ifndef PULSE_SIMDJSON_H
#define PULSE_SIMDJSON_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Placeholder: the real C API is defined by the PulseJSON work. */
int pgjson_version(void);
#ifdef __cplusplus
}
#endif
#endif
