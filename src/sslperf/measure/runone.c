/* One run of a command for `sslperf exec` (measure/modes/program.py), timed from a process a few hundred KiB in
 * size rather than from sslperf's Python: the kernel carries the memory high-water mark of the process a command
 * was started from into the command's own (exec keeps the larger), so only a small starter lets max RSS say what
 * the command itself used. It also takes the timing core out of Python.
 *
 *   runone REPORT PROGRAM ARGV0 [ARG...]
 *
 * forks; the child execs PROGRAM (a path) with ARGV0 ARG... as its arguments and this process's stdin, stdout and
 * stderr; the parent waits for it (wait4) and writes one line to REPORT: "STATUS WALL_NS USER_NS SYSTEM_NS
 * MAX_RSS_KIB" (STATUS: the exit status, or minus the signal that ended it; 127 when PROGRAM could not be run).
 * Exit status: 0 when the report was written. */
#define _DEFAULT_SOURCE          /* wait4 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long tv_ns(struct timeval tv)
{
    return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: runone REPORT PROGRAM ARGV0 [ARG...]\n");
        return 2;
    }
    FILE *report = fopen(argv[1], "w");
    if (report == NULL) {
        fprintf(stderr, "runone: cannot write %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    long long started = now_ns();
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "runone: fork: %s\n", strerror(errno));
        return 2;
    }
    if (child == 0) {
        execv(argv[2], argv + 3);
        fprintf(stderr, "runone: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    while (wait4(child, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "runone: wait4: %s\n", strerror(errno));
            return 2;
        }
    }
    long long wall = now_ns() - started;
    int ended = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
    fprintf(report, "%d %lld %lld %lld %ld\n", ended, wall, tv_ns(usage.ru_utime), tv_ns(usage.ru_stime),
            usage.ru_maxrss);
    return fclose(report) == 0 ? 0 : 2;
}
