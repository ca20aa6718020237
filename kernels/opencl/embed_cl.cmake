# Writes OUT: a C++ file defining kOpenClProgramSource, the .cl files in SRCS
# (a ;-list, in order) concatenated, so the kernels ship inside the binary.
set(body "")
foreach(src IN LISTS SRCS)
  file(READ "${src}" text)
  get_filename_component(name "${src}" NAME)
  string(APPEND body "// ---- ${name}\n${text}\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from kernels/opencl/cl/*.cl by embed_cl.cmake; do not edit.\n"
  "#include \"kernels/opencl/opencl_runtime.h\"\n"
  "namespace mt::kernels {\n"
  "const char* const kOpenClProgramSource = R\"MTCL(\n${body})MTCL\";\n"
  "}  // namespace mt::kernels\n")
# Only touch OUT when it changed, so an unchanged kernel set rebuilds nothing.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
