// SPDX-License-Identifier: Apache-2.0
// libpq, PostgreSQL's C client library, from Debian's libpq-dev (pkg-config: libpq).
#include <libpq-fe.h>
