# A stand-in for Zephyr's CMake package (find_package(Zephyr)), for tests on a machine without a
# Zephyr tree: it provides only what a generated application and microbuild's module call --
# Kconfig values from prj.conf, the extra modules, zephyr_library_*, zephyr_include_directories,
# dt_chosen/dt_reg_addr (the stm32f746g_disco devicetree's answers), the `app` library and the
# final link target zephyr_final -- and builds for the Cortex-M7 with arm-none-eabi-gcc and a
# linker script laid out as Zephyr's is for that board (FLASH, RAM = zephyr,sram at 0x20010000,
# DTCM = zephyr,dtcm at 0x20000000 holding .dtcm_noinit.*). It cannot check what only Zephyr
# knows (its drivers, its real linker script); it checks that the CMake files are consistent,
# compile and link, and that the post-build step runs.
set(Zephyr_FOUND TRUE)
set(MB_STAND_IN ${CMAKE_CURRENT_LIST_DIR})

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
project(zephyr_stand_in LANGUAGES C)

add_library(zephyr_interface INTERFACE)
target_compile_options(zephyr_interface INTERFACE
  -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16 -O2 -std=c99
  -Wall -Wextra -Werror -ffunction-sections -fdata-sections)
target_include_directories(zephyr_interface INTERFACE ${MB_STAND_IN}/../zephyr_stub)

# Kconfig: what prj.conf sets, as CONFIG_* variables.
file(STRINGS ${CMAKE_SOURCE_DIR}/prj.conf mb_conf REGEX "^CONFIG_[A-Z0-9_]+=")
foreach(line ${mb_conf})
  string(REGEX MATCH "^(CONFIG_[A-Z0-9_]+)=(.*)$" _ ${line})
  set(${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
endforeach()

# Devicetree queries, answered as stm32f746g_disco's devicetree does.
function(dt_chosen var PROPERTY property)
  if(property STREQUAL "zephyr,dtcm")
    set(${var} "/memory@20000000" PARENT_SCOPE)
  elseif(property STREQUAL "zephyr,sram")
    set(${var} "/memory@20010000" PARENT_SCOPE)
  else()
    set(${var} "" PARENT_SCOPE)
  endif()
endfunction()
function(dt_reg_addr var PATH path)
  string(REGEX MATCH "@([0-9a-f]+)$" _ ${path})
  set(${var} "0x${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(zephyr_library_named name)
  add_library(${name} STATIC)
  target_link_libraries(${name} PRIVATE zephyr_interface)
  set_property(GLOBAL APPEND PROPERTY MB_STAND_IN_LIBRARIES ${name})
  set(ZEPHYR_CURRENT_LIBRARY ${name} PARENT_SCOPE)
endfunction()
function(zephyr_library_sources)
  target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_library_compile_definitions)
  target_compile_definitions(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_include_directories)
  target_include_directories(zephyr_interface INTERFACE ${ARGN})
endfunction()

# The application library and the final link.
add_library(app STATIC)
target_link_libraries(app PRIVATE zephyr_interface)
add_executable(zephyr_final ${MB_STAND_IN}/zephyr_arm.c)
target_link_libraries(zephyr_final PRIVATE zephyr_interface)
set_target_properties(zephyr_final PROPERTIES OUTPUT_NAME zephyr SUFFIX .elf
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/zephyr)
target_link_options(zephyr_final PRIVATE -mcpu=cortex-m7 -mthumb -mfloat-abi=hard
  -mfpu=fpv5-sp-d16 -nostartfiles --specs=nano.specs --specs=nosys.specs
  -T${MB_STAND_IN}/stm32f746.ld -Wl,--gc-sections -Wl,--entry=mb_stand_in_reset)

# Zephyr's modules: each ZEPHYR_EXTRA_MODULES folder's CMakeLists.txt (module.yml: cmake: .).
foreach(module ${ZEPHYR_EXTRA_MODULES})
  get_filename_component(name ${module} NAME)
  add_subdirectory(${module} ${CMAKE_BINARY_DIR}/modules/${name})
endforeach()

# After the application's CMakeLists.txt: link the app and every Zephyr library.
function(mb_stand_in_link)
  get_property(libraries GLOBAL PROPERTY MB_STAND_IN_LIBRARIES)
  target_link_libraries(zephyr_final PRIVATE -Wl,--whole-archive app -Wl,--no-whole-archive
                        ${libraries})
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL mb_stand_in_link)
