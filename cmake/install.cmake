# Using attend from your own project (docs/your_own_model.md), included by the root
# CMakeLists.txt once every library folder has been added:
#   - attend::attend, and attend::<part> for each library target attend_<part> (attend::nn,
#     attend::seq, ...), as ALIAS targets, so that a project that does add_subdirectory(attend)
#     names them exactly as one that does find_package(attend);
#   - if ATTEND_INSTALL: `cmake --install build --prefix P` installs the headers under
#     P/include/attend/, the libraries under P/lib/ and the CMake package under
#     P/lib/cmake/attend/ (attendConfig.cmake, its version file and the exported targets).
# Nothing here names a library folder's targets or headers: every target attend_* defined so
# far is covered, and the headers of every folder listed in ATTEND_LIBRARY_FOLDERS (with its
# sub-folders, e.g. seq/captioning/).

# The library targets (named attend_*) defined in `dir` and its sub-folders, appended to `out`.
function(attend_collect_libraries dir out)
  set(found ${${out}})
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(target MATCHES "^attend_" AND type MATCHES "LIBRARY$")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    attend_collect_libraries(${subdir} found)
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Every library target so far (lessons/, tests/ and bench/ come later), whichever folder made
# it: attend_captioning is found whether seq/ or the root adds seq/captioning/.
set(attend_libraries "")
attend_collect_libraries(${PROJECT_SOURCE_DIR} attend_libraries)
set(attend_header_folders "")
foreach(folder IN LISTS ATTEND_LIBRARY_FOLDERS)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${folder}/CMakeLists.txt)
    list(APPEND attend_header_folders ${folder})
  endif()
endforeach()

# attend_nn is exported as attend::nn, attend_seq as attend::seq, attend as attend::attend.
add_library(attend::attend ALIAS attend)
foreach(library IN LISTS attend_libraries)
  string(REGEX REPLACE "^attend_" "" part ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${part})
  add_library(attend::${part} ALIAS ${library})
endforeach()

if(NOT ATTEND_INSTALL)
  return()
endif()

include(CMakePackageConfigHelpers)
set(attend_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/attend)

install(TARGETS attend ${attend_libraries} EXPORT attendTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The headers keep their paths below include/attend/ ("nn/viz/heatmap.h"), as in the build
# tree's include/attend/: the library's own #include lines name them that way.
install(FILES ${PROJECT_SOURCE_DIR}/attend.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attend)
foreach(folder IN LISTS attend_header_folders)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attend/${folder}
          FILES_MATCHING PATTERN "*.h")
endforeach()

install(EXPORT attendTargets NAMESPACE attend:: DESTINATION ${attend_package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attendConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/attendConfig.cmake
                              INSTALL_DESTINATION ${attend_package_dir})
# Before 1.0 a minor version may change the interface: 0.10.x accepts only 0.10.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attendConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attendConfig.cmake
              ${PROJECT_BINARY_DIR}/attendConfigVersion.cmake
        DESTINATION ${attend_package_dir})
