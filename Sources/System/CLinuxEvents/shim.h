// Linux readiness and wake-up primitives that Swift's Glibc module does not export.
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// GNU extensions that Glibc only declares under _GNU_SOURCE, which Swift's Glibc module omits.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pthread_setname_np(pthread_t thread, const char *name);
