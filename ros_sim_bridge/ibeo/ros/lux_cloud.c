/* ibeo LUX / SICK LD-MRS scan points (data type 0x2202) -> published cloud points, one pass.
 *
 * The same arithmetic as ros_sim_bridge.ibeo.ros.conversions.CloudBuilder's numpy path, in one loop
 * over the points instead of ~15 numpy passes (called through ctypes by
 * lux_native.py beside this file).  No Python, no I/O, no allocation.
 *
 * Three paths, the widest the CPU has taken at run time (__builtin_cpu_supports), each with the
 * same float operations in the same order as one point at a time (no FMA: the build passes
 * -ffp-contract=off, since GCC's AVX-512 target allows FMA), so all give the same bits:
 *   AVX-512 (F, BW, VL, DQ, VBMI; x86-64)  16 points a step: the wire words by 64-byte loads inside
 *       the block and byte permutes; cos/sin of the ticks, when a block's ticks lie within 16
 *       (a scan's sorted angles), by two 64-byte loads of the table and permutes, else by row
 *       loads; the layer table in registers; the 384 bytes out by in-lane unpacks, 6
 *       permutes and blends, and 6 stores, aligned (up to 7 first points one at a time).
 *   AVX2 (x86-64)  8 points a step, the wire words and table rows by 8-byte loads.
 *   scalar         one point at a time; the rest of the wider paths' blocks.
 * sim_bridge_lux_cloud_on runs one path, for the tests (every path this CPU has).
 * Every load stays inside the n * 10 wire bytes and the tables.
 *
 * Wire point (interface spec section 3 "Scan point", little-endian, 10 bytes):
 *   0 layer (bits 0-3) | echo (bits 4-7)   1 flags   2 angle, int16 ticks
 *   4 radial distance, uint16 cm           6 echo pulse width, uint16 cm   8 reserved
 * Cloud point (CLOUD_DTYPE, 24 bytes; the kernel runs on little-endian hosts only):
 *   0 x  4 y  8 z  12 horizontal_angle  16 echo_width (float32: m, m, m, rad, m)
 *   20 layer  21 echo  22 flags (low nibble)  23 zero
 *
 * Trigonometry comes from tables the caller computes once per scan layout:
 *   tick_trig[2*(t+32768)], [..+1]  cos h, sin h of every int16 tick value t
 *   tilt_trig (or NULL)             cos d, sin d of the 8-layer mirror-side elevation offset d(h)
 *   layer_trig[2*l], [..+1]         cos e, sin e of layer l's elevation (NaN beyond the table)
 * so that with e' = e + d:  cos e' = cos e cos d - sin e sin d,  sin e' = sin e cos d + cos e sin d
 *   x = r cos e' cos h,  y = r cos e' sin h,  z = r sin e'.
 * The unit factors come from the caller (ibeo/codec/units.py, the one home of the wire's
 * factors to SI): rad_per_tick for h and the horizontal angle, m_per_cm for r and the echo width.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"                     /* ros_sim_bridge/core: export, paths */

enum { WIRE_POINT = 10, CLOUD_POINT = 24, TICK_OFFSET = 32768 };

/* One point; `tilt` is a constant in each caller, so the compiler drops the unused branch. */
static inline size_t point(const uint8_t *wire, uint8_t *out, const float *tick_trig,
                           const float *tilt_trig, const float *layer_trig, float rad_per_tick,
                           float m_per_cm, uint32_t layer_offset, int tilt)
{
    int16_t ticks;
    uint16_t distance_cm, width_cm;
    memcpy(&ticks, wire + 2, 2);                /* little-endian host: the wire order */
    memcpy(&distance_cm, wire + 4, 2);
    memcpy(&width_cm, wire + 6, 2);
    const unsigned layer = wire[0] & 0x0Fu;
    const float r = (float)distance_cm * m_per_cm;
    const float *h = tick_trig + 2 * ((int)ticks + TICK_OFFSET);
    float cos_e = layer_trig[2 * layer], sin_e = layer_trig[2 * layer + 1];
    if (tilt) {
        const float *d = tilt_trig + 2 * ((int)ticks + TICK_OFFSET);
        const float c = cos_e * d[0] - sin_e * d[1];
        sin_e = sin_e * d[0] + cos_e * d[1];
        cos_e = c;
    }
    const float rc = r * cos_e;
    const float xyz_h_w[5] = {rc * h[0], rc * h[1], r * sin_e, (float)ticks * rad_per_tick,
                              (float)width_cm * m_per_cm};
    memcpy(out, xyz_h_w, sizeof xyz_h_w);
    /* bytes 20..23: layer, echo, flags, 0 */
    const uint32_t tail = (layer + layer_offset) | (uint32_t)(wire[0] >> 4) << 8
                          | (uint32_t)(wire[1] & 0x0Fu) << 16;
    memcpy(out + 20, &tail, 4);
    return cos_e != cos_e;                      /* NaN: layer beyond the table */
}

