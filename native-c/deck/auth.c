/*
 * Keys and MACs of DECK (auth.h): the run secret of static runs, the self key, HMAC-SHA-256.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include "auth.h"
#include "internal.h"

#define RUN_KEY_LABEL "DECK run key v1"

static struct {
    int     have_run_key;
    uint8_t run_key[DECK_KEY_BYTES];
} keys;

int deck_auth_random(void *out, size_t n)
{
    char *p = out;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return deck_fail_errno(DECK_EIO, errno, "deck: getrandom");
        }
        p += r;
        n -= (size_t)r;
    }
    return DECK_OK;
}

/* The file's bytes, checked like ssh checks a private key: this user's, nobody else's. */
static int read_secret_file(const char *path, uint8_t *buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return deck_fail_errno(DECK_ECONFIG, errno, "deck_init: run secret file %s (DECK_SECRET_FILE)", path);
    struct stat st;
    int rc = DECK_OK;
    if (fstat(fd, &st) != 0)
        rc = deck_fail_errno(DECK_ECONFIG, errno, "deck_init: run secret file %s", path);
    else if (!S_ISREG(st.st_mode))
        rc = deck_fail(DECK_ECONFIG, "deck_init: run secret file %s is not a regular file", path);
    else if (st.st_uid != geteuid())
        rc = deck_fail(DECK_ECONFIG, "deck_init: run secret file %s belongs to uid %u, not to this user (%u)", path,
                       (unsigned)st.st_uid, (unsigned)geteuid());
    else if (st.st_mode & 077)
        rc = deck_fail(DECK_ECONFIG, "deck_init: run secret file %s has mode %03o: others may read it; it must be "
                       "0600 (chmod 600 %s)", path, (unsigned)(st.st_mode & 0777), path);
    else if (st.st_size < DECK_SECRET_MIN || st.st_size > DECK_SECRET_MAX)
        rc = deck_fail(DECK_ECONFIG, "deck_init: run secret file %s holds %lld bytes, not %d..%d", path,
                       (long long)st.st_size, DECK_SECRET_MIN, DECK_SECRET_MAX);
    size_t got = 0;
    while (rc == DECK_OK && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) rc = deck_fail_errno(DECK_ECONFIG, r < 0 ? errno : EIO, "deck_init: reading run secret file %s", path);
        else got += (size_t)r;
    }
    close(fd);
    *len = got;
    return rc;
}

static char secret_file[4096];

int deck_set_secret_file(const char *path)
{
    if (path && strlen(path) >= sizeof secret_file)
        return deck_fail(DECK_EINVAL, "deck_set_secret_file: path longer than %zu bytes", sizeof secret_file - 1);
    snprintf(secret_file, sizeof secret_file, "%s", path ? path : "");
    return DECK_OK;
}

int deck_auth_load_run_secret(void)
{
    const char *path = secret_file[0] ? secret_file : getenv("DECK_SECRET_FILE");
    if (!path || !*path)
        return deck_fail(DECK_ECONFIG, "deck_init: a static run needs a run secret: start it with deckrun, or name a "
                         "file of random bytes, mode 0600, in DECK_SECRET_FILE (aldeia.conf: deck_secret_file)");
    uint8_t secret[DECK_SECRET_MAX];
    size_t len = 0;
    int rc = read_secret_file(path, secret, &len);
    if (rc == DECK_OK) {
        unsigned int out = 0;
        HMAC(EVP_sha256(), secret, (int)len, (const unsigned char *)RUN_KEY_LABEL, strlen(RUN_KEY_LABEL),
             keys.run_key, &out);
        keys.have_run_key = out == DECK_KEY_BYTES;
        if (!keys.have_run_key) rc = deck_fail(DECK_EIO, "deck_init: HMAC-SHA-256 of the run secret failed");
    }
    OPENSSL_cleanse(secret, sizeof secret);
    return rc;
}

void deck_auth_clear(void)
{
    OPENSSL_cleanse(&keys, sizeof keys);
}

const uint8_t *deck_auth_run_key(void) { return keys.have_run_key ? keys.run_key : NULL; }

void deck_auth_mac(const uint8_t key[DECK_KEY_BYTES], const char *label, uint8_t out[DECK_MAC_BYTES], int nparts, ...)
{
    /* A MAC is made only in handshakes: fetching the algorithm each time costs microseconds. */
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0), OSSL_PARAM_construct_end() };
    size_t len = 0;
    int ok = ctx && EVP_MAC_init(ctx, key, DECK_KEY_BYTES, params)
             && EVP_MAC_update(ctx, (const unsigned char *)label, strlen(label));
    va_list ap;
    va_start(ap, nparts);
    for (int i = 0; ok && i < nparts; i++) {
        const void *p = va_arg(ap, const void *);
        size_t n = va_arg(ap, size_t);
        ok = EVP_MAC_update(ctx, p, n);
    }
    va_end(ap);
    ok = ok && EVP_MAC_final(ctx, out, &len, DECK_MAC_BYTES) && len == DECK_MAC_BYTES;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    /* A MAC that could not be made matches nothing: random bytes, never a predictable value. */
    if (!ok && deck_auth_random(out, DECK_MAC_BYTES) != DECK_OK) memset(out, 0xa5, DECK_MAC_BYTES);
}

int deck_auth_mac_equal(const uint8_t a[DECK_MAC_BYTES], const uint8_t b[DECK_MAC_BYTES])
{
    return CRYPTO_memcmp(a, b, DECK_MAC_BYTES) == 0;
}
