/*
 * The init string: "fabric[:key=value,...]" carried in EVAPI_get_hca_hndl's hca_id, as
 * MicroVAPI takes its settings. Keys:
 *   provider=NAME   libfabric provider: verbs, efa, cxi, opx, psm3, tcp, shm ... (a layered
 *                   provider such as "tcp;ofi_rxm" is matched by its core, "tcp"); default the
 *                   first hardware provider fi_getinfo offers
 *   domain=NAME     the provider's domain (an adapter, "mlx5_0"; for tcp an interface, "lo")
 *   port=1..255     without domain: the port-th domain of the provider (aldeia.conf's
 *                   infiniband_port), default 1
 *   mtu=1..1048576  the largest block a send carries (default 1024)
 *   peer_timeout=100..600000
 *                   milliseconds a peer may send nothing (not even its keepalive) before its
 *                   queue pairs fail (aldeia.conf's peer_timeout), default 10000
 *   tc=0..15        traffic class (aldeia.conf's infiniband_qos, InfiniBand's service level):
 *                   0 the provider's default, 1..15 in steps of FI_TC_* classes (see fab_hca.c)
 * Names are at most FAB_NAME_MAX - 1 characters; ',' and '=' cannot appear in them.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

#define PREFIX "fabric"

/* Strict decimal in [lo, hi]; -1 if not. */
static long parse_number(const char *s, long lo, long hi)
{
    if (!isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    return errno || *end || v < lo || v > hi ? -1 : v;
}

static VAPI_ret_t set_name(const char *fn, const char *key, const char *value, char *out)
{
    size_t n = strlen(value);
    if (n == 0 || n >= FAB_NAME_MAX)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "init string key %s: '%s' is not a name of 1..%d characters",
                         key, value, FAB_NAME_MAX - 1);
    memcpy(out, value, n + 1);
    return VAPI_OK;
}

/* The numeric keys: name, range, where the value goes. */
static const struct {
    const char *key;
    long lo, hi;
    size_t offset;
} numbers[] = {
    { "port", 1, 255,         offsetof(struct fab_config, port) },
    { "mtu",  1, FAB_MTU_MAX, offsetof(struct fab_config, mtu) },
    { "tc",   0, 15,          offsetof(struct fab_config, tc) },
    { "peer_timeout", 100, 600000, offsetof(struct fab_config, peer_timeout_ms) },
};

static VAPI_ret_t set_key(const char *fn, const char *key, const char *value, struct fab_config *c)
{
    if (strcmp(key, "provider") == 0)
        return set_name(fn, key, value, c->provider);
    if (strcmp(key, "domain") == 0)
        return set_name(fn, key, value, c->domain);
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (strcmp(key, numbers[i].key) != 0)
            continue;
        long v = parse_number(value, numbers[i].lo, numbers[i].hi);
        if (v < 0)
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "init string key %s: '%s' is not a number in %ld..%ld",
                             key, value, numbers[i].lo, numbers[i].hi);
        *(uint32_t *)(void *)((char *)c + numbers[i].offset) = (uint32_t)v;
        return VAPI_OK;
    }
    return vapi_fail(VAPI_EINVAL_PARAM, fn, "init string: unknown key '%s' (known: provider, domain, port, mtu, tc, "
                     "peer_timeout)",
                     key);
}

VAPI_ret_t fab_config_parse(const char *fn, const char *hca_id, struct fab_config *out)
{
    memset(out, 0, sizeof *out);
    out->port = 1;
    out->mtu = FAB_MTU_DEFAULT;
    out->tc = 0;
    out->peer_timeout_ms = 10000;
    if (!hca_id)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "hca_id is NULL");
    size_t plen = strlen(PREFIX);
    if (strncmp(hca_id, PREFIX, plen) != 0 || (hca_id[plen] != '\0' && hca_id[plen] != ':'))
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "init string '%s' does not start with \"" PREFIX "\"", hca_id);
    if (hca_id[plen] == '\0')
        return VAPI_OK;
    char *copy = strdup(hca_id + plen + 1);
    if (!copy)
        return vapi_fail(VAPI_ENOMEM, fn, "out of memory");
    VAPI_ret_t ret = VAPI_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ret == VAPI_OK; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "init string: '%s' is not key=value", item);
            break;
        }
        *eq = '\0';
        ret = set_key(fn, item, eq + 1, out);
    }
    free(copy);
    return ret;
}
