#ifndef PLAZA_ZLIB_H
#define PLAZA_ZLIB_H

#include <stddef.h>
#include <stdint.h>

/// The most bytes `plaza_gzip` writes for `length` bytes of input.
size_t plaza_gzip_bound(size_t length);

/// `input` compressed as one gzip member (RFC 1952) at zlib's best level into `output`, which
/// holds `capacity` bytes (`plaza_gzip_bound` of the input is always enough). Returns the bytes
/// written, or 0 when it did not fit or zlib failed.
size_t plaza_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t capacity);

#endif
