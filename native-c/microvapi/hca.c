/*
 * HCA open/release and the port query. Opening the first HCA brings DECK up, as the thesis's
 * MicroVAPI did in place of DECK's launcher, and the engine (engine.c); later opens share both. DECK is shut down with the
 * last HCA only if MicroVAPI started it: a program (or aldeia-deck) that initialised DECK
 * itself keeps it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mv_internal.h"

static pthread_mutex_t deck_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned open_hcas;    /* guarded by deck_lock */
static int      deck_is_ours; /* guarded by deck_lock */

static VAPI_ret_t deck_start(const char *fn, const struct mv_config *cfg)
{
    VAPI_ret_t ret = mv_config_export(fn, cfg);
    if (ret != VAPI_OK)
        return ret;
    int rc;
    if (cfg->mode == MV_DECK_DYNAMIC) {
        rc = deck_init_dynamic();
    } else if (cfg->mode == MV_DECK_STATIC) {
        rc = deck_init_static(cfg->deck_id, cfg->deck_nodes, cfg->deck_file);
    } else {
        int argc = 0;
        char *none[] = { NULL };
        char **argv = none;
        rc = deck_init(&argc, &argv);
    }
    if (rc == DECK_OK)
        return VAPI_OK;
    char how[320];
    if (cfg->mode == MV_DECK_DYNAMIC)
        snprintf(how, sizeof how, "deck=dynamic");
    else if (cfg->mode == MV_DECK_STATIC)
        snprintf(how, sizeof how, "deck_id=%d, deck_nodes=%d, deck_file=%s", cfg->deck_id,
                 cfg->deck_nodes, cfg->deck_file);
    else
        snprintf(how, sizeof how, "no deck key given, so from deckrun's environment");
    /* Configuration mistakes are the user's parameters; anything else is a DECK failure. */
    return vapi_fail(rc == DECK_ECONFIG || rc == DECK_EINVAL ? VAPI_EINVAL_PARAM : VAPI_EGEN, fn,
                   "DECK initialisation (%s) failed: %s: %s", how, deck_strerror(rc),
                   deck_last_error());
}

/* DECK is up already (ours or someone else's): the string must not contradict it. */
static VAPI_ret_t deck_check_shared(const char *fn, const struct mv_config *cfg)
{
    if (cfg->mode == MV_DECK_STATIC && cfg->deck_id != deck_node())
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "key deck_id: %d, but DECK is already running as "
                       "node %d", cfg->deck_id, deck_node());
    return VAPI_OK;
}

VAPI_ret_t EVAPI_get_hca_hndl(const char *hca_id, VAPI_hca_hndl_t *hca)
{
    static const char fn[] = "EVAPI_get_hca_hndl";
    if (!hca)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "hca is NULL");
    struct mv_config cfg;
    VAPI_ret_t ret = mv_config_parse(fn, hca_id, &cfg);
    if (ret != VAPI_OK)
        return ret;
    struct mv_hca *obj = malloc(sizeof *obj);
    if (!obj)
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for the HCA");
    obj->mtu = cfg.mtu;

    pthread_mutex_lock(&deck_lock);
    int started = 0;
    if (open_hcas > 0 || deck_is_initialized()) {
        ret = deck_check_shared(fn, &cfg);
    } else {
        ret = deck_start(fn, &cfg);
        started = ret == VAPI_OK;
    }
    int engine = 0;
    if (ret == VAPI_OK)
        engine = (ret = mv_engine_open(fn)) == VAPI_OK;
    if (ret == VAPI_OK) {
        *hca = vh_add(VH_HCA, 0, obj);
        if (*hca == 0)
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    }
    if (ret == VAPI_OK) {
        open_hcas++;
        deck_is_ours |= started;
    } else {
        if (engine)
            mv_engine_close();
        if (started)
            deck_done();
        free(obj);
    }
    pthread_mutex_unlock(&deck_lock);
    return ret;
}

VAPI_ret_t EVAPI_release_hca_hndl(VAPI_hca_hndl_t hca)
{
    static const char fn[] = "EVAPI_release_hca_hndl";
    struct mv_hca *obj;
    VAPI_ret_t ret = vh_take(fn, hca, hca, VH_HCA, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    free(obj);

    pthread_mutex_lock(&deck_lock);
    mv_engine_close();
    if (--open_hcas == 0 && deck_is_ours) {
        deck_is_ours = 0;
        int rc = deck_done();
        if (rc != DECK_OK)
            ret = vapi_fail(VAPI_EGEN, fn, "deck_done failed: %s: %s", deck_strerror(rc),
                          deck_last_error());
    }
    pthread_mutex_unlock(&deck_lock);
    return ret;
}

VAPI_ret_t VAPI_query_hca_port_prop(VAPI_hca_hndl_t hca, uint8_t port, VAPI_hca_port_t *prop)
{
    static const char fn[] = "VAPI_query_hca_port_prop";
    struct mv_hca *obj;
    if (!prop)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "prop is NULL");
    if (port != 1)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "port %u does not exist (MicroVAPI has port 1)",
                       port);
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    /* Information 1: a LID has 16 bits; the full DECK id travels in VAPI_qp_attr_t.dest_id. */
    *prop = (VAPI_hca_port_t){ .lid = (uint16_t)(deck_node() & 0xffff), .state = 4,
                               .max_mtu = obj->mtu };
    vh_put(hca);
    return VAPI_OK;
}

/* MicroVAPI is on no fabric: its peers are DECK's, reached as DECK reaches them. */
VAPI_ret_t EVAPI_query_hca_fabric(VAPI_hca_hndl_t hca, char *buf, uint32_t len)
{
    return vapi_fail(VAPI_ENOSYS, "EVAPI_query_hca_fabric", "MicroVAPI is on no fabric (its peers are DECK's)");
}
