// SPDX-License-Identifier: Apache-2.0
//
// The vDSO getrandom of Linux (lib/vdso/getrandom.c, "random: introduce generic vDSO getrandom()"):
//
//   ssize_t getrandom(void *buffer, size_t len, unsigned int flags, void *opaque_state, size_t opaque_len)
//
// Called with (NULL, 0, 0, &params, ~0UL) it describes the state it needs: its size, and the protection
// and flags of the anonymous mapping that must hold it (MAP_DROPPABLE, which also wipes it in a forked
// child and lets the kernel reclaim it under pressure; the kernel re-keys a wiped state on its next use).
// A state must not straddle a page, and must never be used by two threads at once: the kernel's only
// guard is against reentry from a signal handler on the same thread. So each thread maps one page of its
// own, on its first call, and unmaps it when it exits.
//
// Only on x86-64 and AArch64, whose vDSO functions return a negative errno as C does; PowerPC's, for
// one, returns a positive errno with a condition flag set, which C cannot read.
//
// Everything a signal handler could meet halfway is done before main: the vDSO is looked up and the
// thread key made in a constructor, when the process has one thread and no handler of ours. A thread's
// first call maps its state with every signal blocked, so that a handler drawing on the same thread
// cannot map a second one in between.

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define TILECAST_RANDOM_VDSO 1
#define _GNU_SOURCE  // RTLD_NOLOAD; before any header
#endif

#include "CTilecastRandom.h"

#include <errno.h>

#if TILECAST_RANDOM_VDSO

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/// What the vDSO answers to the parameter query (struct vgetrandom_opaque_params, include/uapi/linux/random.h).
struct tilecast_vgetrandom_params {
    uint32_t size_of_opaque_state;
    uint32_t mmap_prot;
    uint32_t mmap_flags;
    uint32_t reserved[13];
};

static tilecast_vgetrandom_function tilecast_vgetrandom;
static struct tilecast_vgetrandom_params tilecast_params;
static size_t tilecast_state_mapping_size;
static pthread_key_t tilecast_state_key;

/// The value of a thread's key once mapping its state has failed: that thread reads with the system
/// call from then on instead of trying again on every fill.
#define TILECAST_NO_STATE ((void *)1)

/// A thread's state, when the thread exits.
static void tilecast_release_state(void *state) {
    if (state != NULL && state != TILECAST_NO_STATE) {
        munmap(state, tilecast_state_mapping_size);
    }
}

__attribute__((constructor)) static void tilecast_find_vgetrandom(void) {
    // The vDSO is always mapped; RTLD_NOLOAD only finds it and never loads anything.
    void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (vdso == NULL) {
        return;
    }
    // x86-64 names it __vdso_getrandom; AArch64, __kernel_getrandom.
    void *symbol = dlsym(vdso, "__vdso_getrandom");
    if (symbol == NULL) {
        symbol = dlsym(vdso, "__kernel_getrandom");
    }
    if (symbol == NULL) {
        return;
    }
    tilecast_vgetrandom_function function = (tilecast_vgetrandom_function)symbol;
    struct tilecast_vgetrandom_params params;
    memset(&params, 0, sizeof params);
    if (function(NULL, 0, 0, &params, ~(size_t)0) != 0) {
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || params.size_of_opaque_state == 0 || params.size_of_opaque_state > (uint32_t)page) {
        return;
    }
    if (pthread_key_create(&tilecast_state_key, tilecast_release_state) != 0) {
        return;
    }
    tilecast_params = params;
    tilecast_state_mapping_size = (size_t)page;
    __atomic_store_n(&tilecast_vgetrandom, function, __ATOMIC_RELEASE);
}

/// This thread's state: mapped on first use, as the kernel asked, at the start of a page of its own;
/// `NULL` when it cannot be.
static void *tilecast_thread_state(void) {
    void *state = pthread_getspecific(tilecast_state_key);
    if (state != NULL) {
        return state == TILECAST_NO_STATE ? NULL : state;
    }
    sigset_t all, previous;
    sigfillset(&all);
    if (pthread_sigmask(SIG_BLOCK, &all, &previous) != 0) {
        return NULL;
    }
    state = pthread_getspecific(tilecast_state_key);
    if (state == NULL) {
        state = mmap(
            NULL, tilecast_state_mapping_size, (int)tilecast_params.mmap_prot, (int)tilecast_params.mmap_flags, -1, 0
        );
        if (state == MAP_FAILED) {
            state = TILECAST_NO_STATE;
        }
        if (pthread_setspecific(tilecast_state_key, state) != 0) {
            if (state != TILECAST_NO_STATE) {
                munmap(state, tilecast_state_mapping_size);
            }
            state = TILECAST_NO_STATE;
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return state == TILECAST_NO_STATE ? NULL : state;
}

/// When the library is unloaded (a shared library `dlclose`d) or the process exits: the key's
/// destructor must not outlive this code, or every thread that drew would call into unmapped memory
/// when it exits. The states of threads still alive stay mapped (harmless); fills from then on take
/// the system call.
__attribute__((destructor)) static void tilecast_forget_vgetrandom(void) {
    if (__atomic_exchange_n(&tilecast_vgetrandom, NULL, __ATOMIC_ACQ_REL) != NULL) {
        pthread_key_delete(tilecast_state_key);
    }
}

int tilecast_random_vdso_available(void) {
    return __atomic_load_n(&tilecast_vgetrandom, __ATOMIC_ACQUIRE) != NULL;
}

int tilecast_random_fill(void *buffer, size_t count) {
    tilecast_vgetrandom_function function = __atomic_load_n(&tilecast_vgetrandom, __ATOMIC_ACQUIRE);
    if (function == NULL) {
        return -1;
    }
    void *state = tilecast_thread_state();
    if (state == NULL) {
        return -1;
    }
    return tilecast_random_fill_with(function, state, tilecast_params.size_of_opaque_state, buffer, count);
}

#else

int tilecast_random_fill(void *buffer, size_t count) {
    (void)buffer;
    (void)count;
    return -1;
}

int tilecast_random_vdso_available(void) {
    return 0;
}

#endif

int tilecast_random_fill_with(
    tilecast_vgetrandom_function function, void *state, size_t state_size, void *buffer, size_t count
) {
    unsigned char *next = buffer;
    size_t remaining = count;
    while (remaining > 0) {
        // Flags 0: block until the kernel's generator is seeded, as getentropy does. The answer is a
        // byte count or a negative errno; without a seeded generator the vDSO makes the system call
        // itself, which a signal can interrupt.
        ssize_t written = function(next, remaining, 0, state, state_size);
        if (written == -EINTR) {
            continue;
        }
        if (written <= 0 || (size_t)written > remaining) {
            return -1;
        }
        next += written;
        remaining -= (size_t)written;
    }
    return 0;
}
