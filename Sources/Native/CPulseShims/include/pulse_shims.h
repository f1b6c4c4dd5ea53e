#ifndef PULSE_SHIMS_H
#define PULSE_SHIMS_H
/*
 * Typed, prefixed, non-variadic wrappers around the variadic C APIs PulseGate uses
 * (MHD_start_daemon, curl_easy_setopt, curl_easy_getinfo). Swift cannot call C
 * variadic functions, and a typed wrapper also documents exactly which options we set.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <curl/curl.h>
#include <microhttpd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- libmicrohttpd ---------------------------------------------------- */

/** Every MHD option PulseGate sets, in one typed struct. Zero means "library default". */
typedef struct pg_mhd_options {
    unsigned int flags;                 /* MHD_USE_* flags */
    uint16_t port;                      /* used when bind_address is NULL */
    const struct sockaddr *bind_address;/* optional; IPv4 or IPv6 */
    unsigned int connection_limit;      /* MHD_OPTION_CONNECTION_LIMIT */
    unsigned int per_ip_connection_limit;
    unsigned int connection_timeout_s;  /* idle timeout per connection */
    unsigned int thread_pool_size;      /* MHD_OPTION_THREAD_POOL_SIZE */
    size_t connection_memory_limit;     /* header buffer per connection */
    unsigned int listen_backlog;
    /* MHD_OPTION_NOTIFY_CONNECTION: told when a connection is accepted and when it is closed. */
    MHD_NotifyConnectionCallback notify_connection;
    void *notify_connection_context;
    /* MHD_OPTION_URI_LOG_CALLBACK: sees the raw request target before libmicrohttpd parses its
       query; what it returns becomes the request's context pointer. */
    void *(*uri_log)(void *context, const char *uri, struct MHD_Connection *connection);
    void *uri_log_context;
} pg_mhd_options;

/** Starts a daemon with the given options. Returns NULL on failure. */
struct MHD_Daemon *pg_mhd_start_daemon(const pg_mhd_options *options,
                                       MHD_AccessHandlerCallback handler, void *handler_context,
                                       MHD_RequestCompletedCallback completed, void *completed_context);

/** The port the daemon actually bound (useful with port 0). Returns 0 when unknown. */
uint16_t pg_mhd_bound_port(struct MHD_Daemon *daemon);

/**
 * Writes the numeric host of a connection's peer into `host` (NUL-terminated; IPv4-mapped IPv6
 * addresses are written as IPv4) and its port into `port`. Returns 0 on success, -1 when unknown.
 * Wraps the variadic MHD_get_connection_info(MHD_CONNECTION_INFO_CLIENT_ADDRESS).
 */
int pg_mhd_client_address(struct MHD_Connection *connection, char *host, size_t host_capacity, uint16_t *port);

/** The connection's socket, or -1 when unknown. Wraps MHD_get_connection_info(CONNECTION_FD). */
int pg_mhd_connection_fd(struct MHD_Connection *connection);

/**
 * Writes a complete response (`length` bytes: head and body) straight to a connection's socket and
 * shuts its sending side (FIN), without going through libmicrohttpd. For the answers
 * libmicrohttpd cannot give: a response while the request body is still arriving (it only queues
 * responses before the body or after its end), and one from the URI callback, before it parses a
 * query that may exhaust its pool. The caller keeps draining the body and then returns MHD_NO so
 * libmicrohttpd closes the connection. Returns 0 when every byte was written at once,
 * -1 otherwise (no socket, or the send buffer is full).
 */
int pg_mhd_send_early_response(struct MHD_Connection *connection, const char *bytes, size_t length);

/* ---- libcurl ----------------------------------------------------------- */

CURLcode pg_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode pg_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode pg_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode pg_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode pg_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

typedef size_t (*pg_curl_data_callback)(char *data, size_t size, size_t count, void *context);
CURLcode pg_curl_setopt_write_function(CURL *handle, pg_curl_data_callback callback, void *context);
CURLcode pg_curl_setopt_header_function(CURL *handle, pg_curl_data_callback callback, void *context);

CURLcode pg_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode pg_curl_getinfo_double(CURL *handle, CURLINFO info, double *value);

/* ---- memory ------------------------------------------------------------ */

/**
 * Sets glibc's allocator up for a server whose requests allocate large, short-lived buffers:
 * at most `arena_max` malloc arenas (0 leaves the default), and a fixed mmap threshold of
 * `mmap_threshold_bytes` (0 leaves glibc's dynamic threshold), so every allocation at least that
 * large gets its own mapping and goes back to the system when freed. Call it once, early.
 */
void pg_configure_allocator(int arena_max, size_t mmap_threshold_bytes);

/** Returns free heap memory of every malloc arena to the system (glibc `malloc_trim(0)`). */
void pg_release_free_memory(void);

/* ---- processes --------------------------------------------------------- */

/**
 * Starts `path` with `argv`/`envp` as a detached child: a new session (setsid), default signal
 * dispositions and an empty signal mask, stdin from /dev/null, stdout and stderr appended to
 * `output_path` (created 0600; NULL means /dev/null), and no other inherited descriptors.
 * Returns 0 and stores the child's pid, or an errno value.
 */
int pg_spawn_detached(const char *path, char *const argv[], char *const envp[], const char *output_path,
                      pid_t *pid);

#ifdef __cplusplus
}
#endif
#endif
