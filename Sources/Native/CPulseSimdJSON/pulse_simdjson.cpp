// C API over simdjson's DOM parser: parse, then flatten simdjson's tape into the node tape
// described in include/pulse_simdjson.h. Uses only simdjson's error-code API; every entry point
// also catches anything thrown (std::bad_alloc) so no exception crosses the C boundary.
//
// The flattener reads the DOM document's tape and string buffer directly (one tight loop instead
// of a recursive walk through dom::element; this halves the cost of a parse). Their layout is
// simdjson's documented tape format (doc/tape.md in the simdjson sources), unchanged since 0.3:
//   tape[0]             'r' root word; low 56 bits: index just past the final 'r' root word
//   '{' / '['           low 32 bits: index just past the matching '}' / ']'; bits 32-55: the
//                       number of members / elements, saturated at 0xFFFFFF
//   '}' / ']'           closes the innermost container
//   '"'                 low 56 bits: offset into string_buf of a uint32 length (host byte
//                       order), then the unescaped UTF-8 bytes, then a NUL
//   'l' / 'u' / 'd'     int64 / uint64 / double; the value is the next tape word
//   't' / 'f' / 'n'     true / false / null
// Strings land in string_buf in tape order, so the arena handed to the caller is simply the used
// prefix of string_buf. The layout is re-verified by the PulseJSON tests and fuzzer; the
// static_assert below forces a re-check when the simdjson major version changes.
#include "pulse_simdjson.h"

#include <simdjson.h>

#include <cstring>
#include <memory>
#include <new>

static_assert(simdjson::SIMDJSON_VERSION_MAJOR == 3,
              "pulse_simdjson.cpp reads simdjson's DOM tape; re-verify the tape layout for this simdjson version");

namespace {

size_t clamp_depth(size_t max_depth) {
    if (max_depth < 1) { return 1; }
    if (max_depth > PGJSON_MAX_DEPTH_LIMIT) { return PGJSON_MAX_DEPTH_LIMIT; }
    return max_depth;
}

// Our max depth counts nested arrays/objects ("[[1]]" and "[[]]" both have depth 2). simdjson's
// limit counts the root level too and ignores empty containers (max_depth 3 accepts "[[1]]" and
// "[[[]]]" but not "[[[1]]]"). So simdjson gets max_depth + 1, which accepts every document we
// accept and bounds its own work, and the flattener enforces the exact limit.
size_t simdjson_depth_for(size_t max_depth) { return clamp_depth(max_depth) + 1; }

constexpr uint64_t head(uint64_t kind, size_t next) { return kind | (static_cast<uint64_t>(next) << 32); }

int32_t map_error(simdjson::error_code error) {
    switch (error) {
    case simdjson::SUCCESS: return PGJSON_OK;
    case simdjson::UTF8_ERROR: return PGJSON_ERR_INVALID_UTF8;
    case simdjson::DEPTH_ERROR: return PGJSON_ERR_DEPTH;
    case simdjson::CAPACITY: return PGJSON_ERR_TOO_LARGE;
    case simdjson::MEMALLOC: return PGJSON_ERR_NO_MEMORY;
    // simdjson 3 reports both malformed numbers ("01", "1.") and numbers out of range
    // (integers beyond int64/uint64, doubles beyond the finite range) as NUMBER_ERROR.
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE: return PGJSON_ERR_NUMBER;
    case simdjson::TAPE_ERROR:
    case simdjson::STRING_ERROR:
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
    case simdjson::EMPTY:
    case simdjson::UNESCAPED_CHARS:
    case simdjson::UNCLOSED_STRING:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::TRAILING_CONTENT: return PGJSON_ERR_INVALID_JSON;
    default: return PGJSON_ERR_INTERNAL;
    }
}

enum class flat { ok, too_deep, corrupt };

// simdjson stores an element/member count in bits 32-55 of '[' / '{' words, saturated here.
constexpr uint64_t saturated_count = 0xFFFFFF;

// What each tape type byte means to the flattener: a node kind (low bits) and flags.
constexpr uint8_t tape_kind_mask = 0x0F;
constexpr uint8_t tape_open = 0x10;   // '[' or '{'
constexpr uint8_t tape_close = 0x20;  // ']' or '}'
constexpr uint8_t tape_wide = 0x40;   // the value is in the next tape word
constexpr uint8_t tape_bad = 0x80;    // not a type byte that may appear inside the root

struct tape_kind_table {
    uint8_t entry[256];
    constexpr tape_kind_table() : entry() {
        for (uint8_t &e : entry) { e = tape_bad; }
        entry['['] = PGJSON_KIND_ARRAY | tape_open;
        entry['{'] = PGJSON_KIND_OBJECT | tape_open;
        entry[']'] = tape_close;
        entry['}'] = tape_close;
        entry['"'] = PGJSON_KIND_STRING;
        entry['l'] = PGJSON_KIND_INT | tape_wide;
        entry['u'] = PGJSON_KIND_UINT | tape_wide;
        entry['d'] = PGJSON_KIND_DOUBLE | tape_wide;
        entry['t'] = PGJSON_KIND_BOOL;
        entry['f'] = PGJSON_KIND_BOOL;
        entry['n'] = PGJSON_KIND_NULL;
    }
};
constexpr tape_kind_table tape_kinds;

}  // namespace

