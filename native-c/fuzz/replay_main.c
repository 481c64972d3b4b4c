/*
 * Replays a fuzz target's committed inputs without libFuzzer: linked (gcc, plain and under
 * ASan+UBSan) with one fuzz/fuzz_*.c by `make test`, it calls LLVMFuzzerInitialize once and
 * LLVMFuzzerTestOneInput once per file of fuzz/corpus/<target>/ and fuzz/regressions/<target>/
 * (every crash fuzzing found, kept once fixed), in name order, each file in a buffer of exactly
 * its size. FUZZ_DIR (the absolute fuzz/ of the source tree) and FUZZ_TARGET are given at
 * compile time. With arguments it replays those files or directories instead, e.g. a crash
 * file that `make fuzz` left, under gcc and gdb.
 *
 * An input that takes more than REPLAY_INPUT_S seconds is reported by name as a hang.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz_util.h"

#ifndef FUZZ_DIR
#error "FUZZ_DIR (the fuzz directory of the source tree) must be given with -D"
#endif
#ifndef FUZZ_TARGET
#error "FUZZ_TARGET (the name of the fuzz target) must be given with -D"
#endif

#define REPLAY_INPUT_S 10

static char current[4096];

static void hung(int sig)
{
    static const char text[] = "replay: input hangs: ";
    if (write(2, text, sizeof text - 1) < 0 || write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0) {}
    _exit(1);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "replay: cannot open %s\n", path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* Exactly n bytes: a read past the input is a heap overflow the sanitizer sees. */
    uint8_t *input = malloc(n > 0 ? (size_t)n : 1);
    if (!input || n < 0 || fread(input, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    snprintf(current, sizeof current, "%s", path);
    alarm(REPLAY_INPUT_S);
    LLVMFuzzerTestOneInput(n > 0 ? input : NULL, (size_t)n);
    alarm(0);
    free(input);
}

/* Every regular file of dir, in name order; 0 files when dir does not exist and may be absent. */
static int replay_dir(const char *dir, int may_be_absent)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (may_be_absent) return 0;
        fprintf(stderr, "replay: no directory %s\n", dir);
        exit(1);
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (count == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names))) exit(1);
        if (!(names[count++] = strdup(e->d_name))) exit(1);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    int done = 0;
    for (size_t i = 0; i < count; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            replay_file(path);
            done++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    signal(SIGALRM, hung);
    setvbuf(stdout, NULL, _IONBF, 0);
    LLVMFuzzerInitialize(&argc, &argv);
    if (argc > 1) {
        int done = 0;
        for (int i = 1; i < argc; i++) {
            struct stat st;
            if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) done += replay_dir(argv[i], 0);
            else { replay_file(argv[i]); done++; }
        }
        printf("PASS %s: %d inputs replayed\n", FUZZ_TARGET, done);
        return 0;
    }
    int corpus = replay_dir(FUZZ_DIR "/corpus/" FUZZ_TARGET, 0);
    int regressions = replay_dir(FUZZ_DIR "/regressions/" FUZZ_TARGET, 1);
    if (corpus == 0) {
        fprintf(stderr, "replay: the corpus %s is empty\n", FUZZ_DIR "/corpus/" FUZZ_TARGET);
        return 1;
    }
    printf("PASS %s: %d corpus inputs and %d regression inputs replayed\n", FUZZ_TARGET, corpus, regressions);
    return 0;
}