/* The argument list of sim_bridge_lux_cloud; lux_native.py loads only a library that says 2
 * (version 1 had no m_per_cm). */
SIM_BRIDGE_EXPORT int sim_bridge_lux_cloud_abi(void) { return 2; }

/* Points [0, n) one at a time; returns how many have NaN coordinates. */
static size_t points_scalar(const uint8_t *wire, size_t n, uint8_t *out,
                            const float *tick_trig, const float *tilt_trig,
                            const float *layer_trig, float rad_per_tick, float m_per_cm,
                            uint8_t layer_offset)
{
    size_t nan_points = 0;
    if (tilt_trig)
        for (size_t i = 0; i < n; ++i)
            nan_points += point(wire + WIRE_POINT * i, out + CLOUD_POINT * i, tick_trig,
                                tilt_trig, layer_trig, rad_per_tick, m_per_cm, layer_offset, 1);
    else
        for (size_t i = 0; i < n; ++i)
            nan_points += point(wire + WIRE_POINT * i, out + CLOUD_POINT * i, tick_trig,
                                NULL, layer_trig, rad_per_tick, m_per_cm, layer_offset, 0);
    return nan_points;
}

#ifdef HAVE_AVX2

enum { BLOCK = 8 };                   /* points per AVX2 step: 80 wire bytes, 192 cloud bytes */

/* Two 8-byte rows a (points 0-3 of a block) and b (points 4-7), each [word 0, word 1]:
 * the pair (point p, point p + 4) as one register. */
__attribute__((target("avx2")))
static inline __m256i rows(const void *a, const void *b)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)a)),
                                   _mm_loadl_epi64((const __m128i *)b), 1);
}

/* Words 0 and 1 of 8 rows of two 32-bit words (q[p]: point p's row), as two registers with
 * points 0-7 in order: 8 loads and 4 shuffles (an AVX2 gather costs more on many CPUs). */
__attribute__((target("avx2")))
static inline void columns(const void *const q[8], __m256i *word0, __m256i *word1)
{
    const __m256i r04 = rows(q[0], q[4]), r15 = rows(q[1], q[5]);
    const __m256i r26 = rows(q[2], q[6]), r37 = rows(q[3], q[7]);
    const __m256i a = _mm256_unpacklo_epi32(r04, r15), b = _mm256_unpacklo_epi32(r26, r37);
    *word0 = _mm256_unpacklo_epi64(a, b);
    *word1 = _mm256_unpackhi_epi64(a, b);
}

/* points_scalar's arithmetic for n a multiple of BLOCK on a CPU with AVX2, 8 points a step,
 * the same float operations in the same order (no FMA: the same bits as points_scalar).  The
 * wire words and the table rows by 8-byte loads, the layer table from registers; the 6 results
 * of 8 points go out as 6 full stores (a 4-point transpose in each 128-bit lane). */
