/* The walk of an Ibeo object list's variable-length objects (LUX 0x2221 §4, ECU 0x2225 /
 * 0x2280 §10-11): each object is `size` bytes, then `point_size` bytes for each of its contour
 * points, the point count a 1- or 2-byte field at `cnt_at` in the object (2 bytes in the list's
 * byte order), `single` (when >= 0) a count meaning one point.  From `pos`, each object's
 * offset and point count are recorded and its fixed part copied to `wire` (size bytes each),
 * until `count` objects are walked or one does not fit: the walk stops at an object whose fixed
 * part runs past `n` (not recorded) or after one whose points do (recorded).  Returns the
 * number recorded; *end receives where the walk stopped.  Then `contours` copies the points of
 * the recorded objects, one after another.  Loaded with ctypes by object_walk.py. */
#include <stdint.h>
#include <string.h>

#define ABI 1

__attribute__((visibility("default")))
int sim_bridge_ibeo_object_walk_abi(void) { return ABI; }

__attribute__((visibility("default")))
int64_t sim_bridge_ibeo_object_walk(const uint8_t *body, int64_t n, int64_t pos, int64_t count,
                                    int64_t size, int64_t cnt_at, int64_t cnt_bytes,
                                    int64_t big_endian, int64_t single, int64_t point_size,
                                    int64_t *offsets, int64_t *counts, uint8_t *wire,
                                    int64_t *end)
{
    int64_t i = 0;
    while (i < count && pos + size <= n) {
        const uint8_t *c = body + pos + cnt_at;
        int64_t k = cnt_bytes == 1 ? c[0]
                  : big_endian ? ((int64_t)c[0] << 8) | c[1] : ((int64_t)c[1] << 8) | c[0];
        if (k == single)
            k = 1;
        offsets[i] = pos;
        counts[i] = k;
        memcpy(wire + i * size, body + pos, (size_t)size);
        i++;
        pos += size + point_size * k;
        if (pos > n)
            break;
    }
    *end = pos;
    return i;
}

__attribute__((visibility("default")))
void sim_bridge_ibeo_object_contours(const uint8_t *body, int64_t objects,
                                     const int64_t *offsets, const int64_t *counts,
                                     int64_t size, int64_t point_size, uint8_t *out)
{
    for (int64_t i = 0; i < objects; i++) {
        int64_t bytes = counts[i] * point_size;
        memcpy(out, body + offsets[i] + size, (size_t)bytes);
        out += bytes;
    }
}
