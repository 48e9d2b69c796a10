/* Packet walk of a CARLA recorder file (SUPPLEMENT §5.2): each packet is u8 id, u32 size
 * (little-endian), size bytes of data.  From `start`, records the offset, id and size of up to
 * `cap` packets that lie wholly inside the buffer; *end receives the offset after the last one
 * (less than n when the next packet is cut).  Returns the number recorded.  Loaded with ctypes
 * by native.py; little-endian hosts only (the caller checks). */
#include <stdint.h>
#include <string.h>

/* Each packet's header is found from the one before (a chain of dependent loads): without
 * help every header is a cache miss waiting on memory (about 65 ns a packet on a one-hour
 * recording, 1M packets).  The bytes up to PREFETCH ahead are asked for in line-sized steps,
 * so the file streams through the cache as a read would (17 ms instead of 64 there). */
#define PREFETCH 2048
#define LINE 64

__attribute__((visibility("default")))
int64_t sim_bridge_carla_walk(const uint8_t *buf, int64_t n, int64_t start, int64_t *offsets,
                              uint8_t *ids, uint32_t *sizes, int64_t cap, int64_t *end)
{
    int64_t off = start, k = 0, ahead = start;
    while (k < cap && off + 5 <= n) {
        for (; ahead < off + PREFETCH && ahead < n; ahead += LINE)
            __builtin_prefetch(buf + ahead);
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
