#include "plaza_zlib.h"

#include <zlib.h>

size_t plaza_gzip_bound(size_t length) {
    // deflateBound's figure plus gzip's header and trailer (18 bytes; zlib's is 6).
    return (size_t)compressBound((uLong)length) + 32;
}

size_t plaza_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t capacity) {
    z_stream stream = {0};
    // 15 window bits plus 16: a gzip wrapper rather than zlib's.
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int status = deflate(&stream, Z_FINISH);
    size_t written = stream.total_out;
    deflateEnd(&stream);
    return status == Z_STREAM_END ? written : 0;
}
