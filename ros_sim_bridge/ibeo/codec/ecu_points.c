/* Ibeo ECU scan points (data types 0x2204 / 0x2205, interface spec sections 8 and 9) from the
 * wire's big-endian layout to host order, one pass (called through ctypes by scan_ecu.py
 * beside this file, on little-endian hosts only), or to host order grouped by device id in the
 * same pass (a scan in scanner coordinates: one cloud per scanner).  No Python, no I/O, no
 * allocation.
 *
 * Point (28 bytes, the same offsets on the wire and in the result):
 *   0 x  4 y  8 z  12 echo width (float32, m)   16 device id  17 layer  18 echo (uint8)
 *   19 reserved   20 time offset (uint32, us)   24 flags (uint16)   26 reserved
 * The reserved bytes come out zero, so equal points give equal bytes.
 *
 * Two paths, the widest the CPU has taken at run time (__builtin_cpu_supports), the same bytes
 * and count:
 *   AVX2 (x86-64)  8 points a step by byte shuffles, the first 0-7 points one at a time so
 *       that the blocks' stores are aligned; about as fast as a memcpy of the same bytes.
 *   scalar         one point at a time (all other hosts and compilers); the rest of the blocks.
 * sim_bridge_ecu_points_on runs one path, for the tests (every path this CPU has) and
 * bench/bench_ecu_points.py.  Every load stays inside the n * 28 wire bytes.  An AVX-512 path
 * (16 points a step) measured ~4 % slower than this AVX2 one on Zen 4: the pass is bound by
 * the caches, not by the shuffles.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"                     /* ros_sim_bridge/core: export, paths */

#if defined(__GNUC__) || defined(__clang__)
#define SWAP32(v) __builtin_bswap32(v)
#else
#define SWAP32(v) ((v) >> 24 | ((v) >> 8 & 0xFF00u) | ((v) << 8 & 0xFF0000u) | (v) << 24)
#endif

enum { POINT = 28 };
#define EXPONENT 0x7F800000u                 /* all ones: the float is NaN or +-Inf */

/* The argument list of sim_bridge_ecu_points; scan_ecu.py loads only a library that says 1. */
SIM_BRIDGE_EXPORT int sim_bridge_ecu_points_abi(void) { return 1; }