__attribute__((target("avx2")))
static size_t points_avx2(const uint8_t *wire, size_t n, uint8_t *out, const float *tick_trig,
                          const float *tilt_trig, const float *layer_trig, float rad_per_tick,
                          float m_per_cm, uint8_t layer_offset)
{
    const __m256i nibble = _mm256_set1_epi32(0x0F), low16 = _mm256_set1_epi32(0xFFFF);
    const __m256i offset = _mm256_set1_epi32(layer_offset), eight = _mm256_set1_epi32(8);
    const __m256 k = _mm256_set1_ps(rad_per_tick), m = _mm256_set1_ps(m_per_cm);
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i odd = _mm256_add_epi32(even, _mm256_set1_epi32(1));
    /* cos e, sin e of layers 0-7 and 8-15 */
    const __m256 cos_lo = _mm256_i32gather_ps(layer_trig, even, 4);
    const __m256 cos_hi = _mm256_i32gather_ps(layer_trig + 16, even, 4);
    const __m256 sin_lo = _mm256_i32gather_ps(layer_trig, odd, 4);
    const __m256 sin_hi = _mm256_i32gather_ps(layer_trig + 16, odd, 4);
    size_t nan_points = 0;
    for (size_t i = 0; i < n; i += BLOCK, wire += BLOCK * WIRE_POINT,
         out += BLOCK * CLOUD_POINT) {
        /* bytes 0-3: layer | echo << 4, flags, angle; bytes 4-7: distance, echo width */
        const void *q[8], *trig[8];
        for (int p = 0; p < BLOCK; ++p) {
            int16_t tick;
            memcpy(&tick, wire + WIRE_POINT * p + 2, 2);
            q[p] = wire + WIRE_POINT * p;
            trig[p] = tick_trig + 2 * ((int)tick + TICK_OFFSET);
        }
        __m256i w0, w1, h0, h1;
        columns(q, &w0, &w1);
        columns(trig, &h0, &h1);
        const __m256 cos_h = _mm256_castsi256_ps(h0), sin_h = _mm256_castsi256_ps(h1);
        const __m256i ticks = _mm256_srai_epi32(w0, 16);
        const __m256i layer = _mm256_and_si256(w0, nibble);
        const __m256 r = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(w1, low16)), m);
        const __m256 low = _mm256_castsi256_ps(_mm256_cmpgt_epi32(eight, layer));
        __m256 cos_e = _mm256_blendv_ps(_mm256_permutevar8x32_ps(cos_hi, layer),
                                        _mm256_permutevar8x32_ps(cos_lo, layer), low);
        __m256 sin_e = _mm256_blendv_ps(_mm256_permutevar8x32_ps(sin_hi, layer),
                                        _mm256_permutevar8x32_ps(sin_lo, layer), low);
        if (tilt_trig) {
            for (int p = 0; p < BLOCK; ++p)
                trig[p] = tilt_trig + ((const float *)trig[p] - tick_trig);
            __m256i d0, d1;
            columns(trig, &d0, &d1);
            const __m256 cos_d = _mm256_castsi256_ps(d0), sin_d = _mm256_castsi256_ps(d1);
            const __m256 c = _mm256_sub_ps(_mm256_mul_ps(cos_e, cos_d),
                                           _mm256_mul_ps(sin_e, sin_d));
            sin_e = _mm256_add_ps(_mm256_mul_ps(sin_e, cos_d), _mm256_mul_ps(cos_e, sin_d));
            cos_e = c;
        }
        const __m256 rc = _mm256_mul_ps(r, cos_e);
        const __m256 x = _mm256_mul_ps(rc, cos_h), y = _mm256_mul_ps(rc, sin_h);
        const __m256 z = _mm256_mul_ps(r, sin_e);
        const __m256 h = _mm256_mul_ps(_mm256_cvtepi32_ps(ticks), k);
        const __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w1, 16)), m);
        /* bytes 20..23: layer + offset, echo, flags (low nibble), 0 */
        const __m256i echo = _mm256_and_si256(_mm256_srli_epi32(w0, 4), nibble);
        const __m256i flags = _mm256_and_si256(_mm256_srli_epi32(w0, 8), nibble);
        const __m256 t = _mm256_castsi256_ps(_mm256_or_si256(
            _mm256_add_epi32(layer, offset),
            _mm256_or_si256(_mm256_slli_epi32(echo, 8), _mm256_slli_epi32(flags, 16))));
        nan_points += (size_t)__builtin_popcount(
            (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(cos_e, cos_e, _CMP_UNORD_Q)));
        /* per 128-bit lane (points 0-3, 4-7): x y z h of each point, then w t pairs */
        const __m256 xy_lo = _mm256_unpacklo_ps(x, y), xy_hi = _mm256_unpackhi_ps(x, y);
        const __m256 zh_lo = _mm256_unpacklo_ps(z, h), zh_hi = _mm256_unpackhi_ps(z, h);
        const __m256 p0 = _mm256_shuffle_ps(xy_lo, zh_lo, _MM_SHUFFLE(1, 0, 1, 0));
        const __m256 p1 = _mm256_shuffle_ps(xy_lo, zh_lo, _MM_SHUFFLE(3, 2, 3, 2));
        const __m256 p2 = _mm256_shuffle_ps(xy_hi, zh_hi, _MM_SHUFFLE(1, 0, 1, 0));
        const __m256 p3 = _mm256_shuffle_ps(xy_hi, zh_hi, _MM_SHUFFLE(3, 2, 3, 2));
        const __m256 wt01 = _mm256_unpacklo_ps(w, t), wt23 = _mm256_unpackhi_ps(w, t);
        /* each lane: 6 words of 4 consecutive points, in 6 groups of 4 words */
        const __m256 o0 = p0;
        const __m256 o1 = _mm256_shuffle_ps(wt01, p1, _MM_SHUFFLE(1, 0, 1, 0));
        const __m256 o2 = _mm256_shuffle_ps(p1, wt01, _MM_SHUFFLE(3, 2, 3, 2));
        const __m256 o3 = p2;
        const __m256 o4 = _mm256_shuffle_ps(wt23, p3, _MM_SHUFFLE(1, 0, 1, 0));
        const __m256 o5 = _mm256_shuffle_ps(p3, wt23, _MM_SHUFFLE(3, 2, 3, 2));
        float *f = (float *)out;
        _mm256_storeu_ps(f, _mm256_permute2f128_ps(o0, o1, 0x20));
        _mm256_storeu_ps(f + 8, _mm256_permute2f128_ps(o2, o3, 0x20));
        _mm256_storeu_ps(f + 16, _mm256_permute2f128_ps(o4, o5, 0x20));
        _mm256_storeu_ps(f + 24, _mm256_permute2f128_ps(o0, o1, 0x31));
        _mm256_storeu_ps(f + 32, _mm256_permute2f128_ps(o2, o3, 0x31));
        _mm256_storeu_ps(f + 40, _mm256_permute2f128_ps(o4, o5, 0x31));
    }
    return nan_points;
}
#endif

