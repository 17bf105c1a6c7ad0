// The part of libvips' C API (8.12 and later) that shim.c uses, declared here rather than
// taken from <vips/vips.h>: the shim loads libvips with dlopen, so the build needs neither its
// headers nor a link to it. These declarations only give the function pointers their types.
#ifndef PLAZA_VIPS_API_H
#define PLAZA_VIPS_API_H

#include <stddef.h>

typedef struct _VipsImage VipsImage;
typedef struct _VipsObject VipsObject;
typedef int gboolean;
#define TRUE 1
#define FALSE 0

// Enum values, as libvips defines them (they are part of its ABI). Passed through varargs,
// enums are ints.
enum {
    VIPS_FAIL_ON_TRUNCATED = 1,            // VipsFailOn
    VIPS_SIZE_DOWN = 2,                    // VipsSize
    VIPS_INTERESTING_NONE = 0,             // VipsInteresting
    VIPS_INTERESTING_ATTENTION = 3,
    VIPS_FOREIGN_KEEP_NONE = 0,            // VipsForeignKeep (8.15)
    VIPS_FOREIGN_HEIF_COMPRESSION_HEVC = 1,
    VIPS_INTERPRETATION_sRGB = 22,         // VipsInterpretation
    VIPS_FORMAT_UCHAR = 0,                 // VipsBandFormat
    VIPS_ALIGN_CENTRE = 1,                 // VipsAlign
};

int vips_init(const char *argv0);
int vips_version(int flag);
void vips_concurrency_set(int concurrency);
void vips_cache_set_max(int max);
void vips_cache_set_max_mem(size_t max_mem);
void vips_cache_set_max_files(int max_files);
void vips_leak_set(gboolean leak);
void vips_block_untrusted_set(gboolean state);

const char *vips_foreign_find_load(const char *filename);
VipsImage *vips_image_new_from_file(const char *name, ...);
VipsImage *vips_image_new(void);
VipsObject **vips_object_local_array(VipsObject *parent, int n);
int vips_image_get_width(const VipsImage *image);
int vips_image_get_height(const VipsImage *image);
int vips_image_get_page_height(VipsImage *image);
int vips_image_get_n_pages(VipsImage *image);
int vips_image_get_bands(const VipsImage *image);
int vips_image_get_format(const VipsImage *image);
gboolean vips_image_hasalpha(VipsImage *image);
void vips_image_set_int(VipsImage *image, const char *name, int i);
void vips_image_set_array_int(VipsImage *image, const char *name, const int *array, int n);
void *vips_image_write_to_memory(VipsImage *in, size_t *size);
VipsImage *vips_image_copy_memory(VipsImage *image);

int vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_gifsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_heifsave_buffer(VipsImage *in, void **buf, size_t *len, ...);

int vips_thumbnail(const char *filename, VipsImage **out, int width, ...);
int vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, ...);
int vips_flatten(VipsImage *in, VipsImage **out, ...);
int vips_extract_band(VipsImage *in, VipsImage **out, int band, ...);
int vips_colourspace(VipsImage *in, VipsImage **out, int space, ...);
int vips_cast_uchar(VipsImage *in, VipsImage **out, ...);
int vips_xyz(VipsImage **out, int width, int height, ...);
int vips_linear1(VipsImage *in, VipsImage **out, double a, double b, ...);
int vips_bandjoin(VipsImage **in, VipsImage **out, int n, ...);
int vips_copy(VipsImage *in, VipsImage **out, ...);
int vips_add(VipsImage *left, VipsImage *right, VipsImage **out, ...);
int vips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height, ...);
int vips_ifthenelse(VipsImage *cond, VipsImage *in1, VipsImage *in2, VipsImage **out, ...);
int vips_draw_circle(VipsImage *image, double *ink, int n, int cx, int cy, int radius, ...);
int vips_text(VipsImage **out, const char *text, ...);

void vips_error(const char *domain, const char *fmt, ...);
const char *vips_error_buffer(void);
void vips_error_clear(void);

// GLib and GObject, which libvips links.
void *g_object_ref(void *object);
void g_object_unref(void *object);
void g_free(void *mem);

#endif
