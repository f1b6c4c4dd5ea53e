#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include "pulse_shims.h"

#include <arpa/inet.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int pg_tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                           const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                           unsigned int *pcert_length, gnutls_privkey_t *privkey);

struct MHD_Daemon *pg_mhd_start_daemon(const pg_mhd_options *o,
                                       MHD_AccessHandlerCallback handler, void *handler_context,
                                       MHD_RequestCompletedCallback completed, void *completed_context) {
    struct MHD_OptionItem items[16];
    int n = 0;
    if (o->connection_limit) items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, o->connection_limit, NULL};
    if (o->per_ip_connection_limit) items[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_connection_limit, NULL};
    if (o->connection_timeout_s) items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, o->connection_timeout_s, NULL};
    if (o->thread_pool_size) items[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, o->thread_pool_size, NULL};
    if (o->connection_memory_limit) items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)o->connection_memory_limit, NULL};
    if (o->listen_backlog) items[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_BACKLOG_SIZE, o->listen_backlog, NULL};
    if (o->bind_address) items[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)o->bind_address};
    if (o->notify_connection) items[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)o->notify_connection, o->notify_connection_context};
    if (o->uri_log) items[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)o->uri_log, o->uri_log_context};
    if (completed) items[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_context};
    unsigned int flags = o->flags;
    if (o->tls) {
        flags |= MHD_USE_TLS;
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)&pg_tls_retrieve};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)PG_TLS_PRIORITIES};
    }
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags, o->port, o->accept_policy, o->accept_policy_context, handler, handler_context,
                            MHD_OPTION_ARRAY, items, MHD_OPTION_END);
}

uint16_t pg_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

int pg_mhd_client_address(struct MHD_Connection *connection, char *host, size_t host_capacity, uint16_t *port) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || host == NULL || host_capacity == 0) return -1;
    const struct sockaddr *addr = info->client_addr;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)addr;
        if (inet_ntop(AF_INET, &v4->sin_addr, host, (socklen_t)host_capacity) == NULL) return -1;
        if (port) *port = ntohs(v4->sin_port);
        return 0;
    }
    if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)addr;
        const char *ok;
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
            struct in_addr v4;
            memcpy(&v4, &v6->sin6_addr.s6_addr[12], sizeof v4);
            ok = inet_ntop(AF_INET, &v4, host, (socklen_t)host_capacity);
        } else {
            ok = inet_ntop(AF_INET6, &v6->sin6_addr, host, (socklen_t)host_capacity);
        }
        if (ok == NULL) return -1;
        if (port) *port = ntohs(v6->sin6_port);
        return 0;
    }
    return -1;
}

int pg_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return (info == NULL || info->connect_fd == MHD_INVALID_SOCKET) ? -1 : (int)info->connect_fd;
}

