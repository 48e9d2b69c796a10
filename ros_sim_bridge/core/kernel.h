/* What the compiled kernels share (plain C libraries loaded with ctypes by the module beside
 * each, core/native.py): the export of their functions, and the vector paths a kernel may
 * take, the widest the CPU has chosen at run time (its sim_bridge_*_on(path, ...) runs one
 * path, for the tests: core/native.load_kernel_on).
 *
 * A kernel compiles its AVX2 and AVX-512 paths with __attribute__((target("avx2" / AVX512)))
 * where HAVE_AVX2 / HAVE_AVX512 say the compiler can (x86-64, GCC or Clang), and otherwise
 * only its scalar path.
 */
#ifndef SIM_BRIDGE_KERNEL_H
#define SIM_BRIDGE_KERNEL_H

#if defined(_WIN32)
#define SIM_BRIDGE_EXPORT __declspec(dllexport)
#else
#define SIM_BRIDGE_EXPORT __attribute__((visibility("default")))
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2 1
#define HAVE_AVX512 1
#define AVX512 "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"
#include <immintrin.h>
#endif

/* A kernel's paths, narrowest first (the index into its module's PATHS). */
enum { PATH_SCALAR = 0, PATH_AVX2 = 1, PATH_AVX512 = 2 };

/* Whether this build and this CPU have `path`. */
static inline int cpu_has_path(int path)
{
    switch (path) {
    case PATH_SCALAR:
        return 1;
#ifdef HAVE_AVX2
    case PATH_AVX2:
        return __builtin_cpu_supports("avx2");
    case PATH_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
               && __builtin_cpu_supports("avx512vbmi");
#endif
    default:
        return 0;
    }
}

#endif