struct pgjson_parser {
    simdjson::dom::parser dom;
    size_t max_bytes = 0;
    size_t max_depth = 0;
    std::unique_ptr<pgjson_node[]> nodes;
    size_t node_capacity = 0;
    size_t node_count = 0;
    size_t string_bytes = 0;
    // Node indices of the open containers (at most max_depth).
    std::unique_ptr<size_t[]> open;

    // simdjson's own capacity limit stays at least its minimum; max_bytes is enforced before parsing.
    pgjson_parser(size_t max_bytes_, size_t max_depth_)
        : dom(max_bytes_ < 4096 ? 4096 : max_bytes_),
          max_bytes(max_bytes_),
          max_depth(clamp_depth(max_depth_)),
          open(new size_t[clamp_depth(max_depth_)]) {}

    flat flatten() {
        const uint64_t *tape = dom.doc.tape.get();
        const uint8_t *string_buf = dom.doc.string_buf.get();
        // Index of the final root word: the value's words lie in [1, end).
        const size_t after_root = static_cast<size_t>(tape[0] & simdjson::internal::JSON_VALUE_MASK);
        if (after_root < 3) { return flat::corrupt; }
        const size_t end = after_root - 1;
        // Every node comes from at least one tape word between the two root words.
        if (end > node_capacity) {
            nodes.reset(new pgjson_node[end]);
            node_capacity = end;
        }
        pgjson_node *out = nodes.get();
        size_t *stack = open.get();
        size_t depth = 0;
        size_t count = 0;
        size_t strings_end = 0;
        bool saturated = false;
        bool overflow = false;
        size_t i = 1;
        while (i < end) {
            const uint64_t word = tape[i];
            const uint64_t value = word & simdjson::internal::JSON_VALUE_MASK;
            const uint8_t entry = tape_kinds.entry[word >> 56];
            if (entry & (tape_open | tape_close | tape_bad)) {
                if (entry & tape_bad) { return flat::corrupt; }
                if (entry & tape_close) {
                    if (depth == 0) { return flat::corrupt; }
                    out[stack[--depth]].head |= static_cast<uint64_t>(count) << 32;
                } else {
                    if (depth >= max_depth) { return flat::too_deep; }
                    stack[depth++] = count;
                    const uint64_t members = (value >> 32) & saturated_count;
                    saturated |= members == saturated_count;
                    // "next" is filled in at the close.
                    out[count++] = pgjson_node{uint64_t{entry} & tape_kind_mask, members};
                }
                ++i;
                continue;
            }
            // Scalars and strings, computed without branching on the type: the tape's type
            // sequence is data-dependent, so a switch here mispredicts on most words.
            const uint64_t kind = entry & tape_kind_mask;
            const bool is_string = kind == PGJSON_KIND_STRING;
            const bool wide = entry & tape_wide;
            uint32_t length;
            std::memcpy(&length, string_buf + (is_string ? value : 0), sizeof length);
            const uint64_t start = value + sizeof length;
            const uint64_t scalar = wide ? tape[i + 1] : uint64_t{(word >> 56) == 't'};
            out[count] = pgjson_node{head(kind, count + 1), is_string ? (start | (uint64_t{length} << 32)) : scalar};
            overflow |= is_string && start + length > UINT32_MAX;
            strings_end = is_string ? start + length + 1 : strings_end;  // + 1: the NUL after the bytes
            ++count;
            i += wide ? 2 : 1;
        }
        if (overflow) { return flat::corrupt; }
        if (depth != 0 || count == 0 || count > end) { return flat::corrupt; }
        if (saturated) { recount(out, count); }
        node_count = count;
        string_bytes = strings_end;
        return flat::ok;
    }

