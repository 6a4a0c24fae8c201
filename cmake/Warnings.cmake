# alertd_warnings: the INTERFACE target every alertd target links PRIVATE-ly.
add_library(alertd_warnings INTERFACE)
target_compile_options(alertd_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
  -Wno-missing-field-initializers)
if(ALERTD_WERROR)
  target_compile_options(alertd_warnings INTERFACE -Werror)
endif()

# alertd_library(NAME SOURCES...): one static library per folder, namespace = folder.
function(alertd_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${ALERTD_ROOT})
  target_link_libraries(${name} PRIVATE alertd_warnings)
endfunction()