#ifdef HAVE_AVX512

enum { BLOCK16 = 16 };           /* points per AVX-512 step: 160 wire bytes, 384 cloud bytes */

/* The point in each lane of a block's registers: lane 4k + j holds point 2k + j (j = 0, 1) or
 * 8 + 2k + j - 2 (j = 2, 3), so that the in-lane unpacks of two registers (a, b) make the pair
 * registers a0 b0 a1 b1 .. a7 b7 (unpacklo) and a8 b8 .. a15 b15 (unpackhi). */
static const uint8_t LANE_POINT[BLOCK16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
/* The same for w and t, so that unpacklo(w, t) holds the (w, t) of points 2 5 0 3 6 1 4 7, each
 * at its place in store8's stores (unpackhi: 8 more): merged in by blends. */
static const uint8_t WT_LANE_POINT[BLOCK16] = {2, 5, 10, 13, 0, 3, 8, 11,
                                               6, 1, 14, 9, 4, 7, 12, 15};

/* cos, sin of the 16 ticks of a block (wire: its points) from a table of (cos, sin) rows: when
 * the ticks lie in [base, base + 16) (`narrow`: a scan's sorted ticks, ~17 points a tick),
 * two 64-byte loads of the rows from base and two permutes (twice_d: 2 (tick - base));
 * otherwise 16 row loads as points_avx2 makes them. */
__attribute__((target(AVX512)))
static inline void trig16(const float *table, const uint8_t *wire, int narrow, int base,
                          __m512i twice_d, __m512 *cos_h, __m512 *sin_h)
{
    if (narrow) {
        const float *row = table + 2 * (base + TICK_OFFSET);
        const __m512 a = _mm512_loadu_ps(row), b = _mm512_loadu_ps(row + 16);
        *cos_h = _mm512_permutex2var_ps(a, twice_d, b);
        *sin_h = _mm512_permutex2var_ps(a, _mm512_add_epi32(twice_d, _mm512_set1_epi32(1)), b);
    } else {
        const void *q[BLOCK16];
        for (int p = 0; p < BLOCK16; ++p) {
            int16_t tick;
            memcpy(&tick, wire + WIRE_POINT * LANE_POINT[p] + 2, 2);
            q[p] = table + 2 * ((int)tick + TICK_OFFSET);
        }
        __m256i c0, s0, c1, s1;
        columns(q, &c0, &s0);
        columns(q + 8, &c1, &s1);
        *cos_h = _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(c0), c1, 1));
        *sin_h = _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(s0), s1, 1));
    }
}

