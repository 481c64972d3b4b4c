/*
 * cpu_relax: the pause a polling loop makes between two looks at memory, so that a spinning
 * core yields its pipeline to its sibling hyperthread and saves power. Shared by DECK's sci
 * waits and libaldeiafabric's spinning polls.
 */
#ifndef CPU_RELAX_H
#define CPU_RELAX_H

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

#endif
