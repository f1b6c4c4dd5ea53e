#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include "pulse_shims.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

struct MHD_Daemon *pg_mhd_start_daemon(const pg_mhd_options *o,
                                       MHD_AccessHandlerCallback handler, void *handler_context,
                                       MHD_RequestCompletedCallback completed, void *completed_context) {
    struct MHD_OptionItem items[14];
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
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(o->flags, o->port, NULL, NULL, handler, handler_context,
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

int pg_mhd_send_early_response(struct MHD_Connection *connection, const char *bytes, size_t length) {
    int fd = pg_mhd_connection_fd(connection);
    if (fd < 0 || bytes == NULL) return -1;
    ssize_t sent;
    do {
        sent = send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    (void)shutdown(fd, SHUT_WR);
    return sent == (ssize_t)length ? 0 : -1;
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