int pg_mhd_send_early_response(struct MHD_Connection *connection, const char *bytes, size_t length,
                               int shut_write) {
    int fd = pg_mhd_connection_fd(connection);
    if (fd < 0 || bytes == NULL) return -1;
    ssize_t sent;
    do {
        sent = send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (shut_write) (void)shutdown(fd, SHUT_WR);
    return sent == (ssize_t)length ? 0 : -1;
}

/* ---- TLS ---------------------------------------------------------------- */

#define PG_TLS_MAX_CHAIN 16
#define PG_TLS_MAX_PORTS 64

struct pg_tls_credentials {
    gnutls_pcert_st chain[PG_TLS_MAX_CHAIN];
    unsigned int count;
    gnutls_privkey_t key;
    struct pg_tls_credentials *retired; /* older credentials of the same slot */
};

struct pg_tls_slot {
    pthread_mutex_t lock;
    struct pg_tls_credentials *current;
    uint16_t port;
};

static pthread_mutex_t pg_tls_ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pg_tls_slot *pg_tls_ports[PG_TLS_MAX_PORTS];

static void pg_tls_detail(int code, char *detail, size_t capacity) {
    if (detail && capacity > 0) {
        strncpy(detail, gnutls_strerror(code), capacity - 1);
        detail[capacity - 1] = 0;
    }
}

void pg_tls_credentials_free(pg_tls_credentials *c) {
    while (c) {
        struct pg_tls_credentials *next = c->retired;
        for (unsigned int i = 0; i < c->count; i++) gnutls_pcert_deinit(&c->chain[i]);
        if (c->key) gnutls_privkey_deinit(c->key);
        free(c);
        c = next;
    }
}

/* Whether the key's public half is the certificate's public key. */
static int pg_tls_key_matches(gnutls_privkey_t key, gnutls_pcert_st *certificate) {
    gnutls_pubkey_t public_key;
    gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
    int matches = 0;
    if (gnutls_pubkey_init(&public_key) < 0) return 0;
    if (gnutls_pubkey_import_privkey(public_key, key, 0, 0) >= 0 &&
        gnutls_pubkey_export2(public_key, GNUTLS_X509_FMT_DER, &a) >= 0 &&
        gnutls_pubkey_export2(certificate->pubkey, GNUTLS_X509_FMT_DER, &b) >= 0) {
        matches = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    }
    gnutls_free(a.data);
    gnutls_free(b.data);
    gnutls_pubkey_deinit(public_key);
    return matches;
}

int pg_tls_credentials_create(const char *certificate_pem, size_t certificate_length, const char *key_pem,
                              size_t key_length, pg_tls_credentials **out, char *detail, size_t detail_capacity) {
    if (detail && detail_capacity > 0) detail[0] = 0;
    struct pg_tls_credentials *c = calloc(1, sizeof *c);
    if (c == NULL) return PG_TLS_FAILED;
    gnutls_datum_t certificate = {(unsigned char *)certificate_pem, (unsigned int)certificate_length};
    c->count = PG_TLS_MAX_CHAIN;
    int rc = gnutls_pcert_list_import_x509_raw(c->chain, &c->count, &certificate, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || c->count == 0) {
        if (rc >= 0) rc = GNUTLS_E_NO_CERTIFICATE_FOUND;
        c->count = 0;
        pg_tls_credentials_free(c);
        pg_tls_detail(rc, detail, detail_capacity);
        return PG_TLS_BAD_CERTIFICATE;
    }
    rc = gnutls_privkey_init(&c->key);
    if (rc < 0) {
        pg_tls_credentials_free(c);
        return PG_TLS_FAILED;
    }
    gnutls_datum_t key = {(unsigned char *)key_pem, (unsigned int)key_length};
    rc = gnutls_privkey_import_x509_raw(c->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (rc < 0) {
        pg_tls_credentials_free(c);
        pg_tls_detail(rc, detail, detail_capacity);
        return PG_TLS_BAD_KEY;
    }
    if (!pg_tls_key_matches(c->key, &c->chain[0])) {
        pg_tls_credentials_free(c);
        pg_tls_detail(GNUTLS_E_CERTIFICATE_KEY_MISMATCH, detail, detail_capacity);
        return PG_TLS_KEY_MISMATCH;
    }
    *out = c;
    return PG_TLS_OK;
}

pg_tls_slot *pg_tls_slot_create(pg_tls_credentials *initial) {
    struct pg_tls_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL) return NULL;
    pthread_mutex_init(&slot->lock, NULL);
    slot->current = initial;
    return slot;
}

void pg_tls_slot_replace(pg_tls_slot *slot, pg_tls_credentials *next) {
    pthread_mutex_lock(&slot->lock);
    next->retired = slot->current;
    slot->current = next;
    pthread_mutex_unlock(&slot->lock);
}

int pg_tls_slot_bind_port(pg_tls_slot *slot, uint16_t port) {
    int rc = -1;
    pthread_mutex_lock(&pg_tls_ports_lock);
    int free_index = -1;
    for (int i = 0; i < PG_TLS_MAX_PORTS; i++) {
        if (pg_tls_ports[i] && pg_tls_ports[i]->port == port) goto done;
        if (!pg_tls_ports[i] && free_index < 0) free_index = i;
    }
    if (free_index >= 0) {
        slot->port = port;
        pg_tls_ports[free_index] = slot;
        rc = 0;
    }
done:
    pthread_mutex_unlock(&pg_tls_ports_lock);
    return rc;
}

void pg_tls_slot_free(pg_tls_slot *slot) {
    if (slot == NULL) return;
    pthread_mutex_lock(&pg_tls_ports_lock);
    for (int i = 0; i < PG_TLS_MAX_PORTS; i++) {
        if (pg_tls_ports[i] == slot) pg_tls_ports[i] = NULL;
    }
    pthread_mutex_unlock(&pg_tls_ports_lock);
    pg_tls_credentials_free(slot->current);
    pthread_mutex_destroy(&slot->lock);
    free(slot);
}

/* MHD_OPTION_HTTPS_CERT_CALLBACK: the credentials of the slot bound to the connection's local
   port. libmicrohttpd gives GnuTLS the connection's socket as its transport. */
static int pg_tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                           const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                           unsigned int *pcert_length, gnutls_privkey_t *privkey) {
    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    int fd = gnutls_transport_get_int(session);
    struct sockaddr_storage local;
    socklen_t length = sizeof local;
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&local, &length) != 0) return -1;
    uint16_t port = local.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&local)->sin6_port)
                                                : ntohs(((struct sockaddr_in *)&local)->sin_port);
    int rc = -1;
    pthread_mutex_lock(&pg_tls_ports_lock);
    for (int i = 0; i < PG_TLS_MAX_PORTS; i++) {
        struct pg_tls_slot *slot = pg_tls_ports[i];
        if (slot && slot->port == port) {
            pthread_mutex_lock(&slot->lock);
            *pcert = slot->current->chain;
            *pcert_length = slot->current->count;
            *privkey = slot->current->key;
            pthread_mutex_unlock(&slot->lock);
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&pg_tls_ports_lock);
    return rc;
}

CURLcode pg_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
CURLcode pg_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
CURLcode pg_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
CURLcode pg_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
CURLcode pg_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
CURLcode pg_curl_setopt_write_function(CURL *h, pg_curl_data_callback cb, void *ctx) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_WRITEDATA, ctx);
}
CURLcode pg_curl_setopt_header_function(CURL *h, pg_curl_data_callback cb, void *ctx) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_HEADERDATA, ctx);
}
CURLcode pg_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
CURLcode pg_curl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }

void pg_configure_allocator(int arena_max, size_t mmap_threshold_bytes) {
    if (arena_max > 0) (void)mallopt(M_ARENA_MAX, arena_max);
    if (mmap_threshold_bytes > 0) (void)mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold_bytes);
}

void pg_release_free_memory(void) { (void)malloc_trim(0); }

int pg_spawn_detached(const char *path, char *const argv[], char *const envp[], const char *output_path,
                      pid_t *pid) {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    sigset_t mask, defaults;
    int rc = posix_spawnattr_init(&attributes);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) {
        posix_spawnattr_destroy(&attributes);
        return rc;
    }
    sigemptyset(&mask);
    sigfillset(&defaults);
    sigdelset(&defaults, SIGKILL);
    sigdelset(&defaults, SIGSTOP);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &mask);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                                            POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 1, output_path ? output_path : "/dev/null",
                                                       O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return rc;
}
