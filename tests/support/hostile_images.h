// Image files made to cost a decoder more than their bytes: a small
// picture's data under a header that claims a huge one (issue 45's bomb, a
// 565-byte progressive JPEG claiming 8000x8000), the same padded to pass a
// size check, a JPEG of more scans than any encoder writes, and an
// interlaced PNG bomb. For the decoder tests and the fuzzers' seeds.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

namespace mt::test_support {

namespace hostile_detail {

inline void JpegFailure(j_common_ptr cinfo) {
  char message[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, message);
  throw std::runtime_error(std::string("libjpeg: ") + message);
}

// A smooth picture encoded in memory: baseline, progressive (libjpeg's
// simple script, 10 scans for colour), or with `script` as its scans.
inline std::string EncodeJpeg(int width, int height, int channels, bool progressive,
                              const std::vector<jpeg_scan_info>& script = {}) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);
  err.error_exit = JpegFailure;
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  if (progressive) jpeg_simple_progression(&cinfo);
  if (!script.empty()) {
    cinfo.scan_info = script.data();
    cinfo.num_scans = static_cast<int>(script.size());
  }
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(width) * channels);
  while (cinfo.next_scanline < cinfo.image_height) {
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = static_cast<uint8_t>(128 + (i * 5 + cinfo.next_scanline * 3) % 64);
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

}  // namespace hostile_detail

// A 16x16 colour JPEG (progressive unless told) whose frame header then
// claims claim_w x claim_h: about 600 bytes, all the decoder gets.
inline std::string JpegBomb(int claim_w, int claim_h, bool progressive = true) {
  std::string jpeg = hostile_detail::EncodeJpeg(16, 16, 3, progressive);
  const char sof = progressive ? '\xC2' : '\xC0';
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    if (jpeg[i] != '\xFF' || jpeg[i + 1] != sof) continue;
    jpeg[i + 5] = static_cast<char>(claim_h >> 8);
    jpeg[i + 6] = static_cast<char>(claim_h);
    jpeg[i + 7] = static_cast<char>(claim_w >> 8);
    jpeg[i + 8] = static_cast<char>(claim_w);
    return jpeg;
  }
  throw std::runtime_error("JpegBomb: no frame header");
}

// JpegBomb with comment segments after its start until it holds `bytes`:
// as large as a whole picture of the claimed size must be, with as little
// coded data as before.
inline std::string PaddedJpegBomb(int claim_w, int claim_h, size_t bytes) {
  const std::string bomb = JpegBomb(claim_w, claim_h);
  std::string padding;
  while (bomb.size() + padding.size() < bytes) {
    const size_t n = std::min<size_t>(65533, bytes - bomb.size() - padding.size());
    padding += "\xFF\xFE";
    padding += static_cast<char>((n + 2) >> 8);
    padding += static_cast<char>((n + 2) & 0xFF);
    padding += std::string(n, 'x');
  }
  return bomb.substr(0, 2) + padding + bomb.substr(2);
}

// A valid progressive grey JPEG of 1 + 2 * 63 = 127 scans: the DC, then
// each AC coefficient alone, first its high bits and then its last.
inline std::string ManyScanJpeg(int width, int height) {
  std::vector<jpeg_scan_info> script;
  const auto scan = [&](int ss, int se, int ah, int al) {
    jpeg_scan_info s{};
    s.comps_in_scan = 1;
    s.component_index[0] = 0;
    s.Ss = ss, s.Se = se, s.Ah = ah, s.Al = al;
    script.push_back(s);
  };
  scan(0, 0, 0, 0);
  for (int k = 1; k < 64; ++k) scan(k, k, 0, 1);
  for (int k = 1; k < 64; ++k) scan(k, k, 1, 0);
  return hostile_detail::EncodeJpeg(width, height, 1, false, script);
}

// A 16x16 RGB PNG (Adam7-interlaced unless told) whose IHDR then claims
// claim_w x claim_h, its CRC made right: a few hundred bytes.
inline std::string PngBomb(int claim_w, int claim_h, bool interlaced = true) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = 16;
  image.height = 16;
  image.format = PNG_FORMAT_RGB;
  std::vector<uint8_t> pixels(16 * 16 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7);
  png_alloc_size_t size = 0;
  png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr);
  std::string png(size, '\0');
  if (!png_image_write_to_memory(&image, png.data(), &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error("PngBomb: libpng cannot write");
  png.resize(size);
  // IHDR's data: bytes 16..28 (width, height, depth, colour, compression,
  // filter, interlace), its CRC over the type and data at 29.
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>(static_cast<uint32_t>(claim_w) >> (24 - 8 * i));
    png[20 + i] = static_cast<char>(static_cast<uint32_t>(claim_h) >> (24 - 8 * i));
  }
  png[28] = interlaced ? 1 : 0;
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17);
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  return png;
}

}  // namespace mt::test_support
