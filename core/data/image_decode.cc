#include "core/data/image_decode.h"

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <jpeglib.h>
#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

// After jpeglib.h, which it needs.
#include <jerror.h>

#include "core/data/decode_budget.h"

namespace mt {
namespace {

// The libraries report errors by calling back into us; both must leave by
// longjmp (unwinding through C frames is not allowed), so every C++ object
// the decoders use is constructed before their setjmp.

// Opened without following a link (the folder's listing skipped links; one
// put in a file's place since is refused too), with the bytes it holds.
struct File {
  explicit File(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
      throw DataError(path + ": a symbolic link; links are not followed");
    if (fd < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "rb"))) {
      close(fd);
      throw DataError(path + ": not a regular file");
    }
    bytes = static_cast<uint64_t>(st.st_size);
  }
  ~File() { std::fclose(f); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  FILE* f = nullptr;
  uint64_t bytes = 0;
};

// A header's size is a claim; the bytes present bound what a whole file of
// that size can be. Refused before anything is allocated or decoded.
void CheckBytesPresent(const std::string& path, const char* kind, int64_t width, int64_t height,
                       uint64_t present, uint64_t least, const char* why) {
  if (present >= least) return;
  throw DataError(path + ": a whole " + kind + " of " + std::to_string(width) + "x" +
                  std::to_string(height) + " pixels takes at least " + std::to_string(least) +
                  " bytes (" + why + "); the file has " + std::to_string(present) +
                  ": truncated, or a decompression bomb");
}

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

// Deflate shrinks at most 1032 to 1 (a 258-byte match in two bits).
constexpr uint64_t kDeflateMaxRatio = 1032;

void DecodePng(const std::string& path, FILE* f, uint64_t file_bytes, int channels,
               ImageRowSink& sink) {
  PngErrors errors;
  PngReader r;
  WholeImageHold hold;
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
    // Each row, filter byte and all, comes out of the compressed data.
    const uint64_t raw = uint64_t{height} * (png_get_rowbytes(r.png, r.info) + 1);
    CheckBytesPresent(path, "PNG", width, height, file_bytes, raw / kDeflateMaxRatio,
                      "deflate compresses at most 1032:1");
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
      hold.Take(uint64_t{row_bytes} * height, path, "an interlaced PNG's pixels");
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

// Scans of one progressive JPEG: each is a pass over every block, and a
// few bytes can start another; cameras and encoders write about ten.
constexpr int kMaxJpegScans = 100;

struct JpegErrors {
  jpeg_error_mgr mgr;  // first: libjpeg's cinfo->err points here
  jpeg_progress_mgr progress{};
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 80] = "corrupt JPEG data";
};

[[noreturn]] void JpegExit(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg finishes a file whose data run short with grey, and decodes on
// past corrupt data, and only warns. A sample that is partly grey is a bad
// sample, and the work done past the bytes present is what a decompression
// bomb buys: each such warning ends the decode at once, as an error.
void JpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
      std::snprintf(errors->message, sizeof errors->message,
                    "truncated JPEG (premature end of file)");
      std::longjmp(errors->jump, 1);
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_NOT_SEQUENTIAL:
      (*cinfo->err->format_message)(cinfo, errors->message);
      std::longjmp(errors->jump, 1);
    default: return;  // about metadata (JFIF version, ICC, padding): harmless
  }
}

void JpegProgress(j_common_ptr cinfo) {
  const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number <= kMaxJpegScans) return;
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  std::snprintf(errors->message, sizeof errors->message,
                "a progressive JPEG of more than %d scans (each a pass over the whole picture)",
                kMaxJpegScans);
  std::longjmp(errors->jump, 1);
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

void DecodeJpeg(const std::string& path, FILE* f, uint64_t file_bytes, int channels, int want_width,
                int want_height, ImageRowSink& sink) {
  JpegErrors errors;
  JpegReader r;
  WholeImageHold hold;
  std::vector<uint8_t> row;
  bool refused = false, cmyk = false;
  JDIMENSION width = 0, height = 0;
  int orientation = 1;
  r.cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = JpegExit;
  errors.mgr.emit_message = JpegMessage;
  errors.progress.progress_monitor = JpegProgress;
  if (setjmp(errors.jump)) throw DataError(path + ": " + errors.message);
  jpeg_create_decompress(&r.cinfo);
  r.created = true;
  r.cinfo.progress = &errors.progress;
  // Beyond the budget libjpeg's own allocator refuses too, should the
  // estimate below ever fall short.
  r.cinfo.mem->max_memory_to_use = static_cast<long>(kWholeImageBudget + (64 << 20));
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
    // Every 8x8 block of every component is coded in at least one bit
    // (its DC difference, a Huffman code), so a whole file has at least
    // blocks / 8 bytes; a header claiming more than the bytes hold is
    // refused before the decoder allocates or decodes anything.
    uint64_t blocks = 0, held_blocks = 0;
    for (int c = 0; c < r.cinfo.num_components; ++c) {
      const jpeg_component_info& comp = r.cinfo.comp_info[c];
      blocks += uint64_t{comp.width_in_blocks} * comp.height_in_blocks;
      const auto up = [](uint64_t n, int m) { return (n + m - 1) / m * m; };
      held_blocks += up(comp.width_in_blocks, comp.h_samp_factor) *
                     up(comp.height_in_blocks, comp.v_samp_factor);
    }
    CheckBytesPresent(path, "JPEG", width, height, file_bytes, blocks / 8,
                      "every 8x8 block is coded in at least one bit");
    // A progressive JPEG's scans refine all its coefficients in turn: they
    // are held whole (64 of 2 bytes a block), within the budget.
    if (jpeg_has_multiple_scans(&r.cinfo))
      hold.Take(held_blocks * DCTSIZE2 * sizeof(JCOEF), path, "a progressive JPEG's coefficients");
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
    while (r.cinfo.output_scanline < r.cinfo.output_height) {
      JSAMPROW rows[1] = {row.data()};
      jpeg_read_scanlines(&r.cinfo, rows, 1);
      sink.Row(row.data());
    }
    jpeg_finish_decompress(&r.cinfo);
  }
  if (cmyk) throw DataError(path + ": CMYK JPEG; save it as RGB");
  if (refused) CheckSize(path, width, height);
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
  if (got == 8 && std::memcmp(magic, kPng, 8) == 0)
    return DecodePng(path, file.f, file.bytes, channels, sink);
  if (got >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff) {
    std::rewind(file.f);
    return DecodeJpeg(path, file.f, file.bytes, channels, want_width, want_height, sink);
  }
  throw DataError(path + (got == 0 ? ": empty file" : ": neither a PNG nor a JPEG file"));
}

}  // namespace mt
