/* A toy with one known contended lock: four threads take `hot` in toy_contended_update around a long critical
 * section, and a read lock no one writes in toy_quiet_read (taken, never blocked). tests/test_scale.py runs it under
 * sslperf's lock interposer: toy_contended_update must be the top call site. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static volatile unsigned long counter;

__attribute__((noinline)) void toy_contended_update(void)
{
    pthread_mutex_lock(&hot);
    for (int i = 0; i < 2000; i++)
        counter++;
    pthread_mutex_unlock(&hot);
}

__attribute__((noinline)) void toy_quiet_read(void)
{
    pthread_rwlock_rdlock(&table);
    counter += 0;
    pthread_rwlock_unlock(&table);
}

static void *worker(void *unused)
{
    (void)unused;
    for (int i = 0; i < 20000; i++) {
        toy_contended_update();
        toy_quiet_read();
    }
    return NULL;
}

int main(void)
{
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    printf("%lu\n", counter);
    return 0;
}