static inline uint32_t word(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline void put(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Converts n points from wire to out (which may not overlap) one at a time; returns how many
 * have an x, y or z that is not a finite number.  Word by word, in registers (a copy of the
 * whole point through the stack costs store-forwarding stalls). */
static size_t points_scalar(const uint8_t *wire, size_t n, uint8_t *out)
{
    size_t non_finite = 0;
    for (size_t i = 0; i < n; ++i, wire += POINT, out += POINT) {
        const uint32_t x = SWAP32(word(wire)), y = SWAP32(word(wire + 4)),
                       z = SWAP32(word(wire + 8));
        put(out, x);
        put(out + 4, y);
        put(out + 8, z);
        put(out + 12, SWAP32(word(wire + 12)));           /* echo width */
        put(out + 16, word(wire + 16) & 0x00FFFFFFu);     /* three bytes as they came, 0 */
        put(out + 20, SWAP32(word(wire + 20)));           /* time offset */
        put(out + 24, SWAP32(word(wire + 24)) >> 16);     /* flags, then two bytes 0 */
        non_finite += ((x & EXPONENT) == EXPONENT) | ((y & EXPONENT) == EXPONENT)
                      | ((z & EXPONENT) == EXPONENT);     /* no branch to mispredict */
    }
    return non_finite;
}

#ifdef HAVE_AVX2

enum { BLOCK = 8 };                   /* points per AVX2 step: 224 bytes, seven 32-byte words */

/* Per 32-byte register of a block, where each output byte comes from within its 16-byte lane
 * (vpshufb; 0x80 gives a zero).  Every 4-byte word only moves its own bytes, so a block is
 * the point layout's seven word kinds in a row, seen through an 8-word window. */
#define Z 0x80
#define SWAP(o) o + 3, o + 2, o + 1, o      /* a 4-byte number: bytes reversed */
#define KEEP(o) o, o + 1, o + 2, Z          /* device id, layer, echo as they came, reserved 0 */
#define FLAGS(o) o + 1, o, Z, Z             /* the 2-byte flags swapped, reserved 0 */
static const uint8_t SHUFFLE[7][32] = {
    {SWAP(0), SWAP(4), SWAP(8), SWAP(12), KEEP(0), SWAP(4), FLAGS(8), SWAP(12)},
    {SWAP(0), SWAP(4), SWAP(8), KEEP(12), SWAP(0), FLAGS(4), SWAP(8), SWAP(12)},
    {SWAP(0), SWAP(4), KEEP(8), SWAP(12), FLAGS(0), SWAP(4), SWAP(8), SWAP(12)},
    {SWAP(0), KEEP(4), SWAP(8), FLAGS(12), SWAP(0), SWAP(4), SWAP(8), SWAP(12)},
    {KEEP(0), SWAP(4), FLAGS(8), SWAP(12), SWAP(0), SWAP(4), SWAP(8), KEEP(12)},
    {SWAP(0), FLAGS(4), SWAP(8), SWAP(12), SWAP(0), SWAP(4), KEEP(8), SWAP(12)},
    {FLAGS(0), SWAP(4), SWAP(8), SWAP(12), SWAP(0), KEEP(4), SWAP(8), FLAGS(12)},
};
#undef Z
#undef SWAP
#undef KEEP
#undef FLAGS
/* Bit 7p of a block's 56 words (one bit per word): the x of point p */
#define X_BITS 0x0002040810204081ull

/* points_scalar for n a multiple of BLOCK, on a CPU with AVX2: each block's words in seven
 * shuffles; the words whose exponent is all ones collected in a 56-bit mask, folded onto each
 * point's x bit and counted only when there is one (rarely). */
__attribute__((target("avx2")))
static size_t points_avx2(const uint8_t *wire, size_t n, uint8_t *out)
{
    const __m256i exponent = _mm256_set1_epi32((int)EXPONENT);
    __m256i shuffle[7];
    size_t non_finite = 0;
    for (int r = 0; r < 7; ++r)
        shuffle[r] = _mm256_loadu_si256((const __m256i *)SHUFFLE[r]);
    for (size_t i = 0; i < n; i += BLOCK, wire += BLOCK * POINT, out += BLOCK * POINT) {
        uint64_t special = 0;                         /* bit w: word w is NaN or +-Inf */
        for (int r = 0; r < 7; ++r) {
            const __m256i v = _mm256_shuffle_epi8(
                _mm256_loadu_si256((const __m256i *)(wire + 32 * r)), shuffle[r]);
            _mm256_storeu_si256((__m256i *)(out + 32 * r), v);
            const __m256i all_ones = _mm256_cmpeq_epi32(_mm256_and_si256(v, exponent), exponent);
            special |= (uint64_t)_mm256_movemask_ps(_mm256_castsi256_ps(all_ones)) << (8 * r);
        }
        /* bit 7p: word 7p, 7p + 1 or 7p + 2 (x, y, z of point p); no other word lands there */
        const uint64_t points = (special | special >> 1 | special >> 2) & X_BITS;
        if (points)
            non_finite += (size_t)__builtin_popcountll(points);
    }
    return non_finite;
}

/* How many of n points to convert one at a time before out + POINT * k lies on a 32-byte
 * boundary, so that the AVX2 blocks after them store aligned (a block is seven 32-byte stores),
 * none across a cache line: ~8 % faster where out is not (bench/bench_ecu_points.py).
 * 0 where out is not on a 4-byte boundary (no k does it); at most n. */
static size_t lead(const uint8_t *out, size_t n)
{
    const uintptr_t at = (uintptr_t)out;
    size_t k = 0;
    if (at % 4 == 0)
        while ((at + POINT * k) % 32 && k < n)
            ++k;
    return k;
}
#endif

/* Whether this build and this CPU have `path` (PATH_AVX2 at most: an AVX-512 path measured
 * slower, see above). */
static int have_path(int path)
{
    return path <= PATH_AVX2 && cpu_has_path(path);
}

/* sim_bridge_ecu_points on `path` (which this CPU has): with AVX2, the lead one at a time, the
 * blocks, then the rest one at a time. */
static size_t points_on(int path, const uint8_t *wire, size_t n, uint8_t *out)
{
    size_t done = 0, non_finite = 0;
#ifdef HAVE_AVX2
    if (path >= PATH_AVX2) {
        if (n >= 2 * BLOCK) {
            done = lead(out, n);
            non_finite = points_scalar(wire, done, out);
        }
        const size_t more = (n - done) - (n - done) % BLOCK;
        non_finite += points_avx2(wire + done * POINT, more, out + done * POINT);
        done += more;
    }
#else
    (void)path;
#endif
    return non_finite + points_scalar(wire + done * POINT, n - done, out + done * POINT);
}

/* sim_bridge_ecu_points on one path (PATH_*); (size_t)-1 where this build or CPU lacks the
 * path.  For the tests, which compare every path the machine has, and the benchmark. */
SIM_BRIDGE_EXPORT size_t sim_bridge_ecu_points_on(int path, const uint8_t *wire, size_t n,
                                                  uint8_t *out)
{
    if (!have_path(path))
        return (size_t)-1;
    return points_on(path, wire, n, out);
}

/* Converts n points from wire to out (which may not overlap; either may start at any byte);
 * returns how many have an x, y or z that is not a finite number.  The widest path the CPU
 * has; every load stays inside the n * POINT wire bytes. */
SIM_BRIDGE_EXPORT size_t sim_bridge_ecu_points(const uint8_t *wire, size_t n, uint8_t *out)
{
    int path = PATH_AVX2;
    while (!have_path(path))
        --path;
    return points_on(path, wire, n, out);
}

/* The argument list of sim_bridge_ecu_group; scan_ecu.py loads only a library that says 1. */
SIM_BRIDGE_EXPORT int sim_bridge_ecu_group_abi(void) { return 1; }

/* Copies n host-order points from points to out (which may not overlap) grouped by device id
 * (byte 16), the groups in ascending id order, each keeping the points' order (a stable
 * counting sort: one pass to count, one to copy); counts[256] gets the points per id. */
SIM_BRIDGE_EXPORT void sim_bridge_ecu_group(const uint8_t *points, size_t n, uint8_t *out,
                                            size_t *counts)
{
    size_t next[256];
    memset(counts, 0, 256 * sizeof *counts);
    for (size_t i = 0; i < n; ++i)
        ++counts[points[i * POINT + 16]];
    size_t at = 0;
    for (int d = 0; d < 256; ++d) {
        next[d] = at;
        at += counts[d];
    }
    for (size_t i = 0; i < n; ++i, points += POINT)
        memcpy(out + POINT * next[points[16]]++, points, POINT);
}

/* The argument list of sim_bridge_ecu_points_grouped; scan_ecu.py loads only a library that
 * says 1. */
SIM_BRIDGE_EXPORT int sim_bridge_ecu_points_grouped_abi(void) { return 1; }

/* Where each point's group starts (counts[256] of the points per device id, byte 16 on the
 * wire as in the result): next[d] the index of the first point of id d. */
static void group_starts(const uint8_t *wire, size_t n, size_t *counts, size_t *next)
{
    memset(counts, 0, 256 * sizeof *counts);
    for (size_t i = 0; i < n; ++i)
        ++counts[wire[i * POINT + 16]];
    size_t at = 0;
    for (int d = 0; d < 256; ++d) {
        next[d] = at;
        at += counts[d];
    }
}

#ifdef HAVE_AVX2
/* sim_bridge_ecu_points_grouped's points [0, n) on a CPU with AVX2, wire[n * POINT + 3] being
 * readable: each point by one 32-byte load (its 28 bytes and 4 beyond), one shuffle of the
 * point layout (every word keeps its lane) and one 32-byte store where the 4 bytes beyond
 * belong to a later point of the same group (written after it), else 16 + 8 + 4 bytes. */
__attribute__((target("avx2")))
static size_t grouped_avx2(const uint8_t *wire, size_t n, uint8_t *out, size_t *next,
                           const size_t *end)
{
#define Z 0x80
#define SWAP(o) o + 3, o + 2, o + 1, o
#define KEEP(o) o, o + 1, o + 2, Z
#define FLAGS(o) o + 1, o, Z, Z
    static const uint8_t POINT_SHUFFLE[32] = {SWAP(0), SWAP(4), SWAP(8), SWAP(12), KEEP(0),
                                              SWAP(4), FLAGS(8), Z, Z, Z, Z};
#undef Z
#undef SWAP
#undef KEEP
#undef FLAGS
    const __m256i shuffle = _mm256_loadu_si256((const __m256i *)POINT_SHUFFLE);
    const __m256i exponent = _mm256_set1_epi32((int)EXPONENT);
    size_t non_finite = 0;
    for (size_t i = 0; i < n; ++i, wire += POINT) {
        const __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)wire),
                                              shuffle);
        const size_t d = wire[16], at = next[d]++;
        uint8_t *to = out + POINT * at;
        if (at + 1 < end[d]) {
            _mm256_storeu_si256((__m256i *)to, v);
        } else {                                  /* the group's last point: 28 bytes only */
            const __m128i high = _mm256_extracti128_si256(v, 1);
            _mm_storeu_si128((__m128i *)to, _mm256_castsi256_si128(v));
            _mm_storel_epi64((__m128i *)(to + 16), high);
            put(to + 24, (uint32_t)_mm_extract_epi32(high, 2));
        }
        const __m256i all_ones = _mm256_cmpeq_epi32(_mm256_and_si256(v, exponent), exponent);
        non_finite += (_mm256_movemask_ps(_mm256_castsi256_ps(all_ones)) & 7) != 0;
    }
    return non_finite;
}
#endif