    // Counts the children of containers whose simdjson count saturated (16M+ elements).
    static void recount(pgjson_node *out, size_t count) {
        for (size_t index = 0; index < count; ++index) {
            const uint64_t kind = out[index].head & 0xFF;
            if ((kind != PGJSON_KIND_ARRAY && kind != PGJSON_KIND_OBJECT) || out[index].payload != saturated_count) {
                continue;
            }
            const size_t after = static_cast<size_t>(out[index].head >> 32);
            uint64_t children = 0;
            for (size_t child = index + 1; child < after; child = static_cast<size_t>(out[child].head >> 32)) {
                ++children;
            }
            out[index].payload = kind == PGJSON_KIND_OBJECT ? children / 2 : children;
        }
    }
};

namespace {

int32_t fail(pgjson_result *out, int32_t code, int32_t simdjson_code, const char *message) {
    *out = pgjson_result{code, simdjson_code, message, nullptr, 0, nullptr, 0};
    return code;
}

int32_t parse_into(pgjson_parser *p, const uint8_t *data, size_t len, pgjson_result *out) {
    if (len > p->max_bytes) {
        return fail(out, PGJSON_ERR_TOO_LARGE, simdjson::CAPACITY, "document exceeds the size limit");
    }
    static const uint8_t empty[1] = {0};
    if (data == nullptr) { data = empty; len = 0; }

    // Copies the input into a padded buffer the parser owns and reuses.
    simdjson::error_code error = p->dom.parse(data, len).error();
    if (error) { return fail(out, map_error(error), error, simdjson::error_message(error)); }

    switch (p->flatten()) {
    case flat::ok: break;
    case flat::too_deep:
        return fail(out, PGJSON_ERR_DEPTH, simdjson::DEPTH_ERROR, simdjson::error_message(simdjson::DEPTH_ERROR));
    case flat::corrupt:
        return fail(out, PGJSON_ERR_INTERNAL, simdjson::UNEXPECTED_ERROR, "unexpected simdjson tape layout");
    }
    *out = pgjson_result{PGJSON_OK, 0, "ok", p->nodes.get(), p->node_count, p->dom.doc.string_buf.get(),
                         p->string_bytes};
    return PGJSON_OK;
}

}  // namespace

extern "C" pgjson_parser *pgjson_parser_create(size_t max_depth, size_t max_bytes) {
    if (max_bytes > PGJSON_MAX_BYTES_LIMIT) { max_bytes = PGJSON_MAX_BYTES_LIMIT; }
    try {
        std::unique_ptr<pgjson_parser> p(new pgjson_parser(max_bytes, max_depth));
        // Start small; simdjson grows its buffers on demand (keeping this max depth) up to max_bytes.
        if (p->dom.allocate(4096, simdjson_depth_for(max_depth)) != simdjson::SUCCESS) { return nullptr; }
        return p.release();
    } catch (...) {
        return nullptr;
    }
}

extern "C" void pgjson_parser_destroy(pgjson_parser *parser) { delete parser; }

extern "C" void pgjson_parser_trim(pgjson_parser *parser) {
    // Replacing the simdjson parser frees all of its buffers (including its padded input copy);
    // it grows again on demand. allocate() only fails when out of memory, and parse() retries then.
    parser->dom = simdjson::dom::parser(parser->max_bytes < 4096 ? 4096 : parser->max_bytes);
    (void)parser->dom.allocate(4096, simdjson_depth_for(parser->max_depth));
    parser->nodes.reset();
    parser->node_capacity = 0;
    parser->node_count = 0;
    parser->string_bytes = 0;
}

extern "C" int32_t pgjson_parser_take(pgjson_parser *parser, pgjson_node **nodes, uint8_t **strings) {
    if (parser == nullptr || nodes == nullptr || strings == nullptr || !parser->nodes || !parser->dom.doc.string_buf) {
        return -1;
    }
    *nodes = parser->nodes.release();
    *strings = parser->dom.doc.string_buf.release();
    pgjson_parser_trim(parser);
    return 0;
}

extern "C" void pgjson_nodes_free(pgjson_node *nodes) { delete[] nodes; }

extern "C" void pgjson_strings_free(uint8_t *strings) { delete[] strings; }

extern "C" int32_t pgjson_parse(pgjson_parser *parser, const uint8_t *data, size_t len, pgjson_result *out) {
    try {
        return parse_into(parser, data, len, out);
    } catch (const std::bad_alloc &) {
        return fail(out, PGJSON_ERR_NO_MEMORY, simdjson::MEMALLOC, "out of memory");
    } catch (...) {
        return fail(out, PGJSON_ERR_INTERNAL, 0, "unexpected failure while flattening");
    }
}

extern "C" int pgjson_version(void) { return simdjson::SIMDJSON_VERSION_MAJOR; }
