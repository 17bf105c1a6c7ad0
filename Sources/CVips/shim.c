#include "CVips.h"
#include "vips_api.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libvips is loaded when the first image arrives (dlopen), not with the server: with its
// codecs it is about 17 MB of resident memory, which a server that never sees an upload does
// not need. The pointers' types come from vips_api.h.
#define PLAZA_VIPS_FUNCTIONS(F) \
    F(vips_init) \
    F(vips_version) \
    F(vips_concurrency_set) \
    F(vips_cache_set_max) \
    F(vips_cache_set_max_mem) \
    F(vips_cache_set_max_files) \
    F(vips_leak_set) \
    F(vips_foreign_find_load) \
    F(vips_image_new_from_file) \
    F(vips_image_get_width) \
    F(vips_image_get_height) \
    F(vips_image_get_page_height) \
    F(vips_image_get_n_pages) \
    F(vips_image_hasalpha) \
    F(vips_image_get_bands) \
    F(vips_image_get_format) \
    F(vips_jpegsave_buffer) \
    F(vips_pngsave_buffer) \
    F(vips_webpsave_buffer) \
    F(vips_gifsave_buffer) \
    F(vips_heifsave_buffer) \
    F(vips_error) \
    F(vips_error_buffer) \
    F(vips_error_clear) \
    F(vips_thumbnail) \
    F(vips_thumbnail_image) \
    F(vips_image_new) \
    F(vips_object_local_array) \
    F(vips_flatten) \
    F(vips_extract_band) \
    F(vips_colourspace) \
    F(vips_cast_uchar) \
    F(vips_image_write_to_memory) \
    F(vips_image_copy_memory) \
    F(vips_xyz) \
    F(vips_linear1) \
    F(vips_bandjoin) \
    F(vips_copy) \
    F(vips_add) \
    F(vips_embed) \
    F(vips_ifthenelse) \
    F(vips_draw_circle) \
    F(vips_image_set_int) \
    F(vips_image_set_array_int) \
    F(g_object_ref) \
    F(g_object_unref) \
    F(g_free)

static struct {
#define PLAZA_DECLARE(name) __typeof__(&name) name;
    PLAZA_VIPS_FUNCTIONS(PLAZA_DECLARE)
#undef PLAZA_DECLARE
} lib;

/// Since 8.13: blocks the loaders libvips marks untrusted (8.12 has no such list).
static __typeof__(&vips_block_untrusted_set) block_untrusted_set;
/// Only in a libvips built with Pango: text rendering, for the demo world's pictures.
static __typeof__(&vips_text) text;

/// Why loading libvips failed; empty when it is loaded.
static char load_error[512];

static int load(void) {
#ifdef __APPLE__
    static const char *names[] = {"libvips.42.dylib", "/opt/homebrew/lib/libvips.42.dylib", "/usr/local/lib/libvips.42.dylib"};
#else
    static const char *names[] = {"libvips.so.42"};
#endif
    void *handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !handle; i++) handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "libvips could not be loaded: %s", reason ? reason : "not found");
        return -1;
    }