/* sim_bridge_ecu_points and sim_bridge_ecu_group in one pass over the points: n wire points
 * converted to host order into out (which may not overlap wire) grouped by device id, the
 * groups in ascending id order, each keeping the points' order (a stable counting sort: the
 * ids counted on the wire first); counts[256] gets the points per id.  Returns how many have
 * an x, y or z that is not a finite number.  The same bytes as the two calls one after the
 * other. */
SIM_BRIDGE_EXPORT size_t sim_bridge_ecu_points_grouped(const uint8_t *wire, size_t n,
                                                       uint8_t *out, size_t *counts)
{
    size_t next[256], end[256], done = 0, non_finite = 0;
    group_starts(wire, n, counts, next);
#ifdef HAVE_AVX2
    if (n && __builtin_cpu_supports("avx2")) {
        for (int d = 0; d < 256; ++d)
            end[d] = next[d] + counts[d];
        done = n - 1;                         /* the last point's 32-byte load: past the end */
        non_finite = grouped_avx2(wire, done, out, next, end);
    }
#else
    (void)end;
#endif
    for (size_t i = done; i < n; ++i) {
        const uint8_t *point = wire + i * POINT;
        non_finite += points_scalar(point, 1, out + POINT * next[point[16]]++);
    }
    return non_finite;
}
