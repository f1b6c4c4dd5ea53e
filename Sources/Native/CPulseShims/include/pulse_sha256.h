#ifndef PULSE_SHA256_H
#define PULSE_SHA256_H
/*
 * SHA-256 block compression for PulseGate (FIPS 180-4). The gateway hashes every request body
 * (dedup) and derives ids from short keys; the x86 SHA extensions make the body hash ~10x
 * cheaper than portable code. Padding and buffering stay in Swift (PulseGateway.SHA256).
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Compresses `blocks` 64-byte blocks at `data` into `state` (8 words, a..h). Picks the x86 SHA
 *  extensions when the CPU has them, portable code otherwise. */
void pg_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

/** The portable implementation, always available (for tests and CPUs without SHA extensions). */
void pg_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks);

/** 1 when pg_sha256_blocks uses the x86 SHA extensions on this CPU. */
int pg_sha256_accelerated(void);

#ifdef __cplusplus
}
#endif
#endif