/* Three pair registers of 8 points each (XY: x0 y0 x1 y1 .., ZH, WT) -> the 48 words of those
 * 8 cloud points in order, as 3 stores: lane l of store j is pair 8j + l, i.e. point
 * (8j + l) / 3, pair (8j + l) % 3; XY and ZH by one two-source permute, WT (its pairs already
 * at their lanes: WT_LANE_POINT) blended in. */
__attribute__((target(AVX512)))
static inline void store8(float *f, __m512d xy, __m512d zh, __m512d wt)
{
    static const int64_t from_xyzh[3][8] = {{0, 8, 0, 1, 9, 0, 2, 10},
                                            {0, 3, 11, 0, 4, 12, 0, 5},
                                            {13, 0, 6, 14, 0, 7, 15, 0}};
    static const __mmask8 wt_lanes[3] = {0x24, 0x49, 0x92};
    for (int j = 0; j < 3; ++j) {
        __m512d o = _mm512_permutex2var_pd(xy, _mm512_loadu_si512(from_xyzh[j]), zh);
        o = _mm512_mask_blend_pd(wt_lanes[j], o, wt);
        _mm512_storeu_pd(f + 16 * j, o);
    }
}

/* points_scalar's arithmetic for n a multiple of BLOCK16 on a CPU with AVX-512 (F, BW, VL, DQ,
 * VBMI), 16 points a step, the same float operations in the same order (the same bits).  The
 * wire words 0 (bytes 0-3) and 1 (bytes 4-7) of 16 points by three 64-byte loads inside the
 * block (bytes 0-63, 64-127, 96-159) and two byte permutes each, the points in LANE_POINT's
 * order; the layer table from registers; the tick (and tilt) rows by trig16; the 6 results
 * paired by in-lane unpacks and out as 6 stores by store8. */
