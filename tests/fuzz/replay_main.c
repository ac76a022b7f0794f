/* Replays inputs through a fuzz target's entry point without libFuzzer, so that the corpus and
 * every regression input run in each normal build (ctest fuzz_replay_<target>). Arguments are
 * files or folders (their files, sorted). Exit 0 when every input ran; a finding aborts. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/fuzz_target.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        return 1;
    }
    fclose(f);
    /* each input in a child, so that one finding does not hide the others */
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        free(buf);
        exit(0); /* exit, not _exit: leak checkers (valgrind, LeakSanitizer) run at exit */
    }
    free(buf);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) return 1;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    fprintf(stderr, "%s %s (%ld bytes)\n", ok ? "ok  " : "FAIL", path, n);
    return ok ? 0 : 1;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long ran = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue; /* an absent folder: nothing to replay */
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]);
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) continue;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.') continue;
            names = realloc(names, (n + 1) * sizeof *names);
            size_t l = strlen(argv[i]) + strlen(de->d_name) + 2;
            names[n] = malloc(l);
            snprintf(names[n], l, "%s/%s", argv[i], de->d_name);
            n++;
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp);
        for (size_t k = 0; k < n; k++) {
            bad += run_file(names[k]);
            ran++;
            free(names[k]);
        }
        free(names);
    }
    fprintf(stderr, "replayed %ld inputs, %ld failed\n", ran, bad);
    return bad ? 1 : 0;
}
