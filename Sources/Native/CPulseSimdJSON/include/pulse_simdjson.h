#ifndef PULSE_SIMDJSON_H
#define PULSE_SIMDJSON_H
/*
 * A small C API over simdjson's DOM parser, used by the Swift module PulseJSON.
 *
 * A parse flattens the document into a compact node tape that the caller can read without any
 * further call into this library:
 *
 *   - Nodes appear in document order (pre-order). A container node is followed by its children;
 *     an object's children alternate key (a string node) and value.
 *   - Every node records the index of the first node after its own subtree ("next"), so a reader
 *     skips a whole subtree in one step.
 *   - Strings (keys and values) are unescaped, validated UTF-8 in a string arena; a string node
 *     holds an offset and a length into it (the arena may contain other bytes between strings).
 *
 * The node tape and the arena belong to the parser handle and stay valid until the next parse
 * or until the handle is destroyed. No C++ exception crosses this API.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Node kinds, stored in the low 8 bits of pgjson_node.head. */
enum {
    PGJSON_KIND_NULL = 0,   /* payload 0 */
    PGJSON_KIND_BOOL = 1,   /* payload 0 or 1 */
    PGJSON_KIND_INT = 2,    /* payload: int64 two's complement bits */
    PGJSON_KIND_UINT = 3,   /* payload: uint64 above INT64_MAX (smaller integers are INT) */
    PGJSON_KIND_DOUBLE = 4, /* payload: IEEE 754 binary64 bits */
    PGJSON_KIND_STRING = 5, /* payload: arena offset in bits 0-31, byte length in bits 32-63 */
    PGJSON_KIND_ARRAY = 6,  /* payload: number of elements */
    PGJSON_KIND_OBJECT = 7  /* payload: number of members (key/value pairs) */
};

/**
 * One node of the flattened document, 16 bytes.
 *
 * head: bits 0-7 kind (PGJSON_KIND_*), bits 8-31 zero, bits 32-63 index of the first node after
 * this node's subtree. Fields are defined arithmetically, so they read the same on any byte order.
 */
typedef struct pgjson_node {
    uint64_t head;
    uint64_t payload;
} pgjson_node;

/** Result codes. */
enum {
    PGJSON_OK = 0,
    PGJSON_ERR_INVALID_JSON = 1,    /* syntax: bad token, bad string or escape, unclosed, trailing content, empty */
    PGJSON_ERR_INVALID_UTF8 = 2,    /* input is not valid UTF-8 */
    PGJSON_ERR_DEPTH = 3,           /* nesting deeper than the parser's max depth */
    PGJSON_ERR_TOO_LARGE = 4,       /* input longer than the parser's max bytes */
    PGJSON_ERR_NUMBER = 5,          /* a number that is malformed or does not fit 64 bits */
    PGJSON_ERR_NO_MEMORY = 6,       /* allocation failed */
    PGJSON_ERR_INTERNAL = 7         /* anything else (a bug in this layer or in simdjson) */
};

/** The outcome of pgjson_parse. On error, nodes/strings are NULL and counts 0. */
typedef struct pgjson_result {
    int32_t code;              /* PGJSON_OK or PGJSON_ERR_* */
    int32_t simdjson_code;     /* simdjson::error_code, for diagnostics (0 if not from simdjson) */
    const char *message;       /* static, NUL-terminated, never contains input bytes */
    const pgjson_node *nodes;  /* node tape; nodes[0] is the root */
    size_t node_count;
    const uint8_t *strings;    /* string arena */
    size_t string_bytes;       /* bytes of the arena that string nodes refer to (copy this many) */
} pgjson_result;

typedef struct pgjson_parser pgjson_parser;

/** Largest max_depth accepted (simdjson's default); larger requests are clamped. */
#define PGJSON_MAX_DEPTH_LIMIT 1024
/** Largest document accepted (1 GiB; string offsets are 32-bit); larger max_bytes requests are clamped. */
#define PGJSON_MAX_BYTES_LIMIT 0x40000000ull

/**
 * Creates a reusable parser. max_depth is the deepest nesting of arrays/objects accepted
 * (1...PGJSON_MAX_DEPTH_LIMIT, clamped); max_bytes the longest input accepted (clamped to
 * PGJSON_MAX_BYTES_LIMIT). Returns NULL if memory is exhausted.
 * A parser is not thread-safe: use one per thread.
 */
pgjson_parser *pgjson_parser_create(size_t max_depth, size_t max_bytes);

/** Destroys a parser created by pgjson_parser_create (NULL is ignored). */
void pgjson_parser_destroy(pgjson_parser *parser);

/**
 * Releases the buffers a parser grew for a large document (they are sized for the largest input
 * seen, up to about 30 bytes per input byte) and starts again small. The last result is invalidated.
 */
void pgjson_parser_trim(pgjson_parser *parser);

/**
 * Parses len bytes at data (data may be NULL when len is 0). The input need not be padded or
 * NUL-terminated: the parser copies it into a padded buffer it owns and reuses.
 * Returns the result code, also stored in *out.
 */
int32_t pgjson_parse(pgjson_parser *parser, const uint8_t *data, size_t len, pgjson_result *out);

/*
 * After a successful pgjson_parse: hands the result's node tape and string arena over to the
 * caller instead of letting it copy them (a large document then never exists twice), and
 * releases the parser's other buffers as pgjson_parser_trim does. The caller frees them with
 * pgjson_nodes_free and pgjson_strings_free. Returns 0, or -1 when there is no result to take.
 */
int32_t pgjson_parser_take(pgjson_parser *parser, pgjson_node **nodes, uint8_t **strings);

void pgjson_nodes_free(pgjson_node *nodes);

void pgjson_strings_free(uint8_t *strings);

/** The major version of the simdjson library compiled in (for diagnostics). */
int pgjson_version(void);

#ifdef __cplusplus
}
#endif
#endif