__attribute__((target(AVX512)))
static size_t points_avx512(const uint8_t *wire, size_t n, uint8_t *out, const float *tick_trig,
                            const float *tilt_trig, const float *layer_trig, float rad_per_tick,
                            float m_per_cm, uint8_t layer_offset)
{
    /* byte b of word w of lane l's point p: wire byte 10p + 4w + b; points 0-12 from bytes
     * 0-127, points 13-15 from bytes 96-159 */
    uint8_t from128[2][64], from_last[2][64];
    __mmask64 last = 0, wt_last = 0;                        /* bytes of points 13-15 */
    /* bytes 0, 1, 6, 7 of each point (layer etc., echo width) in WT_LANE_POINT's order */
    uint8_t wt128[64], wt_from_last[64];
    for (int l = 0; l < BLOCK16; ++l)
        for (int b = 0; b < 4; ++b) {
            const int p = WT_LANE_POINT[l], at = 10 * p + (b < 2 ? b : b + 4);
            wt128[4 * l + b] = (uint8_t)(p < 13 ? at : 0);
            wt_from_last[4 * l + b] = (uint8_t)(p < 13 ? 0 : at - 96);
            if (p >= 13)
                wt_last |= 1ull << (4 * l + b);
        }
    const __m512i wt_word_128 = _mm512_loadu_si512(wt128);
    const __m512i wt_word_last = _mm512_loadu_si512(wt_from_last);
    for (int w = 0; w < 2; ++w)
        for (int l = 0; l < BLOCK16; ++l)
            for (int b = 0; b < 4; ++b) {
                const int p = LANE_POINT[l];
                from128[w][4 * l + b] = (uint8_t)(p < 13 ? 10 * p + 4 * w + b : 0);
                from_last[w][4 * l + b] = (uint8_t)(p < 13 ? 0 : 10 * p + 4 * w + b - 96);
                if (p >= 13)
                    last |= 1ull << (4 * l + b);
            }
    const __m512i word0_128 = _mm512_loadu_si512(from128[0]);
    const __m512i word1_128 = _mm512_loadu_si512(from128[1]);
    const __m512i word0_last = _mm512_loadu_si512(from_last[0]);
    const __m512i word1_last = _mm512_loadu_si512(from_last[1]);
    const __m512i nibble = _mm512_set1_epi32(0x0F), low16 = _mm512_set1_epi32(0xFFFF);
    const __m512i offset = _mm512_set1_epi32(layer_offset), sixteen = _mm512_set1_epi32(16);
    const __m512i echo_flags = _mm512_set1_epi32(0x0F0F00);
    /* per word 0 (bytes b0 b1 ..): bits 0, 4, 8 of it to bytes 0, 1, 2 (b0, b0 >> 4 | b1 << 4,
     * b1): the nibbles of layer, echo, flags at the bytes of the tail */
    const __m512i nibbles = _mm512_set1_epi64(0x0028242000080400ll);
    const __m512 k = _mm512_set1_ps(rad_per_tick), m = _mm512_set1_ps(m_per_cm);
    /* cos e, sin e of layers 0-15, indexed by the low 4 bits of word 0 (the layer) */
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14,
                                           16, 18, 20, 22, 24, 26, 28, 30);
    const __m512 layers_lo = _mm512_loadu_ps(layer_trig);
    const __m512 layers_hi = _mm512_loadu_ps(layer_trig + 16);
    const __m512 cos16 = _mm512_permutex2var_ps(layers_lo, even, layers_hi);
    const __m512 sin16 = _mm512_permutex2var_ps(
        layers_lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), layers_hi);
    size_t nan_points = 0;
    for (size_t i = 0; i < n; i += BLOCK16, wire += BLOCK16 * WIRE_POINT,
         out += BLOCK16 * CLOUD_POINT) {
        const __m512i a = _mm512_loadu_si512(wire), b = _mm512_loadu_si512(wire + 64);
        const __m512i c = _mm512_loadu_si512(wire + 96);
        const __m512i w0 = _mm512_mask_permutexvar_epi8(
            _mm512_permutex2var_epi8(a, word0_128, b), last, word0_last, c);
        const __m512i w1 = _mm512_mask_permutexvar_epi8(
            _mm512_permutex2var_epi8(a, word1_128, b), last, word1_last, c);
        const __m512i wt_word = _mm512_mask_permutexvar_epi8(
            _mm512_permutex2var_epi8(a, wt_word_128, b), wt_last, wt_word_last, c);
        const __m512i ticks = _mm512_srai_epi32(w0, 16);
        /* the block's ticks within [base, base + 16), base the lower of the first and the
         * last (sorted ticks, either way) */
        int16_t first, final;
        memcpy(&first, wire + 2, 2);
        memcpy(&final, wire + WIRE_POINT * (BLOCK16 - 1) + 2, 2);
        const int base = first < final ? first : final;
        const __m512i d = _mm512_sub_epi32(ticks, _mm512_set1_epi32(base));
        const int narrow = base <= 32767 - 15              /* rows inside the table */
                           && _mm512_cmplt_epu32_mask(d, sixteen) == (__mmask16)0xFFFF;
        const __m512i twice_d = _mm512_add_epi32(d, d);
        __m512 cos_h, sin_h;
        trig16(tick_trig, wire, narrow, base, twice_d, &cos_h, &sin_h);
        const __m512 r = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(w1, low16)), m);
        __m512 cos_e = _mm512_permutexvar_ps(w0, cos16), sin_e = _mm512_permutexvar_ps(w0, sin16);
        if (tilt_trig) {
            __m512 cos_d, sin_d;
            trig16(tilt_trig, wire, narrow, base, twice_d, &cos_d, &sin_d);
            const __m512 cc = _mm512_sub_ps(_mm512_mul_ps(cos_e, cos_d),
                                            _mm512_mul_ps(sin_e, sin_d));
            sin_e = _mm512_add_ps(_mm512_mul_ps(sin_e, cos_d), _mm512_mul_ps(cos_e, sin_d));
            cos_e = cc;
        }
        const __m512 rc = _mm512_mul_ps(r, cos_e);
        const __m512 x = _mm512_mul_ps(rc, cos_h), y = _mm512_mul_ps(rc, sin_h);
        const __m512 z = _mm512_mul_ps(r, sin_e);
        const __m512 h = _mm512_mul_ps(_mm512_cvtepi32_ps(ticks), k);
        const __m512 w = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(wt_word, 16)), m);
        /* bytes 20..23: layer + offset, echo, flags (low nibble), 0 */
        const __m512i lef = _mm512_multishift_epi64_epi8(nibbles, wt_word);
        const __m512 t = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
            lef, echo_flags, _mm512_add_epi32(_mm512_and_si512(lef, nibble), offset),
            0xEA));                 /* a & b | c */
        nan_points += (size_t)__builtin_popcount(
            (unsigned)_mm512_cmp_ps_mask(cos_e, cos_e, _CMP_UNORD_Q));
        float *f = (float *)out;
        store8(f, _mm512_castps_pd(_mm512_unpacklo_ps(x, y)),
               _mm512_castps_pd(_mm512_unpacklo_ps(z, h)),
               _mm512_castps_pd(_mm512_unpacklo_ps(w, t)));
        store8(f + 48, _mm512_castps_pd(_mm512_unpackhi_ps(x, y)),
               _mm512_castps_pd(_mm512_unpackhi_ps(z, h)),
               _mm512_castps_pd(_mm512_unpackhi_ps(w, t)));
    }
    return nan_points;
}
#endif

