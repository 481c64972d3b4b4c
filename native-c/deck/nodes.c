/*
 * The nodes file of a static run: line i (not counting blank and '#' lines) says where node i
 * listens: "host", "host:port", "a.b.c.d:port", "[v6]" or "[v6]:port" (an IPv6 literal in
 * brackets, as in a URL, since its own colons would read as a port; bare it is refused rather
 * than guessed at). Without a port node i uses DECK_DEFAULT_BASE_PORT + i, so several nodes on
 * one host do not collide.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Strips the comment and surrounding blanks in place; returns the remaining text. */
static char *trim(char *line)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    while (isspace((unsigned char)*line)) line++;
    char *end = line + strlen(line);
    while (end > line && isspace((unsigned char)end[-1])) *--end = '\0';
    return line;
}

static int parse_line(const char *path, int lineno, char *text, int node, deck_node_addr_t *out)
{
    char *host = text, *colon;
    if (*text == '[') {
        char *close = strchr(text, ']');
        if (!close || (close[1] && close[1] != ':'))
            return deck_fail(DECK_ECONFIG, "nodes file %s line %d: bad host '%s': an IPv6 address is written "
                             "[address] or [address]:port", path, lineno, text);
        *close = '\0';
        host = text + 1;
        colon = close[1] ? close + 1 : NULL;
    } else {
        colon = strchr(text, ':');
        if (colon && strchr(colon + 1, ':'))
            return deck_fail(DECK_ECONFIG, "nodes file %s line %d: bad host '%s': an IPv6 address takes brackets, "
                             "[address]:port", path, lineno, text);
    }
    out->port = DECK_DEFAULT_BASE_PORT + node;
    if (colon) {
        char *end;
        *colon = '\0';
        long port = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end || port <= 0 || port > 65535)
            return deck_fail(DECK_ECONFIG, "nodes file %s line %d: bad port '%s'", path, lineno, colon + 1);
        out->port = (int)port;
    }
    if (!*host || strpbrk(host, " \t[]"))
        return deck_fail(DECK_ECONFIG, "nodes file %s line %d: bad host '%s'", path, lineno, host);
    if (strlen(host) >= sizeof out->host)
        return deck_fail(DECK_ECONFIG, "nodes file %s line %d: host name too long", path, lineno);
    strcpy(out->host, host);
    return DECK_OK;
}

int deck_nodes_read(const char *path, int nnodes, deck_node_addr_t **out)
{
    FILE *f = fopen(path, "r");
    if (!f) return deck_fail_errno(DECK_ECONFIG, errno, "cannot open nodes file %s", path);
    deck_node_addr_t *nodes = calloc((size_t)nnodes, sizeof *nodes);
    if (!nodes) { fclose(f); return deck_fail(DECK_ENOMEM, "reading nodes file %s: out of memory", path); }
    char line[512];
    int lineno = 0, found = 0, rc = DECK_OK;
    while (found < nnodes && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = deck_fail(DECK_ECONFIG, "nodes file %s line %d: line too long", path, lineno);
            break;
        }
        char *text = trim(line);
        if (!*text) continue;
        if ((rc = parse_line(path, lineno, text, found, &nodes[found]))) break;
        found++;
    }
    fclose(f);
    if (rc == DECK_OK && found < nnodes)
        rc = deck_fail(DECK_ECONFIG, "nodes file %s lists %d node(s), the run has %d", path, found, nnodes);
    if (rc) { free(nodes); return rc; }
    *out = nodes;
    return DECK_OK;
}
