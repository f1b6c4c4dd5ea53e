// C API over simdjson's DOM parser: parse, then flatten into the node tape described in
// include/pulse_simdjson.h. Uses only simdjson's error-code API; every entry point also catches
// anything thrown (std::bad_alloc from std::vector) so no exception crosses the C boundary.
#include "pulse_simdjson.h"

#include <simdjson.h>

#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

size_t clamp_depth(size_t max_depth) {
    if (max_depth < 1) { return 1; }
    if (max_depth > PGJSON_MAX_DEPTH_LIMIT) { return PGJSON_MAX_DEPTH_LIMIT; }
    return max_depth;
}

// Our max depth counts nested arrays/objects ("[[1]]" and "[[]]" both have depth 2). simdjson's
// limit counts the root level too and ignores empty containers (max_depth 3 accepts "[[1]]" and
// "[[[]]]" but not "[[[1]]]"). So simdjson gets max_depth + 1, which accepts every document we
// accept and bounds the stack, and flatten() enforces the exact limit.
size_t simdjson_depth_for(size_t max_depth) { return clamp_depth(max_depth) + 1; }

uint64_t head(uint64_t kind, size_t next) { return kind | (static_cast<uint64_t>(next) << 32); }

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

}  // namespace

struct pgjson_parser {
    simdjson::dom::parser dom;
    size_t max_bytes = 0;
    size_t max_depth = 0;
    std::vector<pgjson_node> nodes;
    std::unique_ptr<uint8_t[]> arena;
    size_t arena_capacity = 0;
    size_t arena_used = 0;

    // simdjson's own capacity limit stays at least its minimum; max_bytes is enforced before parsing.
    pgjson_parser(size_t max_bytes_, size_t max_depth_)
        : dom(max_bytes_ < 4096 ? 4096 : max_bytes_), max_bytes(max_bytes_), max_depth(clamp_depth(max_depth_)) {}

    // Returns false if the arena would overflow (cannot happen: an unescaped string is never
    // longer than its escaped form, and the arena is as large as the input).
    bool push_string(std::string_view s) {
        size_t length = s.size();
        if (length > arena_capacity - arena_used) { return false; }
        size_t offset = arena_used;
        if (length > 0) { std::memcpy(arena.get() + offset, s.data(), length); }
        arena_used += length;
        size_t index = nodes.size();
        nodes.push_back(pgjson_node{
            head(PGJSON_KIND_STRING, index + 1),
            static_cast<uint64_t>(offset) | (static_cast<uint64_t>(length) << 32)});
        return true;
    }

    enum class flat { ok, too_deep, overflow };

    // `depth` is the number of containers enclosing `value`. Recursion is bounded by simdjson's
    // depth check (at most PGJSON_MAX_DEPTH_LIMIT + 1 levels).
    flat flatten(element value, size_t depth) {
        size_t index = nodes.size();
        switch (value.type()) {
        case element_type::ARRAY: {
            if (depth >= max_depth) { return flat::too_deep; }
            nodes.push_back(pgjson_node{0, 0});
            uint64_t count = 0;
            for (element child : value.get_array().value_unsafe()) {
                flat status = flatten(child, depth + 1);
                if (status != flat::ok) { return status; }
                ++count;
            }
            nodes[index] = pgjson_node{head(PGJSON_KIND_ARRAY, nodes.size()), count};
            return flat::ok;
        }
        case element_type::OBJECT: {
            if (depth >= max_depth) { return flat::too_deep; }
            nodes.push_back(pgjson_node{0, 0});
            uint64_t count = 0;
            for (simdjson::dom::key_value_pair member : value.get_object().value_unsafe()) {
                if (!push_string(member.key)) { return flat::overflow; }
                flat status = flatten(member.value, depth + 1);
                if (status != flat::ok) { return status; }
                ++count;
            }
            nodes[index] = pgjson_node{head(PGJSON_KIND_OBJECT, nodes.size()), count};
            return flat::ok;
        }
        case element_type::STRING:
            return push_string(value.get_string().value_unsafe()) ? flat::ok : flat::overflow;
        case element_type::INT64: {
            int64_t v = value.get_int64().value_unsafe();
            uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            nodes.push_back(pgjson_node{head(PGJSON_KIND_INT, index + 1), bits});
            return flat::ok;
        }
        case element_type::UINT64:
            nodes.push_back(pgjson_node{head(PGJSON_KIND_UINT, index + 1), value.get_uint64().value_unsafe()});
            return flat::ok;
        case element_type::DOUBLE: {
            double v = value.get_double().value_unsafe();
            uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            nodes.push_back(pgjson_node{head(PGJSON_KIND_DOUBLE, index + 1), bits});
            return flat::ok;
        }
        case element_type::BOOL:
            nodes.push_back(pgjson_node{head(PGJSON_KIND_BOOL, index + 1), value.get_bool().value_unsafe() ? 1u : 0u});
            return flat::ok;
        case element_type::NULL_VALUE:
            nodes.push_back(pgjson_node{head(PGJSON_KIND_NULL, index + 1), 0});
            return flat::ok;
        }
        return flat::overflow;
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

    element root;
    simdjson::error_code error = p->dom.parse(data, len).get(root);
    if (error) { return fail(out, map_error(error), error, simdjson::error_message(error)); }

    if (p->arena_capacity < len) {
        p->arena.reset(new (std::nothrow) uint8_t[len]);
        if (!p->arena) {
            p->arena_capacity = 0;
            return fail(out, PGJSON_ERR_NO_MEMORY, simdjson::MEMALLOC, "out of memory");
        }
        p->arena_capacity = len;
    }
    p->arena_used = 0;
    p->nodes.clear();
    switch (p->flatten(root, 0)) {
    case pgjson_parser::flat::ok: break;
    case pgjson_parser::flat::too_deep:
        return fail(out, PGJSON_ERR_DEPTH, simdjson::DEPTH_ERROR, simdjson::error_message(simdjson::DEPTH_ERROR));
    case pgjson_parser::flat::overflow:
        return fail(out, PGJSON_ERR_INTERNAL, 0, "internal error while flattening");
    }
    *out = pgjson_result{PGJSON_OK, 0, "ok", p->nodes.data(), p->nodes.size(), p->arena.get(), p->arena_used};
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
