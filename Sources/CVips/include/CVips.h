#ifndef CVIPS_H
#define CVIPS_H

#include <stddef.h>

/// The few libvips operations Plaza uses, as plain C functions: libvips' own API takes its
/// optional arguments as C varargs, which Swift cannot call. Every function returns 0 on
/// success and -1 on failure; `plaza_vips_error` then tells why.

typedef enum {
    PLAZA_FORMAT_JPEG = 0,
    PLAZA_FORMAT_PNG = 1,
    PLAZA_FORMAT_WEBP = 2,
    PLAZA_FORMAT_GIF = 3,
    PLAZA_FORMAT_HEIF = 4,
} plaza_format;

typedef struct {
    int width;
    int height;       /// of one page (frame)
    int pages;        /// frames of an animation, else 1
    int has_alpha;
    const char *loader;  /// the libvips loader that reads the file, e.g. "VipsForeignLoadJpegFile"
} plaza_image_header;

/// Loads libvips (dlopen; 8.12 or newer) and starts it. Call it once per process, before any
/// other function here: `concurrency` worker threads per image, no operation cache, untrusted
/// loaders (everything but the common formats) blocked.
/// When libvips cannot be loaded, `plaza_vips_error` says why.
int plaza_vips_start(int concurrency);

/// Reads only the header of the file at `path` (no pixels are decoded).
int plaza_vips_header(const char *path, plaza_image_header *header);

/// Decodes `path` (which may carry loader options, e.g. "file[n=-1]" for every frame),
/// auto-orients it, converts it to sRGB, shrinks it to fit `width` x `height` (never enlarges)
/// or, with `crop`, fills that box and crops the rest, and encodes it as `format` with no
/// metadata. `out` receives the bytes (free with plaza_vips_free).
int plaza_vips_render(const char *path, int width, int height, int crop, plaza_format format, int quality,
                      void **out, size_t *length, int *out_width, int *out_height);

typedef struct {
    int box;          /// fit in box x box pixels
    int crop;         /// fill the box and crop the rest
    plaza_format format;
    int quality;
    void *bytes;      /// out: the encoded file (free with plaza_vips_free)
    size_t length;
    int width;        /// out
    int height;       /// out
} plaza_variant;

/// Still images: decodes `path` once (auto-oriented, sRGB, shrunk to fit `variants[0].box`),
/// encodes that as variants[0], then every other variant from those pixels, and a small
/// 8-bit RGB rendering for a blurhash (`pixels`, free with plaza_vips_free).
int plaza_vips_render_still(const char *path, plaza_variant *variants, int count, int pixels_box,
                            void **pixels, size_t *pixels_length, int *pixels_width, int *pixels_height);

/// A small sRGB rendering of `path` as 8-bit RGB pixels, for a blurhash.
int plaza_vips_pixels(const char *path, int size, void **out, size_t *length, int *out_width, int *out_height);

/// A synthetic picture (a colour gradient, `pages` frames when animated) encoded as `format`,
/// for the tests.
int plaza_vips_sample(plaza_format format, int width, int height, int pages, void **out, size_t *length);

typedef struct {
    int width;
    int height;
    double from[3];      /// sRGB, 0-255: the top left corner's colour
    double to[3];        /// the bottom right's, and the discs' (lightened)
    int seed;            /// moves the discs
    const char *caption; /// centred white text, or NULL; left out where libvips has no Pango
    const char *font;    /// a Pango font description, e.g. "sans bold 48"
} plaza_poster;

/// A picture made from nothing (a diagonal gradient, three discs, a caption) as a JPEG, for
/// the demo world: no image file of unknown licence ships with Plaza.
int plaza_vips_poster(const plaza_poster *poster, void **out, size_t *length);

/// The last error libvips reported on any thread, cleared; free with free().
char *plaza_vips_error(void);

void plaza_vips_free(void *pointer);

#endif
