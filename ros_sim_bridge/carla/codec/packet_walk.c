/* Packet walk of a CARLA recorder file (SUPPLEMENT §5.2): each packet is u8 id, u32 size
 * (little-endian), size bytes of data.  From `start`, records the offset, id and size of up to
 * `cap` packets that lie wholly inside the buffer; *end receives the offset after the last one
 * (less than n when the next packet is cut).  Returns the number recorded.  Loaded with ctypes
 * by native.py; little-endian hosts only (the caller checks). */
#include <stdint.h>
#include <string.h>

__attribute__((visibility("default")))
int64_t sim_bridge_carla_walk(const uint8_t *buf, int64_t n, int64_t start, int64_t *offsets,
                              uint8_t *ids, uint32_t *sizes, int64_t cap, int64_t *end)
{
    int64_t off = start, k = 0;
    while (k < cap && off + 5 <= n) {
        uint32_t size;
        memcpy(&size, buf + off + 1, 4);
        if (off + 5 + (int64_t)size > n)
            break;
        offsets[k] = off;
        ids[k] = buf[off];
        sizes[k] = size;
        k++;
        off += 5 + (int64_t)size;
    }
    *end = off;
    return k;
}
