/*
 * The init string: "microvapi[:key=value,...]" carried in EVAPI_get_hca_hndl's hca_id, the
 * way the thesis passed MicroVAPI's settings through the HCA name. Keys:
 *   mtu=1..1048576                 block size (default 1024)
 *   deck=dynamic | deck=static     how DECK is brought up (static is implied by deck_id)
 *   deck_id, deck_nodes, deck_file static DECK as its launcher did (deck_file default "nodes")
 *   deck_transport=NAME            DECK_TRANSPORT for DECK's init: tcp, sci (static) or auto (dynamic;
 *                                  DECK's default: auto for dynamic runs, tcp for static ones)
 *   deck_secret_file=PATH          DECK_SECRET_FILE: the run secret of a static run (no ',' in PATH)
 *   deck_tcp_encryption=on|off     DECK_TCP_ENCRYPTION: TLS on every DECK tcp connection
 *   deck_msg_buf_limit, deck_medbuf_size, deck_mseg_size, deck_spin_us
 *                                  DECK_MSG_BUF_LIMIT, DECK_MEDBUF_SIZE, DECK_MSEG_SIZE and
 *                                  DECK_SPIN_US for the shared-memory transport (DECK_SPIN_US
 *                                  for tcp's waiters too; -1: poll without ever sleeping, for
 *                                  benchmarks)
 *   peer_timeout=MS                DECK_POST_TIMEOUT_MS: a peer process that takes or answers
 *                                  nothing for this long is given up (engine.c)
 * The DECK_* variables are set only when MicroVAPI brings DECK up (hca.c): a DECK that is
 * running already keeps its settings. With no deck mode at all, deck_init() reads what the
 * deckrun launcher put in the environment.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv_internal.h"

#define PREFIX "microvapi"

/* Keys that DECK reads from its environment: key, variable, accepted range. */
static const struct {
    const char *key, *env;
    long lo, hi;
} env_keys[MV_ENV_KEYS] = {
    { "deck_msg_buf_limit", "DECK_MSG_BUF_LIMIT", 1, 1L << 30 },
    { "deck_medbuf_size",   "DECK_MEDBUF_SIZE",   1, 1L << 30 },
    { "deck_mseg_size",     "DECK_MSEG_SIZE",     1, 1L << 40 },
    { "deck_spin_us",       "DECK_SPIN_US",      -1, 60L * 1000000 },
    { "peer_timeout",       "DECK_POST_TIMEOUT_MS", 100, 600000 },
};

/* Strict decimal (optionally negative) in [lo, hi] into *out; -1 if not. */
static int parse_signed(const char *s, long lo, long hi, long *out)
{
    if (!isdigit((unsigned char)s[s[0] == '-']))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Strict decimal in [lo, hi] (lo >= 0); -1 if not. */
static long parse_number(const char *s, long lo, long hi)
{
    long v;
    return s[0] != '-' && parse_signed(s, lo, hi, &v) == 0 ? v : -1;
}

/* Index of key in env_keys, or -1. */
static int env_key(const char *key)
{
    for (int i = 0; i < MV_ENV_KEYS; i++)
        if (!strcmp(key, env_keys[i].key))
            return i;
    return -1;
}

static int valid_transport(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

static int copy_value(char *dst, size_t size, const char *value)
{
    size_t n = strlen(value);
    if (n == 0 || n >= size)
        return -1;
    memcpy(dst, value, n + 1);
    return 0;
}

/* Applies one key=value; names the key in the error. */
static VAPI_ret_t apply(const char *fn, struct mv_config *cfg, const char *key,
                        const char *value, int *explicit_mode)
{
    long v;
    int e = env_key(key);
    if (e >= 0) {
        if (parse_signed(value, env_keys[e].lo, env_keys[e].hi, &cfg->env_value[e]))
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key %s: '%s' is not a number in %ld..%ld",
                           key, value, env_keys[e].lo, env_keys[e].hi);
        cfg->env_given |= 1u << e;
    } else if (!strcmp(key, "mtu")) {
        if ((v = parse_number(value, 1, MV_MTU_MAX)) < 0)
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key mtu: '%s' is not a number in 1..%u",
                           value, MV_MTU_MAX);
        cfg->mtu = (uint32_t)v;
    } else if (!strcmp(key, "deck")) {
        if (!strcmp(value, "dynamic"))
            cfg->mode = MV_DECK_DYNAMIC;
        else if (!strcmp(value, "static"))
            cfg->mode = MV_DECK_STATIC;
        else
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck: '%s' is neither dynamic nor static",
                           value);
        *explicit_mode = 1;
    } else if (!strcmp(key, "deck_id")) {
        if ((v = parse_number(value, 0, DECK_MAX_NODES - 1)) < 0)
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_id: '%s' is not a number in 0..%d",
                           value, DECK_MAX_NODES - 1);
        cfg->deck_id = (int)v;
    } else if (!strcmp(key, "deck_nodes")) {
        if ((v = parse_number(value, 1, DECK_MAX_NODES)) < 0)
            return vapi_fail(VAPI_EINVAL_PARAM, fn,
                           "key deck_nodes: '%s' is not a number in 1..%d", value,
                           DECK_MAX_NODES);
        cfg->deck_nodes = (int)v;
    } else if (!strcmp(key, "deck_file")) {
        if (copy_value(cfg->deck_file, sizeof cfg->deck_file, value))
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_file: empty or longer than %zu bytes",
                           sizeof cfg->deck_file - 1);
    } else if (!strcmp(key, "deck_transport")) {
        if (!valid_transport(value)
            || copy_value(cfg->deck_transport, sizeof cfg->deck_transport, value))
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_transport: '%s' is not a transport "
                           "name (letters, digits, '_')", value);
    } else if (!strcmp(key, "deck_secret_file")) {
        if (copy_value(cfg->deck_secret_file, sizeof cfg->deck_secret_file, value))
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_secret_file: empty or longer than %zu bytes",
                           sizeof cfg->deck_secret_file - 1);
    } else if (!strcmp(key, "deck_tcp_encryption")) {
        if (strcmp(value, "on") && strcmp(value, "off"))
            return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_tcp_encryption: '%s' is neither on nor off", value);
        cfg->deck_tcp_encryption = !strcmp(value, "on");
    } else {
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "unknown key '%s' (known: mtu, deck, deck_id, "
                       "deck_nodes, deck_file, deck_transport, deck_secret_file, deck_tcp_encryption, "
                       "deck_msg_buf_limit, deck_medbuf_size, deck_mseg_size, deck_spin_us)", key);
    }
    return VAPI_OK;
}