#define PLAZA_RESOLVE(name) \
    if (!(lib.name = (__typeof__(&name))dlsym(handle, #name))) { \
        snprintf(load_error, sizeof load_error, "libvips has no %s (8.12 or newer is needed)", #name); \
        return -1; \
    }
    PLAZA_VIPS_FUNCTIONS(PLAZA_RESOLVE)
#undef PLAZA_RESOLVE
    block_untrusted_set = (__typeof__(&vips_block_untrusted_set))dlsym(handle, "vips_block_untrusted_set");
    text = (__typeof__(&vips_text))dlsym(handle, "vips_text");
    return 0;
}

/// Whether this libvips names "no metadata" `keep` (8.15 and later) or `strip`.
static int has_keep;
#define PLAZA_NO_METADATA (has_keep ? "keep" : "strip"), (has_keep ? VIPS_FOREIGN_KEEP_NONE : TRUE)

int plaza_vips_start(int concurrency) {
    if (load()) return -1;
    int major = lib.vips_version(0), minor = lib.vips_version(1);
    if (major < 8 || (major == 8 && minor < 12)) {
        // The loaders' `fail_on` option came in 8.12.
        snprintf(load_error, sizeof load_error, "libvips 8.12 or newer is needed (found %d.%d)", major, minor);
        return -1;
    }
    if (lib.vips_init("plaza")) return -1;
    lib.vips_concurrency_set(concurrency);
    lib.vips_cache_set_max(0);
    lib.vips_cache_set_max_mem(0);
    lib.vips_cache_set_max_files(0);
    lib.vips_leak_set(FALSE);
    if (block_untrusted_set) block_untrusted_set(TRUE);
    has_keep = major > 8 || (major == 8 && minor >= 15);
    return 0;
}

int plaza_vips_header(const char *path, plaza_image_header *header) {
    const char *loader = lib.vips_foreign_find_load(path);
    if (!loader) return -1;
    VipsImage *image = lib.vips_image_new_from_file(path, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) return -1;
    header->width = lib.vips_image_get_width(image);
    header->height = lib.vips_image_get_page_height(image);
    header->pages = lib.vips_image_get_n_pages(image);
    header->has_alpha = lib.vips_image_hasalpha(image);
    header->loader = loader;
    (lib.g_object_unref)(image);
    return 0;
}

static int save(VipsImage *image, plaza_format format, int quality, void **out, size_t *length) {
    switch (format) {
    case PLAZA_FORMAT_JPEG:
        return lib.vips_jpegsave_buffer(image, out, length, "Q", quality, "optimize_coding", TRUE, "interlace", TRUE,
                                    PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_PNG:
        return lib.vips_pngsave_buffer(image, out, length, "compression", 6, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_WEBP:
        return lib.vips_webpsave_buffer(image, out, length, "Q", quality, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_GIF:
        return lib.vips_gifsave_buffer(image, out, length, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_HEIF:
        return lib.vips_heifsave_buffer(image, out, length, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC,
                                    PLAZA_NO_METADATA, NULL);
    }
    lib.vips_error("plaza", "unknown format %d", (int)format);
    return -1;
}

int plaza_vips_render(const char *path, int width, int height, int crop, plaza_format format, int quality,
                      void **out, size_t *length, int *out_width, int *out_height) {
    VipsImage *image = NULL;
    if (lib.vips_thumbnail(path, &image, width, "height", height, "size", VIPS_SIZE_DOWN,
                       "crop", crop ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_NONE,
                       "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    int status = save(image, format, quality, out, length);
    if (status == 0) {
        *out_width = lib.vips_image_get_width(image);
        *out_height = lib.vips_image_get_page_height(image);
    }
    (lib.g_object_unref)(image);
    return status;
}

/// 8-bit RGB pixels of `image`, alpha flattened onto black.
static int rgb_pixels(VipsImage *image, void **out, size_t *length, int *out_width, int *out_height) {
    VipsObject *scope = (VipsObject *)(lib.vips_image_new());
    VipsImage **t = (VipsImage **)lib.vips_object_local_array(scope, 5);
    int status = -1;
    if (lib.vips_image_hasalpha(image)) {
        if (lib.vips_flatten(image, &t[1], NULL)) goto done;
        image = t[1];
    }
    if (lib.vips_image_get_bands(image) > 3) {
        if (lib.vips_extract_band(image, &t[2], 0, "n", 3, NULL)) goto done;
        image = t[2];
    }
    if (lib.vips_image_get_bands(image) != 3) {
        if (lib.vips_colourspace(image, &t[3], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
        image = t[3];
    }
    if (lib.vips_image_get_format(image) != VIPS_FORMAT_UCHAR) {
        if (lib.vips_cast_uchar(image, &t[4], NULL)) goto done;
        image = t[4];
    }
    *out = lib.vips_image_write_to_memory(image, length);
    if (!*out) goto done;
    *out_width = lib.vips_image_get_width(image);
    *out_height = lib.vips_image_get_height(image);
    status = 0;
done:
    (lib.g_object_unref)(scope);
    return status;
}

int plaza_vips_pixels(const char *path, int size, void **out, size_t *length, int *out_width, int *out_height) {
    VipsImage *image = NULL;
    if (lib.vips_thumbnail(path, &image, size, "height", size, "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    int status = rgb_pixels(image, out, length, out_width, out_height);
    (lib.g_object_unref)(image);
    return status;
}

int plaza_vips_render_still(const char *path, plaza_variant *variants, int count, int pixels_box,
                            void **pixels, size_t *pixels_length, int *pixels_width, int *pixels_height) {
    for (int i = 0; i < count; i++) variants[i].bytes = NULL;
    *pixels = NULL;
    VipsImage *decoded = NULL, *pixels_image = NULL;
    if (lib.vips_thumbnail(path, &decoded, variants[0].box, "height", variants[0].box, "size", VIPS_SIZE_DOWN,
                       "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    // Decoded once into memory; the smaller variants are made from these pixels.
    VipsImage *image = lib.vips_image_copy_memory(decoded);
    (lib.g_object_unref)(decoded);
    if (!image) return -1;
    int status = -1;
    for (int i = 0; i < count; i++) {
        plaza_variant *v = &variants[i];
        VipsImage *sized = NULL;
        if (i == 0) {
            sized = image;
            (lib.g_object_ref)(sized);
        } else if (lib.vips_thumbnail_image(image, &sized, v->box, "height", v->box, "size", VIPS_SIZE_DOWN,
                                        "crop", v->crop ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_NONE, NULL)) {
            goto done;
        }
        int saved = save(sized, v->format, v->quality, &v->bytes, &v->length);
        v->width = lib.vips_image_get_width(sized);
        v->height = lib.vips_image_get_height(sized);
        (lib.g_object_unref)(sized);
        if (saved) goto done;
    }
    if (lib.vips_thumbnail_image(image, &pixels_image, pixels_box, "height", pixels_box, NULL)) goto done;
    status = rgb_pixels(pixels_image, pixels, pixels_length, pixels_width, pixels_height);
done:
    if (pixels_image) (lib.g_object_unref)(pixels_image);
    (lib.g_object_unref)(image);
    if (status) {
        for (int i = 0; i < count; i++) { (lib.g_free)(variants[i].bytes); variants[i].bytes = NULL; }
    }
    return status;
}

int plaza_vips_sample(plaza_format format, int width, int height, int pages, void **out, size_t *length) {
    VipsObject *scope = (VipsObject *)(lib.vips_image_new());
    VipsImage **t = (VipsImage **)lib.vips_object_local_array(scope, 9);
    int status = -1;
    int total = height * pages;
    if (lib.vips_xyz(&t[0], width, total, NULL) ||
        lib.vips_extract_band(t[0], &t[1], 0, NULL) ||
        lib.vips_extract_band(t[0], &t[2], 1, NULL) ||
        lib.vips_linear1(t[1], &t[3], 255.0 / width, 0, NULL) ||
        lib.vips_linear1(t[2], &t[4], 255.0 / total, 0, NULL) ||
        lib.vips_linear1(t[1], &t[5], -255.0 / width, 255, NULL) ||
        lib.vips_bandjoin(&t[3], &t[6], 3, NULL) ||
        lib.vips_cast_uchar(t[6], &t[7], NULL) ||
        lib.vips_copy(t[7], &t[8], "interpretation", VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    if (pages > 1) {
        lib.vips_image_set_int(t[8], "page-height", height);
        int delays[pages];
        for (int i = 0; i < pages; i++) delays[i] = 100;
        lib.vips_image_set_array_int(t[8], "delay", delays, pages);
        lib.vips_image_set_int(t[8], "loop", 0);
    }
    status = save(t[8], format, 80, out, length);
done:
    (lib.g_object_unref)(scope);
    return status;
}

/// `caption` in white with a dark shadow, centred on `image` (sRGB, 3 bands of uchar); the
/// image itself when this libvips cannot draw text or no font is found.
static VipsImage *captioned(VipsImage *image, VipsObject *scope, const char *caption, const char *font) {
    int width = lib.vips_image_get_width(image), height = lib.vips_image_get_height(image);
    VipsImage **t = (VipsImage **)lib.vips_object_local_array(scope, 9);
    if (!text || !caption || !*caption) return image;
    if (text(&t[0], caption, "font", font, "width", width * 8 / 10, "align", VIPS_ALIGN_CENTRE, NULL)) {
        lib.vips_error_clear();
        return image;
    }
    int w = lib.vips_image_get_width(t[0]), h = lib.vips_image_get_height(t[0]);
    int x = (width - w) / 2, y = (height - h) / 2, shadow = width / 200 + 1;
    if (lib.vips_embed(t[0], &t[1], x, y, width, height, NULL) ||
        lib.vips_embed(t[0], &t[2], x + shadow, y + shadow, width, height, NULL) ||
        lib.vips_linear1(image, &t[3], 0, 24, NULL) || lib.vips_cast_uchar(t[3], &t[4], NULL) ||
        lib.vips_linear1(image, &t[5], 0, 255, NULL) || lib.vips_cast_uchar(t[5], &t[6], NULL) ||
        lib.vips_ifthenelse(t[2], t[4], image, &t[7], "blend", TRUE, NULL) ||
        lib.vips_ifthenelse(t[1], t[6], t[7], &t[8], "blend", TRUE, NULL)) {
        lib.vips_error_clear();
        return image;
    }
    return t[8];
}

int plaza_vips_poster(const plaza_poster *poster, void **out, size_t *length) {
    VipsObject *scope = (VipsObject *)(lib.vips_image_new());
    VipsImage **t = (VipsImage **)lib.vips_object_local_array(scope, 12);
    int status = -1, width = poster->width, height = poster->height;
    // The diagonal's share (0 at the top left, 1 at the bottom right) blends `from` into `to`.
    if (lib.vips_xyz(&t[0], width, height, NULL) ||
        lib.vips_extract_band(t[0], &t[1], 0, NULL) || lib.vips_extract_band(t[0], &t[2], 1, NULL) ||
        lib.vips_add(t[1], t[2], &t[3], NULL))
        goto done;
    for (int band = 0; band < 3; band++) {
        double from = poster->from[band], span = poster->to[band] - from;
        if (lib.vips_linear1(t[3], &t[4 + band], span / (width + height - 2), from, NULL)) goto done;
    }
    if (lib.vips_bandjoin(&t[4], &t[7], 3, NULL) || lib.vips_cast_uchar(t[7], &t[8], NULL) ||
        lib.vips_copy(t[8], &t[9], "interpretation", VIPS_INTERPRETATION_sRGB, NULL) ||
        !(t[10] = lib.vips_image_copy_memory(t[9])))
        goto done;
    // Three discs in the `to` colour, lightened, around the picture's edges.
    for (int i = 0; i < 3; i++) {
        double ink[3];
        for (int band = 0; band < 3; band++) ink[band] = poster->to[band] + (255 - poster->to[band]) * (0.25 + 0.15 * i);
        int cx = width * (1 + 3 * i) / 8 + (poster->seed * 37 * (i + 1)) % (width / 4 + 1);
        int cy = i == 1 ? height * 7 / 8 : height / 6 + (poster->seed * 53) % (height / 4 + 1);
        if (lib.vips_draw_circle(t[10], ink, 3, cx, cy, (width + height) / (10 + 4 * i), "fill", TRUE, NULL)) goto done;
    }
    status = save(captioned(t[10], scope, poster->caption, poster->font), PLAZA_FORMAT_JPEG, 85, out, length);
done:
    (lib.g_object_unref)(scope);
    return status;
}

char *plaza_vips_error(void) {
    if (load_error[0] || !lib.vips_error_buffer) return strdup(load_error[0] ? load_error : "libvips is not loaded");
    const char *message = lib.vips_error_buffer();
    char *copy = strdup(message && *message ? message : "unknown libvips error");
    lib.vips_error_clear();
    return copy;
}

void plaza_vips_free(void *pointer) {
    if (lib.g_free) (lib.g_free)(pointer);
}
