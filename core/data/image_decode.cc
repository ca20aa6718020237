#include "core/data/image_decode.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include <jpeglib.h>
#include <png.h>

// After jpeglib.h, which it needs.
#include <jerror.h>

namespace mt {
namespace {

// The libraries report errors by calling back into us; both must leave by
// longjmp (unwinding through C frames is not allowed), so every C++ object
// the decoders use is constructed before their setjmp.

struct File {
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {
    if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno));
  }
  ~File() { std::fclose(f); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  FILE* f;
};

void CheckSize(const std::string& path, int64_t width, int64_t height) {
  if (width < kMinImageSide || height < kMinImageSide)
    throw DataError(path + ": " + std::to_string(width) + "x" + std::to_string(height) +
                    " pixels is too small to be a sample (at least " +
                    std::to_string(kMinImageSide) + " on each side)");
  if (width * height > kMaxImagePixels)
    throw DataError(path + ": " + std::to_string(width) + "x" + std::to_string(height) + " (" +
                    std::to_string(width * height / 1'000'000) + " megapixels) is more than the " +
                    std::to_string(kMaxImagePixels / 1'000'000) + " allowed");
}

// ---- PNG ----

struct PngErrors {
  char message[200] = "corrupt PNG data";
};

void PngError(png_structp png, png_const_charp message) {
  auto* errors = static_cast<PngErrors*>(png_get_error_ptr(png));
  std::snprintf(errors->message, sizeof errors->message, "%s", message);
  png_longjmp(png, 1);
}
void PngWarning(png_structp, png_const_charp) {}

struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReader() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

void DecodePng(const std::string& path, FILE* f, int channels, ImageRowSink& sink) {
  PngErrors errors;
  PngReader r;
  std::vector<uint8_t> pixels;  // a row, or an interlaced picture whole
  bool too_large = false;
  png_uint_32 width = 0, height = 0;
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, PngError, PngWarning);
  if (r.png) r.info = png_create_info_struct(r.png);
  if (!r.png || !r.info) throw DataError(path + ": out of memory for the PNG decoder");
  if (setjmp(png_jmpbuf(r.png))) throw DataError(path + ": " + errors.message);
  png_init_io(r.png, f);
  png_set_sig_bytes(r.png, 8);
  // libpng refuses headers beyond these before allocating anything.
  png_set_user_limits(r.png, 1 << 16, 1 << 16);
  png_read_info(r.png, r.info);
  width = png_get_image_width(r.png, r.info);
  height = png_get_image_height(r.png, r.info);
  const int64_t pixel_count = int64_t{width} * height;
  if (width < kMinImageSide || height < kMinImageSide || pixel_count > kMaxImagePixels) {
    too_large = true;
  } else {
    const int color = png_get_color_type(r.png, r.info);
    const int depth = png_get_bit_depth(r.png, r.info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(r.png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(r.png);
    if (png_get_valid(r.png, r.info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(r.png);
    if (depth == 16) png_set_strip_16(r.png);
    png_set_strip_alpha(r.png);
    const bool grey = !(color & PNG_COLOR_MASK_COLOR);
    if (channels == 3 && grey) png_set_gray_to_rgb(r.png);
    if (channels == 1 && !grey) png_set_rgb_to_gray_fixed(r.png, 1, -1, -1);
    const int passes = png_set_interlace_handling(r.png);
    png_read_update_info(r.png, r.info);
    const size_t row_bytes = size_t{width} * static_cast<size_t>(channels);
    if (png_get_rowbytes(r.png, r.info) != row_bytes) png_error(r.png, "unexpected row layout");
    sink.Begin(static_cast<int>(width), static_cast<int>(height), 1);
    if (passes == 1) {
      pixels.resize(row_bytes);
      for (png_uint_32 y = 0; y < height; ++y) {
        png_read_row(r.png, pixels.data(), nullptr);
        sink.Row(pixels.data());
      }
    } else {
      // Interlaced rows arrive in seven passes: the picture is needed whole.
      pixels.resize(row_bytes * height);
      for (int pass = 0; pass < passes; ++pass)
        for (png_uint_32 y = 0; y < height; ++y)
          png_read_row(r.png, pixels.data() + row_bytes * y, nullptr);
      for (png_uint_32 y = 0; y < height; ++y) sink.Row(pixels.data() + row_bytes * y);
    }
  }
  if (too_large) CheckSize(path, width, height);
}

// ---- JPEG ----

struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "corrupt JPEG data";
  bool truncated = false;
};

[[noreturn]] void JpegExit(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg finishes a truncated file with grey and only warns; a sample
// that is half grey is a bad sample, so that warning is an error here.
void JpegMessage(j_common_ptr cinfo, int level) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) errors->truncated = true;
}

// EXIF's orientation tag (0x0112) from an APP1 marker, or 1. Every offset
// is checked against the marker's length: the bytes are the file's.
int ExifOrientation(const jpeg_saved_marker_ptr markers) {
  for (jpeg_saved_marker_ptr m = markers; m; m = m->next) {
    const uint8_t* d = m->data;
    const size_t n = m->data_length;
    if (m->marker != JPEG_APP0 + 1 || n < 14 || std::memcmp(d, "Exif\0\0", 6) != 0) continue;
    const uint8_t* t = d + 6;  // the TIFF header
    const size_t tn = n - 6;
    const bool little = t[0] == 'I' && t[1] == 'I';
    if (!little && !(t[0] == 'M' && t[1] == 'M')) continue;
    const auto u16 = [&](size_t at) {
      return little ? static_cast<unsigned>(t[at] | t[at + 1] << 8)
                    : static_cast<unsigned>(t[at] << 8 | t[at + 1]);
    };
    const auto u32 = [&](size_t at) {
      return little ? (uint32_t{t[at]} | uint32_t{t[at + 1]} << 8 | uint32_t{t[at + 2]} << 16 |
                       uint32_t{t[at + 3]} << 24)
                    : (uint32_t{t[at]} << 24 | uint32_t{t[at + 1]} << 16 |
                       uint32_t{t[at + 2]} << 8 | uint32_t{t[at + 3]});
    };
    const size_t ifd = u32(4);
    if (ifd + 2 > tn) continue;
    const unsigned entries = u16(ifd);
    for (unsigned e = 0; e < entries; ++e) {
      const size_t at = ifd + 2 + 12 * size_t{e};
      if (at + 12 > tn) break;
      if (u16(at) != 0x0112) continue;
      const unsigned v = u16(at + 8);  // a SHORT, first in the value field
      return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
    }
  }
  return 1;
}

struct JpegReader {
  jpeg_decompress_struct cinfo{};
  bool created = false;
  ~JpegReader() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

void DecodeJpeg(const std::string& path, FILE* f, int channels, int want_width, int want_height,
                ImageRowSink& sink) {
  JpegErrors errors;
  JpegReader r;
  std::vector<uint8_t> row;
  bool refused = false, cmyk = false;
  JDIMENSION width = 0, height = 0;
  int orientation = 1;
  r.cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = JpegExit;
  errors.mgr.emit_message = JpegMessage;
  if (setjmp(errors.jump)) throw DataError(path + ": " + errors.message);
  jpeg_create_decompress(&r.cinfo);
  r.created = true;
  jpeg_stdio_src(&r.cinfo, f);
  jpeg_save_markers(&r.cinfo, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&r.cinfo, TRUE);
  orientation = ExifOrientation(r.cinfo.marker_list);
  width = r.cinfo.image_width;
  height = r.cinfo.image_height;
  cmyk = r.cinfo.jpeg_color_space == JCS_CMYK || r.cinfo.jpeg_color_space == JCS_YCCK;
  refused = cmyk || width < kMinImageSide || height < kMinImageSide ||
            int64_t{width} * height > kMaxImagePixels;
  if (!refused) {
    r.cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    // The decoder scales by 1/2, 1/4 or 1/8 almost for free; stop while the
    // result is still at least twice the size wanted, so the area resize
    // after it still averages.
    // Turned a quarter, the stored picture's width becomes the shown height.
    const unsigned want_w = static_cast<unsigned>(orientation >= 5 ? want_height : want_width);
    const unsigned want_h = static_cast<unsigned>(orientation >= 5 ? want_width : want_height);
    for (unsigned denom = 8; denom > 1; denom /= 2) {
      if (width / denom >= 2u * want_w && height / denom >= 2u * want_h) {
        r.cinfo.scale_num = 1;
        r.cinfo.scale_denom = denom;
        break;
      }
    }
    jpeg_start_decompress(&r.cinfo);
    row.resize(size_t{r.cinfo.output_width} * static_cast<size_t>(channels));
    sink.Begin(static_cast<int>(r.cinfo.output_width), static_cast<int>(r.cinfo.output_height),
               orientation);
    while (r.cinfo.output_scanline < r.cinfo.output_height && !errors.truncated) {
      JSAMPROW rows[1] = {row.data()};
      jpeg_read_scanlines(&r.cinfo, rows, 1);
      sink.Row(row.data());
    }
    if (!errors.truncated) jpeg_finish_decompress(&r.cinfo);
  }
  if (cmyk) throw DataError(path + ": CMYK JPEG; save it as RGB");
  if (refused) CheckSize(path, width, height);
  if (errors.truncated) throw DataError(path + ": truncated JPEG (premature end of file)");
}

}  // namespace

void DecodeImage(const std::string& path, int channels, int want_width, int want_height,
                 ImageRowSink& sink) {
  if (channels != 1 && channels != 3)
    throw DataError(path + ": models take 1 or 3 channels, not " + std::to_string(channels));
  File file(path);
  uint8_t magic[8] = {};
  const size_t got = std::fread(magic, 1, sizeof magic, file.f);
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (got == 8 && std::memcmp(magic, kPng, 8) == 0) return DecodePng(path, file.f, channels, sink);
  if (got >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff) {
    std::rewind(file.f);
    return DecodeJpeg(path, file.f, channels, want_width, want_height, sink);
  }
  throw DataError(path + (got == 0 ? ": empty file" : ": neither a PNG nor a JPEG file"));
}

}  // namespace mt