/* Rules between keys, once all are read. */
static VAPI_ret_t check_mode(const char *fn, struct mv_config *cfg, int explicit_mode)
{
    int static_keys = cfg->deck_id >= 0 || cfg->deck_nodes >= 0 || cfg->deck_file[0];
    if (cfg->mode == MV_DECK_DYNAMIC && static_keys)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck: deck=dynamic cannot be combined with "
                       "deck_id, deck_nodes or deck_file");
    if (!explicit_mode && static_keys)
        cfg->mode = MV_DECK_STATIC;
    if (cfg->mode != MV_DECK_STATIC)
        return VAPI_OK;
    if (cfg->deck_id < 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_id: required for static DECK");
    if (cfg->deck_nodes < 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_nodes: required for static DECK");
    if (cfg->deck_id >= cfg->deck_nodes)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_id: %d is not below deck_nodes=%d",
                       cfg->deck_id, cfg->deck_nodes);
    if (!cfg->deck_file[0])
        strcpy(cfg->deck_file, "nodes");
    return VAPI_OK;
}

VAPI_ret_t mv_config_parse(const char *fn, const char *hca_id, struct mv_config *cfg)
{
    *cfg = (struct mv_config){ .mtu = MV_MTU_DEFAULT, .mode = MV_DECK_ENV,
                               .deck_id = -1, .deck_nodes = -1, .deck_tcp_encryption = -1 };
    if (!hca_id)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "hca_id is NULL");
    size_t plen = strlen(PREFIX);
    if (strncmp(hca_id, PREFIX, plen) || (hca_id[plen] && hca_id[plen] != ':'))
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "hca_id '%s' does not start with \"" PREFIX ":\"",
                       hca_id);
    if (!hca_id[plen] || !hca_id[plen + 1])
        return check_mode(fn, cfg, 0);

    char *copy = strdup(hca_id + plen + 1);
    if (!copy)
        return vapi_fail(VAPI_ENOMEM, fn, "no memory to parse hca_id");
    VAPI_ret_t ret = VAPI_OK;
    int explicit_mode = 0;
    unsigned seen = 0;   /* bit per key, to refuse a key given twice */
    static const char *const keys[] = { "mtu", "deck", "deck_id", "deck_nodes", "deck_file",
                                        "deck_transport", "deck_secret_file", "deck_tcp_encryption",
                                        "deck_msg_buf_limit",
                                        "deck_medbuf_size", "deck_mseg_size", "deck_spin_us" };
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ret == VAPI_OK;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item) {
            ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "entry '%s' is not key=value", item);
            break;
        }
        *eq = '\0';
        for (unsigned k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            if (!strcmp(item, keys[k])) {
                if (seen & (1u << k))
                    ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "key %s: given twice", item);
                seen |= 1u << k;
            }
        }
        if (ret == VAPI_OK)
            ret = apply(fn, cfg, item, eq + 1, &explicit_mode);
    }
    free(copy);
    return ret == VAPI_OK ? check_mode(fn, cfg, explicit_mode) : ret;
}

VAPI_ret_t mv_config_export(const char *fn, const struct mv_config *cfg)
{
    if (cfg->deck_transport[0] && setenv("DECK_TRANSPORT", cfg->deck_transport, 1))
        return vapi_fail(VAPI_ENOMEM, fn, "key deck_transport: setenv failed");
    if (cfg->deck_secret_file[0] && setenv("DECK_SECRET_FILE", cfg->deck_secret_file, 1))
        return vapi_fail(VAPI_ENOMEM, fn, "key deck_secret_file: setenv failed");
    if (cfg->deck_tcp_encryption >= 0 && setenv("DECK_TCP_ENCRYPTION", cfg->deck_tcp_encryption ? "on" : "off", 1))
        return vapi_fail(VAPI_ENOMEM, fn, "key deck_tcp_encryption: setenv failed");
    for (int i = 0; i < MV_ENV_KEYS; i++) {
        char value[24];
        if (!(cfg->env_given & (1u << i)))
            continue;
        snprintf(value, sizeof value, "%ld", cfg->env_value[i]);
        if (setenv(env_keys[i].env, value, 1))
            return vapi_fail(VAPI_ENOMEM, fn, "key %s: setenv %s failed", env_keys[i].key,
                           env_keys[i].env);
    }
    return VAPI_OK;
}
