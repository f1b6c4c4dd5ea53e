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
    /* The accept policy (MHD_start_daemon's apc): MHD_NO closes a just-accepted connection. The
       gateway refuses connections this way once shutdown began, instead of MHD_quiesce_daemon, which
       in 0.9.75 races a worker thread removing the same listen FD from its epoll set and panics. */
    MHD_AcceptPolicyCallback accept_policy;
    void *accept_policy_context;
    /* TLS: when non-zero, MHD_USE_TLS is added, certificates come from the pg_tls_slot bound to
       the listen port (pg_tls_slot_bind_port) through MHD_OPTION_HTTPS_CERT_CALLBACK, and
       MHD_OPTION_HTTPS_PRIORITIES is PG_TLS_PRIORITIES. */
    int tls;
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
 * Writes a complete response (`length` bytes: head and body) straight to a connection's socket and,
 * when `shut_write` is non-zero, shuts its sending side (FIN), without going through libmicrohttpd.
 * The URI-callback answer leaves it open: libmicrohttpd then fails the request itself, and its own
 * error answer on a shut socket crashed it. For the answers
 * libmicrohttpd cannot give: a response while the request body is still arriving (it only queues
 * responses before the body or after its end), and one from the URI callback, before it parses a
 * query that may exhaust its pool. The caller keeps draining the body and then returns MHD_NO so
 * libmicrohttpd closes the connection. Returns 0 when every byte was written at once,
 * -1 otherwise (no socket, or the send buffer is full).
 */
int pg_mhd_send_early_response(struct MHD_Connection *connection, const char *bytes, size_t length,
                               int shut_write);

/* ---- TLS (GnuTLS, the library Debian's libmicrohttpd is built with) ----- */

/**
 * The TLS policy of every TLS daemon (GnuTLS priority string): TLS 1.2 and 1.3 only; AEAD ciphers
 * only (AES-256-GCM, AES-128-GCM, ChaCha20-Poly1305); forward-secret key exchange only (ECDHE with
 * RSA or ECDSA certificates for TLS 1.2; TLS 1.3's own); the server's preference order.
 */
#define PG_TLS_PRIORITIES                                                                          \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:"              \
    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:%SERVER_PRECEDENCE"

/** Results of pg_tls_credentials_create. */
enum {
    PG_TLS_OK = 0,
    PG_TLS_BAD_CERTIFICATE = 1, /* no PEM certificate could be parsed */
    PG_TLS_BAD_KEY = 2,         /* no PEM private key could be parsed (or it is encrypted) */
    PG_TLS_KEY_MISMATCH = 3,    /* the key is not the first certificate's */
    PG_TLS_FAILED = 4           /* out of memory, or another GnuTLS failure */
};

/** A parsed certificate chain (up to 16 certificates) and its private key. */
typedef struct pg_tls_credentials pg_tls_credentials;

/**
 * Parses a PEM certificate chain and a PEM private key and checks that the key belongs to the
 * first certificate. On failure writes GnuTLS's description of the error (never key material)
 * into `detail`. Returns a PG_TLS_* code; on PG_TLS_OK stores the credentials in `out`.
 */
int pg_tls_credentials_create(const char *certificate_pem, size_t certificate_length, const char *key_pem,
                              size_t key_length, pg_tls_credentials **out, char *detail, size_t detail_capacity);

/** Frees credentials that were never handed to a slot. */
void pg_tls_credentials_free(pg_tls_credentials *credentials);

/**
 * The credentials a TLS daemon serves, replaceable while it runs: each handshake takes the
 * credentials current at that moment; sessions already established are unaffected. Replaced
 * credentials are kept until the slot is freed (a session may still refer to them).
 */
typedef struct pg_tls_slot pg_tls_slot;

/** Creates a slot holding `initial` (ownership passes to the slot). NULL when out of memory. */
pg_tls_slot *pg_tls_slot_create(pg_tls_credentials *initial);

/** Makes `next` the credentials of new handshakes (ownership passes to the slot). */
void pg_tls_slot_replace(pg_tls_slot *slot, pg_tls_credentials *next);

/**
 * Binds the slot to a local TCP port: handshakes on connections to that port use it. Returns 0,
 * or -1 when the port has another slot or the table (64 ports) is full.
 */
int pg_tls_slot_bind_port(pg_tls_slot *slot, uint16_t port);

/** Unbinds the slot from its port and frees it with every credentials it held. Call it only after
    the daemon using it has stopped. */
void pg_tls_slot_free(pg_tls_slot *slot);

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
