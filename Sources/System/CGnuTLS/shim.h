#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
