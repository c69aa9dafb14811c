// SPDX-License-Identifier: Apache-2.0
//
// GNU libmicrohttpd, from Debian's libmicrohttpd-dev. Its daemon and information calls are C variadic
// functions, which Swift cannot call; these static inline wrappers give them fixed signatures.
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// Starts a daemon on `address` (IPv4, any port; 0 for an ephemeral one) with one thread per
/// connection. With `tls_key` and `tls_cert` (PEM, in memory) it speaks HTTPS only.
/// libmicrohttpd's unescaping of the path and query, except that `%00` stays as it is: decoded, a NUL
/// would end the C string the path is handed over as, so `/studio%00/evil` would be served, and logged,
/// as `/studio`.
static inline size_t tilecast_mhd_unescape(void *context, struct MHD_Connection *connection, char *text)
{
    (void)context;
    (void)connection;
    char *read = text;
    char *write = text;
    while (*read != '\0') {
        int high = -1, low = -1;
        if (read[0] == '%' && read[1] != '\0' && read[2] != '\0') {
            char h = read[1], l = read[2];
            high = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            low = (l >= '0' && l <= '9') ? l - '0' : (l >= 'a' && l <= 'f') ? l - 'a' + 10 : (l >= 'A' && l <= 'F') ? l - 'A' + 10 : -1;
        }
        if (high >= 0 && low >= 0 && (high | low) != 0) {
            *write++ = (char)(high * 16 + low);
            read += 3;
        } else {
            *write++ = *read++;
        }
    }
    *write = '\0';
    return (size_t)(write - text);
}

static inline struct MHD_Daemon *tilecast_mhd_start(
    const struct sockaddr_in *address,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    const char *tls_key, const char *tls_cert,
    unsigned int connection_timeout_seconds, unsigned int connection_limit)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    if (tls_key != NULL && tls_cert != NULL) {
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler, handler_context,
            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
            MHD_OPTION_UNESCAPE_CALLBACK, tilecast_mhd_unescape, NULL,
            MHD_OPTION_HTTPS_MEM_KEY, tls_key,
            MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
            MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, tilecast_mhd_unescape, NULL,
        MHD_OPTION_END);
}

/// The port the daemon listens on, or 0.
static inline uint16_t tilecast_mhd_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

/// Writes the client's address (IPv4 or IPv6, as text) to `buffer`; returns 1 on success.
static inline int tilecast_mhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) {
        return 0;
    }
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size) != NULL;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size) != NULL;
    }
    return 0;
}

/// Whether this libmicrohttpd was built with TLS.
static inline int tilecast_mhd_supports_tls(void)
{
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}