/* sim_bridge_lux_cloud on one path (PATH_*): its blocks, then the rest by the narrower paths;
 * (size_t)-1 where this build or CPU lacks the path.  For the tests, which compare every path
 * the machine has. */
SIM_BRIDGE_EXPORT size_t sim_bridge_lux_cloud_on(int path, const uint8_t *wire, size_t n,
                                                 uint8_t *out, const float *tick_trig,
                                                 const float *tilt_trig, const float *layer_trig,
                                                 float rad_per_tick, float m_per_cm,
                                                 uint8_t layer_offset)
{
    if (!cpu_has_path(path))
        return (size_t)-1;
    if (n == 0)                     /* nothing read: a probe for the path */
        return 0;
    size_t done = 0, nan_points = 0;
#ifdef HAVE_AVX512
    if (path >= PATH_AVX512) {
        /* the first points (up to 7) one at a time, so that the blocks' 64-byte stores are
         * aligned (split stores cost more); none where out is not 8-byte aligned */
        size_t head = 0;
        while (head < 8 && ((uintptr_t)(out + CLOUD_POINT * head) & 63) != 0)
            ++head;
        if (head == 8 || head > n)
            head = 0;
        nan_points = points_scalar(wire, head, out, tick_trig, tilt_trig, layer_trig,
                                   rad_per_tick, m_per_cm, layer_offset);
        wire += WIRE_POINT * head;
        out += CLOUD_POINT * head;
        n -= head;
        done = n - n % BLOCK16;
        nan_points += points_avx512(wire, done, out, tick_trig, tilt_trig, layer_trig,
                                    rad_per_tick, m_per_cm, layer_offset);
    }
#endif
#ifdef HAVE_AVX2
    if (path >= PATH_AVX2) {
        const size_t more = (n - done) - (n - done) % BLOCK;
        nan_points += points_avx2(wire + WIRE_POINT * done, more, out + CLOUD_POINT * done,
                                  tick_trig, tilt_trig, layer_trig, rad_per_tick, m_per_cm,
                                  layer_offset);
        done += more;
    }
#endif
    return nan_points + points_scalar(wire + WIRE_POINT * done, n - done,
                                      out + CLOUD_POINT * done, tick_trig, tilt_trig,
                                      layer_trig, rad_per_tick, m_per_cm, layer_offset);
}

/* Fills n cloud points; returns how many have NaN coordinates (layer beyond the table).
 * The widest path the CPU has (each block's loads stay inside its wire bytes). */
SIM_BRIDGE_EXPORT size_t sim_bridge_lux_cloud(const uint8_t *wire, size_t n, uint8_t *out,
                                              const float *tick_trig, const float *tilt_trig,
                                              const float *layer_trig, float rad_per_tick,
                                              float m_per_cm, uint8_t layer_offset)
{
    int path = PATH_AVX512;
    while (!cpu_has_path(path))
        --path;
    return sim_bridge_lux_cloud_on(path, wire, n, out, tick_trig, tilt_trig, layer_trig,
                                   rad_per_tick, m_per_cm, layer_offset);
}
