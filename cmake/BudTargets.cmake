# Helpers shared by every bud target.

# Warnings on our own code only (never on generated or Verilated code).
function(bud_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter)
endfunction()

# A bud library: sources, public include root = the repository, warnings, alias bud::<name>.
function(bud_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(bud_${name} STATIC ${ARG_SOURCES})
  add_library(bud::${name} ALIAS bud_${name})
  target_include_directories(bud_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(bud_${name} PUBLIC ${ARG_DEPS})
  bud_warnings(bud_${name})
endfunction()
