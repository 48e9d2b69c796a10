/* Ibeo ECU scan points (data types 0x2204 / 0x2205, interface spec sections 8 and 9) from the
 * wire's big-endian layout to host order, one pass (called through ctypes by scan_ecu.py
 * beside this file, on little-endian hosts only).  No Python, no I/O, no allocation.
 *
 * Point (28 bytes, the same offsets on the wire and in the result):
 *   0 x  4 y  8 z  12 echo width (float32, m)   16 device id  17 layer  18 echo (uint8)
 *   19 reserved   20 time offset (uint32, us)   24 flags (uint16)   26 reserved
 * The reserved bytes come out zero, so equal points give equal bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define SIM_BRIDGE_EXPORT __declspec(dllexport)
#else
#define SIM_BRIDGE_EXPORT __attribute__((visibility("default")))
#endif

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

/* Converts n points from wire to out (which may not overlap); returns how many have an x, y
 * or z that is not a finite number.  Word by word, in registers (a copy of the whole point
 * through the stack costs store-forwarding stalls). */
SIM_BRIDGE_EXPORT size_t sim_bridge_ecu_points(const uint8_t *wire, size_t n, uint8_t *out)
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
