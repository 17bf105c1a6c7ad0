#include "CVips.h"
#include <vips/vips.h>
#include <string.h>

#if VIPS_MAJOR_VERSION > 8 || (VIPS_MAJOR_VERSION == 8 && VIPS_MINOR_VERSION >= 15)
#define PLAZA_NO_METADATA "keep", VIPS_FOREIGN_KEEP_NONE
#else
#define PLAZA_NO_METADATA "strip", TRUE
#endif

int plaza_vips_start(int concurrency) {
    if (VIPS_INIT("plaza")) return -1;
    vips_concurrency_set(concurrency);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_leak_set(FALSE);
#if VIPS_MAJOR_VERSION > 8 || (VIPS_MAJOR_VERSION == 8 && VIPS_MINOR_VERSION >= 13)
    vips_block_untrusted_set(TRUE);
#endif
    return 0;
}

int plaza_vips_header(const char *path, plaza_image_header *header) {
    const char *loader = vips_foreign_find_load(path);
    if (!loader) return -1;
    VipsImage *image = vips_image_new_from_file(path, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) return -1;
    header->width = vips_image_get_width(image);
    header->height = vips_image_get_page_height(image);
    header->pages = vips_image_get_n_pages(image);
    header->has_alpha = vips_image_hasalpha(image);
    header->loader = loader;
    g_object_unref(image);
    return 0;
}

static int save(VipsImage *image, plaza_format format, int quality, void **out, size_t *length) {
    switch (format) {
    case PLAZA_FORMAT_JPEG:
        return vips_jpegsave_buffer(image, out, length, "Q", quality, "optimize_coding", TRUE, "interlace", TRUE,
                                    PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_PNG:
        return vips_pngsave_buffer(image, out, length, "compression", 6, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_WEBP:
        return vips_webpsave_buffer(image, out, length, "Q", quality, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_GIF:
        return vips_gifsave_buffer(image, out, length, PLAZA_NO_METADATA, NULL);
    case PLAZA_FORMAT_HEIF:
        return vips_heifsave_buffer(image, out, length, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC,
                                    PLAZA_NO_METADATA, NULL);
    }
    vips_error("plaza", "unknown format %d", (int)format);
    return -1;
}

int plaza_vips_render(const char *path, int width, int height, int crop, plaza_format format, int quality,
                      void **out, size_t *length, int *out_width, int *out_height) {
    VipsImage *image = NULL;
    if (vips_thumbnail(path, &image, width, "height", height, "size", VIPS_SIZE_DOWN,
                       "crop", crop ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_NONE,
                       "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    int status = save(image, format, quality, out, length);
    if (status == 0) {
        *out_width = vips_image_get_width(image);
        *out_height = vips_image_get_page_height(image);
    }
    g_object_unref(image);
    return status;
}

/// 8-bit RGB pixels of `image`, alpha flattened onto black.
static int rgb_pixels(VipsImage *image, void **out, size_t *length, int *out_width, int *out_height) {
    VipsObject *scope = VIPS_OBJECT(vips_image_new());
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 5);
    int status = -1;
    if (vips_image_hasalpha(image)) {
        if (vips_flatten(image, &t[1], NULL)) goto done;
        image = t[1];
    }
    if (image->Bands > 3) {
        if (vips_extract_band(image, &t[2], 0, "n", 3, NULL)) goto done;
        image = t[2];
    }
    if (image->Bands != 3) {
        if (vips_colourspace(image, &t[3], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
        image = t[3];
    }
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(image, &t[4], NULL)) goto done;
        image = t[4];
    }
    *out = vips_image_write_to_memory(image, length);
    if (!*out) goto done;
    *out_width = vips_image_get_width(image);
    *out_height = vips_image_get_height(image);
    status = 0;
done:
    g_object_unref(scope);
    return status;
}

int plaza_vips_pixels(const char *path, int size, void **out, size_t *length, int *out_width, int *out_height) {
    VipsImage *image = NULL;
    if (vips_thumbnail(path, &image, size, "height", size, "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    int status = rgb_pixels(image, out, length, out_width, out_height);
    g_object_unref(image);
    return status;
}

int plaza_vips_render_still(const char *path, plaza_variant *variants, int count, int pixels_box,
                            void **pixels, size_t *pixels_length, int *pixels_width, int *pixels_height) {
    for (int i = 0; i < count; i++) variants[i].bytes = NULL;
    *pixels = NULL;
    VipsImage *decoded = NULL, *pixels_image = NULL;
    if (vips_thumbnail(path, &decoded, variants[0].box, "height", variants[0].box, "size", VIPS_SIZE_DOWN,
                       "export_profile", "srgb", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))
        return -1;
    // Decoded once into memory; the smaller variants are made from these pixels.
    VipsImage *image = vips_image_copy_memory(decoded);
    g_object_unref(decoded);
    if (!image) return -1;
    int status = -1;
    for (int i = 0; i < count; i++) {
        plaza_variant *v = &variants[i];
        VipsImage *sized = NULL;
        if (i == 0) {
            sized = image;
            g_object_ref(sized);
        } else if (vips_thumbnail_image(image, &sized, v->box, "height", v->box, "size", VIPS_SIZE_DOWN,
                                        "crop", v->crop ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_NONE, NULL)) {
            goto done;
        }
        int saved = save(sized, v->format, v->quality, &v->bytes, &v->length);
        v->width = vips_image_get_width(sized);
        v->height = vips_image_get_height(sized);
        g_object_unref(sized);
        if (saved) goto done;
    }
    if (vips_thumbnail_image(image, &pixels_image, pixels_box, "height", pixels_box, NULL)) goto done;
    status = rgb_pixels(pixels_image, pixels, pixels_length, pixels_width, pixels_height);
done:
    if (pixels_image) g_object_unref(pixels_image);
    g_object_unref(image);
    if (status) {
        for (int i = 0; i < count; i++) { g_free(variants[i].bytes); variants[i].bytes = NULL; }
    }
    return status;
}

int plaza_vips_sample(plaza_format format, int width, int height, int pages, void **out, size_t *length) {
    VipsObject *scope = VIPS_OBJECT(vips_image_new());
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 9);
    int status = -1;
    int total = height * pages;
    if (vips_xyz(&t[0], width, total, NULL) ||
        vips_extract_band(t[0], &t[1], 0, NULL) ||
        vips_extract_band(t[0], &t[2], 1, NULL) ||
        vips_linear1(t[1], &t[3], 255.0 / width, 0, NULL) ||
        vips_linear1(t[2], &t[4], 255.0 / total, 0, NULL) ||
        vips_linear1(t[1], &t[5], -255.0 / width, 255, NULL) ||
        vips_bandjoin(&t[3], &t[6], 3, NULL) ||
        vips_cast_uchar(t[6], &t[7], NULL) ||
        vips_copy(t[7], &t[8], "interpretation", VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    if (pages > 1) {
        vips_image_set_int(t[8], "page-height", height);
        int delays[pages];
        for (int i = 0; i < pages; i++) delays[i] = 100;
        vips_image_set_array_int(t[8], "delay", delays, pages);
        vips_image_set_int(t[8], "loop", 0);
    }
    status = save(t[8], format, 80, out, length);
done:
    g_object_unref(scope);
    return status;
}

char *plaza_vips_error(void) {
    const char *message = vips_error_buffer();
    char *copy = g_strdup(message && *message ? message : "unknown libvips error");
    vips_error_clear();
    return copy;
}

void plaza_vips_free(void *pointer) { g_free(pointer); }
